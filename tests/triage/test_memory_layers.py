"""Memory failures reported by the layer above the process (matrices/signatures/memory_layers.toml:
a notebook platform, VS Code's Jupyter, Dask, YARN, ollama, ENOMEM in words) and CUDA libraries a
runtime loads itself (cuda_libs_layers.toml: NVRTC's builtins, JAX's CUDA plugin): each line in
the layer's own wording, the cause it confirms and the fix that layer offers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text


def _triage(cli: Callable[..., CliResult], tmp_path: Path, text: str, *args: str) -> dict:
    log = tmp_path / "log.txt"
    log.write_text(text + "\n", encoding="utf-8")
    return causes(cli, log, *args)


@pytest.mark.parametrize(
    ("line", "wanted"),
    [
        # Colab's and Kaggle's own notices: host RAM of the runtime
        ("Your session crashed after using all available RAM.", "low_cpu_mem_usage=True"),
        (
            "Your notebook tried to allocate more memory than is available. It has restarted.",
            "High-RAM runtime",
        ),
        # ollama's check before loading: a smaller model, unload others, swap
        (
            "Error: model requires more system memory (164.8 GiB) than is available (13.4 GiB)",
            "ollama stop",
        ),
        (
            "distributed.nanny.memory - WARNING - Worker tcp://127.0.0.1:49477 (pid=59029) "
            "exceeded 95% memory budget. Restarting...",
            "memory_limit",
        ),
        (
            "Container killed by YARN for exceeding memory limits. 10.4 GB of 10.4 GB physical "
            "memory used.",
            "spark.executor.memoryOverhead",
        ),
        ("pyarrow.lib.ArrowMemoryError: malloc of size 134217728 failed", "streaming=True"),
        ("The node was low on resource: [MemoryPressure].", "resources.requests.memory"),
    ],
)
def test_layer_line_confirms_host_memory_with_the_layers_fix(
    cli: Callable[..., CliResult], tmp_path: Path, line: str, wanted: str
) -> None:
    found = _triage(cli, tmp_path, line)
    cause = found["SYS190"]
    assert cause["verdict"] == "confirmed"
    assert wanted in fix_text(cause)
    (finding,) = cause["findings"]
    assert finding["severity"] == "error"
    assert "SIGKILL" not in finding["message"]  # worded for the layer, not as a bare kill


def test_kernel_crash_is_host_memory_as_a_warning(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    """VS Code's kernel-crash notice: most often host memory, a native crash is possible, so the
    finding is a warning with the check that tells them apart."""
    found = _triage(
        cli,
        tmp_path,
        "The Kernel crashed while executing code in the current cell or a previous cell. "
        "Please review the code in the cell(s) to identify a possible cause of the failure.",
    )
    cause = found["SYS190"]
    (finding,) = cause["findings"]
    assert cause["verdict"] == "confirmed" and finding["severity"] == "warning"
    assert "dmesg" in fix_text(cause)


def test_enomem_in_words_is_host_memory_but_memlock_stays_its_own(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    assert _triage(cli, tmp_path, "-bash: fork: Cannot allocate memory")["SYS190"]["verdict"] == (
        "confirmed"
    )
    rdma = _triage(cli, tmp_path, "ibv_reg_mr failed: Cannot allocate memory")
    assert "SYS180" in rdma and "SYS190" not in rdma


def test_ggml_buffer_leaves_gpu_or_host_open(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    found = _triage(
        cli,
        tmp_path,
        "llama_new_context_with_model: failed to allocate compute buffers",
    )
    assert {c["verdict"] for c in found.values()} == {"unchecked"}
    assert set(found) == {"DRV150", "DRV104", "SYS190"}


def test_nvrtc_builtins_is_the_loader_path(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    found = _triage(cli, tmp_path, "nvrtc: error: failed to open libnvrtc-builtins.so.11.6")
    cause = found["SYS150"]
    assert cause["verdict"] == "confirmed"
    text = fix_text(cause)
    assert "libnvrtc-builtins.so.11.6" in text and "LD_LIBRARY_PATH" in text


def test_jax_plugin_library_unset_ld_library_path_first(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    found = _triage(cli, tmp_path, "RuntimeError: Unable to load cuSPARSE. Is it installed?")
    cause = found["CUD104"]
    assert cause["verdict"] == "confirmed"
    text = fix_text(cause)
    assert text.index("unset LD_LIBRARY_PATH") < text.index('pip install --upgrade "jax[cuda12]"')
    assert "cuSPARSE" in cause["findings"][0]["message"]


@pytest.mark.parametrize(
    "line",
    [
        "Process finished with exit code -9",
        "Killed: 9",
        "billiard.exceptions.WorkerLostError: Worker exited prematurely: signal 9 (SIGKILL) Job: 1.",
        "[2024-03-01, 10:00:00 UTC] {local_task_job_runner.py:234} INFO - Task exited with return "
        "code Negsignal.SIGKILL",
    ],
)
def test_sigkill_as_other_launchers_print_it(
    cli: Callable[..., CliResult], tmp_path: Path, line: str
) -> None:
    cause = _triage(cli, tmp_path, line)["SYS190"]
    assert cause["verdict"] == "confirmed"
    assert "dmesg" in fix_text(cause)


def test_plain_words_leave_gpu_or_host_open(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    """'OOM' or a CJK 'out of memory' names the family but not which memory: both stay open."""
    for line in ("RuntimeError: OOM", "训练时显存不足"):
        found = _triage(cli, tmp_path, line)
        assert {c["code"]: c["verdict"] for c in found.values()} == {
            "DRV104": "unchecked",
            "SYS190": "unchecked",
        }


def test_plain_words_do_not_take_a_word_containing_oom(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = tmp_path / "log.txt"
    log.write_text("Loading BLOOM-560m from the hub, ZOOM level 3\n", encoding="utf-8")
    result = cli("triage", str(log), "--json", "--no-probe")
    assert not [m for m in result.json()["data"]["matches"] if not m["noise"]]
