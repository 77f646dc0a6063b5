"""``[[first_release]]``: the first release of a package that has a command or a model type is
data. A site overlay adds one and PKG140 / PKG141 honour it with no Python change; a bad entry
is refused with its file and key."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import CliResult

# a model type no transformers release has: the overlay below is test data, not a fact
OVERLAY = """\
[[first_release]]
package = "transformers"
kind = "model_type"
name = "examplenet"
version = "4.60.0"
source = "test overlay"
"""

SPEC = """\
[packages]
transformers = "4.57.1"

[workload]
model_type = "examplenet"
"""


def _pkg141(result: CliResult) -> list[Any]:
    assert result.returncode in (0, 1), result.stderr
    return [f for f in result.json()["data"]["findings"] if f["code"] == "PKG141"]


def test_an_overlay_entry_is_honoured_without_code(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    spec = tmp_path / "node.toml"
    spec.write_text(SPEC)
    assert _pkg141(cli("check", "--json", "--spec", str(spec))) == []  # unknown model type
    overlay = tmp_path / "site"
    overlay.mkdir()
    (overlay / "features.toml").write_text(OVERLAY)
    (finding,) = _pkg141(cli("check", "--json", "--spec", str(spec), "--matrix", str(overlay)))
    assert finding["severity"] == "error"
    assert "examplenet" in finding["message"] and "4.60.0" in finding["message"]
    assert "transformers>=4.60.0" in " ".join(finding["fix"]["commands"])


def test_the_builtin_entries_decide_pkg141(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    spec = tmp_path / "node.toml"
    spec.write_text('[packages]\ntransformers = "4.36.2"\n\n[workload]\nmodel_type = "qwen2"\n')
    (finding,) = _pkg141(cli("check", "--json", "--spec", str(spec)))
    assert "transformers>=4.37.0" in " ".join(finding["fix"]["commands"])
    spec.write_text('[packages]\ntransformers = "4.37.0"\n\n[workload]\nmodel_type = "qwen2"\n')
    assert _pkg141(cli("check", "--json", "--spec", str(spec))) == []


def test_a_bad_entry_is_refused_with_file_and_key(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    overlay = tmp_path / "site"
    overlay.mkdir()
    (overlay / "features.toml").write_text(OVERLAY.replace('"4.60.0"', '"four"'))
    result = cli("matrix", "validate", str(overlay))
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert "features.toml" in line and "version" in line
    assert "Traceback" not in result.stderr
