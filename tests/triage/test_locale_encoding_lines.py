"""SYS245: text in the locale's legacy encoding, the fix by the codec and the direction the
line names (matrices/signatures/locale_encoding.toml, rules/node/locale_encoding.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file

Cli = Callable[..., CliResult]


@pytest.mark.parametrize(
    ("line", "first"),
    [
        (
            "UnicodeDecodeError: 'gbk' codec can't decode byte 0x80 in position 68: illegal "
            "multibyte sequence",
            "export PYTHONUTF8=1",
        ),
        (
            "UnicodeDecodeError: 'charmap' codec can't decode byte 0x9d in position 6304: "
            "character maps to <undefined>",
            "export PYTHONUTF8=1",
        ),
        (
            "UnicodeEncodeError: 'charmap' codec can't encode character '\\u030c' in position "
            "50: character maps to <undefined>",
            "export PYTHONIOENCODING=utf-8",
        ),
        (
            "UnicodeEncodeError: 'cp932' codec can't encode character '\\u2588' in position 3: "
            "illegal multibyte sequence",
            "export PYTHONIOENCODING=utf-8",
        ),
        (
            "UnicodeEncodeError: 'ascii' codec can't encode character '\\xe9' in position 36: "
            "ordinal not in range(128)",
            "export LANG=C.UTF-8",
        ),
    ],
)
def test_the_codec_and_direction_pick_the_first_command(
    cli: Cli, tmp_path: Path, line: str, first: str
) -> None:
    cause = causes(cli, log_file(tmp_path, line))["SYS245"]
    assert cause["verdict"] == "confirmed"
    (finding,) = cause["findings"]
    assert finding["fix"]["commands"][0] == first
    assert "PYTHONUTF8=1" in fix_text(cause)


def test_a_utf8_decode_error_is_not_the_locale(cli: Cli, tmp_path: Path) -> None:
    line = (
        "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in position 0: invalid start byte"
    )
    result = cli("triage", str(log_file(tmp_path, line)), "--json", "--no-probe")
    data = result.json()["data"]
    assert all(c["code"] != "SYS245" for m in data["matches"] for c in m["causes"])
