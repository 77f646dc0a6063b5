"""`check --spec` in an image build (no GPU): the spec declares the hardware the image will
run on, the image holds the files. When the declared GPU-stack packages are the ones installed
at the declared versions, the image's ELF files join the declared report; a spec of another
build is left as it was. A venv of gcc-built objects (one with an Ampere-only fatbin)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from envcheck.commands.check import RuleOptions, check
from envcheck.commands.source import with_image_binaries
from envcheck.ingest.spec import parse_spec, spec_to_report
from tests.binaries.elfbuild import add_fatbin, build_so, cubin, fatbin, record
from tests.binaries.test_loading import _node
from tests.distfactory import TORCH_VERSION_PY_2X

SPEC = """\
[gpu]
driver = "550.54.15"
models = ["NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3"]

[python]
version = "3.11.9"

[packages]
torch = "{torch}"
"nvidia-fakeblas-cu12" = "12.4.5.8"
"""


def _image(tmp_path: Path) -> Path:
    venv = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120
    )
    site, _ = _node(tmp_path, next((venv / "lib").glob("python3*/site-packages")))
    (site / "torch" / "version.py").write_text(
        TORCH_VERSION_PY_2X.format(version="2.5.1", cuda="12.4")
    )
    ampere = add_fatbin(
        build_so(site / "ampere_ops" / "_k.so", "int k(void){return 1;}"),
        fatbin(cubin(80), cubin(86)),
    )
    record(site, "ampere_ops", "1.0", [ampere], requires=("torch",))
    return venv / "bin" / "python"


def _declared(torch: str):  # type: ignore[no-untyped-def]
    return spec_to_report(parse_spec(SPEC.format(torch=torch), "stack.toml"), "stack.toml")


def test_the_image_files_join_the_declared_hardware(stage, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    python = _image(tmp_path)
    report = with_image_binaries(_declared("2.5.1"), ctx=stage.ctx(python=str(python)))
    assert report.binaries.is_ok, report.binaries.describe()
    assert report.binaries.source == f"this image's files ({python})"
    assert report.binaries.data.driver is None  # the driver is the spec's to declare
    assert report.gpu.data.driver_version == "550.54.15"  # the declared hardware stays
    outcome = check([report], RuleOptions(select=("TOR160",)))
    [finding] = outcome.findings
    assert "_k.so (ampere_ops)" in finding.message and "NVIDIA H100" in finding.message
    assert outcome.exit_code == 1


def test_a_spec_of_another_build_is_left_as_it_was(stage, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    python = _image(tmp_path)
    declared = _declared("2.4.0")  # the image holds torch 2.5.1
    report = with_image_binaries(declared, ctx=stage.ctx(python=str(python)))
    assert report is declared and not report.binaries.is_ok
    outcome = check([report], RuleOptions(select=("TOR160",)))
    assert not outcome.findings
    assert any(s.code == "TOR160" and s.fact == "binaries" for s in outcome.result.skipped)
