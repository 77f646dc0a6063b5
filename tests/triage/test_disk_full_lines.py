"""SYS210: a full disk under a checkpoint, a download or a build, read from the line that says
so; /dev/shm and Ray's temp directory stay with their own rules (SYS101, RAY103)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file

TORCH_SAVE = (
    'Traceback (most recent call last):\n  File "train.py", line 80, in <module>\n'
    '    torch.save(state, "/ckpt/step_4000.pt")\n'
    "RuntimeError: [enforce fail at inline_container.cc:626] . unexpected pos 1634368 vs 1634256"
)


def test_torch_save_short_write_confirms_a_full_disk(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    cause = causes(cli, log_file(tmp_path, TORCH_SAVE))["SYS210"]
    assert cause["verdict"] == "confirmed"
    text = fix_text(cause)
    assert "df -h" in text and "HF_HOME" in text


def test_enospc_on_a_named_path_names_that_disk(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path, "OSError: [Errno 28] No space left on device: '/data/ckpt/model.safetensors'"
    )
    found = causes(cli, log)
    assert found["SYS210"]["verdict"] == "confirmed"
    assert "df -h /data/ckpt" in fix_text(found["SYS210"])


def test_enospc_in_shared_memory_stays_with_the_shm_rule(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(tmp_path, "OSError: [Errno 28] No space left on device: '/dev/shm/torch_1'")
    found = causes(cli, log)
    assert found.get("SYS210", {}).get("verdict") != "confirmed"


def test_enospc_without_a_path_leaves_the_disk_open(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    found = causes(cli, log_file(tmp_path, "Error: No space left on device (os error 28)"))
    assert found["SYS210"]["verdict"] != "confirmed"
    assert {"SYS101", "RAY103"} <= set(found)


def test_a_quota_used_up_names_the_quota_tool_and_the_caches(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    line = "OSError: [Errno 122] Disk quota exceeded: '/home/u/.cache/pip/http/a/b'"
    cause = causes(cli, log_file(tmp_path, line))["SYS210"]
    assert cause["verdict"] == "confirmed"
    text = fix_text(cause)
    assert "quota -s" in text and "PIP_CACHE_DIR" in text and "df -h" not in text
