"""SYS132 from an undefined symbol of glibc itself (no version label): the release that added it,
from matrices/packages/glibc_symbols.toml (glibc's own ABI list), is the glibc the binary needs;
the signature's names and the table's stay the same set."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

from tests.builtin_matrix import builtin_matrix
from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]
MATRIX = builtin_matrix()


def _pattern() -> re.Pattern[str]:
    data = tomllib.loads((REPO / "matrices/signatures/linker_symbols.toml").read_text())
    (entry,) = [s for s in data["signature"] if s["id"] == "undefined-symbol-glibc"]
    return re.compile(entry["pattern"])


def test_every_glibc_symbol_of_the_table_matches_the_signature_and_nothing_longer() -> None:
    pattern = _pattern()
    names = [r.name for r in MATRIX.first_releases if r.package == "glibc" and r.kind == "symbol"]
    assert len(names) > 50
    for name in names:
        assert pattern.search(f"undefined symbol: {name}"), name
        assert not pattern.search(f"undefined symbol: {name}_ext"), name
    assert not pattern.search("undefined symbol: statfs")  # glibc 2.2.5's, not listed


def test_unversioned_glibc_symbol_names_the_release_that_added_it(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: /opt/venv/lib/python3.10/site-packages/fastcodec/_native.cpython-310-"
        "x86_64-linux-gnu.so: undefined symbol: __libc_single_threaded",
    )
    found = causes(cli, log)["SYS132"]
    assert found["verdict"] == "confirmed"
    text = fix_text(found)
    assert "glibc >= 2.32" in text
    assert "Ubuntu 22.04 has 2.35" in text
    assert "TOR150" not in causes(cli, log)


def test_a_glibc_that_has_the_symbol_rules_it_out(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: /opt/venv/lib/python3.10/site-packages/fastcodec/_native.so: undefined "
        "symbol: fcntl64",
    )
    older = tmp_path / "old.toml"
    older.write_text('[system]\nglibc = "2.17"\n')
    assert causes(cli, log, "--spec", str(older))["SYS132"]["verdict"] == "confirmed"
    newer = tmp_path / "new.toml"
    newer.write_text('[system]\nglibc = "2.35"\n')
    assert causes(cli, log, "--spec", str(newer))["SYS132"]["verdict"] != "confirmed"


def test_a_system_library_names_the_rpm_on_the_rhel_family_and_both_when_unknown(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    """SYS133's package follows the distribution: mesa-libGL where the log names Rocky Linux,
    libgl1 and mesa-libGL both where it names none (matrices/cuda/sonames.toml)."""
    missing = "ImportError: libGL.so.1: cannot open shared object file: No such file or directory"
    rocky = log_file(tmp_path, "- OS: Rocky Linux 9.3 (Blue Onyx)", missing, name="rocky.log")
    text = fix_text(causes(cli, rocky)["SYS133"])
    assert "sudo dnf install -y mesa-libGL" in text
    assert "apt-get" not in text
    plain = log_file(tmp_path, missing, name="plain.log")
    text = fix_text(causes(cli, plain)["SYS133"])
    assert "sudo apt-get install -y libgl1" in text
    assert "dnf install mesa-libGL" in text
    ubuntu = log_file(tmp_path, "OS: Ubuntu 22.04.3 LTS (x86_64)", missing, name="ubuntu.log")
    assert "mesa-libGL" not in fix_text(causes(cli, ubuntu)["SYS133"])
