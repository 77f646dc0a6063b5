"""An OpenMP runtime entry point a binary cannot resolve (SYS241): the runtime that loads is
older than the compiler that built the binary, or is not the runtime it needs.

The symbol names its owner (the signature `undefined-symbol-openmp-runtime`,
matrices/signatures/linker_symbols.toml, with its sources): GNU libgomp exports `GOMP_*`, the
LLVM / Intel runtime (libomp, libiomp5) `__kmpc_*` / `kmp_*`, both the `omp_*` API. Which
packages ship each runtime is the matrix's `[[soname]]` table (libgomp.so.1, libiomp5.so).
"""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Action, Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.fixes import fix, manual

# a path inside a conda environment (its runtime libraries come from conda packages)
_CONDA = lazy(r"/(?:(?:ana|mini)conda[0-9]*|miniforge[0-9]*|mambaforge|\.conda|conda)/")
# the conda environment's root: <prefix>/lib/... or <prefix>/envs/<name>/lib/...
_ENV_PREFIX = lazy(r"^(?P<prefix>.*/envs/[^/]+)/")
_BASE_PREFIX = lazy(r"^(?P<prefix>.*?/(?:(?:ana|mini)conda[0-9]*|miniforge[0-9]*|mambaforge))/")
# MKL's Intel threading layer (libmkl_intel_thread): it calls the Intel OpenMP runtime
_MKL_INTEL_THREAD = lazy(r"libmkl_intel_thread")
_INTEL = lazy(r"^(?:__kmpc_|kmp_)")


def _packages(facts: Facts, soname: str) -> tuple[str | None, str | None, str | None]:
    """(conda, pip, apt) packages the matrix says ship ``soname``; None where it names none."""
    for entry in facts.matrix.soname(soname):
        return (
            _first_name(entry.conda),
            _first_name(entry.pip),
            _first_name(entry.apt),
        )
    return None, None, None


def _first_name(text: str | None) -> str | None:
    """The package name a table field starts with (`libgomp (conda-forge ...)` -> libgomp)."""
    if not text:
        return None
    name = text.split(" ", 1)[0].strip(",;")
    return name or None


@rule("SYS241", "openmp-runtime-symbol-missing", Severity.ERROR)
def openmp_runtime_symbol_missing(facts: Facts) -> Iterable[Hit]:
    """The OpenMP runtime that loads lacks an entry point the binary was built against

    ## What it checks
    A loader line `<binary>: undefined symbol: GOMP_parallel` (or another OpenMP runtime entry
    point: GNU libgomp's `GOMP_*`, the LLVM/Intel runtime's `__kmpc_*`/`kmp_*`, `omp_*`) of
    any package: the symbol's owner is the OpenMP runtime, not the package. `GOMP_*` means the
    libgomp.so.1 that loads first is older than the GCC that compiled the binary (a conda
    environment's old libgomp, or the system's older one when a newer GCC from a module or
    toolset compiled it); MKL's Intel threading layer (`libmkl_intel_thread`) missing `omp_*`
    or `__kmpc_*` means Intel's OpenMP runtime (libiomp5) is not loaded. Only a log states it.

    ## Why it matters
    Reinstalling the package that fails does not help: the same binary meets the same
    runtime. The runtime that loads must be at least as new as the compiler's (or be the one
    the binary needs).

    ## Example
    `.../site-packages/implicit/_implicit.cpython-35m-x86_64-linux-gnu.so: undefined symbol:
    GOMP_parallel` in an Anaconda environment: GOMP_parallel arrived with GCC 4.9's libgomp
    (GOMP_4.0); the environment's libgomp is older than the system GCC that compiled it.

    ## Fix
    Load a libgomp at least as new as the compiler's: in a conda environment `conda install -c
    conda-forge libgomp` (older Anaconda: `conda install gcc`); outside one, put the compiler's
    own runtime first (`export LD_LIBRARY_PATH=$(dirname $(gcc -print-file-name=libgomp.so.1)):
    $LD_LIBRARY_PATH`, or keep the compiler's environment module loaded at run time), or
    rebuild with the compiler whose runtime loads. For MKL's Intel threading layer: install
    Intel's runtime (`conda install intel-openmp` / `pip install intel-openmp`) or select GNU
    threading (`export MKL_THREADING_LAYER=GNU`).

    ## References
    - gcc-mirror/gcc libgomp/libgomp.map (GOMP_4.0: GOMP_parallel, GCC 4.9)
    - llvm/llvm-project openmp/runtime/src/exports_so.txt
    - https://www.intel.com/content/www/us/en/docs/onemkl/developer-guide-linux/2024-0/dynamic-select-the-interface-and-threading-layer.html
    """
    raise Skip("only a log line states an OpenMP symbol that does not resolve", "log.openmp")


@from_log("SYS241")
def openmp_runtime_symbol_missing_in_log(facts: Facts, line: LogLine) -> Hit:
    symbol = line.stated.get("undefined_symbol")
    path = line.stated.get("library_path")
    if symbol is None:
        raise NotStated(f"line {line.line} is cut before the symbol", "libraries.openmp")
    where = path or "the binary"
    check = manual(
        f"ldd {path or '<the .so that fails>'} | grep -E 'gomp|iomp|libomp'  (which runtime loads)"
    )
    if _INTEL.match(symbol) or (path is not None and _MKL_INTEL_THREAD.search(path)):
        conda, pip, _ = _packages(facts, "libiomp5.so")
        conda = conda or "intel-openmp"
        pip = pip or "intel-openmp"
        return Hit(
            f"{where} (line {line.line}) cannot resolve {symbol}, an entry point of Intel's "
            "OpenMP runtime (libiomp5): that runtime is not loaded (MKL's Intel threading layer "
            "and binaries built with Intel's or LLVM's compiler need it)",
            evidence={"line": line.line, "library": path, "symbol": symbol, "runtime": "libiomp5"},
            fix=fix(
                f"Install Intel's OpenMP runtime beside it: conda install {conda} (pip install "
                f"{pip} outside conda), or make MKL use GNU threading: export "
                "MKL_THREADING_LAYER=GNU",
                "manual",
                manual(f"conda install {conda}  (in the conda environment)"),
                manual(f"pip install {pip}  (outside conda)"),
                manual("export MKL_THREADING_LAYER=GNU  (MKL's GNU threading layer instead)"),
                check,
            ),
        )
    conda, _, apt = _packages(facts, "libgomp.so.1")
    conda = conda or "libgomp"
    in_conda = path is not None and _CONDA.search(path) is not None
    prefix = (
        (_ENV_PREFIX.match(path) or _BASE_PREFIX.match(path))
        if path is not None and in_conda
        else None
    )
    own_runtime = (
        "export LD_LIBRARY_PATH=$(dirname $(gcc -print-file-name=libgomp.so.1)):$LD_LIBRARY_PATH"
    )
    actions: list[Action]
    if in_conda:
        where_env = f" ({prefix.group('prefix')})" if prefix else ""
        summary = (
            f"The conda environment's libgomp{where_env} is older than the GCC that compiled "
            f"{where}: install a newer one, conda install -c conda-forge {conda} (older "
            "Anaconda: conda install gcc, whose runtime brings it); or load the compiler's own "
            f"runtime first: {own_runtime}; or rebuild the package with the environment's "
            "compiler (conda install -c conda-forge gxx)"
        )
        actions = [
            manual(f"conda install -c conda-forge {conda}"),
            manual("conda install gcc  (older Anaconda: its GCC runtime)"),
            manual(own_runtime),
            check,
        ]
    else:
        summary = (
            f"The libgomp that loads is older than the GCC that compiled {where}: load that "
            f"compiler's runtime first, {own_runtime} (or keep the compiler's environment "
            "module loaded at run time: module load gcc/<the version that built it>); or "
            f"upgrade the system's ({apt or 'libgomp1'}) or rebuild with the compiler whose "
            "runtime loads"
        )
        actions = [
            manual(own_runtime),
            manual("module load gcc/<the version that built it>  (at run time, on a cluster)"),
            check,
        ]
    return Hit(
        f"{where} (line {line.line}) cannot resolve {symbol}, an entry point of GNU's OpenMP "
        "runtime (libgomp): the libgomp.so.1 that loads first is older than the GCC that "
        "compiled the binary",
        evidence={"line": line.line, "library": path, "symbol": symbol, "runtime": "libgomp"},
        fix=fix(summary, "manual", *actions),
    )
