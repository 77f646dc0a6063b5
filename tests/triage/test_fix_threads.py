"""Each thread tally of tests/fix_threads.toml: triage its line and require every fix spelling
the threads established in the fix of the cause envcheck confirms (summary or commands)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliResult

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

TABLE = Path(__file__).resolve().parent.parent / "fix_threads.toml"
THREADS: list[dict[str, Any]] = tomllib.loads(TABLE.read_text())["thread"]


def test_the_table_names_its_threads() -> None:
    for entry in THREADS:
        assert entry["fix"] and entry["tally"], entry["line"][:60]
        for row in entry["tally"]:
            url, _, fixed = row.partition(" -> ")
            assert url.startswith("https://github.com/") and fixed.strip(), row


@pytest.mark.parametrize(
    "entry", THREADS, ids=[f"{t['family']}-{t['code']}-{i}" for i, t in enumerate(THREADS)]
)
def test_the_confirmed_cause_prints_what_threads_ran(
    entry: dict[str, Any], tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = tmp_path / "job.log"
    log.write_text(entry["line"] + "\n")
    result = cli("triage", str(log), "--json", "--no-probe")
    assert result.returncode == 1, result.stderr
    causes = [
        c
        for m in result.json()["data"]["matches"]
        for c in m["causes"]
        if c["code"] == entry["code"] and c["verdict"] == "confirmed"
    ]
    assert causes, f"{entry['code']} is not confirmed by the line"
    texts = [
        (f["fix"]["summary"] + "\n" + "\n".join(f["fix"]["commands"])).lower()
        for c in causes
        for f in c["findings"]
        if f.get("fix")
    ]
    for spelled in entry["fix"]:
        assert any(spelled.lower() in t for t in texts), spelled
