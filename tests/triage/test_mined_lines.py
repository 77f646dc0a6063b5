"""Real failure lines of the memory, arch, CUDA-library, NCCL and driver families, mined from
public threads of many libraries (tests/triage/data/mined_lines.toml, each with its thread):
every line names a cause of its family, as the thread printed it and behind the prefixes and
wrappers logs add (Ray's worker prefix, torchrun's rank prefix, timestamps, docker compose's
service column, ANSI colours); the broad fallbacks stay silent on lines of healthy runs."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from envcheck.matrix_validate import load
from envcheck.triage.scan import Scanner
from tests.triage.mined_lines import Mined, matched, mined, names_cause, rates

ROWS = mined()
SCANNER = Scanner(load([]).signatures, "re")

WRAPPERS: dict[str, Callable[[str], str]] = {
    "ray-worker": lambda line: f"(RayWorkerWrapper pid=2202490) {line}",
    "ray-task": lambda line: f"(pid=12345, ip=10.0.0.2) {line}",
    "torchrun-rank": lambda line: f"[rank3]: {line}",
    "timestamp": lambda line: f"2025-03-01 12:00:01,123 - ERROR - {line}",
    "compose": lambda line: f"trainer-1  | {line}",
    "ansi": lambda line: f"\x1b[31m{line}\x1b[0m",
}


def _id(row: Mined) -> str:
    return f"{row.family}:{row.url.rsplit('/', 3)[-3]}-{row.url.rsplit('/', 1)[-1]}"


def _expected(row: Mined, text: str) -> None:
    signatures = matched(SCANNER, text)
    assert names_cause(signatures, row.expect), (text, [s.id for s in signatures], row.expect)


def test_the_table_is_real_threads_of_each_family() -> None:
    assert len(ROWS) >= 100
    assert all(row.url.startswith("https://github.com/") for row in ROWS)
    assert len({row.url for row in ROWS}) >= 80  # many threads, not a few long ones
    counts = {family: n for family, (n, _, _) in rates().items()}
    assert counts["memory"] >= 40 and counts["arch"] >= 30 and counts["cuda-libs"] >= 30


@pytest.mark.parametrize("row", [r for r in ROWS if not r.miss], ids=_id)
def test_line_names_a_cause_of_its_family(row: Mined) -> None:
    _expected(row, row.text)


@pytest.mark.parametrize("wrapper", sorted(WRAPPERS))
def test_prefixes_and_wrappers_do_not_defeat_a_pattern(wrapper: str) -> None:
    wrap = WRAPPERS[wrapper]
    for row in ROWS:
        if not row.miss:
            _expected(row, wrap(row.text))


@pytest.mark.parametrize(
    "line",
    [
        "Killed",
        "MemoryError",
        "Bus error (core dumped)",
        "Killed process 4242 (python) total-vm:1kB",
    ],
)
@pytest.mark.parametrize(
    "prefix",
    [
        "(RayWorker pid=77) ",
        "[rank0]: ",
        "ollama  | ",
        "app> ",
        " 31%|███ | 331/1063 [01:06<03:59]",
    ],
)
def test_anchored_host_memory_lines_behind_a_prefix(prefix: str, line: str) -> None:
    signatures = matched(SCANNER, prefix + line)
    assert any(code in s.causes for s in signatures for code in ("SYS190", "SYS101")), line


def test_rates_per_family() -> None:
    for family, (lines, hit, named) in rates().items():
        marked = sum(1 for row in ROWS if row.family == family and row.miss)
        assert named <= hit <= lines
        assert named == lines - marked, family  # every line but those marked as a miss


# lines of healthy runs, from the same threads' logs: what the broad fallbacks must not name
CLEAN = [
    "  Device 0: NVIDIA GeForce GTX 1050 Ti, compute capability 6.1, VMM: yes",
    "W0928 15:25:03.815069 17204 gpu_resources.cc:61] Please NOTE: device: 0, GPU Compute "
    "Capability: 8.6, Driver API Version: 11.7, Runtime API Version: 10.2",
    "2019-10-23 18:52:56.918140: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1618] Found "
    "device 0 with properties: name: Quadro K4200 major: 3 minor: 0 memoryClockRate(GHz): 0.784",
    "INFO 02-26 09:54:05 worker.py:267] the current vLLM instance can use total_gpu_memory "
    "(8.00GiB) x gpu_memory_utilization (0.70) = 5.60GiB",
    "INFO 02-26 09:54:05 worker.py:267] Memory profiling takes 3.25 seconds",
    "Auto-assiging --gpu-memory 5 for your GPU to try to prevent out-of-memory errors.",
    "llama_kv_cache_init:      CUDA0 KV buffer size =   500.19 MiB",
    "load_tensors:        CUDA0 model buffer size = 48928.09 MiB",
    "2022-01-07 07:17:51.913839024 [I:onnxruntime:log, bfc_arena.cc:306 AllocateRawInternal] "
    "Extending BFCArena for Cuda. bin_num:9 (requested) num_bytes: 160000 (actual) "
    "rounded_bytes:160000",
    "[2025-02-10 07:34:25,340] [INFO] [utils.py:789:see_memory_usage] CPU Virtual Memory:  used = "
    "31.0 GB, percent = 24.7%",
    "ggml_cuda_init: found 2 CUDA devices:",
    "CUDA SETUP: PyTorch settings found: CUDA_VERSION=118, Highest Compute Capability: 8.6.",
]


@pytest.mark.parametrize("line", CLEAN)
def test_lines_of_healthy_runs_match_no_failure(line: str) -> None:
    assert [s.id for s in matched(SCANNER, line)] == []


def test_no_mined_thread_is_in_the_held_out_set() -> None:
    """The lines are training material: a thread of the blind held-out set would train on the
    exam. The mined side is named (to remove it), the held-out side never is."""
    import re

    from tests.corpus.test_heldout_accuracy import REPO, _threads

    heldout = _threads(REPO / "tests" / "heldout")
    mine: dict[str, str] = {}
    for row in ROWS:
        m = re.search(r"github\.com/([^/]+/[^/]+)/(?:issues|pull|discussions)/(\d+)", row.url, re.I)
        mine[f"{m.group(1).lower()}#{m.group(2)}" if m else row.url.lower()] = row.url
    assert sorted(mine[k] for k in mine.keys() & heldout.keys()) == []
