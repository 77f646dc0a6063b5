from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from envcheck.errors import MatrixError
from envcheck.matrix.diff import diff_trees, flatten
from tests.conftest import run_cli

OLD = """\
[[torch]]
version = "2.4.0"
python = ["3.10", "3.11"]
variants = ["cu121"]
source = "a"
[torch.pins]
"nvidia-cublas-cu12" = "==12.1.3.1"

[[torch]]
version = "2.3.0"
python = ["3.10"]
variants = ["cu121"]
source = "a"
"""
NEW = """\
[[torch]]
version = "2.4.0"
python = ["3.10", "3.11", "3.12"]
variants = ["cu121"]
source = "a"
[torch.pins]
"nvidia-cublas-cu12" = "==12.4.5.8"
"triton" = "==3.0.0"

[[torch]]
version = "2.5.0"
python = ["3.10"]
variants = ["cu124"]
source = "b"
"""
GEN = """\
[meta]
generated_by = "envcheck matrix refresh"

[[ray_wheels]]
version = "2.9.0"
read = "{date}"
python = ["3.10"]
"""


def _tree(root: Path, torch: str, date: str) -> Path:
    (root / "generated").mkdir(parents=True)
    (root / "torch.toml").write_text(torch)
    (root / "generated" / "ray.toml").write_text(GEN.format(date=date))
    return root


def test_trees_differ_entry_by_entry_and_field_by_field(tmp_path) -> None:
    old = _tree(tmp_path / "old", OLD, "2026-01-01")
    new = _tree(tmp_path / "new", NEW, "2026-02-02")
    changes = {(c.table, c.key): c for c in diff_trees(old, new)}
    assert {k: c.kind for k, c in changes.items()} == {
        ("torch", "2.3.0"): "removed",
        ("torch", "2.4.0"): "changed",
        ("torch", "2.5.0"): "added",
        ("ray_wheels", "2.9.0"): "changed",
    }
    fields = {f.field: (f.old, f.new) for f in changes[("torch", "2.4.0")].fields}
    assert fields == {
        "python": (["3.10", "3.11"], ["3.10", "3.11", "3.12"]),
        "pins.nvidia-cublas-cu12": ("==12.1.3.1", "==12.4.5.8"),
        "pins.triton": (None, "==3.0.0"),
    }
    assert [f.field for f in changes[("ray_wheels", "2.9.0")].fields] == ["read"]
    assert diff_trees(old, old) == []


def test_flatten_names_nested_keys() -> None:
    assert flatten({"a": 1, "b": {"c": 2, "d": {}}, "e": None, "f": []}) == {"a": 1, "b.c": 2}


def test_cli_text_json_and_exit_codes(tmp_path) -> None:
    old = _tree(tmp_path / "old", OLD, "2026-01-01")
    new = _tree(tmp_path / "new", NEW, "2026-01-01")
    text = run_cli("matrix", "diff", str(old), str(new))
    assert text.returncode == 1
    lines = text.stdout.splitlines()
    assert "removed  torch 2.3.0" in lines and "added    torch 2.5.0" in lines
    assert "           pins.nvidia-cublas-cu12: ==12.1.3.1 -> ==12.4.5.8" in lines
    assert lines[-1] == "1 added, 1 removed, 1 changed"
    js = run_cli("matrix", "diff", "--json", str(old), str(new))
    envelope = js.json()
    assert envelope["command"] == "matrix diff" and envelope["exit_code"] == 1 == js.returncode
    assert envelope["data"]["counts"] == {"added": 1, "removed": 1, "changed": 1}
    same = run_cli("matrix", "diff", str(old), str(old / "torch.toml"), "--json")
    assert same.returncode == 1  # a single file: the generated ray entry is "removed"
    same = run_cli("matrix", "diff", str(old), str(old))
    assert (same.returncode, same.stdout) == (0, "no differences\n")


@pytest.mark.parametrize(
    ("content", "message"),
    [(None, "no such file or directory"), ('[[torch]]\nversion = "x"\n', "invalid version")],
)
def test_bad_trees_are_input_errors(tmp_path, content, message) -> None:
    target = tmp_path / "bad.toml"
    if content is not None:
        target.write_text(textwrap.dedent(content))
    with pytest.raises(MatrixError, match=message):
        diff_trees(target, target)
    result = run_cli("matrix", "diff", str(target), str(target))
    assert result.returncode == 2 and result.stderr.startswith("envcheck: error:")
