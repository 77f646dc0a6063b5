"""Layouts met on a real H100 node (docs/gpu.md, "On a real node"), rebuilt with gcc and
objcopy in a venv and checked end to end: a healthy environment must not fail the check.

- nvidia-cufft 12 keeps its kernels as fatbins in ``.ldata``; its ``.nv_fatbin`` and cuFFTW's
  hold one sm_75 cubin each;
- cupy-cuda13x ships a ``cutensor`` binding whose library (cuTENSOR, optional to CuPy) is not
  installed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from envcheck.commands.check import RuleOptions, check
from envcheck.probes import collect
from tests.binaries.elfbuild import add_fatbin, build_so, cubin, fatbin, ptx, record


def _site(tmp_path: Path) -> tuple[Path, Path]:
    venv = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120
    )
    return venv / "bin" / "python", next((venv / "lib").glob("python3*/site-packages"))


def _cufft(site: Path, store: bytes) -> None:
    lib = site / "nvidia" / "cu13" / "lib"
    cufft = build_so(lib / "libcufft.so.12", "int plan(void){return 1;}", soname="libcufft.so.12")
    add_fatbin(cufft, fatbin(cubin(75)))
    if store:
        add_fatbin(cufft, store, section=".ldata")
    cufftw = build_so(
        lib / "libcufftw.so.12",
        "int fftw(void){return 2;}",
        soname="libcufftw.so.12",
        libs=(cufft,),
        runpath="$ORIGIN",
    )
    add_fatbin(cufftw, fatbin(cubin(75)))
    record(site, "nvidia_cufft", "12.0.0.61", [cufft, cufftw], requires=("nvidia-nvjitlink",))


def test_cufft_kernels_in_ldata_and_an_optional_cupy_binding_pass(
    stage,  # type: ignore[no-untyped-def]
    fake_nvml,
    tmp_path: Path,
) -> None:
    fake_nvml("h100x2")
    python, site = _site(tmp_path)
    _cufft(site, fatbin(cubin(80), cubin(90), ptx(90, (7, 8))) + bytes(40) + fatbin(cubin(120)))
    # cupy's cuTENSOR binding, linked against a libcutensor.so.2 that is then not installed
    gone = build_so(
        tmp_path / "build" / "libcutensor.so.2",
        "int ct(void){return 3;}",
        soname="libcutensor.so.2",
    )
    binding = build_so(
        site / "cupy_backends" / "cuda" / "libs" / "cutensor.cpython-312-x86_64-linux-gnu.so",
        "int ct(void);\nint bind(void){return ct();}",
        libs=(gone,),
    )
    gone.unlink()
    record(site, "cupy_cuda13x", "14.0.1", [binding], requires=("numpy>=2.0",))
    report = collect(stage.ctx(python=str(python)))
    assert report.binaries.is_ok, report.binaries.describe()
    outcome = check([report], RuleOptions(select=("TOR160", "SYS170")))
    codes = {f.code: f for f in outcome.findings}
    assert "TOR160" not in codes  # cuFFT's sm_90 cubins are in .ldata
    assert codes["SYS170"].severity.value == "warning"
    assert "cupy_cuda13x's binding of that library" in codes["SYS170"].message
    assert outcome.exit_code == 0


def test_an_nvidia_wheel_without_code_for_the_gpu_anywhere_still_fails(
    stage,  # type: ignore[no-untyped-def]
    fake_nvml,
    tmp_path: Path,
) -> None:
    fake_nvml("h100x2")
    python, site = _site(tmp_path)
    _cufft(site, b"")  # no store: sm_75 alone, no PTX, on sm_90
    report = collect(stage.ctx(python=str(python)))
    outcome = check([report], RuleOptions(select=("TOR160",)))
    assert [f.code for f in outcome.failing] == ["TOR160"]
    assert "libcufft.so.12 (nvidia_cufft) and 1 more of its libraries" in outcome.failing[0].message
    assert outcome.exit_code == 1
