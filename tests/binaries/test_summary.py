"""The probe table's binaries summary: files read, GPU code per GPU, libraries that will not
load, at 80 columns. A venv whose site-packages holds gcc-built objects (one with a fatbin
assembled from the documented layout), probed with the fake NVML's two H100s."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from envcheck.formats.table import console, print_report
from envcheck.probes import collect
from tests.binaries.elfbuild import add_fatbin, build_so, cubin, fatbin, ptx, record
from tests.binaries.test_loading import _node
from tests.distfactory import TORCH_VERSION_PY_2X


def _table(report) -> str:  # type: ignore[no-untyped-def]
    buffer = io.StringIO()
    out = console(buffer)
    out.width = 80
    print_report(report, out)
    return buffer.getvalue()


def _rows(text: str) -> list[str]:
    """The Binaries group's lines, label and value one space apart."""
    rows: list[str] = []
    for line in text[text.index("\nBinaries\n") :].strip().splitlines()[1:]:
        if not line.strip():
            continue
        if len(line) - len(line.lstrip()) > 2 and rows:  # a value folded onto the next line
            rows[-1] += " " + line.strip()
        else:
            rows.append(re.sub(r"\s{2,}", " ", line.strip()))
    return rows


def _venv(tmp_path: Path) -> tuple[Path, Path]:
    venv = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120
    )
    site, _ = _node(tmp_path, next((venv / "lib").glob("python3*/site-packages")))
    (site / "torch" / "version.py").write_text(
        TORCH_VERSION_PY_2X.format(version="2.5.1", cuda="12.4")
    )
    return venv / "bin" / "python", site


def test_probe_table_summarises_the_binaries_per_gpu(stage, fake_nvml, tmp_path) -> None:  # type: ignore[no-untyped-def]
    fake_nvml("h100x2")
    python, site = _venv(tmp_path)
    # an Ampere-only kernel library and one with Hopper PTX besides Ampere SASS
    ampere = add_fatbin(
        build_so(site / "ampere_ops" / "_k.so", "int k(void){return 1;}"),
        fatbin(cubin(80), cubin(86)),
    )
    record(site, "ampere_ops", "1.0", [ampere], requires=("torch",))
    jit = add_fatbin(
        build_so(site / "jit_ops" / "_j.so", "int j(void){return 1;}"),
        fatbin(cubin(80), ptx(90, (8, 4))),
    )
    record(site, "jit_ops", "1.0", [jit], requires=("torch",))
    # the site's own paths are not staged: the loader looks at them where they are
    report = collect(replace(stage.ctx(python=str(python)), root=Path("/")))
    assert report.binaries.is_ok, report.binaries.describe()
    text = _table(report)
    assert all(len(line) <= 80 for line in text.splitlines()), text
    rows = _rows(text)
    scanned = report.binaries.data.scanned
    assert rows[0] == f"files read {scanned} ELF files in 1 site dir(s)"
    assert rows[1] == "sm_90 kernels 2x H100 80GB HBM3: 0 native, 1 PTX JIT, 1 none (_k.so)"
    assert "unresolved libs 1: libgone.so.3" in rows
    assert not any(r.startswith("shadowed libs") for r in rows)  # the wheel's copy loads
    assert "symbol versions lacking DEP_2.0" in rows
    assert "torch symbols missing for _C.cpython-311-x86_64-linux-gnu.so" in rows


def test_without_a_gpu_the_summary_lists_the_architectures(stage, fake_nvml, tmp_path) -> None:  # type: ignore[no-untyped-def]
    fake_nvml("none")
    python, site = _venv(tmp_path)
    lib = add_fatbin(
        build_so(site / "ops" / "_o.so", "int o(void){return 1;}"),
        fatbin(cubin(80), cubin(90), ptx(90, (8, 4))),
    )
    record(site, "ops", "1.0", [lib], requires=("torch",))
    rows = _rows(_table(collect(stage.ctx(python=str(python)))))
    assert "GPU code 1 files: sm_80-sm_90, PTX sm_90-sm_90 (no GPU to judge)" in rows
