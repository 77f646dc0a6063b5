"""flash-attn's 'FlashAttention only supports Ampere GPUs or newer' (TOR102): the fix is the knob
of the layer that chose flash-attn. vLLM's attention backend calls its own copy
(vllm/vllm_flash_attn, as vllm-project/vllm#8189 logged it on a 2080 Ti): VLLM_ATTENTION_BACKEND
picks another; a transformers model loaded with attn_implementation="flash_attention_2" takes
"sdpa" or "eager" (envcheck/rules/node/torch_stated.py pre_ampere_in_log)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file

Cli = Callable[..., CliResult]


def test_vllms_own_flash_attn_gets_vllms_backend(cli: Cli, tmp_path: Path) -> None:
    log = log_file(
        tmp_path,
        'ERROR 01-11 13:09:40 engine.py:366]   File "/root/miniconda3/lib/python3.12/site-'
        'packages/vllm/vllm_flash_attn/flash_attn_interface.py", line 230, in '
        "flash_attn_varlen_func",
        "ERROR 01-11 13:09:40 engine.py:366] RuntimeError: Error in model execution (input "
        "dumped to /tmp/err_execute_model_input_20250111-130939.pkl): FlashAttention only "
        "supports Ampere GPUs or newer.",
    )
    cause = causes(cli, log)["TOR102"]
    assert cause["verdict"] == "confirmed"
    text = fix_text(cause)
    assert "VLLM_ATTENTION_BACKEND=XFORMERS" in text
    assert 'attn_implementation="sdpa"' not in text


def test_transformers_flash_attn_gets_sdpa(cli: Cli, tmp_path: Path) -> None:
    log = log_file(
        tmp_path,
        '  File "/opt/conda/lib/python3.10/site-packages/flash_attn/flash_attn_interface.py", '
        "line 51, in _flash_attn_forward",
        "    out, q, k, v, out_padded, softmax_lse, S_dmask, rng_state = flash_attn_cuda.fwd(",
        "RuntimeError: FlashAttention only supports Ampere GPUs or newer.",
    )
    cause = causes(cli, log)["TOR102"]
    assert cause["verdict"] == "confirmed"
    assert 'attn_implementation="sdpa"' in fix_text(cause)


def test_a_line_vllms_logger_wrote_gets_vllms_backend(cli: Cli, tmp_path: Path) -> None:
    """No frame above it, but vLLM's own logger prefix on the line (vllm/logger.py's
    '%(levelname)s %(asctime)s [%(filename)s:%(lineno)d]', a worker's tag before it)."""
    for text in (
        "ERROR 08-16 18:47:21 [engine.py:456] RuntimeError: FlashAttention only supports Ampere "
        "GPUs or newer.",
        "(VllmWorker rank=1 pid=4242) ERROR 06-20 12:27:37 [multiproc_executor.py:527] "
        "RuntimeError: FlashAttention only supports Ampere GPUs or newer.",
    ):
        cause = causes(cli, log_file(tmp_path, text))["TOR102"]
        assert "VLLM_ATTENTION_BACKEND=XFORMERS" in fix_text(cause), text
