"""Two copies of a CUDA library loaded side by side, read from the line that shows it (CUD104's
readings, called from cuda_stated.py), and cuFFT on a GPU newer than its CUDA (CUD160, a
matrix data rule in matrices/cuda/known_bad.toml, worded here from the log line).

- `libcublas.so.11: undefined symbol: cublasLtHSHMatmulAlgoInit, version libcublasLt.so.11`,
  `libcudnn_cnn_infer.so.8: undefined symbol: _ZN..., version libcudnn_ops_infer.so.8`,
  `/usr/local/cuda-8.0/lib64/libnvrtc.so: undefined symbol: nvrtcGetCUBIN`: a CUDA library
  resolved a sibling of its own release (cuBLASLt for cuBLAS, a cuDNN sub-library, NVRTC) to
  another copy of another release. The path on the line says which copy failed: under
  site-packages/nvidia/ it is a pip wheel's whose sibling came from elsewhere (put the sibling
  wheel's directory first); elsewhere it is a system, toolkit or conda copy found before the
  one the program ships or needs (take that directory off the loader's path).
- `CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH`: cuDNN 9's sub-libraries come from two copies.
"""

from __future__ import annotations

import contextlib
import re

from packaging.utils import canonicalize_name
from packaging.version import Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, from_log
from envcheck.rules.fixes import fix, manual, pip_install

# the pip wheel directory (site-packages/nvidia/<dir>/lib) that ships each CUDA library
WHEEL_DIRS = {
    "cublas": "cublas",
    "cublasLt": "cublas",
    "cudnn": "cudnn",
    "cusparse": "cusparse",
    "cusparseLt": "cusparselt",
    "cusolver": "cusolver",
    "cusolverMg": "cusolver",
    "cufft": "cufft",
    "cufftw": "cufft",
    "curand": "curand",
    "nvrtc": "cuda_nvrtc",
    "nvrtc-builtins": "cuda_nvrtc",
    "cudart": "cuda_runtime",
    "nccl": "nccl",
    "nvJitLink": "nvjitlink",
}
_LIB = r"lib(?P<{0}>cublasLt|cublas|cudnn[a-z_]*|cusparseLt|cusparse|cusolverMg|cusolver|cufftw|cufft|curand|nvrtc-builtins|nvrtc|cudart|nccl|nvJitLink)\.so[.0-9]*"
_FAILED = lazy(
    r"(?P<path>[~/][^\s:'\"]*/)?(?P<lib>" + _LIB.format("name") + r"): "
    r"(?:undefined symbol: (?P<symbol>[A-Za-z0-9_]+)|symbol (?P<symbol2>[A-Za-z0-9_]+),? version)"
)
_NEEDED = lazy(r"version (?P<lib>" + _LIB.format("name") + ")")
_WHEEL_PATH = lazy(r"(?P<site>.*?/(?:site|dist)-packages)/(?:torch/lib/\.\./\.\./)?nvidia/")


def _wheel_dir(name: str) -> str:
    return WHEEL_DIRS["cudnn" if name.startswith("cudnn") else name]


def _cuda_major(facts: Facts, lib: str) -> str:
    """The cuNN suffix of the nvidia-* wheels: torch's CUDA major when known, else the soname's
    major for the CUDA-versioned libraries (libcublas.so.11), else 12."""
    try:
        build = facts.torch()
    except Skip:
        build = None
    if build is not None and build.cuda:
        return build.cuda.split(".")[0]
    soname = re.search(r"\.so\.(1[0-9])", lib)
    if soname and not lib.startswith(("libcudnn", "libnccl")):
        return soname.group(1)
    return "12"


def two_copies_hit(facts: Facts, line: LogLine) -> Hit:
    """A CUDA library lacking a symbol of a sibling of its own release: which copy failed, and
    the directory to put first or to take off the loader's path."""
    failed = _FAILED.search(line.text)
    if failed is None:
        raise NotStated(f"line {line.line} names no CUDA library with a missing symbol")
    lib, name = failed.group("lib"), failed.group("name")
    symbol = failed.group("symbol") or failed.group("symbol2")
    path = failed.group("path") or ""
    needed = _NEEDED.search(line.text[failed.end() :])
    sibling = needed.group("lib") if needed else lib
    sibling_name = needed.group("name") if needed else name
    wheel = _WHEEL_PATH.match(path)
    actions = []
    if wheel is not None:
        site = wheel.group("site")
        wheel_lib = f"{site}/nvidia/{_wheel_dir(sibling_name)}/lib"
        where = (
            f"{lib} of the pip wheel (line {line.line}) loaded a {sibling} of another CUDA "
            f"release that lacks {symbol}: another copy (a CUDA toolkit's or the system's, on "
            "LD_LIBRARY_PATH or in the loader's cache) is found before the wheel's"
        )
        summary = (
            f"Load {sibling} from the same wheel: put {wheel_lib} first on LD_LIBRARY_PATH "
            "(or drop the CUDA toolkit's directories from LD_LIBRARY_PATH)"
        )
        actions.append(manual(f"export LD_LIBRARY_PATH={wheel_lib}:$LD_LIBRARY_PATH"))
        actions.append(
            manual(
                "or unset LD_LIBRARY_PATH (drop /usr/local/cuda*/lib64 and other CUDA "
                "directories from it): pip wheels find each other without it"
            )
        )
        major = _cuda_major(facts, lib)
        dist = f"nvidia-{_wheel_dir(sibling_name).replace('_', '-')}-cu{major}"
        actions.append(
            manual(
                f"if the nvidia-* wheels themselves differ (pip check names it): pip install "
                f"--force-reinstall the versions torch pins ({dist})"
            )
        )
        actions.append(manual(f"check: ldd {path}{lib} | grep {sibling.split('.so')[0]}"))
    else:
        place = path.rstrip("/") or "a directory on the loader's path"
        where = (
            f"{lib} (line {line.line}) is loaded from {place} and lacks {symbol}"
            + (f" of {sibling}" if sibling != lib else "")
            + ": two copies of a CUDA library of different releases are mixed (a system, "
            "CUDA toolkit or conda copy found before the one the program ships or needs)"
        )
        summary = (
            f"Take {place} off the loader's path for this program (unset LD_LIBRARY_PATH or "
            "drop that directory from it), or put the directory of the copy it ships or needs "
            "first on LD_LIBRARY_PATH"
        )
        if path:
            actions.append(
                manual(
                    f"export LD_LIBRARY_PATH=$(echo $LD_LIBRARY_PATH | tr ':' '\\n' | grep -v "
                    f"'^{place}' | paste -sd:)  (drop {place})"
                )
            )
        else:
            actions.append(manual("unset LD_LIBRARY_PATH"))
        actions.append(
            manual(
                "export LD_LIBRARY_PATH=<the program's own lib directory, or "
                f"site-packages/nvidia/{_wheel_dir(sibling_name)}/lib>:$LD_LIBRARY_PATH"
            )
        )
        actions.append(
            manual(
                f"find the copies: ldconfig -p | grep {sibling.split('.so')[0]}; "
                f"ldd {path}{lib} | grep -E 'cuda|cudnn|cublas|nvrtc'"
            )
        )
    return Hit(
        where,
        evidence={"line": line.line, "library": f"{path}{lib}", "symbol": symbol, "needs": sibling},
        fix=fix(summary, "manual", *actions),
    )


def sublibrary_mismatch_hit(facts: Facts, line: LogLine) -> Hit:
    """cuDNN 9's sub-libraries from two copies: one wheel for all of them, the system copy off
    the loader's path."""
    major = _cuda_major(facts, "libcudnn.so.9")
    wheel = f"nvidia-cudnn-cu{major}"
    return Hit(
        f"cuDNN loaded sub-libraries of another version than its own (line {line.line}): two "
        "cuDNN copies are mixed (a system cuDNN in /usr/lib or on LD_LIBRARY_PATH and the "
        f"{wheel} wheel's, or a wheel missing a sub-library that the system's fills in)",
        evidence={"line": line.line},
        fix=fix(
            f"Load every cuDNN library from one copy: pip install -U {wheel} (all sub-libraries "
            "of one release), and take the other cuDNN off the loader's path (unset "
            "LD_LIBRARY_PATH; remove the system cuDNN if nothing else needs it)",
            "manual",
            pip_install(wheel, flags=("--upgrade",)),
            manual("unset LD_LIBRARY_PATH  (or drop every directory holding a libcudnn*.so.9)"),
            manual(
                "find the other copy: ldconfig -p | grep libcudnn; LD_DEBUG=libs python "
                "script.py 2>&1 | grep 'calling init:.*cudnn'"
            ),
            manual(
                "not needed by anything else: sudo apt remove 'libcudnn9*' (or keep only "
                "one cuDNN 9 release installed)"
            ),
        ),
    )


_TORCH_CUDA = (11, 8)


@from_log("CUD160")
def cufft_on_new_gpu_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """CUFFT_INTERNAL_ERROR: the build-with-CUDA-11.8 fix, unless the node shows a torch built
    with CUDA 11.8 or newer (then it is not this cause)."""
    cuda = None
    with contextlib.suppress(Skip):
        build = facts.torch()
        cuda = build.cuda if build is not None else None
    if cuda:
        release = tuple(int(p) for p in cuda.split(".")[:2])
        if release >= _TORCH_CUDA:
            return None
    gpus = ""
    with contextlib.suppress(Skip):
        gpus = ", ".join(dict.fromkeys(g.name for g in facts.gpus() if g.name))
    stated = f"torch's CUDA is {cuda}" if cuda else "the torch build's CUDA is not stated"
    return Hit(
        f"cuFFT failed inside the library (CUFFT_INTERNAL_ERROR, line {line.line}): the cuFFT of "
        "CUDA 11.7 and older does not run on Ada and Hopper GPUs (RTX 40xx, L4, L40, H100)"
        + (f"; the GPU is {gpus}" if gpus else "")
        + f"; {stated}",
        evidence={"line": line.line, "torch_cuda": cuda},
        fix=fix(
            "Install a torch built with CUDA 11.8 or newer: pip install torch --index-url "
            "https://download.pytorch.org/whl/cu118 (or cu121); conda: pytorch-cuda=11.8",
            "manual",
            manual(
                "pip install --force-reinstall torch torchvision torchaudio --index-url "
                "https://download.pytorch.org/whl/cu118  (or cu121: the same index for all three)"
            ),
            manual(
                "conda: conda install pytorch torchvision torchaudio pytorch-cuda=11.8 -c "
                "pytorch -c nvidia"
            ),
            manual(
                "check: python -c 'import torch; print(torch.version.cuda)' shows 11.8 or newer"
            ),
        ),
    )


# the wheel (by its site-packages/nvidia/<dir>) behind the prefix of a symbol torch needs
_SYMBOL_WHEELS = {
    "nccl": "nccl",
    "cublas": "cublas",
    "cudnn": "cudnn",
    "cusparse": "cusparse",
    "cusolver": "cusolver",
    "cufft": "cufft",
    "curand": "curand",
    "nvJitLink": "nvjitlink",
}
_TORCH_SYMBOL = lazy(
    r"(?P<path>[~/][^\s:'\"]*/)?(?P<lib>libtorch[a-z_]*\.so): undefined symbol: "
    r"(?P<symbol>(?P<prefix>nccl|cublas|cudnn|cusparse|cusolver|cufft|curand|nvJitLink)"
    r"[A-Za-z0-9_]*)"
)


def torch_lib_symbol_hit(facts: Facts, line: LogLine) -> Hit:
    """torch's library lacks a CUDA library's symbol: the copy loaded is not the wheel torch
    pins; remove the other copy (a wheel of another CUDA major, a toolkit or system copy) or
    reinstall the pinned wheel."""
    found = _TORCH_SYMBOL.search(line.text)
    if found is None:
        raise NotStated(f"line {line.line} names no CUDA symbol torch lacks")
    wheel_dir = _SYMBOL_WHEELS[found.group("prefix")]
    major = _cuda_major(facts, "")
    dist = f"nvidia-{wheel_dir}-cu{major}"
    other = f"nvidia-{wheel_dir}-cu{11 if major == '12' else 12}"
    path = found.group("path") or ""
    site_dir = path.split("/torch/lib")[0] if "/torch/lib" in path else None
    wheel_lib = f"{site_dir}/nvidia/{wheel_dir}/lib" if site_dir else None
    pin = ""
    with contextlib.suppress(Skip):
        build = facts.torch()
        if build is not None and build.requires_cuda:
            pin = build.requires_cuda.get(dist, "")
    return Hit(
        f"torch's {found.group('lib')} (line {line.line}) needs {found.group('symbol')} and the "
        f"{found.group('prefix')} library it loaded lacks it: another copy than the {dist} "
        "wheel torch pins is loaded (another package's copy, a wheel of another CUDA major, "
        "a system or toolkit copy on LD_LIBRARY_PATH), or that wheel is older than the pin",
        evidence={"line": line.line, "symbol": found.group("symbol"), "wheel": dist},
        fix=fix(
            f"Load torch's own {found.group('prefix')}: remove the other copy (pip uninstall "
            f"{other} if both are installed; unset LD_LIBRARY_PATH) and reinstall the {dist} "
            "version torch pins",
            "manual",
            manual(
                f"pip list 2>/dev/null | grep -i -E 'nvidia-{wheel_dir}|{wheel_dir}'  (two "
                f"copies: pip uninstall {other})"
            ),
            manual("unset LD_LIBRARY_PATH  (or drop the directories that hold another copy)"),
            manual(
                f"pip install --force-reinstall '{dist}{pin}'"
                if pin
                else f"pip install --force-reinstall {dist}==<the version torch pins: pip show "
                "torch | grep Requires, or pip check>"
            ),
            *(
                (manual(f"export LD_LIBRARY_PATH={wheel_lib}:$LD_LIBRARY_PATH"),)
                if wheel_lib
                else ()
            ),
        ),
    )


_CONFLICT = lazy(
    r"(?P<owner>[A-Za-z0-9][A-Za-z0-9._-]*) (?P<owner_version>[0-9][^ ]*) (?:requires|has "
    r"requirement) (?P<requirement>(?P<name>nvidia-[a-z0-9-]+) ?[=<>!~]=?[0-9][^ ,]*), but you "
    r"have nvidia-[a-z0-9-]+ (?P<installed>[0-9][0-9a-z.+]*)"
)


@from_log("CUD101")
def wheel_pin_conflict_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """pip's conflict line names the package, the nvidia-* pin and the installed version: the
    fix reinstalls the pin, unless the matrix accepts the installed one as a replacement (the
    cuBLAS 12.3.4.1 fix for torch 2.1-2.4 makes pip print the same line). An undefined symbol
    no CUDA library defines (torch's, the Python C API's, another library's) rules it out."""
    symbol = line.stated.get("undefined_symbol")
    if line.signature == "undefined-symbol" and symbol is not None:
        from envcheck.rules.node.abi import cuda_owned

        if not cuda_owned(symbol):
            return None
        raise NotStated(f"line {line.line} names a CUDA symbol, not which nvidia-* wheel loads")
    found = _CONFLICT.search(line.text)
    if found is None:
        raise NotStated(f"line {line.line} states no nvidia-* requirement and installed version")
    owner, name = found.group("owner"), found.group("name")
    requirement = found.group("requirement").replace(" ", "")
    installed = found.group("installed")
    if canonicalize_name(owner) == "torch":
        torch = Version(found.group("owner_version").split("+")[0])
        accepted = [o for o in facts.matrix.overrides_for(name, torch) if installed in o.versions]
        if accepted:
            return None
    return Hit(
        f"{owner} {found.group('owner_version')} pins {requirement} but {name} {installed} is "
        f"installed (line {line.line}): the CUDA library {owner} loads is not the one it was "
        "built and tested with (another package's install moved it)",
        evidence={"line": line.line, "owner": owner, "pinned": requirement, "installed": installed},
        fix=fix(
            f"Reinstall the pinned wheel: pip install '{requirement}'",
            "safe",
            pip_install(requirement),
        ),
    )
