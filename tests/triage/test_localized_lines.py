"""OS errors on a node whose locale is not English: CPython formats an OSError as
``[Errno N] `` + strerror(N), and glibc's strerror follows LC_MESSAGES, so the text after the
number is the node's language (glibc's zh_CN translations below) while the number is the fact.
The memory, disk and name-resolution lines are read by their numbers (Linux
include/uapi/asm-generic/errno-base.h; getaddrinfo's EAI_NONAME -2 and EAI_AGAIN -3)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from tests.triage.from_log import causes as _causes


@pytest.mark.parametrize(
    ("line", "code"),
    [
        ("OSError: [Errno 12] 无法分配内存", "SYS190"),  # ENOMEM
        ("OSError: [Errno 12] Cannot allocate memory", "SYS190"),
        ("OSError: [Errno 24] 打开的文件过多", "SYS184"),  # EMFILE
        ("OSError: [Errno 28] 设备上没有空间", "SYS101"),  # ENOSPC
        ("OSError: [Errno 28] No space left on device", "SYS101"),
        ("socket.gaierror: [Errno -2] 未知的名称或服务", "NET103"),  # EAI_NONAME
        ("socket.gaierror: [Errno -3] 域名解析暂时失败", "NET103"),  # EAI_AGAIN
    ],
)
def test_an_os_error_is_read_by_its_number_in_any_language(
    tmp_path: Path, cli: Callable[..., CliResult], line: str, code: str
) -> None:
    log = tmp_path / "job.log"
    log.write_text(f"Traceback (most recent call last):\n{line}\n", encoding="utf-8")
    causes = _causes(cli, log)
    assert code in causes, sorted(causes)
    assert causes[code]["verdict"] in ("confirmed", "unchecked"), causes[code]


@pytest.mark.parametrize(
    "line",
    [
        "OSError: [Errno 2] 没有那个文件或目录: 'config.yaml'",  # ENOENT: no memory cause
        "PermissionError: [Errno 13] 权限不够: '/data'",
    ],
)
def test_other_numbers_are_not_read_as_memory(
    tmp_path: Path, cli: Callable[..., CliResult], line: str
) -> None:
    log = tmp_path / "job.log"
    log.write_text(line + "\n", encoding="utf-8")
    result = cli("triage", str(log), "--json", "--no-probe")
    assert result.returncode in (0, 1), result.stderr
    named = {c["code"] for m in result.json()["data"]["matches"] for c in m["causes"]}
    assert not {"SYS190", "SYS184", "SYS101"} & named, sorted(named)
