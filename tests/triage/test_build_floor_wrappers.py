"""A build that failed with only its wrappers' lines (torch's `Error compiling objects for
extension`, pip's `Failed building wheel for flash-attn`) on a node whose nvcc is older than the
package's own setup.py accepts (matrices/packages/build_floors.toml) is the toolkit's: CUD110,
with the toolkit's fix. A toolkit the package accepts, or none stated, leaves CUD110 open."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult
from tests.triage.from_log import causes as _causes
from tests.triage.from_log import fix_text as _fix
from tests.triage.from_log import log_file

_WRAPPERS = (
    "RuntimeError: Error compiling objects for extension",
    "  ERROR: Failed building wheel for flash-attn",
)


def _spec(tmp_path: Path, nvcc: str) -> Path:
    spec = tmp_path / "spec.toml"
    spec.write_text(f'[system]\nnvcc = "{nvcc}"\n')
    return spec


def test_a_toolkit_below_the_packages_floor_is_cud110(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(tmp_path, *_WRAPPERS)
    cud110 = _causes(cli, log, "--spec", str(_spec(tmp_path, "11.5")))["CUD110"]
    assert cud110["verdict"] == "confirmed"
    message = cud110["findings"][0]["message"]
    assert "nvcc of CUDA 11.5" in message and "CUDA 11.6 and above" in message
    assert "cuda-toolkit" in _fix(cud110)


def test_a_toolkit_the_package_accepts_leaves_cud110_open(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(tmp_path, *_WRAPPERS)
    cud110 = _causes(cli, log, "--spec", str(_spec(tmp_path, "12.1")))["CUD110"]
    assert cud110["verdict"] in ("unknown", "unchecked")


def test_no_toolkit_stated_leaves_cud110_open(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(tmp_path, *_WRAPPERS)
    assert _causes(cli, log)["CUD110"]["verdict"] in ("unknown", "unchecked")
