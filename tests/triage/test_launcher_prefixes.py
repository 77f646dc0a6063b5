"""A multi-node job's log is its launcher's copy of many processes' lines, each behind the
launcher's prefix (Ray's worker prefix with the node's IP, torchrun's rank, srun's task number,
mpirun's tag, pdsh's host, a timestamp): the failure behind the prefix is named, confirmed and
fixed as in the plain line, with the facts its extractors read from the line and the lines
after it; a benign signature that reads the prefix itself keeps its fact. Real lines of corpus
threads (each case's url)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from envcheck.triage.prefixes import strip_prefixes
from tests.conftest import CliResult
from tests.triage.from_log import confirmed_fixes, stated_facts, triage_data

# https://github.com/YanjieZe/3D-Diffusion-Policy/issues/91
HF_HUB = (
    "ImportError: cannot import name 'cached_download' from 'huggingface_hub' "
    "(~/mambaforge/envs/dp3/lib/python3.8/site-packages/huggingface_hub/__init__.py)\n"
)
# https://github.com/ray-project/kuberay/pull/154: the versions are on the lines after the match
RAY_MISMATCH = (
    "RuntimeError: Version mismatch: The cluster was started with:\n"
    "    Ray: 1.9.0\n"
    "    Python: 3.7.7\n"
    "This process on node 172.23.110.31 was started with:\n"
    "    Ray: 1.10.0\n"
    "    Python: 3.7.7\n"
)
# https://github.com/ai-dynamo/nixl/issues/1798: the loader's message below its library's path
NIXL_SPLIT = (
    "ImportError: /usr/local/lib/python3.12/dist-packages/nixl_ep/"
    "nixl_ep_cpp.cpython-312-x86_64-linux-gnu.so:\n"
    "  undefined symbol: _ZN3c104impl3cow23materialize_cow_storageERNS_11StorageImplE\n"
)

# launcher: its prefix for line i
PREFIXES: dict[str, Callable[[int], str]] = {
    "ray-actor-on-another-node": lambda i: "(RayWorkerWrapper pid=48213, ip=10.0.3.7) ",
    "ray-task": lambda i: "(pid=4321) ",
    "ray-train-worker": lambda i: "(_RayTrainWorker__execute.get_next pid=77, ip=10.1.2.3) ",
    "torchrun-role": lambda i: "[default0]:",
    "torchrun-rank": lambda i: "[rank3]: ",
    "srun-label": lambda i: " 3: ",
    "mpirun-tag-output": lambda i: "[1,3]<stderr>:",
    "pdsh-host": lambda i: "worker-1: ",
    "kubectl-timestamps": lambda i: f"2025-03-01T12:00:{i % 60:02d}.123456789Z ",
    "buildkit": lambda i: f"#12 {i * 0.01:.3f} ",
    "srun-inside-ray": lambda i: "0: (WorkerDict pid=9) ",
    "compose-logging": lambda i: f"trainer-1  | 2024-05-01 12:00:{i % 60:02d},042 ERROR ",
    "logging-dashes": lambda i: f"2025-03-01 12:00:{i % 60:02d},123 - ERROR - ",
    "markdown-quote": lambda i: "> ",
}


def _prefixed(text: str, prefix: Callable[[int], str]) -> str:
    return "".join(prefix(i) + line for i, line in enumerate(text.splitlines(keepends=True)))


@pytest.mark.parametrize("launcher", sorted(PREFIXES))
@pytest.mark.parametrize(
    "text", [HF_HUB, RAY_MISMATCH, NIXL_SPLIT], ids=["import", "ray-versions", "split-symbol"]
)
def test_failure_behind_a_prefix_is_confirmed_with_its_facts_and_fix(
    tmp_path: Path, cli: Callable[..., CliResult], launcher: str, text: str
) -> None:
    plain = tmp_path / "plain.log"
    plain.write_text(text, encoding="utf-8")
    expected = triage_data(cli, plain)
    assert confirmed_fixes(expected)  # the plain line is confirmed with a fix
    log = tmp_path / f"{launcher}.log"
    log.write_text(_prefixed(text, PREFIXES[launcher]), encoding="utf-8")
    data = triage_data(cli, log)
    assert confirmed_fixes(data) == confirmed_fixes(expected)
    assert stated_facts(expected) <= stated_facts(data)


def test_the_ray_prefix_keeps_its_node_fact_beside_the_failure(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """A worker's line on another node: the import failure is confirmed and the prefix's IP
    is still read (where the ranks ran)."""
    log = tmp_path / "ray.log"
    log.write_text(_prefixed(HF_HUB, PREFIXES["ray-actor-on-another-node"]), encoding="utf-8")
    data = triage_data(cli, log)
    assert "PY150" in confirmed_fixes(data)
    assert ("remote_node_ip", "10.0.3.7") in stated_facts(data)
    assert ("import_name", "cached_download") in stated_facts(data)


def test_rays_repeat_count_is_not_read_as_the_message(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = tmp_path / "dedup.log"
    line = HF_HUB.rstrip("\n")
    log.write_text(f"(WorkerDict pid=9, ip=10.0.0.2) {line} [repeated 7x across cluster]\n")
    data = triage_data(cli, log)
    assert "PY150" in confirmed_fixes(data)


@pytest.mark.parametrize(
    ("line", "rest"),
    [
        (b"(RayWorkerWrapper pid=48213, ip=10.0.3.7) ImportError: x", b"ImportError: x"),
        (b"(pid=1) Killed", b"Killed"),
        (b"(raylet, ip=10.0.0.2) [2025-01-01] x", b"[2025-01-01] x"),
        (b"(autoscaler +1m2s) Resized to 2 CPUs.", b"Resized to 2 CPUs."),
        (b"[trainer0]: foobar", b"foobar"),
        (b"[1,3]<stdout>:x", b"x"),
        (b"  12: srun task", b"srun task"),
        (b"gpu-node-07: NCCL WARN x", b"NCCL WARN x"),
        (b"10.0.0.1: NCCL WARN x", b"NCCL WARN x"),
        (b"2025-03-01 12:00:01,123 RuntimeError", b"RuntimeError"),
        (b"E       RuntimeError: x", b"RuntimeError: x"),
        (b"0: (WorkerDict pid=9) Killed", b"Killed"),
        (b"worker-0 | 2024-05-01 12:00:00,042 ERROR RuntimeError: x", b"RuntimeError: x"),
        (b"2025-03-01 12:00:01,123 - ERROR - Killed", b"Killed"),
        (b"> > ImportError: x", b"ImportError: x"),
    ],
)
def test_each_launchers_prefix_is_read_off(line: bytes, rest: bytes) -> None:
    assert strip_prefixes(line) == rest


@pytest.mark.parametrize(
    "line",
    [
        b"libcuda.so.1: cannot open shared object file: No such file or directory",
        b"python3: can't open file '/x/train.py': [Errno 2] No such file or directory",
        b"ImportError: cannot import name 'x'",
        b"nvcc fatal   : Unsupported gpu architecture 'compute_89'",
        b"[W socket.cpp:663] [c10d] The client socket has failed to connect",
        b"(base) $ pip install vllm",
        b">>> import torch",
        b"| 0  NVIDIA A100-SXM4-80GB  On  | 00000000:07:00.0 Off |",
        b"",
    ],
)
def test_a_message_that_only_looks_like_a_prefix_is_kept(line: bytes) -> None:
    """A soname, a program's name, an exception, a bracketed logger tag, a shell prompt."""
    assert strip_prefixes(line) is None
