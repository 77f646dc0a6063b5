"""CUD: the CUDA libraries torch loads (nvidia-* wheels) and the ones that get in their way."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from envcheck.facts.node import Facts
from envcheck.matrix.model import public
from envcheck.model.finding import Fix, Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, rule
from envcheck.rules.fixes import fix, pip_install, set_env

_TOOLKIT_DIR = lazy(r"/cuda(?:-(\d+(?:\.\d+)?))?(?:/targets/[^/]+)?/lib(?:64)?/?$")
_CUDA_DIST = ("nvidia-", "cuda-toolkit")


def _pins(facts: Facts) -> dict[str, SpecifierSet]:
    build = facts.torch()
    if build is None:
        return {}
    if build.requires_cuda:
        return {k: SpecifierSet(v) for k, v in build.requires_cuda.items()}
    if not facts.declared:
        return {}
    release = facts.matrix.torch_release(facts.torch_version())
    if release is None or facts.torch_variant() != release.pypi_default:
        return {}
    return dict(release.pins)


@rule("CUD101", "cuda-wheels-differ-from-torch-pins", Severity.WARNING)
def cuda_wheels_differ(facts: Facts) -> Iterable[Hit]:
    """nvidia-* wheels differ from the versions torch pins

    ## What it checks
    Every `nvidia-*` / `cuda-toolkit` requirement of the installed torch (read from its
    metadata; for a declared PyPI build, from the matrix) against what is installed. Known-good
    replacements from the matrix (cuBLAS 12.3.4.1 or 12.4.5.8 for torch 2.1-2.4) are accepted.
    On a probed node a pinned wheel that is missing is reported too.

    ## Why it matters
    torch was built and tested with exactly these libraries. Another cuDNN, NCCL or nvJitLink
    version fails with `undefined symbol` at import, `CUDNN_STATUS_...` errors, or NCCL hangs;
    a missing one with `libcudnn.so.9: cannot open shared object file`.

    ## Example
    torch 2.5.1 pins nvidia-nccl-cu12==2.21.5; nvidia-nccl-cu12 2.26.2 is installed after
    another package upgraded it.

    ## Fix
    Reinstall the pinned version (`pip install nvidia-nccl-cu12==2.21.5`).

    ## References
    - PyPI wheel metadata of torch (Requires-Dist nvidia-*==)
    """
    if facts.version("torch") is None:
        return []
    torch = facts.torch_version()
    hits = []
    for name, spec in sorted(_pins(facts).items()):
        if not canonicalize_name(name).startswith(_CUDA_DIST) or "==" not in str(spec):
            continue
        installed = facts.version(name)
        if installed is None:
            if facts.declared:
                continue
            hits.append(
                Hit(
                    f"torch {torch} pins {name}{spec}, which is not installed: torch cannot load that library",
                    evidence={"package": name, "pinned": str(spec), "installed": None},
                    fix=fix(f"Install {name}{spec}", "safe", pip_install(f"{name}{spec}")),
                )
            )
            continue
        if spec.contains(installed, prereleases=True):
            continue
        accepted = [
            o
            for o in facts.matrix.overrides_for(name, torch)
            if str(o.replaces) == str(spec) and str(installed) in o.versions
        ]
        if accepted:
            continue
        hits.append(
            Hit(
                f"torch {torch} pins {name}{spec}, but {installed} is installed",
                evidence={"package": name, "pinned": str(spec), "installed": str(installed)},
                fix=fix(f"Reinstall {name}{spec}", "safe", pip_install(f"{name}{spec}")),
            )
        )
    return hits


def _wheel_version(facts: Facts, lib: str) -> tuple[str, str] | None:
    for wheel in facts.matrix.soname_wheels(lib):  # matrices/cuda/sonames.toml
        dist = facts.dist(wheel)
        if dist is not None:
            return wheel, dist.version
    return None


def _same_release(lib_version: str | None, wheel_version: str) -> bool:
    if not lib_version:
        return False
    return wheel_version.startswith(lib_version) or lib_version.startswith(wheel_version)


@rule("CUD104", "system-cuda-libraries-shadow-wheels", Severity.WARNING)
def system_libs_shadow(facts: Facts) -> Iterable[Hit]:
    """System CUDA libraries on LD_LIBRARY_PATH or LD_PRELOAD load before torch's wheels

    ## What it checks
    For a pip-installed CUDA build of torch: CUDA libraries (libcublas, libcublasLt, libcudart,
    libcudnn, libnccl, libnvJitLink, libcusparse) found in `LD_LIBRARY_PATH` directories or
    `LD_PRELOAD`, with their versions from the file names, against the nvidia-* wheels. For a
    declared node, `LD_LIBRARY_PATH` entries that are CUDA toolkit library directories.

    ## Why it matters
    The dynamic loader searches `LD_LIBRARY_PATH` before the wheels' RUNPATH, so the toolkit's
    copies win: `libcusparse.so.12: undefined symbol: __nvJitLinkAddData_12_1`,
    `CUBLAS_STATUS_INVALID_VALUE`, or a cuBLAS fix installed as a wheel silently not loading.
    A different version than the wheel's is an error; the same version is a warning.

    ## Example
    `LD_LIBRARY_PATH=/usr/local/cuda-12.1/lib64` holds libcublas 12.1.3.1 while the node
    installed nvidia-cublas-cu12 12.3.4.1 to avoid the H20 crash: the old library still loads.

    ## Fix
    Drop the toolkit directories from `LD_LIBRARY_PATH` (and the libraries from `LD_PRELOAD`) in
    the job's environment; pip wheels need neither.

    ## References
    - https://github.com/pytorch/pytorch/issues/111469
    - https://github.com/infiniflow/ragflow/issues/4466 (LD_LIBRARY_PATH=/usr/local/cuda-12.1/lib64)
    - https://github.com/pytorch/pytorch/issues/134929
    """
    if facts.version("torch") is None or facts.torch_cuda() is None:
        return []
    env = facts.env()
    libs = facts.libraries()
    paths = list(
        libs.ld_library_path or [p for p in env.get("LD_LIBRARY_PATH", "").split(":") if p]
    )
    if libs.cuda_libraries:
        by_dir: dict[str, list[str]] = {}
        worst = Severity.WARNING
        bad_dirs: set[str] = set()
        preload_bad: set[str] = set()
        details = []
        for lib in libs.cuda_libraries:
            wheel = _wheel_version(facts, lib.name)
            where = lib.path.rsplit("/", 1)[0] if lib.via == "LD_LIBRARY_PATH" else "LD_PRELOAD"
            text = f"{lib.name} {lib.version or '?'}"
            if wheel is not None:
                text += f" (wheel {wheel[0]} {wheel[1]})"
                if not _same_release(lib.version, wheel[1]):
                    worst = Severity.ERROR
            by_dir.setdefault(where, []).append(text)
            details.append(
                {
                    "library": lib.name,
                    "version": lib.version,
                    "path": lib.path,
                    "via": lib.via,
                    "wheel": wheel[1] if wheel else None,
                }
            )
            if lib.via == "LD_PRELOAD":
                preload_bad.add(lib.path)
            else:
                bad_dirs.add(where)
        summary = "; ".join(f"{where}: {', '.join(items)}" for where, items in by_dir.items())
        message = (
            f"CUDA libraries load before the wheels torch uses: {summary}. Mixed CUDA libraries fail "
            "with 'undefined symbol: __nvJitLink...' or CUBLAS_STATUS_INVALID_VALUE"
        )
        return [
            Hit(
                message,
                evidence={"libraries": details},
                fix=_env_fix(env, bad_dirs, preload_bad),
                severity=worst,
            )
        ]
    toolkit_dirs = [p for p in paths if _TOOLKIT_DIR.search(p)]
    if not toolkit_dirs:
        return []
    cublas = _wheel_version(facts, "libcublas")
    note = (
        f"; the nvidia-cublas-cu12 {cublas[1]} wheel will not be the cuBLAS that loads"
        if cublas
        else ""
    )
    return [
        Hit(
            f"LD_LIBRARY_PATH includes CUDA toolkit directories ({', '.join(toolkit_dirs)}): their "
            f"libraries load before the wheels torch {public(facts.torch_version())} was built with{note}",
            evidence={"ld_library_path": paths, "toolkit_dirs": toolkit_dirs},
            fix=_env_fix(env, set(toolkit_dirs), set()),
        )
    ]


def _env_fix(variables: Mapping[str, str], dirs: set[str], preload: set[str]) -> Fix:
    changes: dict[str, str] = {}
    if dirs:
        kept = [
            p
            for p in variables.get("LD_LIBRARY_PATH", "").split(":")
            if p and p.rstrip("/") not in {d.rstrip("/") for d in dirs}
        ]
        changes["LD_LIBRARY_PATH"] = ":".join(kept)
    if preload:
        kept = [
            p
            for p in re.split(r"[:\s]+", variables.get("LD_PRELOAD", ""))
            if p and p not in preload
        ]
        changes["LD_PRELOAD"] = " ".join(kept)
    return fix(
        "Remove the CUDA toolkit libraries from the loader's search path for the job",
        "safe",
        set_env(**changes),
    )
