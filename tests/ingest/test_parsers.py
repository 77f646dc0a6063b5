"""Every parser on real-format samples (tests/fixtures/ingest/README.md says where each is from),
with every field they carry checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from envcheck.ingest.common import read_source
from envcheck.ingest.detect import detect, parse
from envcheck.model.report import NodeReport

INGEST = Path(__file__).parent.parent / "fixtures" / "ingest"


def load(name: str) -> NodeReport:
    return parse(read_source(str(INGEST / name)))


def versions(report: NodeReport) -> dict[str, str]:
    assert report.packages.data is not None
    return {d.key: d.version for d in report.packages.data.distributions}


DETECTED = [
    ("collect_env_torch2.13_cpu.txt", "collect-env"),
    ("collect_env_torch2.3_h20.txt", "collect-env"),
    ("collect_env_torch1.7_t4.txt", "collect-env"),
    ("collect_env_tinyzero_h20.txt", "vllm-env"),
    ("collect_env_vllm0.4_conda_torch.txt", "vllm-env"),
    ("collect_env_vllm_sectioned_h20.txt", "vllm-env"),
    ("sglang_check_env.txt", "sglang-env"),
    ("pip_freeze.txt", "pip-freeze"),
    ("uv_pip_freeze.txt", "pip-freeze"),
    ("pip_list.txt", "pip-list"),
    ("pip_list_v.txt", "pip-list"),
    ("pip_list.json", "pip-json"),
    ("conda_list.txt", "conda-list"),
    ("conda_env_export.yml", "conda-env"),
    ("nvidia_smi_535_h20.txt", "nvidia-smi"),
    ("nvidia_smi_470_a10g.txt", "nvidia-smi"),
    ("nvidia_smi_580_t4.txt", "nvidia-smi"),
    ("nvidia_smi_q.txt", "nvidia-smi-q"),
    ("nvidia_smi_query.csv", "nvidia-smi-csv"),
    ("nvidia_smi_q_x.xml", "nvidia-smi-xml"),
]


@pytest.mark.parametrize(("name", "fmt"), DETECTED)
def test_detects_format(name: str, fmt: str) -> None:
    assert detect(read_source(str(INGEST / name)).text) == fmt


def test_every_fixture_is_covered() -> None:
    samples = {p.name for p in INGEST.iterdir() if p.name != "README.md"}
    assert samples == {name for name, _ in DETECTED}


@pytest.mark.parametrize(("name", "fmt"), DETECTED)
def test_provenance_and_unknown_sections(name: str, fmt: str) -> None:
    report = load(name)
    assert report.origin.kind == "ingested"
    assert report.origin.detail is not None and name in report.origin.detail
    # nothing any of these texts says about storage, network or graphics
    for section in (report.storage, report.network, report.graphics, report.libraries):
        assert not section.is_ok
        assert section.reason and section.reason.startswith("not in ")
    assert NodeReport.from_dict(report.to_dict()) == report


# --- torch's collect_env -----------------------------------------------------------------------


def test_collect_env_tinyzero_every_field() -> None:
    r = load("collect_env_tinyzero_h20.txt")
    assert r.gpu.data is not None and r.gpu.data.gpus is not None
    assert r.gpu.data.driver_version == "535.161.08"
    assert r.gpu.data.cuda_driver_version is None  # collect_env does not say
    assert [(g.index, g.name) for g in r.gpu.data.gpus] == [(i, "NVIDIA H20") for i in range(8)]
    assert r.python.data is not None and r.python.data.version == "3.9.19"
    assert r.python.data.markers["python_version"] == "3.9"
    assert r.python.data.markers["platform_machine"] == "x86_64"
    assert r.torch.data is not None
    assert (r.torch.data.version, r.torch.data.cuda, r.torch.data.variant) == (
        "2.4.0+cu121",
        "12.1",
        "cu121",
    )
    assert r.torch.data.installed_cuda["nvidia-cublas-cu12"] == "12.1.3.1"
    v = versions(r)
    assert v["torch"] == "2.4.0"
    assert v["vllm"] == "0.6.3"  # from "vLLM Version:"
    assert v["nvidia-cublas-cu12"] == "12.1.3.1"
    assert v["numpy"] == "1.26.4"
    assert v["transformers"] == "4.46.1"
    assert len(v) == 20  # 19 pip lines + vLLM; the [conda] pypi rows repeat them
    assert r.packages.data is not None and r.packages.data.partial
    s = r.system.data
    assert s is not None
    assert (s.os_id, s.os_version, s.os_pretty) == ("ubuntu", "22.04", "Ubuntu 22.04.3 LTS")
    assert (s.kernel, s.arch, s.glibc, s.cpu_count) == (
        "5.10.134-13.al8.x86_64",
        "x86_64",
        "2.35",
        192,
    )
    # "CUDA runtime version" is nvcc's: the toolkit, never torch's CUDA
    assert s.nvcc is not None and s.nvcc.version == "12.2"
    assert any("nvcc on PATH" in n and "12.2.140" in n for n in r.system.notes)
    assert any("cuDNN" in n and "8.9.5" in n and "system" in n for n in r.torch.notes)
    assert not r.env.is_ok


def test_collect_env_cpu_build_from_this_machine() -> None:
    r = load("collect_env_torch2.13_cpu.txt")
    assert r.torch.data is not None
    assert (r.torch.data.version, r.torch.data.variant, r.torch.data.cuda) == (
        "2.13.0+cpu",
        "cpu",
        None,
    )
    assert not r.gpu.is_ok and "could not collect" in (r.gpu.reason or "")
    assert versions(r) == {"torch": "2.13.0+cpu"}
    assert r.python.data is not None and r.python.data.version == "3.11.7"
    s = r.system.data
    assert s is not None
    assert (s.os_id, s.os_version, s.glibc, s.cpu_count, s.arch) == (
        "debian",
        "12",
        "2.36",
        2,
        "x86_64",
    )
    assert s.nvcc is not None and s.nvcc.version == "13.0"
    assert s.nvcc_searched
    assert any("CPU build" in n for n in r.system.notes)


def test_collect_env_torch_1x_format() -> None:
    r = load("collect_env_torch1.7_t4.txt")
    assert r.torch.data is not None
    assert (r.torch.data.version, r.torch.data.cuda, r.torch.data.variant) == (
        "1.7.0+cu101",
        "10.1",
        "cu101",
    )
    assert r.gpu.data is not None and r.gpu.data.gpus is not None
    assert r.gpu.data.driver_version == "418.67"
    assert [g.name for g in r.gpu.data.gpus] == ["Tesla T4"]
    assert r.python.data is not None and r.python.data.version == "3.6"
    assert r.system.data is not None
    assert r.system.data.glibc is None  # no "Libc version" line in 1.x
    assert r.system.data.kernel is None  # no "Python platform" line in 1.x
    assert versions(r)["torchvision"] == "0.8.1+cu101"


def test_collect_env_conda_torch_and_glued_vllm_line() -> None:
    r = load("collect_env_vllm0.4_conda_torch.txt")
    assert r.packages.data is not None
    torch = r.packages.data.get("torch")
    assert torch is not None and (torch.version, torch.installer) == ("2.1.2", "conda")
    v = versions(r)
    assert v["vllm"] == "0.4.0.post1"  # "[conda] ...pytorchROCM Version:" split apart
    assert v["pytorch-cuda"] == "12.1"
    assert v["cudatoolkit"] == "11.8.0"
    assert r.torch.data is not None and r.torch.data.cuda == "12.1"
    assert r.system.data is not None and r.system.data.nvcc is None  # "Could not collect"
    # ... which is collect_env's `nvcc --version` failing: no toolkit on PATH, not "unknown"
    assert r.system.data.nvcc_searched
    assert any("no CUDA toolkit (nvcc) on PATH" in n for n in r.system.notes)
    assert [g.name for g in (r.gpu.data.gpus or ())] == ["NVIDIA A100-SXM4-80GB"] * 2  # type: ignore[union-attr]


def test_vllm_sectioned_format() -> None:
    r = load("collect_env_vllm_sectioned_h20.txt")
    assert r.torch.data is not None
    assert (r.torch.data.version, r.torch.data.cuda) == ("2.9.0+cu128", "12.8")
    assert r.gpu.data is not None and r.gpu.data.driver_version == "580.82.07"
    assert len(r.gpu.data.gpus or ()) == 8
    v = versions(r)
    assert (v["vllm"], v["numpy"], v["nvidia-cublas-cu12"], v["flashinfer-python"]) == (
        "0.11.2",
        "2.2.6",
        "12.8.4.1",
        "0.4.1",
    )
    assert r.python.data is not None and r.python.data.version == "3.12.11"
    assert r.system.data is not None and r.system.data.nvcc is not None
    assert r.system.data.nvcc.version == "13.0"
    assert r.system.data.cpu_count == 128
    # vLLM lists only some variables: the environment stays unknown, with the reason
    assert not r.env.is_ok and "only some variables" in (r.env.reason or "")


def test_sglang_check_env() -> None:
    r = load("sglang_check_env.txt")
    g = r.gpu.data
    assert g is not None and g.gpus is not None
    assert g.driver_version == "535.104.12"
    assert [(x.index, x.name, x.compute_capability) for x in g.gpus] == [(0, "NVIDIA A40", "8.6")]
    v = versions(r)
    assert v["torch"] == "2.4.0+cu121"
    assert v["sglang"] == "0.4.0.post2"
    assert v["vllm"] == "0.6.3.post1"
    assert v["pyzmq"] == "26.2.0"  # printed as its import name, zmq
    assert v["python-multipart"] == "0.0.20"
    assert "decord" not in v  # "Module Not Found"
    assert r.torch.data is not None and r.torch.data.variant == "cu121"
    assert r.python.data is not None and r.python.data.version == "3.11.5"
    assert r.system.data is not None and r.system.data.nvcc is not None
    assert r.system.data.nvcc.version == "12.1"


# --- pip and uv ----------------------------------------------------------------------------------


FROM_THIS_MACHINE = {
    "envcheck": "0.1.0",
    "filelock": "4.2.11",
    "fsspec": "2026.9.0",
    "jinja2": "3.1.6",
    "localpkg": "0.3.1",
    "markupsafe": "3.0.4",
    "mpmath": "1.3.0",
    "networkx": "3.6.1",
    "numpy": "1.26.4",
    "pip": "23.2.1",
    "setuptools": "84.2.1",
    "sympy": "1.14.0",
    "torch": "2.13.0+cpu",
    "typing-extensions": "4.16.0",
    "uv": "0.13.9",
}


@pytest.mark.parametrize(
    ("name", "expected", "partial"),
    [
        # pip freeze: no pip/setuptools; a local directory has no version in the text
        (
            "pip_freeze.txt",
            {
                **{k: v for k, v in FROM_THIS_MACHINE.items() if k not in ("pip", "setuptools")},
                "localpkg": "unknown",
            },
            False,
        ),
        # uv pip freeze: lists pip and setuptools, but writes the editable install without a name
        (
            "uv_pip_freeze.txt",
            {
                **{k: v for k, v in FROM_THIS_MACHINE.items() if k != "envcheck"},
                "localpkg": "unknown",
            },
            True,
        ),
        ("pip_list.txt", FROM_THIS_MACHINE, False),
        ("pip_list_v.txt", FROM_THIS_MACHINE, False),
        ("pip_list.json", FROM_THIS_MACHINE, False),
    ],
)
def test_pip_lists(name: str, expected: dict[str, str], partial: bool) -> None:
    r = load(name)
    assert versions(r) == expected
    assert r.packages.data is not None
    assert bool(r.packages.data.partial) is partial
    assert r.torch.data is not None and r.torch.data.variant == "cpu"
    editable = r.packages.data.get("envcheck")
    if editable is not None:
        assert editable.installer == "editable"
    for section in (r.gpu, r.python, r.system, r.env):
        assert not section.is_ok


def test_pip_list_verbose_columns() -> None:
    r = load("pip_list_v.txt")
    assert r.packages.data is not None
    torch = r.packages.data.get("torch")
    assert torch is not None
    assert torch.location == "/tmp/ce/venv/lib/python3.11/site-packages"
    assert torch.installer == "pip"


def test_pip_freeze_forms() -> None:
    from envcheck.ingest.common import Source
    from envcheck.ingest.pip import parse_freeze

    text = (
        "# comment\n"
        "torch @ https://download.pytorch.org/whl/cu121/torch-2.4.0%2Bcu121-cp310-cp310-linux_x86_64.whl\n"
        "flash-attn @ file:///root/flash_attn-2.6.3-cp310-cp310-linux_x86_64.whl\n"
        "-e git+https://github.com/volcengine/verl.git@abc123#egg=verl\n"
        "ray[default]==2.40.0\n"
        "--index-url https://example.invalid/simple\n"
    )
    r = parse_freeze(Source("freeze.txt", text))
    assert versions(r) == {
        "torch": "2.4.0+cu121",
        "flash-attn": "2.6.3",
        "verl": "unknown",
        "ray": "2.40.0",
    }
    assert r.torch.data is not None and r.torch.data.variant == "cu121"


# --- conda ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["conda_list.txt", "conda_env_export.yml"])
def test_conda(name: str) -> None:
    r = load(name)
    assert r.python.data is not None
    assert (r.python.data.version, r.python.data.env_kind, r.python.data.env_name) == (
        "3.9.20",
        "conda",
        "zero",
    )
    assert r.python.data.prefix == "/home/user/miniconda3/envs/zero"
    v = versions(r)
    assert v["torch"] == "2.4.0"
    assert v["nvidia-cublas-cu12"] == "12.1.3.1"
    assert v["vllm"] == "0.6.3"
    assert v["ray"] == "2.40.0"
    assert "python" not in v
    assert r.packages.data is not None and r.packages.data.partial is None


def test_conda_list_torch_build() -> None:
    r = load("conda_list.txt")
    assert r.packages.data is not None
    torch = r.packages.data.get("torch")
    assert torch is not None and torch.installer == "conda"
    cublas = r.packages.data.get("nvidia-cublas-cu12")
    assert cublas is not None and cublas.installer == "pip"
    assert r.torch.data is not None and (r.torch.data.cuda, r.torch.data.variant) == (
        "12.1",
        "cu121",
    )


def test_conda_env_export_pip_block() -> None:
    r = load("conda_env_export.yml")
    v = versions(r)
    assert v["verl"] == "unknown"  # "verl @ file:///..."
    assert v["pip"] == "24.2"
    assert any("verl" in n for n in r.packages.notes)


def test_conda_from_history_is_partial() -> None:
    from envcheck.ingest.common import Source
    from envcheck.ingest.conda import parse_env_export

    text = "name: x\nchannels:\n  - defaults\ndependencies:\n  - python=3.10\n  - pytorch\nprefix: /opt/x\n"
    r = parse_env_export(Source("h.yml", text))
    assert r.packages.data is not None and r.packages.data.partial
    assert r.python.data is not None and r.python.data.version == "3.10"


# --- nvidia-smi ----------------------------------------------------------------------------------


def gpus(report: NodeReport) -> list[tuple[object, ...]]:
    assert report.gpu.data is not None and report.gpu.data.gpus is not None
    return [
        (
            g.index,
            g.name,
            g.memory_used_mib,
            g.memory_total_mib,
            g.persistence_mode,
            g.process_count,
            g.process_memory_mib,
            g.compute_capability,
        )
        for g in report.gpu.data.gpus
    ]


@pytest.mark.parametrize(
    ("name", "driver", "cuda", "expected"),
    [
        (
            "nvidia_smi_535_h20.txt",
            "535.161.08",
            "12.2",
            [
                (0, "NVIDIA H20", 81234, 97871, True, 1, 81222, None),
                (1, "NVIDIA H20", 4, 97871, True, 0, 0, None),
            ],
        ),
        (
            "nvidia_smi_470_a10g.txt",
            "470.256.02",
            "11.4",
            [
                (0, "NVIDIA A10G", 0, 22731, True, 0, 0, None),
                (1, "NVIDIA A100-SXM...", 0, 81251, True, 0, 0, None),
            ],
        ),
        (
            "nvidia_smi_580_t4.txt",
            "580.126.09",
            "13.0",
            [(0, "Tesla T4", 167, 15360, True, None, None, None)],
        ),
        (
            "nvidia_smi_q.txt",
            "510.68.02",
            "11.6",
            [(0, "NVIDIA GeForce GTX 1650", 1210, 4096, False, 2, 1204, None)],
        ),
        (
            "nvidia_smi_query.csv",
            "550.54.15",
            None,
            [
                (0, "NVIDIA H100 80GB HBM3", 0, 81559, None, None, None, "9.0"),
                (1, "NVIDIA H100 80GB HBM3", 72459, 81559, None, None, None, "9.0"),
            ],
        ),
    ],
)
def test_nvidia_smi(name: str, driver: str, cuda: str | None, expected: list[object]) -> None:
    r = load(name)
    assert r.gpu.data is not None
    assert (r.gpu.data.driver_version, r.gpu.data.cuda_driver_version) == (driver, cuda)
    assert gpus(r) == expected
    for section in (r.packages, r.torch, r.python, r.system):
        assert not section.is_ok


def test_nvidia_smi_notes() -> None:
    assert any("truncated" in n for n in load("nvidia_smi_470_a10g.txt").gpu.notes)
    assert any("Processes table" in n for n in load("nvidia_smi_580_t4.txt").gpu.notes)


def test_the_command_lines_format_names_are_the_parsers() -> None:
    """--from-format's help lists the formats without importing every parser; the list is the
    parsers' own."""
    from envcheck.cli.from_opts import FORMAT_NAMES
    from envcheck.ingest.detect import FORMATS

    assert tuple(FORMATS) == FORMAT_NAMES
