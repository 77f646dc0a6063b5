"""The log is evidence about the node: the signatures' extractors read facts from the matched
lines, triage checks the causes on them (alone, or merged with a given node, the log first), and
every listed cause carries a fix."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from envcheck.triage.extract import FACTS, extract, extractor_problem, to_report
from envcheck.triage.run import log_facts, scan_log
from tests.conftest import CliResult
from tests.evidence.shared import matrix, write


def fix_text(fix: dict) -> str:  # type: ignore[type-arg]
    """A cause's or finding's fix (summary and commands) as one text."""
    return "\n".join([fix["summary"], *fix["commands"]])


INGEST = Path(__file__).parent.parent / "fixtures" / "ingest"

# real-format lines, as the tools print them (sources in matrices/signatures/*.toml)
LINES: list[tuple[str, str, dict[str, str]]] = [
    (
        "sm-not-compatible",
        "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current "
        "PyTorch installation.",
        {"gpu_name": "NVIDIA GeForce RTX 5090", "gpu_sm": "120"},
    ),
    (
        "driver-too-old",
        "RuntimeError: The NVIDIA driver on your system is too old (found version 12080). "
        "Please update your GPU driver",
        {"driver_cuda": "12080"},
    ),
    (
        "pip-resolver-conflict",
        "vllm 0.6.3 requires torch==2.4.0, but you have torch 2.5.1 which is incompatible.",
        {
            "pkg_name": "vllm",
            "pkg_version": "0.6.3",
            "pkg2_name": "torch",
            "pkg2_version": "2.5.1",
            "requires": "vllm 0.6.3 requires torch==2.4.0, but you have torch 2.5.1",
        },
    ),
    (
        "nccl-version-banner",
        "gpu-node-3:2715:2715 [0] NCCL INFO NCCL version 2.25.1+cuda12.8",
        {"nccl_version": "2.25.1", "nccl_cuda": "12.8", "nccl_host": "gpu-node-3"},
    ),
    (
        "ray-memory-monitor-kill",
        "(raylet) Memory on the node (IP: 10.0.0.50, ID: 4a8c) where the task (task ID: ffff, "
        "name=WorkerDict.generate_sequences, pid=1234, memory used=0.10GB) was running was "
        "30.50GB / 32.00GB (0.953125), which exceeds the memory usage threshold of 0.95. Ray "
        "killed this worker (ID: 9f8c) because it was the most recently scheduled task",
        {"mem_used_gb": "30.50", "mem_total_gb": "32.00", "mem_threshold": "0.95"},
    ),
    (
        "ray-object-store-in-tmp",
        "2024-05-01 10:00:00,000 WARNING services.py:1996 -- WARNING: The object store is using "
        "/tmp instead of /dev/shm because /dev/shm has only 67108864 bytes available. This will "
        "harm performance!",
        {"shm_bytes": "67108864"},
    ),
    (
        "ray-disk-over-threshold",
        "(raylet) file_system_monitor.cc:116: /tmp/ray/session_2024-05-01_10-00-00_1 is over 95% "
        "full, available space: 10520260608 Bytes; capacity: 210452901888 Bytes. Object creation "
        "will fail if spilling is required.",
        {
            "disk_path": "/tmp/ray/session_2024-05-01_10-00-00_1",
            "disk_free": "10520260608",
            "disk_total": "210452901888",
        },
    ),
    (
        "gloo-unable-to-find-address",
        "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:83] "
        "ifa != nullptr. Unable to find address for: ^lo,docker0",
        {"iface": "^lo,docker0"},
    ),
    (
        "undefined-symbol-vllm",
        "ImportError: /usr/local/lib/python3.10/dist-packages/vllm/_C.abi3.so: undefined symbol: "
        "_ZN5torch7LibraryC1E",
        {
            "site_python": "3.10",
            "library_path": "/usr/local/lib/python3.10/dist-packages/vllm/_C.abi3.so",
            "undefined_symbol": "_ZN5torch7LibraryC1E",
        },
    ),
]


@pytest.mark.parametrize(("sig_id", "line", "expected"), LINES)
def test_extractor_reads_the_facts_on_its_line(
    tmp_path: Path, sig_id: str, line: str, expected: dict[str, str]
) -> None:
    log = write(tmp_path, f"INFO start\n{line}\nINFO end\n")
    _name, scan = scan_log(str(log), matrix())
    assert list(scan.tallies) == [sig_id]
    facts = log_facts(str(log), scan)
    assert {f.name: f.value for f in facts} == expected
    assert {f.line for f in facts} == {2}


def test_every_extractor_names_known_facts() -> None:
    extractors = [p for s in matrix().signatures for p in s.extract]
    assert len(extractors) >= 12
    assert all(extractor_problem(p) is None for p in extractors)
    assert extractor_problem("(?P<colour>red)") is not None
    assert extractor_problem("no groups") is not None
    assert set(FACTS) >= {"gpu_name", "gpu_sm", "driver_cuda", "shm_bytes", "address"}


def test_ray_version_mismatch_reads_the_lines_after_it(tmp_path: Path) -> None:
    log = write(
        tmp_path,
        "RuntimeError: Version mismatch: The cluster was started with:\n"
        "    Ray: 2.9.0\n    Python: 3.10.12\n"
        "This process on node 10.0.0.2 was started with:\n"
        "    Ray: 2.9.3\n    Python: 3.10.13\n",
    )
    facts = {f.name: f.value for f in log_facts(str(log), scan_log(str(log), matrix())[1])}
    assert facts == {
        "ray_cluster_version": "2.9.0",
        "python_cluster_version": "3.10.12",
        "ray_version": "2.9.3",
        "python_version": "3.10.13",
    }


def test_facts_become_a_report_that_says_which_line() -> None:
    sig = next(s for s in matrix().signatures if s.id == "sm-not-compatible")
    facts = tuple(extract(sig, 7, LINES[0][1]))
    report = to_report(facts, "job.log")
    assert report is not None and report.gpu.data is not None
    gpu = report.gpu.data.gpus[0]  # type: ignore[index]
    assert (gpu.name, gpu.compute_capability) == ("NVIDIA GeForce RTX 5090", "12.0")
    assert report.gpu.source == "log (job.log line 7)"
    assert to_report((), "job.log") is None


def triage(cli: Callable[..., CliResult], *args: str) -> dict[str, Any]:
    result = cli("triage", *args, "--json")
    assert result.returncode == 1, result.stderr
    data: dict[str, Any] = result.json()["data"]
    return data


def causes(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["code"]: c for m in data["matches"] for c in m["causes"]}


def test_log_alone_confirms_a_cause_and_says_from_which_line(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = write(tmp_path, "\n".join(line for _, line, _ in LINES[:3]) + "\n")
    data = triage(cli, str(log), "--no-probe")
    found = causes(data)
    assert found["TOR101"]["verdict"] == "confirmed"
    assert found["TOR101"]["evidence"].startswith("confirmed from line 1")
    assert "pip install torch==" in fix_text(found["TOR101"]["fix"])
    assert found["VLM101"]["verdict"] == "confirmed"
    assert "line 3" in found["VLM101"]["evidence"]
    assert "2.4.0" in fix_text(found["VLM101"]["fix"])
    assert {"fact": "gpu_sm", "value": "120", "line": 1, "signature": "sm-not-compatible"} in (
        data["facts"]
    )


def test_sm_line_alone_confirms_tor101_with_the_builds_that_have_its_kernels(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = write(tmp_path, "UserWarning:\n" + LINES[0][1] + "\n")
    tor101 = causes(triage(cli, str(log), "--no-probe"))["TOR101"]
    assert (tor101["verdict"], tor101["evidence"]) == ("confirmed", "confirmed from line 2")
    # the line carries TOR101's finding (rules/node/torch_stated.py): the closest build with
    # sm_120 kernels, on its CUDA variant's index (CUDA 12.8 is the first to compile sm_120)
    (finding,) = tor101["findings"]
    assert "(sm_120) has no kernels" in finding["message"]
    assert tor101["fix"]["summary"].startswith(
        "Install torch 2.7.0+cu128, the closest build with sm_120 kernels"
    )
    assert "--index-url https://download.pytorch.org/whl/cu128" in fix_text(tor101["fix"])


def test_every_listed_cause_has_a_fix(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    log = write(tmp_path, "\n".join(line for _, line, _ in LINES) + "\n")
    listed = causes(triage(cli, str(log), "--no-probe"))
    assert len(listed) >= 10
    for code, cause in listed.items():
        assert cause["fix"] or (cause["verdict"] == "ruled_out" and cause["reason"]), code
        if cause["verdict"] in ("unknown", "unchecked"):
            assert cause["fix"]["summary"].startswith("if "), code


def test_shm_failure_prints_the_shm_size_flag(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = write(
        tmp_path,
        "node1:77:77 [0] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space "
        "left on device\nnode1:77:77 [0] NCCL INFO ncclShmOpen failed\n",
    )
    result = cli("triage", str(log), "--no-probe")
    assert result.returncode == 1
    assert "--shm-size" in result.stdout
    # ENOSPC is NCCL saying /dev/shm had no room: the line confirms SYS101, with its finding
    sys101 = causes(triage(cli, str(log), "--no-probe"))["SYS101"]
    assert (sys101["verdict"], sys101["evidence"]) == ("confirmed", "confirmed from line 1")
    (finding,) = sys101["findings"]
    assert finding["severity"] == "error"
    assert any("--shm-size=" in c and "emptyDir" in c for c in finding["fix"]["commands"])


def test_shm_failure_without_its_errno_names_dev_shm(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """'Error while creating shared memory segment' states no errno, but names the segment
    NCCL creates in /dev/shm: with no node facts it confirms SYS101 (a full or small /dev/shm);
    a node known not to be a container, or a /dev/shm of 1 GiB or more, leaves it open or rules
    it out (tests/triage/test_from_log_cuda.py)."""
    log = write(
        tmp_path,
        "NCCL WARN Error while creating shared memory segment /dev/shm/nccl-pZafXL (size 7340384)\n",
    )
    sys101 = causes(triage(cli, str(log), "--no-probe"))["SYS101"]
    assert sys101["verdict"] == "confirmed"
    (finding,) = sys101["findings"]
    assert "7.0 MiB segment" in finding["message"]
    assert "--shm-size" in " ".join(finding["fix"]["commands"]) + finding["fix"]["summary"]


def test_memory_monitor_line_alone_is_recognised_and_confirmed(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = write(tmp_path, LINES[4][1] + "\n")
    data = triage(cli, str(log), "--no-probe")
    assert [m["id"] for m in data["matches"]] == ["ray-memory-monitor-kill"]
    ray106 = causes(data)["RAY106"]
    assert ray106["verdict"] == "confirmed"
    assert "line 1" in ray106["evidence"]


def test_log_facts_merge_with_the_dump_the_log_first(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    # the dump says torch 2.4.0 (vLLM 0.6.3's pin); the log shows pip installed torch 2.5.1
    dump = (INGEST / "collect_env_tinyzero_h20.txt").read_text()
    log = write(tmp_path, LINES[2][1] + "\n")
    dump_path = write(tmp_path, dump, "dump.txt")
    found = causes(triage(cli, str(log), "--from", str(dump_path)))
    assert found["VLM101"]["verdict"] == "confirmed"
    # H20 (sm_90) is in torch 2.4.0+cu121's arch list: the dump rules TOR101 out, and says why
    quiet = write(
        tmp_path,
        "RuntimeError: CUDA error: no kernel image is available for execution on the device\n",
        "b.log",
    )
    found = causes(triage(cli, str(quiet), "--from", str(dump_path)))
    assert found["TOR101"]["verdict"] == "ruled_out"
    assert found["TOR101"]["reason"].startswith("TOR101 ran on the node's facts")


def test_wrapped_lines_are_matched_and_read_with_their_context(tmp_path: Path) -> None:
    # as pasted in ray-project/ray#36959 and allenai/open-instruct#1067: the message wrapped
    log = write(
        tmp_path,
        "(raylet) file_system_monitor.cc:111: \n"
        "/tmp/ray/session_2023-06-29_11-21-28_818264_5598 is over 95% full, \n"
        "available space: 1392345088; capacity: 269427478528. \n"
        "Object creation will fail if spilling is required\n"
        "2025-10-09 20:16:32,652    WARNING services.py:2159 -- WARNING: The object store is using /tmp instead\n"
        "  of /dev/shm because /dev/shm has only 5368709120 bytes available. This will harm performance!\n",
    )
    _name, scan = scan_log(str(log), matrix())
    assert set(scan.tallies) == {"ray-disk-over-threshold", "ray-object-store-in-tmp"}
    facts = {f.name: f.value for f in log_facts(str(log), scan)}
    assert facts == {
        "disk_path": "/tmp/ray/session_2023-06-29_11-21-28_818264_5598",
        "disk_free": "1392345088",
        "disk_total": "269427478528",
        "shm_bytes": "5368709120",
    }
