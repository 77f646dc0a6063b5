"""GPU out-of-memory read from the line's own numbers (rules/node/gpu_oom_size.py): the size one
allocation asked for, in each runtime's wording, against the GPU's whole memory (the line's, else
the node's GPUs), and the runtime the line names. The H200's three out-of-memory failures
(tests/triage/gpu_node: each asked for 300 GiB on a 140 GiB GPU) and lines in the runtimes' own
words (torch's CUDACachingAllocator.cpp, CuPy's cupy/cuda/memory.pyx, XLA's and TensorFlow's
bfc_allocator.cc, XLA's pjrt and cuMemAllocAsync allocator, llama.cpp's ggml-cuda.cu)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from envcheck.rules.node.gpu_oom_size import GIB, line_total, oversize, requested
from tests.conftest import CliResult
from tests.triage import from_log
from tests.triage.test_gpu_node_logs import REPORT, _causes, _triage, found_with

# (log, the signature that names the GPU's memory, the cause whose fix is right)
OOM_LOGS = [
    ("torch_oom", "cuda-out-of-memory", "DRV150"),
    ("cupy_oom", "cuda-module-oom-exception", "DRV150"),
    ("jax_oom", "xla-tf-gpu-out-of-memory", "SYS182"),
]


@pytest.mark.parametrize(("name", "signature", "code"), OOM_LOGS)
@pytest.mark.parametrize("node", [False, True], ids=["log", "node"])
def test_a_gpu_oom_is_named_with_the_gpu_cause(
    name: str, signature: str, code: str, node: bool
) -> None:
    verdict, data = found_with(name, node, signature, code)
    assert verdict == "confirmed"
    assert all(c != "SYS190" for _, c, _ in _causes(data))  # not host memory


def _first_cause(data: dict[str, object]) -> dict[str, object]:
    matches = data["matches"]
    assert isinstance(matches, list)
    first = next(m for m in matches if not m["noise"])
    cause: dict[str, object] = first["causes"][0]
    return cause


@pytest.mark.parametrize("name", ["torch_oom", "cupy_oom", "jax_oom"])
def test_the_allocation_larger_than_the_gpu_is_said_and_split_first(name: str) -> None:
    """On the node (its report states the H200's 140 GiB where the line does not), all three
    say the one allocation exceeds the GPU and lead with splitting the work, never with
    expandable_segments, a preallocation switch or freeing stale processes."""
    _, data = _triage(name, node=True)
    cause = _first_cause(data)
    said = json.dumps(cause)
    assert "one allocation of 300.00 GiB is larger than" in said, said
    fix = cause["fix"]
    assert isinstance(fix, dict)
    summary = str(fix.get("summary", ""))
    assert summary.startswith("Split the work"), summary
    first_step = json.dumps(fix.get("commands", fix))[:400]
    for wrong in ("expandable_segments", "PREALLOCATE", "ALLOW_GROWTH", "ray stop"):
        assert wrong not in summary and wrong not in first_step, (wrong, fix)


def test_the_torch_line_states_its_total_without_the_node() -> None:
    _, data = _triage("torch_oom", node=False)
    said = json.dumps(_first_cause(data))
    assert "one allocation of 300.00 GiB is larger than the GPU's 139.80 GiB" in said
    assert "expandable_segments" not in said


def test_jax_is_named_and_given_its_own_knob_first() -> None:
    """The line is jax.errors.JaxRuntimeError's: JAX, not TensorFlow; without the node's total
    its preallocation switch leads, TensorFlow's allow_growth does not."""
    _, data = _triage("jax_oom", node=False)
    cause = _first_cause(data)
    said = json.dumps(cause)
    assert "JAX (XLA) ran out of GPU memory" in said
    assert "TensorFlow ran out of GPU memory (line" not in said
    fix = cause["fix"]
    assert isinstance(fix, dict)
    assert "XLA_PYTHON_CLIENT_PREALLOCATE=false" in str(fix.get("summary"))
    assert "TF_FORCE_GPU_ALLOW_GROWTH" not in json.dumps(fix)


@pytest.mark.parametrize("node", [False, True], ids=["log", "node"])
def test_other_processes_are_ruled_out_by_the_numbers(node: bool) -> None:
    """torch's numbers (139.80 GiB total, 139.29 GiB free, 518 MiB this process) leave nothing
    held by others: DRV104 is ruled out from the line, not left open."""
    _, data = _triage("torch_oom", node)
    verdicts = {(s, c): v for s, c, v in _causes(data)}
    assert verdicts[("cuda-out-of-memory", "DRV104")] == "ruled_out"


# one allocation, in each runtime's words, as its source formats it
REQUESTS = [
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 300.00 GiB. GPU 0", 300 * GIB),
    ("RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.79 GiB", 20 * 2**20),
    (
        "cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 322,122,547,200 bytes "
        "(allocated so far: 0 bytes).",
        322122547200,
    ),
    ("out of memory to allocate 1073741824 bytes (total 12373894656 bytes)", 1073741824),
    (
        "jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate "
        "300.00GiB with allocator GPU_0_bfc on device 0.",
        300 * GIB,
    ),
    (
        "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to "
        "allocate 4770354232 bytes.",
        4770354232,
    ),
    (
        "W bfc_allocator.cc:598] Allocator (GPU_0_bfc) ran out of memory trying to allocate "
        "300.00GiB (rounded to 322122547200) from the lower end requested by op",
        322122547200,
    ),
    (
        "Original error: RESOURCE_EXHAUSTED: Failed to allocate request for 176.00MiB "
        "(184549376B) on device ordinal 0",
        184549376,
    ),
    (
        "E cuda_driver.cc:806] failed to allocate 17.79G (19104890880 bytes) from device: "
        "CUDA_ERROR_OUT_OF_MEMORY: out of memory",
        19104890880,
    ),
    (
        "gpu_async_1 cuMemAllocAsync failed to allocate 1225195446464 bytes: RESOURCE_EXHAUSTED: "
        ": CUDA_ERROR_OUT_OF_MEMORY: out of memory",
        1225195446464,
    ),
    (
        "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 6144.00 MiB on device 0: "
        "cudaMalloc failed: out of memory",
        6144 * 2**20,
    ),
]


@pytest.mark.parametrize(("line", "size"), REQUESTS)
def test_the_request_is_read_in_each_runtimes_words(line: str, size: float) -> None:
    assert requested(line) == pytest.approx(size)


def test_the_total_is_read_from_the_line() -> None:
    assert line_total("GPU 0 has a total capacity of 139.80 GiB of which") == pytest.approx(
        139.80 * GIB
    )
    # torch 2.1 printed 'capacty'
    assert line_total("GPU 0 has a total capacty of 12.00 GiB of which 9.02 GiB") == 12 * GIB
    assert line_total("(GPU 0; 44.52 GiB total capacity; 12.21 GiB already") == pytest.approx(
        44.52 * GIB
    )
    assert line_total("Reported by CUDA: Free memory/Total memory: 22635544576/85095874560") == (
        85095874560
    )


def test_a_request_below_the_gpu_is_no_oversize() -> None:
    # torch <= 2.0: the job holds 21.10 GiB and asks for 2.00 GiB of 23.69 GiB: it fits
    line = (
        "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 1; 23.69 GiB total "
        "capacity; 21.10 GiB already allocated; 301.06 MiB free; 22.61 GiB reserved in total by "
        "PyTorch)"
    )
    assert oversize(line) is None
    assert oversize("Tried to allocate 2.00 GiB.") is None  # no total known


def test_the_jobs_live_tensors_plus_the_request_above_the_gpu() -> None:
    line = (
        "CUDA out of memory. Tried to allocate 252.00 MiB. GPU 0 has a total capacity of 6.00 "
        "GiB of which 0 bytes is free. Of the allocated memory 20.56 GiB is allocated by "
        "PyTorch, and 25.86 MiB is reserved by PyTorch but unallocated."
    )
    big = oversize(line)
    assert big is not None and not big.single
    assert "the job's live tensors (20.56 GiB) plus this allocation (252.00 MiB)" in big.said()


# --- the runtime a line names, and the numbers that rule out other processes -------------------


@pytest.mark.parametrize(
    ("line", "who", "first"),
    [
        (
            "W tensorflow/core/common_runtime/bfc_allocator.cc:275] Allocator (GPU_0_bfc) ran "
            "out of memory trying to allocate 39.81MiB.  See logs for memory state.",
            "TensorFlow",
            "TF_FORCE_GPU_ALLOW_GROWTH=true",
        ),
        (
            "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying "
            "to allocate 14745600000 bytes.",
            "JAX (XLA)",
            "XLA_PYTHON_CLIENT_PREALLOCATE=false",
        ),
    ],
)
def test_the_runtime_named_by_its_exception_leads(
    tmp_path: Path, cli: Callable[..., CliResult], line: str, who: str, first: str
) -> None:
    cause = from_log.causes(cli, from_log.log_file(tmp_path, line))["SYS182"]
    (finding,) = cause["findings"]
    assert finding["message"].startswith(f"{who} ran out of GPU memory")
    assert first in finding["fix"]["summary"]


def test_an_xla_request_above_the_nodes_gpus_splits_the_work(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """XLA's line states no total: the node's report (the H200's 140 GiB) decides."""
    line = (
        "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying "
        "to allocate 1374521760000 bytes."
    )
    log = from_log.log_file(tmp_path, line)
    cause = from_log.causes(cli, log, "--report", str(REPORT))["SYS182"]
    text = from_log.fix_text(cause)
    assert text.startswith("Split the work so no single tensor needs 1280.12 GiB"), text
    assert "XLA_PYTHON_CLIENT_PREALLOCATE" not in text


def test_torch_numbers_that_leave_nothing_for_others_rule_drv104_out(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """torch 2.1+: this process holds all of the GPU but the free part, nothing is left for
    another process: DRV104 is ruled out in the line's own terms."""
    line = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
        "capacity of 23.65 GiB of which 1.19 GiB is free. Including non-PyTorch memory, this "
        "process has 22.44 GiB memory in use. Of the allocated memory 20.10 GiB is allocated by "
        "PyTorch, and 1.84 GiB is reserved by PyTorch but unallocated."
    )
    cause = from_log.causes(cli, from_log.log_file(tmp_path, line))["DRV104"]
    assert cause["verdict"] == "ruled_out"
    assert "0.02 GiB for other processes" in json.dumps(cause)


def test_a_runtimes_own_line_above_the_gpu_keeps_its_knob_first(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """llama.cpp's cudaMalloc line (gpu-out-of-memory-any-library) asking for more than the
    node's GPU: the work is split, llama.cpp's own way (fewer layers on the GPU) first."""
    line = (
        "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 204800.00 MiB on device 0: "
        "cudaMalloc failed: out of memory"
    )
    log = from_log.log_file(tmp_path, line)
    cause = from_log.causes(cli, log, "--report", str(REPORT))["DRV150"]
    (finding,) = cause["findings"]
    assert (
        "one allocation of 200.00 GiB is larger than the node's largest GPU's"
        in (finding["message"])
    )
    assert finding["fix"]["summary"].startswith("Split the work")
    assert finding["fix"]["commands"][0].startswith("# offload fewer layers to the GPU")
