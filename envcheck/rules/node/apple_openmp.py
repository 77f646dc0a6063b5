"""SYS270: a build passing `-fopenmp` to Apple's clang (Xcode's, macOS' `cc`/`gcc`), which has
no OpenMP: `clang: error: unsupported option '-fopenmp'` (the signature
`apple-clang-no-openmp` in matrices/signatures/build_toolchains.toml). On macOS `gcc` is that
clang too, so `error: command 'gcc' failed` after it is not GCC. The fix is a compiler that
has OpenMP: Homebrew's libomp with Apple clang's preprocessor flags, Homebrew's llvm or gcc,
or conda-forge's compilers; a package's wheel for the Mac needs none."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Fix, Severity
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual

_LIBOMP = (
    'export CPPFLAGS="-Xpreprocessor -fopenmp -I$(brew --prefix libomp)/include" '
    'LDFLAGS="-L$(brew --prefix libomp)/lib -lomp"'
)
_LLVM = "export CC=$(brew --prefix llvm)/bin/clang CXX=$(brew --prefix llvm)/bin/clang++"


@rule("SYS270", "apple-clang-no-openmp", Severity.ERROR)
def apple_clang_no_openmp(facts: Facts) -> Iterable[Hit]:
    """A build passes -fopenmp to Apple's clang, which has no OpenMP (macOS)

    ## What it checks
    Only a build log says it: `clang: error: unsupported option '-fopenmp'` (also `clang++:`),
    Apple's clang refusing the OpenMP flag a `setup.py`, CMake or Makefile build passes, often
    followed by `error: command 'gcc' failed` (on macOS `gcc` is Apple's clang) and pip's
    `Failed building wheel for X`.

    ## Why it matters
    Apple builds its clang without OpenMP, so every package that compiles C/C++ with `-fopenmp`
    (Cython extensions, point-cloud and geometry libraries, scientific packages) fails on a Mac
    when pip builds it from source: updating Xcode or its command line tools does not add it.

    ## Example
    `pip install velocyto` on macOS: `clang: error: unsupported option '-fopenmp'`, `error:
    command 'gcc' failed with exit status 1`.

    ## Fix
    Build with a compiler that has OpenMP: `brew install libomp` and Apple clang's form of the
    flag (`CPPFLAGS="-Xpreprocessor -fopenmp -I$(brew --prefix libomp)/include"`,
    `LDFLAGS="-L$(brew --prefix libomp)/lib -lomp"`); or Homebrew's llvm (`brew install llvm
    libomp`, `CC=$(brew --prefix llvm)/bin/clang`) or gcc (`brew install gcc`, `CC=gcc-14
    CXX=g++-14`); in a conda environment conda-forge's `compilers` and `llvm-openmp`; or a
    release of the package with a wheel for the Mac.

    ## References
    - https://github.com/Netflix/vmaf/pull/1316 ('Apple has explicitly disabled OpenMP support in clang')
    - https://github.com/velocyto-team/velocyto.py/issues/254
    - https://github.com/FRBs/sigpyproc3/issues/3
    - https://github.com/mmolero/pypoisson/issues/3
    - llvm/llvm-project clang/include/clang/Basic/DiagnosticDriverKinds.td (err_drv_unsupported_opt: "unsupported option '%0'")
    """
    raise Skip("only a build log states Apple's clang refusing -fopenmp", "log.build")


def _openmp_compiler(package: str | None) -> Fix:
    target = package or "<the package>"
    return fix(
        "Build with a compiler that has OpenMP (Apple's clang has none, and on macOS `gcc` is "
        f"that clang): brew install libomp, then {_LIBOMP}; or Homebrew's llvm (brew install "
        f"llvm libomp; {_LLVM}) or gcc (brew install gcc; export CC=gcc-14 CXX=g++-14, the "
        "major Homebrew installed); in a conda environment: conda install -c conda-forge "
        f"compilers llvm-openmp; then pip install --no-cache-dir {target} again (or a release "
        "with a wheel for this Mac)",
        "manual",
        manual("brew install libomp"),
        manual(_LIBOMP),
        manual(f"pip install --no-cache-dir {target}"),
    )


@from_log("SYS270")
def apple_clang_no_openmp_in_log(facts: Facts, line: LogLine) -> Hit:
    package = line.stated.get("pip_build") or line.stated.get("extension")
    building = f" building {package}" if package else ""
    return Hit(
        f"Apple's clang refused -fopenmp{building} (line {line.line}): the macOS system "
        "compiler has no OpenMP, and the build asks for it",
        evidence={"line": line.line, "package": package},
        fix=_openmp_compiler(package),
    )
