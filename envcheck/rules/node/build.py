"""The build family: what a C++/CUDA extension build needs from the node, for any package
(setup.py builds, JIT builds under DeepSpeed, FlashInfer, torch.utils.cpp_extension).

- SYS152: no CUDA toolkit for the build (`CUDA_HOME environment variable is not set`,
  `cuda_runtime.h: No such file or directory`, `nvcc not found at ...`).
- SYS153: the build failed (`Error building extension 'x'`, `ninja: build stopped: subcommand
  failed`, `Ninja is required to load C++ extensions`): the cause is the first compiler error
  above it, which triage names with its own signature when it knows it.
- SYS131 (rules/node/system_build.py) worded from nvcc's own `unsupported GNU version! gcc
  versions later than N are not supported`.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Fix, Severity
from envcheck.patterns import lazy
from envcheck.rules import nvcc_host
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.data import conda_toolkit
from envcheck.rules.fixes import fix, manual, pip_install, set_env
from envcheck.rules.node import toolkit_headers
from envcheck.rules.node.build_prebuilt import prebuilt_install
from envcheck.rules.node.rust_sdist import package_named, take_a_wheel

_HEADER = lazy(
    r"([A-Za-z0-9_/]+\.c?u?h)(?:: No such file or directory|' file not found|': No such file)"
    r"|cannot open source file \"([A-Za-z0-9_/]+\.c?u?h)\""
)
_NVCC_AT = lazy(
    r"nvcc not found at '([^']+)'|No such file or directory: '([^']*/bin/nvcc)'"
    r"|error: command '([^']*[/\\]bin[/\\]nvcc)(?:\.exe)?' failed: "
)
# flash-attn's (and causal-conv1d's, mamba's) setup.py runs `$CUDA_HOME/bin/nvcc -V`
_SETUP_NVCC = lazy(r"check_output\(\[(?:cuda_dir|cuda_home) \+ \"/bin/nvcc\"")
# CMake's words when enable_language(CUDA) or find_package(CUDAToolkit) finds no nvcc
_CMAKE_CUDA = lazy(
    r"CMAKE_CUDA_COMPILER|environment variable CUDACXX|Could NOT find CUDAToolkit"
    r"|please set CUDAToolkit_ROOT"
)
_GCC_NEEDED = lazy(r"too old version of GCC\. We need GCC ([0-9]+) or later")
_KILLED = lazy(
    r"(?:Killed signal terminated program |'\"?(?:\$[A-Z_]+/)?)(?P<program>[A-Za-z0-9_+]+)"
    r"(?:\"?' died due to signal 9)?"
)
# the toolchain's own out-of-memory words (not killed: an allocation refused): libiberty's
# xmalloc_failed ('cc1plus: out of memory allocating N bytes after a total of M bytes'), GCC's
# garbage-collected heap ('virtual memory exhausted: Cannot allocate memory'), BFD's linker
_OUT_OF_MEMORY = lazy(
    r"(?:(?P<program>cc1plus|cc1|lto1|cicc|ptxas|ld|collect2|as)(?:\.exe)?: out of memory "
    r"allocating|virtual memory exhausted|final link failed: [Mm]emory exhausted)"
)
# headers that come with a CUDA library's own package rather than the toolkit's core
_LIBRARY_HEADERS = {"cudnn.h": "cuDNN", "nccl.h": "NCCL"}
# CMake's find_library(... REQUIRED) finding no cuDNN library (build.toml): cuDNN's fix
_CMAKE_CUDNN = "cmake-cudnn-not-found"
# FindPackageHandleStandardArgs' 'Could NOT find CUDNN (missing: ...)' (build.toml)
_CMAKE_CUDNN_STATUS = "cmake-cudnn-not-found-status"


def _torch_cuda(facts: Facts) -> str | None:
    try:
        cuda = facts.torch_cuda()
    except Skip:
        return None
    return f"{cuda.major}.{cuda.minor}" if cuda is not None else None


@rule("SYS152", "cuda-toolkit-missing-for-build", Severity.ERROR)
def cuda_toolkit_missing(facts: Facts) -> Iterable[Hit]:
    """The extension build finds no CUDA toolkit (nvcc, headers)

    ## What it checks
    Build lines that say the CUDA toolkit is not there: torch.utils.cpp_extension's `CUDA_HOME
    environment variable is not set` / `CUDA was not found on the system` / `nvcc not found at
    '...'`, or a compiler's `cuda_runtime.h: No such file or directory` (any CUDA header).
    With torch's CUDA known, the toolkit release to install. Only a build log states it.

    ## Why it matters
    pip's torch wheels bring the CUDA runtime libraries, not nvcc or the headers: every package
    that compiles CUDA code (flash-attn, DeepSpeed ops, FlashInfer's JIT, apex) needs a toolkit
    of torch's CUDA release, found through CUDA_HOME or nvcc on PATH.

    ## Example
    `OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install
    root.` while building flash-attn with torch 2.4.0+cu121.

    ## Fix
    Install the CUDA toolkit of torch's CUDA release and point the build at it: `export
    CUDA_HOME=/usr/local/cuda-12.1 PATH=/usr/local/cuda-12.1/bin:$PATH`; or install a prebuilt
    wheel of the package that needs no compiler. cuDNN's `cudnn.h`, which the toolkit does not
    ship: `export CUDNN_PATH=<its root>` (torch's extension builder reads CUDNN_HOME or
    CUDNN_PATH), the pip wheel's directory or a cluster's cuDNN module.

    ## References
    - pytorch/pytorch torch/utils/cpp_extension.py (_join_cuda_home, CUDA_NOT_FOUND_MESSAGE;
      CUDNN_HOME = os.environ.get('CUDNN_HOME') or os.environ.get('CUDNN_PATH'))
    - https://github.com/NVIDIA/TransformerEngine/issues/918 (cudnn.h from torch's
      cudnn-wrapper.h: CUDNN_HOME / CUDNN_PATH)
    """
    raise Skip("only a build log states a missing CUDA toolkit", "log.build")


@from_log("SYS152")
def cuda_toolkit_missing_in_log(facts: Facts, line: LogLine) -> Hit | None:
    if line.signature == toolkit_headers.SIGNATURE:
        return toolkit_headers.other_toolkit_headers(facts, line)
    cuda = _torch_cuda(facts)
    home = f"/usr/local/cuda-{cuda}" if cuda else "/usr/local/cuda"
    release = (
        f"CUDA {cuda} (torch's)"
        if cuda
        else "torch's CUDA release (python -c 'import torch; print(torch.version.cuda)')"
    )
    header = line.stated.get("missing_header")
    if header is None and (found := _HEADER.search(line.text)):
        header = found.group(1) or found.group(2)
    if header is None and line.signature in (_CMAKE_CUDNN, _CMAKE_CUDNN_STATUS):
        header = "cudnn.h"
    nvcc_at = _NVCC_AT.search(line.text)
    if _CMAKE_CUDA.search(line.text):
        return _cmake_no_nvcc(facts, line)
    if header in _LIBRARY_HEADERS:
        library = _LIBRARY_HEADERS[header]
        what = f"the compiler cannot find {header}: {library}'s development headers are not on the include path"
        if line.signature == _CMAKE_CUDNN:
            what = f"CMake found no {library} library for the build: none where it searched"
        elif line.signature == _CMAKE_CUDNN_STATUS:
            what = f"CMake's FindCUDNN found no {library} library or headers for the build"
        summary = (
            f"Install {library}'s headers for {release} (its -dev package, or the pip wheel's "
            f"include/ directory on CPATH), then rebuild"
        )
        actions = [
            manual(f"find / -name {header} 2>/dev/null; export CPATH=<that directory>:$CPATH")
        ]
        if header == "cudnn.h":
            # torch.utils.cpp_extension adds $CUDNN_HOME/include (or $CUDNN_PATH/include) to
            # an extension's include path: the directory above include/cudnn.h, a cuDNN
            # module's or the pip wheel's (site-packages/nvidia/cudnn)
            summary = (
                "Point the build at cuDNN: export CUDNN_PATH=<the directory above "
                "include/cudnn.h> (torch's extension builder reads CUDNN_HOME or CUDNN_PATH; "
                "the pip wheel's is python -c 'import nvidia.cudnn; "
                "print(nvidia.cudnn.__path__[0])'), or install cuDNN's headers for "
                f"{release} (its -dev package), then rebuild"
            )
            actions.insert(
                0,
                manual(
                    "export CUDNN_PATH=$(python -c 'import nvidia.cudnn; "
                    "print(nvidia.cudnn.__path__[0])')  (or the cuDNN root with include/cudnn.h)"
                ),
            )
    else:
        if header is not None:
            what = f"the compiler cannot find the CUDA header {header}: no CUDA toolkit is on the include path"
        elif nvcc_at is not None:
            path = nvcc_at.group(1) or nvcc_at.group(2) or nvcc_at.group(3)
            what = f"CUDA_HOME points at a directory without nvcc ({path})"
        elif _SETUP_NVCC.search(line.text):
            what = (
                "the build's setup.py ran $CUDA_HOME/bin/nvcc -V and found no CUDA toolkit "
                "(CUDA_HOME unset or pointing at a directory without nvcc)"
            )
        elif "bare_metal_version" in line.text or "nvcc was not found" in line.text:
            what = (
                "the package's setup.py found no nvcc (torch's CUDA_HOME is None): no CUDA "
                "toolkit is installed where the build looks"
            )
        elif "unable to compile CUDA op" in line.text:
            what = (
                "DeepSpeed's op builder found no CUDA toolkit (torch's CUDA_HOME is None: "
                "CUDA_HOME is not set and no nvcc is on PATH)"
            )
        elif "not found" in line.text or "nvcc' failed: " in line.text:
            what = "no nvcc is on PATH: the CUDA toolkit is not installed (or not on PATH)"
        else:
            what = "the build found no CUDA toolkit: CUDA_HOME is not set and no nvcc is on PATH"
        conda = (
            f"conda install -c nvidia cuda-toolkit={cuda}"
            if cuda
            else ("conda install -c nvidia cuda-toolkit=<torch.version.cuda>")
        )
        nvcc_only = (
            f"conda install -c nvidia cuda-nvcc={cuda}"
            if cuda
            else "conda install -c nvidia cuda-nvcc=<torch.version.cuda>"
        )
        labelled = (
            f", or by NVIDIA's label for the release: {conda_toolkit(Version(cuda))}"
            if cuda
            else ""
        )
        summary = (
            f"Install the CUDA toolkit of {release} and point the build at it: export "
            f"CUDA_HOME={home} PATH={home}/bin:$PATH (pip's torch wheels ship no nvcc or "
            f"headers); in a conda env: {conda} (or just the compiler: {nvcc_only}{labelled}) and export "
            "CUDA_HOME=$CONDA_PREFIX; Ubuntu's packaged toolkit (sudo apt install "
            "nvidia-cuda-toolkit) only where its CUDA matches torch's; or install a prebuilt "
            "wheel of the package that needs no compiler"
        )
        actions = [
            manual(f"install the CUDA toolkit {cuda or '<torch.version.cuda>'} (nvcc and headers)"),
            manual(f"{conda}  (conda env; then export CUDA_HOME=$CONDA_PREFIX)"),
            set_env(CUDA_HOME=home),
            manual(f"export PATH={home}/bin:$PATH"),
        ]
    return Hit(
        f"{what} (line {line.line}); pip's torch wheels bring the CUDA runtime, not the toolkit a build needs",
        evidence={"line": line.line, "header": header, "torch_cuda": cuda},
        fix=fix(summary, "manual", *actions),
    )


def _cmake_no_nvcc(facts: Facts, line: LogLine) -> Hit:
    """CMake's own words for a missing CUDA compiler (enable_language(CUDA), project(... CUDA),
    find_package(CUDAToolkit)): it reads CUDACXX or the cache entry CMAKE_CUDA_COMPILER, else
    looks for nvcc on PATH, and caches what it found (a stale CMakeCache.txt keeps failing)."""
    toolkit = line.stated.get("nvcc_version")
    with contextlib.suppress(Skip):
        nvcc = facts.system().nvcc
        toolkit = nvcc.version if nvcc is not None and nvcc.version else toolkit
    home = f"/usr/local/cuda-{toolkit}" if toolkit else "/usr/local/cuda"
    return Hit(
        f"CMake found no CUDA compiler (line {line.line}): nvcc is not on PATH and neither "
        "CUDACXX nor CMAKE_CUDA_COMPILER names it (or names a path without nvcc)",
        evidence={"line": line.line, "cuda_home": home},
        fix=fix(
            f"Point CMake at nvcc: export CUDACXX={home}/bin/nvcc (or pass "
            f"-DCMAKE_CUDA_COMPILER={home}/bin/nvcc; find_package(CUDAToolkit) also reads "
            f"CUDAToolkit_ROOT={home}) and PATH={home}/bin:$PATH, then configure again in a "
            "clean build directory (CMake caches the failed lookup in CMakeCache.txt); through "
            'pip: CMAKE_ARGS="-DCMAKE_CUDA_COMPILER='
            f'{home}/bin/nvcc" pip install --no-cache-dir <the package>; where no toolkit is '
            "installed, install one first (NVIDIA's installer, conda install -c nvidia "
            "cuda-nvcc, or sudo apt install nvidia-cuda-toolkit)",
            "manual",
            set_env(CUDACXX=f"{home}/bin/nvcc"),
            manual(f"export PATH={home}/bin:$PATH"),
            manual("rm -rf build/  (or its CMakeCache.txt: CMake caches the failed lookup)"),
            manual(f"cmake -DCMAKE_CUDA_COMPILER={home}/bin/nvcc ..  (or CMAKE_ARGS through pip)"),
        ),
    )


def _usual_causes(facts: Facts) -> str:
    """The compile failures threads most often end with, worded with torch's CUDA when known."""
    cuda = _torch_cuda(facts)
    release = cuda or "<torch.version.cuda>"
    return (
        f"When the compile itself fails, the usual causes are an nvcc of another CUDA than "
        f"torch's (install torch's: conda install -c nvidia cuda-toolkit={release}, or the "
        f"toolkit under /usr/local/cuda-{release}, and export CUDA_HOME to it), a gcc newer "
        "than nvcc accepts (export CC=gcc-11 CXX=g++-11) and memory (MAX_JOBS=1)"
    )


@rule("SYS153", "extension-build-failed", Severity.ERROR)
def extension_build_failed(facts: Facts) -> Iterable[Hit]:
    """The C++/CUDA extension build failed

    ## What it checks
    The build driver's summary lines: torch.utils.cpp_extension's `Error building extension
    'x'` / `Error compiling objects for extension` and ninja's `ninja: build stopped: subcommand
    failed` (JIT builds under DeepSpeed, FlashInfer, any `load()`), and `Ninja is required to
    load C++ extensions`; the installers' wrappers around a source build (pip's `Failed building
    wheel`, `metadata-generation-failed`, uv's `The build backend returned an error`) and a build
    that cannot see the installed torch in pip's or uv's isolated build environment (uv's
    `depends on torch, but doesn't declare it as a build dependency`, a traceback under
    `pip-build-env-*/overlay`). The real cause is the first compiler error above the summary (triage
    names the known ones with their own rules: a missing header, an unsupported gcc, nvcc vs
    torch's CUDA, an architecture nvcc does not know). Only a build log states it.

    ## Why it matters
    The summary line is what users paste, but it says nothing about why: the same line follows
    a missing `Python.h`, a gcc newer than nvcc accepts or a CUDA mismatch.

    ## Example
    DeepSpeed's FusedAdam JIT build: `RuntimeError: Error building extension 'fused_adam'` after
    `unsupported GNU version! gcc versions later than 12 are not supported!`.

    ## Fix
    Read the first `error:` line above it (rerun the build alone to see it: for JIT builds
    clear `~/.cache/torch_extensions` and run again with `MAX_JOBS=1`); for `Ninja is required`,
    `pip install ninja`; for a build that cannot see torch, install torch first and build with
    `pip install <package> --no-build-isolation`.

    ## References
    - pytorch/pytorch torch/utils/cpp_extension.py (_run_ninja_build, verify_ninja_availability)
    - ninja-build/ninja src/ninja.cc ("build stopped: %s.")
    """
    raise Skip("only a build log states a failed extension build", "log.build")


# lines that say the build ran where the installed torch is not visible: pip's or uv's isolated
# build environment (matrices/signatures/build_layers.toml)
_ISOLATED = lazy(
    r"but doesn't declare it as a build dependency|please install PyTorch first"
    r"|pip-build-env-[A-Za-z0-9_]+[/\\]overlay[/\\]"
)


def _isolated_build(facts: Facts, line: LogLine) -> Hit:
    """A build whose setup could not import what it needs (torch) because pip or uv built it in
    an isolated environment: threads end it with `--no-build-isolation` after installing torch."""
    needed = line.stated.get("build_dependency") or "torch"
    stated = line.stated.get("extension")
    package = canonicalize_name(stated) if stated else "<the package>"
    if needed in ("wheel", "setuptools"):
        return Hit(
            f"the build of {package} needs {needed}, which its isolated build environment lacks "
            f"(line {line.line})",
            evidence={"line": line.line, "package": package, "needs": needed},
            fix=fix(
                f"Install the build tools, then build without isolation: pip install wheel "
                f"setuptools, then pip install {package} --no-build-isolation (uv: uv pip install "
                f"wheel setuptools, then uv pip install {package} --no-build-isolation)",
                "manual",
                pip_install("wheel", "setuptools"),
                manual(f"pip install {package} --no-build-isolation"),
            ),
        )
    try:
        torch = facts.known_version("torch") if needed == "torch" else None
    except Skip:
        torch = None
    have = f" (torch {torch} is installed here)" if torch is not None else ""
    return Hit(
        f"the build of {package} imports {needed} in pip's (or uv's) isolated build environment, "
        f"which has only the build requirements the package declares, not this environment's "
        f"{needed}{have} (line {line.line})",
        evidence={"line": line.line, "package": package, "needs": needed},
        fix=fix(
            f"Install {needed} first, then build against it without isolation: pip install "
            f"{package} --no-build-isolation (uv: uv pip install {needed}, then uv pip install "
            f"{package} --no-build-isolation); without isolation the build uses this "
            "environment's tools too: pip install setuptools wheel ninja packaging",
            "manual",
            manual(f"pip install {package} --no-build-isolation"),
            pip_install("setuptools", "wheel", "ninja", "packaging"),
        ),
    )


def _jit_cache_missing(line: LogLine) -> Hit:
    """A JIT extension's cached library that is not there: the build of an earlier run failed or
    was interrupted (its lock and half-written directory stay in the cache)."""
    name = line.stated.get("extension") or "<the extension>"
    return Hit(
        f"the JIT-built extension {name} is not in torch's extensions cache (line {line.line}): "
        "its build failed or was interrupted on an earlier run, and the cache keeps the broken "
        "build directory (and its lock)",
        evidence={"line": line.line, "extension": name},
        fix=fix(
            f"Clear the extension's cache and rebuild it in the foreground to see the compile "
            f"error: rm -rf ~/.cache/torch_extensions (or $TORCH_EXTENSIONS_DIR; just "
            f"<py..._cu...>/{name}), then rerun (MAX_JOBS=1 shows the first error alone); on "
            "shared or read-only home directories point TORCH_EXTENSIONS_DIR at a local writable "
            "directory",
            "manual",
            manual("rm -rf ~/.cache/torch_extensions"),
            set_env(TORCH_EXTENSIONS_DIR="/tmp/torch_extensions"),
        ),
    )


# CMake's cmake_minimum_required: 'CMake 3.26 or higher is required.  You are running version
# 3.22.1' (Source/cmCMakeMinimumRequired.cxx)
_CMAKE_TOO_OLD = lazy(
    r"CMake (?P<needed>[0-9]+\.[0-9]+(?:\.[0-9]+)?) or higher is required\.\s+You are running "
    r"version (?P<have>[0-9]+\.[0-9]+(?:\.[0-9]+)?)"
)


def _cmake_too_old(line: LogLine, needed: str, have: str) -> Hit:
    """The project's CMakeLists.txt needs a newer CMake than the one on PATH: PyPI's cmake wheel
    gives any release (a distribution's apt cmake lags), and it must come first on PATH."""
    return Hit(
        f"the build's CMakeLists.txt needs CMake {needed} or newer and the cmake on PATH is "
        f"{have} (line {line.line})",
        evidence={"line": line.line, "cmake_needed": needed, "cmake_found": have},
        fix=fix(
            f'Install CMake {needed} or newer and rebuild: pip install "cmake>={needed}" (then '
            f"`cmake --version` must print it: the pip one has to come first on PATH, ahead of "
            f"/usr/bin/cmake; hash -r), or Kitware's apt repository / conda install "
            f'"cmake>={needed}"',
            "manual",
            pip_install(f"cmake>={needed}"),
            manual("hash -r && cmake --version"),
        ),
    )


# no cmake at all: a setup.py's CMakeBuild (pybind11's cmake_example template and the projects
# built from it) checking `cmake --version`, a shell's or subprocess' cmake not found
_CMAKE_MISSING = lazy(
    r"CMake must be installed to build|\bcmake: (?:command )?not found|"
    r"No such file or directory: '(?:[^']*/)?cmake'|'cmake' is not recognized as an internal"
)


def _cmake_missing(line: LogLine) -> Hit:
    """The build runs CMake and finds none on PATH: PyPI's cmake wheel puts one there (into the
    environment the build runs in; with build isolation the project must declare it)."""
    return Hit(
        f"the build runs CMake and there is no cmake on PATH (line {line.line})",
        evidence={"line": line.line},
        fix=fix(
            "Install CMake where the build runs, then rebuild: pip install cmake (or conda "
            "install cmake, apt install cmake); with pip's build isolation, pip install cmake "
            "and rebuild with --no-build-isolation when the project does not declare cmake",
            "safe",
            pip_install("cmake"),
        ),
    )


def _rust_build(line: LogLine) -> Hit:
    """A wrapper line of a build whose backend found no Rust toolchain (SYS169's line in the
    same log): the build is an sdist of a Rust-extension package, not a torch extension."""
    package, _ = package_named(line)
    return Hit(
        f"pip could not build {package} from source (line {line.line}): its build backend "
        f"found no Rust toolchain ({line.stated['missing_toolchain']} missing); the package "
        "publishes wheels, so none of the release pip chose fits this pip, Python or platform",
        evidence={"line": line.line, "package": package},
        fix=take_a_wheel(package),
    )


@from_log("SYS153")
def extension_build_failed_in_log(facts: Facts, line: LogLine) -> Hit:
    if "missing_toolchain" in line.stated:
        return _rust_build(line)
    if _ISOLATED.search(line.text):
        return _isolated_build(facts, line)
    if "torch_extensions" in line.text and "cannot open shared object file" in line.text:
        return _jit_cache_missing(line)
    if "could not find ninja" in line.text:
        return _no_ninja(line)
    if (cmake := _CMAKE_TOO_OLD.search(line.text)) is not None:
        return _cmake_too_old(line, cmake.group("needed"), cmake.group("have"))
    if _CMAKE_MISSING.search(line.text):
        return _cmake_missing(line)
    if "Ninja is required" in line.text:
        return Hit(
            f"torch's C++ extension loader needs ninja, which is not on PATH (line {line.line})",
            evidence={"line": line.line},
            fix=fix("Install ninja: pip install ninja", "safe", pip_install("ninja")),
        )
    if "bdist_wheel" in line.text:
        return Hit(
            f"setup.py has no bdist_wheel command (line {line.line}): the wheel package is not "
            "installed where the build runs (with --no-build-isolation, the environment itself)",
            evidence={"line": line.line},
            fix=fix(
                "Install the build's own tools, then rebuild: pip install wheel setuptools "
                "(and ninja packaging for CUDA extensions)",
                "safe",
                pip_install("wheel", "setuptools", "ninja", "packaging"),
            ),
        )
    extension = line.stated.get("extension")
    if extension is not None and (
        "Failed building wheel" in line.text
        or " ... error" in line.text
        or "pyproject.toml" in line.text
        or "Could not build wheels" in line.text
        or "Failed to build `" in line.text
        or "Failed to download and build `" in line.text
        or "did not run successfully" in line.text
    ):
        extension = canonicalize_name(extension)
        return Hit(
            f"pip could not build {extension} from source (line {line.line}); the cause is the "
            "build's first error above this line (a torch missing from pip's isolated build "
            "environment, no CUDA toolkit, an unsupported compiler)",
            evidence={"line": line.line, "package": extension},
            fix=_pip_build_fix(facts, extension),
        )
    built = line.stated.get("pip_build")
    if built is not None and "Error building extension '" not in line.text:
        # a summary line of a pip build whose package another line names: that build failed
        package = canonicalize_name(built)
        return Hit(
            f"building {package} from source failed (line {line.line}); the cause is the first "
            "compiler error above this line (a torch missing from pip's isolated build "
            "environment, no CUDA toolkit, an unsupported compiler)",
            evidence={"line": line.line, "package": package},
            fix=_pip_build_fix(facts, package),
        )
    what = f"the extension {extension!r}" if extension else "a C++/CUDA extension"
    return Hit(
        f"building {what} failed (line {line.line}); the cause is the first compiler error "
        "above this line (triage names the known ones: missing headers, gcc vs nvcc, nvcc vs "
        "torch's CUDA, an architecture nvcc does not know)",
        evidence={"line": line.line, "extension": extension},
        fix=fix(
            "Find the first `error:` line above it and fix that (triage's other matches name "
            "the known ones); to see it alone, clear the JIT cache and rebuild with one job "
            "(rm -rf ~/.cache/torch_extensions && MAX_JOBS=1 <the command>), or for a pip "
            "build: MAX_JOBS=4 pip install <the package> --no-build-isolation -v; a prebuilt "
            f"wheel for this torch, CUDA and Python needs no compiler. {_usual_causes(facts)}",
            "manual",
            manual("rm -rf ~/.cache/torch_extensions"),
            set_env(MAX_JOBS="1"),
            manual(
                "pip install -v --no-build-isolation <the package>  (shows the compiler's error)"
            ),
        ),
    )


def _no_ninja(line: LogLine) -> Hit:
    """torch's BuildExtension found no ninja and compiles with distutils, one file at a time: a
    CUDA extension takes hours (flash-attn's README: about 2 h) or seems to hang. A warning: the
    build may still finish."""
    built = line.stated.get("pip_build") or line.stated.get("extension")
    package = canonicalize_name(built) if built else "<the package>"
    return Hit(
        f"the extension build found no working ninja and compiles one file at a time with "
        f"distutils (line {line.line}): a CUDA extension then builds for hours or seems to hang",
        evidence={"line": line.line, "package": built},
        severity=Severity.WARNING,
        fix=fix(
            "Install ninja so the build compiles in parallel: pip install ninja (when ninja "
            "--version fails: pip uninstall -y ninja && pip install ninja), then rebuild with "
            f"MAX_JOBS=<CPU cores; fewer with little RAM> pip install {package} "
            "--no-build-isolation; or install a prebuilt wheel for this torch, CUDA and Python",
            "manual",
            pip_install("ninja"),
            manual("pip uninstall -y ninja && pip install ninja  (when ninja --version fails)"),
            set_env(MAX_JOBS="4"),
            manual(f"pip install {package} --no-build-isolation"),
        ),
    )


def _pip_build_fix(facts: Facts, package: str) -> Fix:
    """A failed source build of ``package`` by pip: threads end it with the build against the
    installed torch (`pip install X --no-build-isolation`), few jobs, or a prebuilt wheel (the
    release or index the matrix knows for the installed torch, first, when there is one)."""
    prebuilt = prebuilt_install(facts, package)
    first, actions = (f"{prebuilt[0]}; or b", prebuilt[1]) if prebuilt else ("B", [])
    return fix(
        f"{first}uild it against the installed torch, with few parallel jobs: MAX_JOBS=4 pip "
        f"install {package} --no-build-isolation (pip's isolated build environment has "
        f"no torch; add -v to see the first error), or install a prebuilt wheel of "
        f"{package} for this Python, torch and CUDA. {_usual_causes(facts)}",
        "manual",
        *actions,
        pip_install(package, flags=("--no-build-isolation",)),
        set_env(MAX_JOBS="4"),
        manual(f"pip install -v {package} --no-build-isolation  (shows the first error)"),
    )


@from_log("SYS131")
def host_compiler_in_log(facts: Facts, line: LogLine) -> Hit:
    """nvcc's host_config.h names the newest gcc major the toolkit accepts; the fix points the
    build at that gcc (nvcc takes its host compiler from -ccbin; NVCC_PREPEND_FLAGS adds it to
    every nvcc call, torch's cpp_extension also passes CC as -ccbin)."""
    if line.signature == _HOST_HEADER:
        return _host_header_line(facts, line)
    if line.signature == _CXX17_NAME:
        return _cxx17_name_line(line)
    if (
        "C++17 or later" in line.text
        or _STANDARD_REQUIRED.search(line.text)
        or "option '-std=" in line.text
        or "ISO C++ 2011 standard" in line.text
        or 'option "-std=' in line.text
        or "parameter packs not expanded" in line.text
        or "too old version of GCC" in line.text
    ):
        return _host_compiler_line(facts, line)
    if "STL1002" in line.text:
        return _stl_expects_newer_cuda(line)
    if (
        "Microsoft Visual Studio version" in line.text
        or "clang version must be" in line.text
        or "of the host compiler ('" in line.text
    ):
        return _other_host_compiler(line)
    toolkit = line_toolkit(facts, line)
    ceiling = line.stated.get("gcc_max")
    if "required version by CUDA" in line.text:  # torch's cpp_extension compared the two
        if " is less than " in line.text:
            return _gcc_below_range(facts, line, toolkit)
        top = nvcc_host.range_top(line.stated.get("gxx_needed"))
        ceiling = str(top) if top is not None else ceiling
    if (ceiling is None or not ceiling.isdigit()) and toolkit is not None:
        known = nvcc_host.gcc_max(facts.matrix, toolkit)  # the path's toolkit, from the table
        ceiling = str(known) if known is not None else None
    if ceiling is None or not ceiling.isdigit():
        raise NotStated(f"line {line.line} is cut before the gcc version", "system.gxx")
    try:
        gxx = facts.system().gxx
    except Skip:
        gxx = None
    gxx = gxx or line.stated.get("gxx_version")
    have = f" (the build's g++ is {gxx})" if gxx else ""
    built = f"CUDA {toolkit}'s " if toolkit else ""
    return Hit(
        f"{built}nvcc accepts gcc up to {ceiling} and the build's gcc is newer{have} (line "
        f"{line.line})",
        evidence={"line": line.line, "gcc_max": int(ceiling), "gxx": gxx, "cuda": toolkit},
        fix=fix(
            f"Build with gcc {ceiling} or older: apt install gcc-{ceiling} g++-{ceiling}, then "
            f"export CC=gcc-{ceiling} CXX=g++-{ceiling} NVCC_PREPEND_FLAGS='-ccbin "
            f"/usr/bin/g++-{ceiling}' (or make it the default: sudo update-alternatives "
            f"--install /usr/bin/gcc gcc /usr/bin/gcc-{ceiling} 100, and g++ likewise; conda: "
            f"conda install -c conda-forge gxx={ceiling} gcc={ceiling}, or "
            f"gcc_linux-64={ceiling} gxx_linux-64={ceiling}); or "
            f"{_newer_toolkit(facts, int(ceiling), gxx)}; at "
            "your own risk, NVCC_APPEND_FLAGS='-allow-unsupported-compiler' skips nvcc's check",
            "manual",
            manual(f"apt install gcc-{ceiling} g++-{ceiling}"),
            set_env(
                CC=f"gcc-{ceiling}",
                CXX=f"g++-{ceiling}",
                NVCC_PREPEND_FLAGS=f"-ccbin /usr/bin/g++-{ceiling}",
            ),
            # what threads run instead (llama.cpp#9205, caffe2#442): gcc-N as the system default
            manual(
                f"sudo update-alternatives --install /usr/bin/gcc gcc /usr/bin/gcc-{ceiling} 100 "
                f"&& sudo update-alternatives --install /usr/bin/g++ g++ /usr/bin/g++-{ceiling} 100"
            ),
            manual(f"conda install -c conda-forge gxx={ceiling} gcc={ceiling}  (in a conda env)"),
        ),
    )


# nvcc's front end failing inside the host's own headers (signatures/build_toolchains.toml)
_HOST_HEADER = "nvcc-host-header-rejected"
# a C++17 standard-library name the compiler does not declare (signatures/build_toolchains.toml)
_CXX17_NAME = "cxx17-library-name-undeclared"
_CXX17_WHICH = lazy(
    r"(?:std::|['‘’\"])(?P<name>[a-z_]+)['‘’\"]?(?: in namespace|: is not| has not| is only)"
    r"|named ['‘’\"](?P<named>[a-z_]+)['‘’\"]|has no member (?:class )?\"(?P<member>[a-z_]+)\""
)
# the header that needs it: torch's own (a wheel's torch/include, libtorch's include)
_TORCH_HEADER = lazy(r"(?:site-packages/torch/include|libtorch[^ ]*/include)/")


def _cxx17_name_line(line: LogLine) -> Hit:
    """A C++17 standard-library name undeclared: the build compiles an older standard than a
    header it includes needs (torch's headers: C++17 since torch 2.1, pytorch/pytorch#85969).
    The fix sets the standard where the build states it: setup.py's extra_compile_args for
    cxx and nvcc, CMake's CMAKE_CXX_STANDARD / CMAKE_CUDA_STANDARD, MSVC's /std:c++17; a gcc
    older than 7 cannot compile C++17 (torch's headers need gcc 9)."""
    found = _CXX17_WHICH.search(line.text)
    name = next((n for n in found.groups() if n), "optional") if found else "optional"
    torch = (
        " (torch's own headers need C++17 since torch 2.1)"
        if _TORCH_HEADER.search(line.text)
        else ""
    )
    return Hit(
        f"the compiler does not declare std::{name}, a C++17 name (line {line.line}): the build "
        f"compiles an older C++ standard than a header it includes needs{torch}",
        evidence={"line": line.line, "name": f"std::{name}"},
        fix=fix(
            "Compile as C++17: a setup.py's extra_compile_args={'cxx': ['-std=c++17'], "
            "'nvcc': ['-std=c++17']} (in place of -std=c++14), CMake's "
            "set(CMAKE_CXX_STANDARD 17) and set(CMAKE_CUDA_STANDARD 17), MSVC's /std:c++17; "
            "with a gcc older than 9 (CentOS 7's 4.8), a newer gcc first (gcc-toolset, "
            "conda's gxx)",
            "manual",
            manual("extra_compile_args={'cxx': ['-std=c++17'], 'nvcc': ['-std=c++17']}"),
            manual("set(CMAKE_CXX_STANDARD 17)  # CMakeLists.txt; CUDA: CMAKE_CUDA_STANDARD"),
            set_env(CXXFLAGS="-std=c++17"),
        ),
    )


# NVIDIA's forum answer for glibc 2.41's C23 math declarations against CUDA's math_functions.h
_GLIBC_MATH_PATCH = (
    "https://forums.developer.nvidia.com/t/"
    "error-exception-specification-is-incompatible-for-cospi-sinpi-cospif-sinpif-with-glibc-2-41/"
    "323591"
)


def _host_header_line(facts: Facts, line: LogLine) -> Hit:
    """nvcc's front end failed in the host's own headers: the host gcc's (the major its path
    names: the fix is an older gcc, or the CUDA release that accepts this one) or the C
    library's (the distribution's glibc is newer than the toolkit: C23 math functions declared
    noexcept clash with CUDA's math_functions.h; NVIDIA's patch to that header, or a build
    image of an older distribution)."""
    toolkit = line_toolkit(facts, line)
    built = f"CUDA {toolkit}'s nvcc" if toolkit else "this CUDA toolkit's nvcc"
    header = line.stated.get("gcc_header")
    if header is not None and header.isdigit():
        gcc = int(header)
        ceiling = nvcc_host.gcc_max(facts.matrix, toolkit) if toolkit else None
        older = ceiling if ceiling is not None and ceiling < gcc else gcc - 1
        return Hit(
            f"{built} cannot parse the host gcc {gcc}'s own headers (line {line.line}): that gcc "
            "is newer than the toolkit understands",
            evidence={"line": line.line, "gcc": gcc, "cuda": toolkit},
            fix=fix(
                f"Build with gcc {older}: apt install gcc-{older} g++-{older}, then export "
                f"CC=gcc-{older} CXX=g++-{older} NVCC_PREPEND_FLAGS='-ccbin /usr/bin/g++-{older}' "
                f"(conda: conda install -c conda-forge gcc_linux-64={older} "
                f"gxx_linux-64={older}); or {_newer_toolkit(facts, older, str(gcc))}",
                "manual",
                manual(f"apt install gcc-{older} g++-{older}"),
                set_env(
                    CC=f"gcc-{older}",
                    CXX=f"g++-{older}",
                    NVCC_PREPEND_FLAGS=f"-ccbin /usr/bin/g++-{older}",
                ),
            ),
        )
    if "exception specification is incompatible" in line.text:
        what = (
            f"the host C library declares math functions (cospi, sinpi, rsqrt ...) with an "
            f"exception specification {built.replace('nvcc', 'math_functions.h')} does not "
            f"have (line {line.line}): the distribution's glibc is newer than the CUDA toolkit"
        )
        first = (
            "Apply NVIDIA's patch to the toolkit's crt/math_functions.h (add noexcept (true) to "
            "its declarations of cospi, cospif, sinpi, sinpif, rsqrt, rsqrtf: "
            f"{_GLIBC_MATH_PATCH}), or build in a container of an older "
            "distribution (an nvidia/cuda:<version>-devel-ubuntu22.04 or -ubuntu24.04 image)"
        )
    else:
        what = (
            f"{built} cannot parse the host C library's headers (line {line.line}): the "
            "distribution's glibc and headers are newer than the CUDA toolkit"
        )
        first = (
            "Use a newer CUDA toolkit (one whose release supports this distribution), or build "
            "in a container of a distribution the toolkit supports (an "
            "nvidia/cuda:<version>-devel-ubuntu22.04 image)"
        )
    return Hit(
        what,
        evidence={"line": line.line, "cuda": toolkit},
        fix=fix(
            first,
            "manual",
            manual(
                "docker run --gpus all -it nvidia/cuda:<version>-devel-ubuntu22.04 (build there)"
            ),
        ),
    )


def _gcc_below_range(facts: Facts, line: LogLine, toolkit: str | None) -> Hit:
    """torch's cpp_extension found the g++ older than the CUDA toolkit's minimum: a newer gcc
    (the newest the toolkit accepts, from the range the line or the matrix states)."""
    top = nvcc_host.range_top(line.stated.get("gxx_needed"))
    if top is None and toolkit is not None:
        top = nvcc_host.gcc_max(facts.matrix, toolkit)
    gcc = str(top) if top is not None else "11"
    gxx = line.stated.get("gxx_version")
    built = f"CUDA {toolkit}" if toolkit else "the CUDA toolkit"
    return Hit(
        f"the build's g++{' ' + gxx if gxx else ''} is older than {built} accepts (line "
        f"{line.line}): torch's extension builder refuses it",
        evidence={"line": line.line, "gxx": gxx, "cuda": toolkit, "gcc": int(gcc)},
        fix=fix(
            f"Build with a newer gcc, {gcc} (the newest {built} accepts): apt install gcc-{gcc} "
            f"g++-{gcc}, export CC=gcc-{gcc} CXX=g++-{gcc} (RHEL/CentOS: gcc-toolset-{gcc} or "
            f"devtoolset-{gcc}, then scl enable; conda: conda install -c conda-forge "
            f"gcc_linux-64={gcc} gxx_linux-64={gcc}; a cluster: module load gcc/{gcc}), then "
            "rebuild",
            "manual",
            manual(f"apt install gcc-{gcc} g++-{gcc}"),
            set_env(CC=f"gcc-{gcc}", CXX=f"g++-{gcc}"),
            manual(f"conda install -c conda-forge gcc_linux-64={gcc} gxx_linux-64={gcc}"),
        ),
    )


def line_toolkit(facts: Facts, line: LogLine) -> str | None:
    """The CUDA toolkit whose nvcc refused the compiler: the release its own path on the line
    names (``/usr/local/cuda-9.0/include/crt/host_config.h``), else the nvcc banner the log
    states (``Cuda compilation tools, release 12.1``), else the node's nvcc."""
    named = nvcc_host.cuda_in_text(line.text) or line.stated.get("nvcc_version")
    if named is not None:
        return named
    with contextlib.suppress(Skip):
        nvcc = facts.system().nvcc
        if nvcc is not None and nvcc.version:
            return nvcc.version
    return None


def _newer_toolkit(facts: Facts, ceiling: int, gxx: str | None) -> str:
    """The toolkit to move to instead: the first CUDA release whose nvcc accepts the build's
    gcc (its major when the log or node states it, else one above the ceiling), from the
    matrix's host-compiler table, in the installers' words."""
    wanted = ceiling + 1
    if gxx:
        with contextlib.suppress(InvalidVersion):
            wanted = max(wanted, Version(gxx).major)
    newer = nvcc_host.first_cuda_for_gcc(facts.matrix, wanted)
    if newer is None:
        return "use a newer CUDA toolkit that accepts this gcc"
    cuda, top = newer
    # NVIDIA's conda channel has cuda-nvcc from CUDA 11.3 on (its labels: cuda-11.3.0 ...)
    conda = (
        f", in a conda env: conda install -c nvidia cuda-nvcc={cuda} and export "
        "CUDA_HOME=$CONDA_PREFIX"
        if cuda >= Version("11.3")
        else ""
    )
    return (
        f"use a CUDA toolkit that accepts gcc {wanted}: CUDA {cuda} or newer (its nvcc accepts "
        f"gcc up to {top}; install it and export CUDA_HOME=/usr/local/cuda-{cuda} "
        f"PATH=/usr/local/cuda-{cuda}/bin:$PATH{conda})"
    )


def _other_host_compiler(line: LogLine) -> Hit:
    """nvcc's host_config.h refusing MSVC (a Visual Studio outside the range it names) or clang
    (a major at or above the bound it names): the same check as gcc's, for the other hosts."""
    allow = "NVCC_APPEND_FLAGS='-allow-unsupported-compiler'"
    if "of the host compiler ('" in line.text and "Visual Studio" in line.text:
        # the older check names no range: the toolkit's release notes list what it supports
        return Hit(
            f"nvcc refuses the host Visual Studio by its version (line {line.line}): it is "
            "newer than this CUDA toolkit supports",
            evidence={"line": line.line},
            fix=fix(
                "Build with a Visual Studio this CUDA toolkit supports (its installation guide "
                "lists them; install that Build Tools release and build from its x64 Native "
                "Tools prompt), or use a newer CUDA toolkit that supports this Visual Studio; "
                f"at your own risk, {allow} (Windows: set "
                "NVCC_APPEND_FLAGS=-allow-unsupported-compiler) skips nvcc's check",
                "manual",
                manual("set NVCC_APPEND_FLAGS=-allow-unsupported-compiler  (at your own risk)"),
            ),
        )
    if "Microsoft Visual Studio" in line.text:
        newest = line.stated.get("msvc_max") or "2022"
        oldest = line.stated.get("msvc_min") or "2017"
        older = "2019" if oldest <= "2019" < newest else oldest
        return Hit(
            f"nvcc accepts Visual Studio {oldest} to {newest} and the build's MSVC is outside "
            f"that range (line {line.line}): a Visual Studio newer than the CUDA toolkit (a "
            f"{newest} update released after it counts: CUDA 12.3 refuses 2022's 17.10)",
            evidence={"line": line.line, "msvc_max": newest},
            fix=fix(
                f"Build with an MSVC the toolkit accepts: install Visual Studio {older} (or an "
                f"earlier Visual Studio {newest} update; the Build Tools' \"Desktop development "
                f'with C++" workload) and build from its x64 Native Tools prompt, or use a newer '
                f"CUDA toolkit that accepts this Visual Studio; at your own risk, pass nvcc "
                f"-allow-unsupported-compiler (setup.py's extra_compile_args['nvcc'], or "
                f"{allow}; Windows: set NVCC_APPEND_FLAGS=-allow-unsupported-compiler)",
                "manual",
                manual(f"install Visual Studio {older} Build Tools (Desktop development with C++)"),
                manual("set NVCC_APPEND_FLAGS=-allow-unsupported-compiler  (at your own risk)"),
            ),
        )
    bound = line.stated.get("clang_below")
    clang = str(int(bound) - 1) if bound and bound.isdigit() else None
    which = f"clang {clang} or older" if clang else "an older clang"
    return Hit(
        f"nvcc refuses the host clang: it accepts {which} (line {line.line})",
        evidence={"line": line.line, "clang_max": clang},
        fix=fix(
            f"Build with {which} or with gcc: export CC=clang-{clang or 'N'} "
            f"CXX=clang++-{clang or 'N'} (or CC=gcc CXX=g++), and NVCC_PREPEND_FLAGS='-ccbin "
            f"{'clang++-' + clang if clang else 'g++'}'; or a newer CUDA toolkit; at your own "
            f"risk, {allow} skips nvcc's check",
            "manual",
            set_env(
                CC=f"clang-{clang}" if clang else "gcc",
                CXX=f"clang++-{clang}" if clang else "g++",
            ),
        ),
    )


def _stl_expects_newer_cuda(line: LogLine) -> Hit:
    """MSVC's STL (yvals_core.h) names the oldest nvcc it compiles under: a CUDA toolkit that
    new, or an MSVC toolset old enough for the installed toolkit; nvcc's
    -allow-unsupported-compiler does not reach this check, the STL's own macro does."""
    need = line.stated.get("stl_cuda_min")
    cuda = f"CUDA {need}" if need else "the CUDA release it names"
    version = need or "<X.Y>"
    path = f"C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v{version}"
    return Hit(
        f"the MSVC standard library refuses this nvcc (line {line.line}): the Visual Studio "
        f"toolset is newer than the CUDA toolkit, and its STL wants {cuda} or newer",
        evidence={"line": line.line, "stl_cuda_min": need},
        fix=fix(
            f"Build with {cuda} or newer: install that toolkit and put it first (set "
            f'CUDA_PATH="{path}" and CUDA_HOME likewise, its bin first on PATH; a torch '
            "extension also wants torch's CUDA major); or build with an older MSVC toolset the "
            "installed CUDA supports (Visual Studio 2019 Build Tools, or an earlier 2022 toolset "
            "from the Visual Studio Installer: vcvars64.bat -vcvars_ver=14.xx); at your own "
            "risk, -Xcompiler /D_ALLOW_COMPILER_AND_STL_VERSION_MISMATCH skips the STL's check",
            "manual",
            manual(f"install the CUDA {version} toolkit, then: set CUDA_PATH={path}"),
            manual(
                "or, at your own risk: set NVCC_APPEND_FLAGS=-Xcompiler "
                "/D_ALLOW_COMPILER_AND_STL_VERSION_MISMATCH"
            ),
        ),
    )


# torch's headers refusing the C++ standard a build compiles: c10/util/C++17.h ('C++17 or later
# compatible compiler is required to use PyTorch.'), ATen/ATen.h ('... to use ATen.'; C++20 from
# torch 2.14, C++14 in torch 1.x)
_STANDARD_REQUIRED = lazy(
    r"C\+\+(?P<std>1[47]|20) or later compatible compiler is required to use (?P<by>PyTorch|ATen)"
)
# the gcc that compiles each standard by default or with -std (torch's headers need gcc 9 for
# C++17; -std=c++20 arrives with gcc 10)
_STANDARD_GCC = {"14": "9", "17": "11", "20": "11"}


def _standard_required(line: LogLine, std: str, by: str) -> Hit:
    """torch's headers need C++{std} and the compile is older: most often the extension's own
    setup.py or CMakeLists.txt passes an older -std (mmcv's and horovod's -std=c++14 under torch
    2.x; a -std=c++17 under torch 2.14's C++20 ATen.h), else a gcc whose default is older."""
    gcc = _STANDARD_GCC[std]
    return Hit(
        f"the build compiles an older C++ standard than torch's headers need ({by}: C++{std}), "
        f"or the host compiler is older than torch's headers need (line {line.line})",
        evidence={"line": line.line, "standard": f"c++{std}"},
        fix=fix(
            f"Compile as C++{std}: where the extension's setup.py passes an older -std (a "
            f"hard-coded -std=c++14), change it in extra_compile_args={{'cxx': ['-std=c++{std}'], "
            f"'nvcc': ['-std=c++{std}']}} (CMake: set(CMAKE_CXX_STANDARD {std}) and "
            f"CMAKE_CUDA_STANDARD {std}; MSVC /std:c++{std}), remove build/ and rebuild; with a "
            f"gcc too old for it, build with gcc {gcc}: apt install gcc-{gcc} g++-{gcc}, export "
            f"CC=gcc-{gcc} CXX=g++-{gcc} (conda: gcc_linux-64={gcc} gxx_linux-64={gcc})",
            "manual",
            manual(f"extra_compile_args={{'cxx': ['-std=c++{std}'], 'nvcc': ['-std=c++{std}']}}"),
            manual(f"apt install gcc-{gcc} g++-{gcc}"),
            set_env(CC=f"gcc-{gcc}", CXX=f"g++-{gcc}"),
        ),
    )


def _host_compiler_line(facts: Facts, line: LogLine) -> Hit:
    """A compiler error that names the host gcc as the cause without nvcc's ceiling: torch's
    C++17 check (gcc older than torch's headers need) or GCC 11's std_function.h that an older
    nvcc cannot parse."""
    needed = _GCC_NEEDED.search(line.text)
    if needed is not None:
        floor = int(needed.group(1))
        what = f"the host gcc is older than torch's headers accept (gcc {floor} or newer)"
        gcc, flag = str(max(floor, 11)), ""
    elif "-std=" in line.text and "ISO C++ 2011" not in line.text:
        what = (
            "the host gcc does not know the C++ standard the build asks for (-std=c++17 needs "
            "gcc 5, torch's headers gcc 9): it predates the extension (CentOS 7's gcc 4.8)"
        )
        gcc, flag = "11", ""
    elif "ISO C++ 2011 standard" in line.text:
        what = (
            "the host gcc compiles C++98 by default (gcc 4.8 / 5): it is older than torch's "
            "headers need (C++17: gcc 9 or newer)"
        )
        gcc, flag = "11", ""
    elif (standard := _STANDARD_REQUIRED.search(line.text)) is not None:
        return _standard_required(line, standard.group("std"), standard.group("by"))
    else:
        what = (
            "nvcc cannot parse the host gcc 11's <functional> (std_function.h): this CUDA "
            "toolkit predates that gcc"
        )
        gcc, flag = "10", " or use a newer CUDA toolkit"
    return Hit(
        f"{what} (line {line.line})",
        evidence={"line": line.line},
        fix=fix(
            f"Build with gcc {gcc}: apt install gcc-{gcc} g++-{gcc}, export CC=gcc-{gcc} "
            f"CXX=g++-{gcc} (conda: conda install -c conda-forge gcc_linux-64={gcc} "
            f"gxx_linux-64={gcc}; RHEL: gcc-toolset-{gcc}; a cluster: module load gcc/{gcc})"
            f"{flag}, then rebuild",
            "manual",
            manual(f"apt install gcc-{gcc} g++-{gcc}"),
            set_env(CC=f"gcc-{gcc}", CXX=f"g++-{gcc}"),
        ),
    )


@rule("SYS160", "build-compiler-killed", Severity.ERROR)
def build_compiler_killed(facts: Facts) -> Iterable[Hit]:
    """A compiler of the extension build ran out of memory (killed, or refused an allocation)

    ## What it checks
    gcc's `fatal error: Killed signal terminated program cc1plus` and nvcc's `'cicc' died due
    to signal 9 (Kill signal)`: the kernel's OOM killer stopped a compiler of a C++/CUDA
    extension build; or the toolchain's own words for an allocation it was refused
    (`cc1plus: out of memory allocating N bytes`, `virtual memory exhausted`, the linker's
    `final link failed: memory exhausted`). Only a build log states it.

    ## Why it matters
    ninja runs as many compile jobs as there are CPU cores, and each nvcc job of flash-attn,
    xformers or vLLM's kernels takes several GB of RAM: on a many-core node without matching
    memory (or in a container with a memory limit) the build dies with a bare `Killed`.

    ## Example
    `c++: fatal error: Killed signal terminated program cc1plus` while `pip install flash-attn
    --no-build-isolation` compiles on 64 cores and 32 GB of RAM.

    ## Fix
    Limit the parallel jobs: `MAX_JOBS=4 pip install <the package> --no-build-isolation` (fewer
    with little RAM; torch.utils.cpp_extension reads MAX_JOBS), or install a prebuilt wheel. A
    Makefile or CMake build (make's `*** ... Error` line follows): `make -j2`, `cmake --build
    build -j 2`.

    ## References
    - https://github.com/Dao-AILab/flash-attention/issues/391 (README: 'MAX_JOBS=4 pip install flash-attn --no-build-isolation')
    - GCC gcc/gcc.cc (execute: "%s signal terminated program %s")
    - https://github.com/hoytech/strfry/issues/41
    """
    raise Skip("only a build log states a killed compiler", "log.build")


@from_log("SYS160")
def build_compiler_killed_in_log(facts: Facts, line: LogLine) -> Hit:
    found = _KILLED.search(line.text)
    program = found.group("program") if found else "the compiler"
    if line.signature == "compile-step-killed-bare":
        # the shell's bare 'Killed' is a compiler's only below a compile command
        compiler = line.stated.get("killed_compiler")
        if not compiler:
            raise NotStated(
                f"line {line.line} is a bare 'Killed' with no compile command just above it: "
                "a process the kernel killed, not known to be a compiler"
            )
        program = f"{compiler} (a CMake compile step)" if compiler.isupper() else compiler
    short = _OUT_OF_MEMORY.search(line.text)
    if short is not None:
        program = short.group("program") or ("the linker" if "link" in short[0] else program)
    what = "ran out of memory" if short is not None else "was killed"
    stated = line.stated.get("extension")
    tool = line.stated.get("build_tool")
    if "[code=137]" in line.text:
        program, tool = "a compile step", tool or "ninja"
    if stated is None and tool == "ninja":
        # ninja ran the compiles and no Python package build is named: a CMake project (a
        # llama.cpp or ggml build) whose ninja -j (or cmake --build -j) is what to lower
        return Hit(
            f"{program} {what} during the build (line {line.line}): the node (or the "
            "container) ran out of memory with ninja's parallel compile jobs",
            evidence={"line": line.line, "program": program, "build_tool": tool},
            fix=fix(
                "Rebuild with fewer parallel jobs: cmake --build build -j 2 (or ninja -j 2; a "
                "pip build of a torch extension: MAX_JOBS=2), or give the node or container "
                "more memory",
                "manual",
                manual("cmake --build build -j 2  (or ninja -C build -j 2)"),
                manual("MAX_JOBS=2 pip install <the package> --no-build-isolation  (pip builds)"),
            ),
        )
    if stated is None and tool is not None and tool.endswith("make"):
        # make's own error line follows and no Python package build is named: a Makefile
        # (or CMake's generated one) ran the compiles, its -j is what to lower
        return Hit(
            f"{program} {what} during the build (line {line.line}): the node (or the "
            f"container) ran out of memory with {tool}'s parallel compile jobs",
            evidence={"line": line.line, "program": program, "build_tool": tool},
            fix=fix(
                "Rebuild with fewer parallel jobs: make -j2 (plain make runs one job; a CMake "
                "build: cmake --build build -j 2, or CMAKE_BUILD_PARALLEL_LEVEL=2), or give "
                "the node or container more memory (swap helps a build that only just fails)",
                "manual",
                manual("make -j2"),
                manual("cmake --build build -j 2  (a CMake build)"),
            ),
        )
    package = canonicalize_name(stated) if stated else "<the package>"
    prebuilt = prebuilt_install(facts, package) if stated else None
    wheel = (
        f"; no compile at all: {prebuilt[0]}"
        if prebuilt
        else ", or install a prebuilt wheel for this torch, CUDA and Python"
    )
    return Hit(
        f"{program} {what} during the build (line {line.line}): the node (or the "
        "container) ran out of memory with ninja's parallel compile jobs",
        evidence={"line": line.line, "program": program},
        fix=fix(
            f"Rebuild with fewer parallel jobs: MAX_JOBS=4 pip install {package} "
            f"--no-build-isolation (MAX_JOBS=1 or 2 with little RAM){wheel}",
            "manual",
            set_env(MAX_JOBS="4"),
            manual(f"pip install {package} --no-build-isolation"),
            *(prebuilt[1] if prebuilt else []),
        ),
    )


# system header -> (Debian/Ubuntu package, conda-forge package) that ships it; the headers
# that extension builds of the GPU stack include (Python.h is SYS130, CUDA's are SYS152)
SYSTEM_HEADERS = {
    "crypt.h": ("libcrypt-dev", "libxcrypt"),  # Python.h includes it (Python < 3.13)
    "libaio.h": ("libaio-dev", "libaio"),  # DeepSpeed's async_io op
    "zlib.h": ("zlib1g-dev", "zlib"),
    "ffi.h": ("libffi-dev", "libffi"),
    "numa.h": ("libnuma-dev", "libnuma"),
    "features.h": ("libc6-dev", "sysroot_linux-64"),
    "mpi.h": ("libopenmpi-dev", "openmpi"),
}
_SYSTEM_HEADER = lazy(
    r"(?<![A-Za-z0-9_/])(?P<header>"
    + "|".join(re.escape(h) for h in SYSTEM_HEADERS)
    + r")(?:: No such file or directory|' file not found)"
)


@rule("SYS161", "build-system-header-missing", Severity.ERROR)
def build_system_header_missing(facts: Facts) -> Iterable[Hit]:
    """A system header the extension build includes is missing

    ## What it checks
    A compiler's `fatal error: crypt.h: No such file or directory` (clang: `'crypt.h' file not
    found`) for a header an OS or conda package ships: crypt.h (which Python.h includes),
    libaio.h (DeepSpeed's async_io), zlib.h, ffi.h, numa.h, features.h, mpi.h. Any other
    include file a compiler cannot open (`infiniband/verbs.h`, `'omp.h' file not found`, MSVC's
    C1083, nvcc's `cannot open source file "nvshmem.h"`) is named and left open, with the way
    to find the package that ships it. Only a build log states it.

    ## Why it matters
    Python.h of Python < 3.13 includes crypt.h: a conda env's compiler (or a new distro without
    libcrypt-dev) stops every C++/CUDA extension build there, whatever the package.

    ## Example
    `/opt/conda/envs/x/include/python3.10/Python.h:44:10: fatal error: crypt.h: No such file
    or directory` while DeepSpeed JIT-builds fused_adam in a conda env.

    ## Fix
    Install the package that ships the header: `sudo apt-get install libcrypt-dev` (system
    compiler), or in a conda env `conda install -c conda-forge libxcrypt` and `export
    CPATH=$CONDA_PREFIX/include`.

    ## References
    - https://github.com/ClementPinard/Pytorch-Correlation-extension/issues/105 ('sudo apt install libcrypt-dev'; in conda, install libcrypt from conda-forge)
    - https://github.com/cortes-ciriano-lab/SComatic/issues/89 (libxcrypt in a conda env)
    - Debian package contents: libcrypt-dev (/usr/include/crypt.h), libaio-dev (/usr/include/libaio.h)
    """
    raise Skip("only a build log states a missing system header", "log.build")


@from_log("SYS161")
def build_system_header_missing_in_log(facts: Facts, line: LogLine) -> Hit:
    found = _SYSTEM_HEADER.search(line.text)
    header = found.group("header") if found else line.stated.get("missing_header")
    if not header:
        raise NotStated(f"line {line.line} names no header", "system")
    if header not in SYSTEM_HEADERS:
        raise NotStated(
            f"line {line.line}: the compiler cannot open {header}, which envcheck does not map "
            "to a package",
            "system",
            fix=(
                f"install what ships {header}: apt-file search {header} (Debian/Ubuntu; then "
                f"sudo apt-get install its -dev package), dnf provides '*/{header}' (RHEL, "
                "Fedora), or its conda-forge package with export CPATH=$CONDA_PREFIX/include; "
                "a header of the project's own third_party/ needs git submodule update --init "
                "--recursive; then rebuild"
            ),
        )
    apt, conda = SYSTEM_HEADERS[header]
    return Hit(
        f"the build cannot find the system header {header} (line {line.line}): the package "
        f"that ships it ({apt}; conda-forge: {conda}) is not installed where the compiler looks",
        evidence={"line": line.line, "header": header, "apt": apt, "conda": conda},
        fix=fix(
            f"Install {apt}: sudo apt-get install {apt} (in a conda env with conda's compiler: "
            f"conda install -c conda-forge {conda} and export CPATH=$CONDA_PREFIX/include), "
            "then rebuild",
            "manual",
            manual(f"sudo apt-get install -y {apt}"),
            manual(f"conda install -c conda-forge {conda}  (conda env)"),
            manual("export CPATH=$CONDA_PREFIX/include  (conda env)"),
        ),
    )


@rule("SYS162", "cuda-arch-list-empty", Severity.ERROR)
def cuda_arch_list_empty(facts: Facts) -> Iterable[Hit]:
    """The extension build found no GPU to choose architectures for (TORCH_CUDA_ARCH_LIST)

    ## What it checks
    torch.utils.cpp_extension's `arch_list[-1] += '+PTX'` / `IndexError: list index out of
    range`: without `TORCH_CUDA_ARCH_LIST` it compiles for the GPUs torch sees, and it saw none.
    Only a build log states it.

    ## Why it matters
    A `docker build` has no GPU, nor does a login node or a job with `CUDA_VISIBLE_DEVICES=""`;
    with a CPU-only torch (`No CUDA runtime is found`) torch sees none either. Every CUDA
    extension build (a JIT load or a setup.py) stops there.

    ## Example
    `RUN python setup.py develop` of a CUDA extension in a Dockerfile: `arch_list[-1] +=
    '+PTX'` `IndexError: list index out of range`.

    ## Fix
    Name the architectures to build for: `export TORCH_CUDA_ARCH_LIST="8.0;8.6;8.9;9.0"` (the
    compute capabilities of the GPUs the build will run on; `ENV` in a Dockerfile); if torch is
    CPU-only, install a CUDA build of torch.

    ## References
    - pytorch/pytorch torch/utils/cpp_extension.py (_get_cuda_arch_flags)
    - https://github.com/pytorch/ort/pull/95
    """
    raise Skip("only a build log states an empty architecture list", "log.build")


def _arch_list(facts: Facts) -> str:
    """The node's GPUs' compute capabilities as TORCH_CUDA_ARCH_LIST wants them, else a list of
    the data-centre and workstation architectures CUDA 11.8+ builds (Ampere, Ada, Hopper)."""
    caps: set[str] = set()
    try:
        for gpu in facts.gpus():
            try:
                caps.add(str(facts.compute_capability(gpu)))
            except Skip:
                continue
    except Skip:
        pass
    return ";".join(sorted(caps)) if caps else "8.0;8.6;8.9;9.0"


@from_log("SYS162")
def cuda_arch_list_empty_in_log(facts: Facts, line: LogLine) -> Hit:
    archs = _arch_list(facts)
    return Hit(
        f"torch's extension build saw no GPU to choose architectures for (line {line.line}): "
        "no GPU is visible where it builds (a docker build, CUDA_VISIBLE_DEVICES, a CPU-only "
        "torch) and TORCH_CUDA_ARCH_LIST is not set",
        evidence={"line": line.line, "arch_list": archs},
        fix=fix(
            f'Name the GPU architectures to build for: export TORCH_CUDA_ARCH_LIST="{archs}" '
            "(the compute capabilities of the GPUs it will run on; ENV in a Dockerfile), then "
            "rebuild; with a CPU-only torch, install a CUDA build of torch first",
            "manual",
            set_env(TORCH_CUDA_ARCH_LIST=archs),
        ),
    )


_COMPILER = lazy(
    r"(?:unable to execute '|error: command '(?:[^']*/)?|\['which', '|error trying to exec ')"
    r"([A-Za-z0-9_+.-]+)'"
    r"|Error checking compiler version for ([A-Za-z0-9_+.-]+):|cannot execute '([A-Za-z0-9_+.-]+)'"
)


@rule("SYS163", "c-compiler-missing", Severity.ERROR)
def c_compiler_missing(facts: Facts) -> Iterable[Hit]:
    """No C/C++ compiler for a build (Triton's launcher, an extension)

    ## What it checks
    Triton's `Failed to find C compiler. Please specify via CC environment variable.` and
    setuptools' `unable to execute 'gcc': No such file or directory` / `error: command 'gcc'
    failed: No such file or directory`. Only a log states it.

    ## Why it matters
    Triton compiles a small C launcher with the system compiler the first time a kernel runs
    (torch.compile, vLLM, Unsloth, Liger kernels): a slim container image without gcc fails at
    the first kernel, not at install time. Source builds of extensions need it too.

    ## Example
    `RuntimeError: Failed to find C compiler. Please specify via CC environment variable.` in a
    python:3.11-slim image running torch.compile.

    ## Fix
    Install a C compiler: `sudo apt-get install build-essential` (RHEL: `dnf groupinstall
    "Development Tools"`), or point CC at one (`export CC=/usr/bin/gcc`).

    ## References
    - triton-lang/triton python/triton/runtime/build.py (_build)
    - https://github.com/apple/ml-cross-entropy/issues/5
    """
    raise Skip("only a log states a missing compiler", "log.build")


@from_log("SYS163")
def c_compiler_missing_in_log(facts: Facts, line: LogLine) -> Hit:
    if (
        "Microsoft Visual C++" in line.text
        or "compiler version for cl:" in line.text
        or "'cl.exe' in PATH" in line.text
        or "cl.exe' failed: " in line.text
        or "vcvarsall.bat" in line.text
    ):
        return Hit(
            f"the build found no MSVC compiler (line {line.line}): Python extensions on Windows "
            "compile with Microsoft C++ Build Tools 14.0 or newer",
            evidence={"line": line.line, "compiler": "cl"},
            fix=fix(
                'Install "Microsoft C++ Build Tools" (the "Desktop development with C++" '
                "workload: https://visualstudio.microsoft.com/visual-cpp-build-tools/), then "
                "rebuild from a Developer Command Prompt; or install a prebuilt wheel",
                "manual",
                manual("install Microsoft C++ Build Tools (Desktop development with C++)"),
            ),
        )
    found = _COMPILER.search(line.text)
    which = (found.group(1) or found.group(2) or found.group(3)) if found else "C compiler"
    who = "Triton's launcher build" if "specify via CC" in line.text else "the build"
    return Hit(
        f"{who} found no {which} (line {line.line}): no C/C++ compiler is installed (slim "
        "container images have none) or CC names one that is not there",
        evidence={"line": line.line, "compiler": which},
        fix=fix(
            "Install a C/C++ compiler: sudo apt-get install build-essential (RHEL/CentOS: sudo "
            'yum install gcc gcc-c++, or dnf groupinstall "Development Tools"; conda: conda '
            "install -c conda-forge gxx_linux-64), or export CC=/usr/bin/gcc to name one",
            "manual",
            manual("sudo apt-get install -y build-essential"),
            manual("sudo yum install -y gcc gcc-c++  (RHEL/CentOS)"),
            set_env(CC="/usr/bin/gcc"),
        ),
    )


_LINK_LIBRARY = lazy(r"cannot find -l([A-Za-z0-9_+.-]+)")
# -l<name> of the CUDA toolkit's own libraries (lib64 under CUDA_HOME)
_TOOLKIT_LIBRARIES = {"cudart", "cublas", "cublasLt", "curand", "cusparse", "cusolver", "cufft", "nvrtc", "nvToolsExt", "cudadevrt"}  # fmt: skip


@rule("SYS164", "linker-cannot-find-library", Severity.ERROR)
def linker_cannot_find_library(facts: Facts) -> Iterable[Hit]:
    """The build's linker cannot find a library (-lcuda, -lcudart, ...)

    ## What it checks
    GNU ld's `cannot find -l<name>`: `-lcuda` when Triton compiles its launcher (torch.compile,
    vLLM, mamba's kernels), a CUDA toolkit library (`-lcudart`, `-lcublas`) or another `-dev`
    package's library in an extension build. Only a log states it.

    ## Why it matters
    The driver installs `libcuda.so.1`; the linker looks for `libcuda.so`, which only the
    driver's development link (or CUDA's stubs) provides: containers and runfile installs often
    lack it, and Triton's first kernel fails with `/usr/bin/ld: cannot find -lcuda`.

    ## Example
    `/usr/bin/ld: cannot find -lcuda: No such file or directory` / `collect2: error: ld
    returned 1 exit status` from Triton under torch.compile.

    ## Fix
    For -lcuda: `sudo ldconfig` and check `ldconfig -p | grep libcuda`; tell Triton where the
    driver's library is (`export TRITON_LIBCUDA_PATH=<the directory of libcuda.so.1>`), or
    create the link (`sudo ln -s <dir>/libcuda.so.1 <dir>/libcuda.so`); in a build without a
    driver, `export LIBRARY_PATH=/usr/local/cuda/lib64/stubs:$LIBRARY_PATH`. For the toolkit's
    libraries: `export LIBRARY_PATH=$CUDA_HOME/lib64:$LIBRARY_PATH`.

    ## References
    - https://github.com/state-spaces/mamba/issues/123
    - https://github.com/pytorch/pytorch/issues/94585
    - triton-lang/triton third_party/nvidia/backend/driver.py (libcuda_dirs, TRITON_LIBCUDA_PATH)
    """
    raise Skip("only a build log states a library the linker cannot find", "log.build")


# MSVC's linker: 'LINK : fatal error LNK1181: cannot open input file 'cudart.lib'' (and LNK1104's
# 'cannot open file'): the library is named by its file, searched on LIB and /LIBPATH
_MSVC_LINK_LIBRARY = lazy(r"LNK11(?:81|04): [^'“\n]*['“](?:[^'”\n]*[\\/])?([^'”\\/\n]+)\.lib['”]")


def _msvc_cannot_open(facts: Facts, line: LogLine, name: str) -> Hit:
    """MSVC's linker found no <name>.lib on LIB or /LIBPATH: a CUDA toolkit library's directory
    is CUDA_PATH's lib\\x64 (CUDA_PATH set by the toolkit's installer, or not installed)."""
    what = f"MSVC's linker cannot open {name}.lib (line {line.line})"
    if name in _TOOLKIT_LIBRARIES or name == "cuda":
        cuda = _torch_cuda(facts)
        release = str(cuda) if cuda else "<X.Y, torch's CUDA>"
        home = f"C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v{release}"
        return Hit(
            f"{what}: the CUDA toolkit's lib\\x64 is not on the linker's path (CUDA_PATH unset, "
            "or no CUDA toolkit of torch's release installed)",
            evidence={"line": line.line, "library": name},
            fix=fix(
                f"Install the CUDA toolkit of torch's CUDA and point the build at it: set "
                f'CUDA_PATH="{home}" and CUDA_HOME to the same, add its lib\\x64 to LIB, and '
                "rebuild from a fresh x64 Native Tools prompt",
                "manual",
                manual(f'set CUDA_HOME={home} && set "LIB={home}\\lib\\x64;%LIB%"'),
            ),
        )
    return Hit(
        f"{what}: the library's directory is not on LIB or the build's /LIBPATH",
        evidence={"line": line.line, "library": name},
        fix=fix(
            f"Install what ships {name}.lib and add its directory to LIB (set "
            f'"LIB=<its directory>;%LIB%"), then rebuild',
            "manual",
            manual(f'set "LIB=<the directory of {name}.lib>;%LIB%"'),
        ),
    )


@from_log("SYS164")
def linker_cannot_find_library_in_log(facts: Facts, line: LogLine) -> Hit:
    msvc = _MSVC_LINK_LIBRARY.search(line.text)
    if msvc is not None:
        return _msvc_cannot_open(facts, line, msvc.group(1))
    found = _LINK_LIBRARY.search(line.text)
    name = found.group(1) if found else "the library"
    what = f"the linker cannot find lib{name}.so (line {line.line})"
    if "libcuda.so cannot found" in line.text:  # Triton's own search for the driver library
        name = "cuda"
        what = (
            f"Triton finds the driver's libcuda.so.1 neither in the linker cache (ldconfig -p) "
            f"nor on LD_LIBRARY_PATH (line {line.line})"
        )
    if name == "cuda":
        libdir = "/usr/lib/x86_64-linux-gnu"
        why = (
            "ldconfig was not run on the directory that holds it (a container's or Colab's "
            "driver directory), or no driver is mounted"
            if "cannot found" in line.text
            else "the driver's libcuda.so.1 has no unversioned libcuda.so link where the linker "
            "looks (Triton links its launcher with -lcuda at the first kernel)"
        )
        return Hit(
            f"{what}: {why}",
            evidence={"line": line.line, "library": name},
            fix=fix(
                "Make libcuda.so findable: sudo ldconfig (ldconfig -p | grep libcuda shows where "
                f"libcuda.so.1 is), then export TRITON_LIBCUDA_PATH={libdir} (that directory) or "
                f"sudo ln -s {libdir}/libcuda.so.1 {libdir}/libcuda.so; in a build without a "
                "driver: export LIBRARY_PATH=/usr/local/cuda/lib64/stubs:$LIBRARY_PATH",
                "manual",
                manual("sudo ldconfig; ldconfig -p | grep libcuda"),
                set_env(TRITON_LIBCUDA_PATH=libdir),
                manual(f"sudo ln -s {libdir}/libcuda.so.1 {libdir}/libcuda.so"),
            ),
        )
    if name in _TOOLKIT_LIBRARIES:
        cuda = _torch_cuda(facts)
        home = f"/usr/local/cuda-{cuda}" if cuda else "/usr/local/cuda"
        return Hit(
            f"{what}: the CUDA toolkit's lib64 is not on the linker's path (CUDA_HOME unset or "
            "a runtime-only CUDA install)",
            evidence={"line": line.line, "library": name},
            fix=fix(
                f"Point the linker at the CUDA toolkit: export CUDA_HOME={home} "
                f"LIBRARY_PATH={home}/lib64:$LIBRARY_PATH (install the toolkit of torch's CUDA "
                "if it is not there), then rebuild",
                "manual",
                set_env(CUDA_HOME=home),
                manual(f"export LIBRARY_PATH={home}/lib64:$LIBRARY_PATH"),
            ),
        )
    return Hit(
        f"{what}: the package that ships lib{name}.so (its -dev package) is not installed, or "
        "its directory is not on LIBRARY_PATH",
        evidence={"line": line.line, "library": name},
        fix=fix(
            f"Install the development package of lib{name} (apt: lib{name}-dev; conda: "
            f"conda install -c conda-forge lib{name}) or add its directory to LIBRARY_PATH",
            "manual",
            manual(f"sudo apt-get install -y lib{name}-dev"),
        ),
    )
