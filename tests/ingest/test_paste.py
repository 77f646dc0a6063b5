"""Pasted issue texts that hold several tools' output (envcheck/ingest/paste.py): every section
read by its own parser, wherever it is, and the report saying what was read and what skipped.
The fixtures are threads' own pastes (tests/fixtures/pastes/README.md gives each URL)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envcheck.ingest.common import FormatError, Source, read_source
from envcheck.ingest.detect import parse
from envcheck.ingest.paste import boundaries, split
from envcheck.model.report import NodeReport
from tests.conftest import CliResult, run_cli

PASTES = Path(__file__).parent.parent / "fixtures" / "pastes"


def load(name: str) -> NodeReport:
    return parse(read_source(str(PASTES / name)))


def text(body: str) -> NodeReport:
    return parse(Source(name="paste.txt", text=body))


def packages(report: NodeReport) -> dict[str, str]:
    assert report.packages.data is not None
    return {d.key: d.version for d in report.packages.data.distributions}


def test_one_line_banner_and_prose_are_both_read() -> None:
    """pytorch/pytorch#85332: 'nvidia-smi:NVIDIA-SMI 450.51.05 Driver Version: ...' on one line,
    then nvcc and torch's version in prose: the banner no longer hides the rest."""
    report = load("pytorch_85332_oneline_banner.txt")
    gpu = report.gpu.data
    assert gpu is not None
    assert (gpu.driver_version, gpu.cuda_driver_version) == ("450.51.05", "11.0")
    assert report.torch.data is not None and report.torch.data.version == "1.8.1+cu102"
    assert report.system.data is not None and report.system.data.nvcc is not None
    assert report.system.data.nvcc.version == "10.2"
    assert report.origin.detail is not None
    assert "nvidia-smi line 10" in report.origin.detail and "text" in report.origin.detail


def test_conda_list_and_nvidia_smi_in_prose_with_inline_backticks() -> None:
    """nanoporetech/bonito#60: a conda list (pypi channel rows) and an nvidia-smi screen, each
    opened by a backtick, between sentences."""
    report = load("bonito_60_conda_list_prose.txt")
    assert report.gpu.data is not None and report.gpu.data.driver_version == "450.51.06"
    assert [g.memory_total_mib for g in report.gpu.data.gpus or ()] == [16160]
    found = packages(report)
    assert found["torch"] == "1.7.0" and found["cupy-cuda102"] == "8.1.0"
    assert found["ont-bonito"] == "0.3.1"
    assert report.torch.data is not None and report.torch.data.cuda == "10.2"
    assert report.python.data is not None and report.python.data.version == "3.7.3"
    detail = report.origin.detail or ""
    assert "conda list lines 6-15" in detail and "nvidia-smi lines 19-28" in detail


def test_nvidia_smi_failure_and_nvcc_are_read_not_refused() -> None:
    """qixuema/envs#4: nvidia-smi's failure (with a retyped quote, wrapped over two lines) and
    nvcc -V, between Chinese prose: the driver is stated absent, the toolkit known."""
    report = load("envs_4_smi_failed_nvcc.txt")
    assert not report.gpu.is_ok and report.gpu.stated_absent
    assert "couldn't communicate with the NVIDIA driver" in (report.gpu.reason or "")
    assert report.system.data is not None and report.system.data.nvcc is not None
    assert report.system.data.nvcc.version == "10.0"


def test_nvml_mismatch_and_lsb_release() -> None:
    """tinygrad/open-gpu-kernel-modules#47: an issue template with lsb_release's Description
    and nvidia-smi's 'Driver/library version mismatch' with the NVML library's version."""
    report = load("tinygrad_47_nvml_mismatch.txt")
    assert report.gpu.query_failed
    assert "Driver/library version mismatch" in (report.gpu.reason or "")
    assert "570.124" in (report.gpu.reason or "")
    system = report.system.data
    assert system is not None and (system.os_id, system.os_version) == ("ubuntu", "22.04")


def test_ldd_output_is_recognised_and_said_skipped() -> None:
    """canonical/lxd#9964: nvidia-smi cannot find libnvidia-ml, then `ldd /usr/bin/nvidia-smi`
    after a root prompt: the failure is read, ldd's lines are named as skipped."""
    report = load("lxd_9964_ldd_no_nvml.txt")
    assert report.gpu.stated_absent
    detail = report.origin.detail or ""
    assert "nvidia-smi (failed) line 2" in detail
    assert "skipped: ldd output (lines 6-11" in detail


def test_kernel_log_without_a_version_is_read_as_a_note_beside_lspci() -> None:
    """mattshma/bigdata#133: dmesg's NVRM lines (no version in them: the probe routine was not
    called, nouveau took the GPUs) and lspci's 3D controllers: the GPUs from lspci, what the
    module said as a note."""
    report = load("bigdata_133_dmesg_lspci.txt")
    gpu = report.gpu.data
    assert gpu is not None and gpu.driver_version is None
    assert [g.name for g in gpu.gpus or ()] == ["Device 1db6"] * 3
    assert "kernel log (NVRM) lines 3-6" in (report.origin.detail or "")
    assert any("No NVIDIA graphics adapter probed" in n for n in report.gpu.notes)


def test_single_format_paste_is_read_as_before() -> None:
    """rossumai/nvgpu#15: one nvidia-smi screen in a fence with a sentence: its own format."""
    report = load("nvgpu_15_smi450_fenced.txt")
    assert report.origin.detail is not None and report.origin.detail.endswith("(nvidia-smi)")
    assert report.gpu.data is not None
    assert [g.name for g in report.gpu.data.gpus or ()] == ["TITAN Xp"]


def test_pip_list_with_editable_column_in_prose() -> None:
    """vllm-project/vllm#3387 (trimmed): pip list with its 'Editable project location' column
    after a traceback in prose."""
    found = packages(load("vllm_3387_pip_list_editable.txt"))
    assert found["vllm"] == "0.3.3" and found["xformers"] == "0.0.23.post1"
    assert found["torch"] == "2.1.2"


MIXED = """\
I get an error when importing vllm.

```
$ nvidia-smi
Mon Nov 13 10:02:11 2023
+---------------------------------------------------------------------------------------+
| NVIDIA-SMI 535.104.05             Driver Version: 535.104.05   CUDA Version: 12.2     |
|-----------------------------------------+----------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |
|=========================================+======================+======================|
|   0  NVIDIA A100-SXM4-80GB          On  | 00000000:07:00.0 Off |                    0 |
| N/A   33C    P0              61W / 400W |      4MiB / 81920MiB |      0%      Default |
+-----------------------------------------+----------------------+----------------------+
```
$ pip freeze | grep -i nvidia
nvidia-cublas-cu12==12.1.3.1
nvidia-nccl-cu12==2.18.1
-e git+https://github.com/me/proj.git@abc#egg=proj
mypkg @ file:///home/me/mypkg
$ pip install torch==2.5.1
$ uname -a
Linux gpu-node-1 5.15.0-88-generic #98-Ubuntu SMP Mon Oct 2 15:18:56 UTC 2023 x86_64 x86_64 x86_64 GNU/Linux
$ cat /etc/os-release
PRETTY_NAME="Ubuntu 22.04.3 LTS"
VERSION_ID="22.04"
ID=ubuntu
$ cat /proc/driver/nvidia/version
NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023
$ ray status
======== Autoscaler status: 2023-11-13 10:05:00.123456 ========
Node status
 0.0/8.0 GPU
"""


def test_every_section_of_a_mixed_paste() -> None:
    report = text(MIXED)
    gpu = report.gpu.data
    assert gpu is not None and gpu.driver_version == "535.104.05"
    assert [g.name for g in gpu.gpus or ()] == ["NVIDIA A100-SXM4-80GB"]
    found = packages(report)
    assert found["nvidia-cublas-cu12"] == "12.1.3.1"
    assert found["proj"] == found["mypkg"] == "unknown"
    assert "torch" not in found  # 'pip install torch==2.5.1' is a command, not what is installed
    system = report.system.data
    assert system is not None
    assert (system.kernel, system.arch, system.os_id) == ("5.15.0-88-generic", "x86_64", "ubuntu")
    detail = report.origin.detail or ""
    for said in ("nvidia-smi lines", "pip freeze lines", "uname -a", "/etc/os-release"):
        assert said in detail
    assert "skipped: ray status" in detail


def test_split_ends_sections_at_fences_and_prompts() -> None:
    body = (
        "```\n| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2 |\n```\n"
        "$ pip freeze\na==1.0\nb==2.0\n$ uname -a\n"
        "Linux h 5.15.0-88-generic #98-Ubuntu SMP Mon Oct 2 15:18:56 UTC 2023 x86_64 GNU/Linux\n"
    )
    parts = split(body, boundaries(body))
    assert [(p.kind, p.start, p.end) for p in parts] == [
        ("nvidia-smi", 1, 2),
        ("pip-freeze", 4, 6),
        ("uname", 7, 8),
    ]


def test_collapsed_pip_list_columns_are_read_by_words() -> None:
    """A pip list whose padding a paste collapsed: the dashed rule's columns no longer fit."""
    report = text("Package Version\n------- -------\naccelerate 0.21.0\ntorch 2.1.0+cu121\n")
    assert packages(report) == {"accelerate": "0.21.0", "torch": "2.1.0+cu121"}


def test_markdown_table_rows_are_read() -> None:
    report = text("| Item | Value |\n|---|---|\n| Python | 3.10.12 |\n| Driver | 535.104.05 |\n")
    assert report.python.data is not None and report.python.data.version == "3.10.12"
    assert report.gpu.data is not None and report.gpu.data.driver_version == "535.104.05"


@pytest.mark.parametrize(
    ("body", "driver", "cuda"),
    [
        (
            "NVRM version:   525.85.12\nCUDA version:   12.0\n\nDevice Index:   0\n"
            "Model:          NVIDIA GeForce RTX 3090\nArchitecture:   8.6\n",
            "525.85.12",
            "12.0",
        ),
        (
            "$ dpkg -l | grep nvidia\n"
            "ii  nvidia-driver-535    535.129.03-0ubuntu0.22.04.1  amd64  NVIDIA driver metapackage\n"
            "ii  nvidia-utils-535     535.129.03-0ubuntu0.22.04.1  amd64  NVIDIA driver support\n",
            "535.129.03",
            None,
        ),
        (
            "[  123.4] NVRM: API mismatch: the client has the version 535.129.03, but\n"
            "           NVRM: this kernel module has the version 535.104.05.  Please\n",
            "535.104.05",
            None,
        ),
    ],
)
def test_driver_outputs(body: str, driver: str, cuda: str | None) -> None:
    report = text(body)
    assert report.gpu.data is not None
    assert (report.gpu.data.driver_version, report.gpu.data.cuda_driver_version) == (driver, cuda)


def test_nothing_readable_is_one_line_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("$ ldd ./a.out\n\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x7f)\n")
    with pytest.raises(FormatError, match="skipped: ldd output"):
        parse(read_source(str(path)))
    result: CliResult = run_cli("check", "--from", str(path))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_check_on_a_pasted_nvml_mismatch_names_the_reboot() -> None:
    result = run_cli("check", "--from", str(PASTES / "tinygrad_47_nvml_mismatch.txt"), "--json")
    assert result.returncode == 1
    findings = result.json()["data"]["findings"]
    mismatch = [f for f in findings if f["code"] == "GPU102"]
    assert mismatch and "reboot" in mismatch[0]["fix"]["summary"].lower()


def test_check_on_a_pasted_driver_not_loaded_names_dkms() -> None:
    result = run_cli("check", "--from", str(PASTES / "envs_4_smi_failed_nvcc.txt"), "--json")
    findings = {f["code"]: f for f in result.json()["data"]["findings"]}
    assert "DRV151" in findings
    assert "dkms" in str(findings["DRV151"]["fix"]).lower()


def test_triage_goes_on_when_the_pasted_text_states_no_fact(tmp_path: Path) -> None:
    """A --from text with no environment fact (prose): check refuses it (exit 2, one line);
    triage checks the log's causes without a node and says why."""
    prose = tmp_path / "comment.txt"
    prose.write_text("I ran the script and it crashed, see the log below.\n")
    log = tmp_path / "job.log"
    log.write_text("Failed to initialize NVML: Driver/library version mismatch\n")
    refused = run_cli("check", "--from", str(prose))
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1
    result = run_cli("triage", str(log), "--from", str(prose), "--json")
    assert result.returncode == 1, result.stderr
    data = result.json()["data"]
    assert "not checked against --from" in json.dumps(data)
    causes = [c for m in data["matches"] for c in m["causes"]]
    assert any(c["code"] == "GPU102" and c["verdict"] == "confirmed" for c in causes)


def test_a_banner_without_gpu_rows_leaves_the_gpus_unknown() -> None:
    """The banner quoted alone (pytorch/pytorch#85332) says nothing about the GPUs: unknown,
    not an empty list (which would read as 'the driver shows no GPUs', DRV103)."""
    gpu = load("pytorch_85332_oneline_banner.txt").gpu.data
    assert gpu is not None and gpu.gpus is None
    assert gpu.gpus_reason == "the nvidia-smi text has its banner but no GPU rows"
