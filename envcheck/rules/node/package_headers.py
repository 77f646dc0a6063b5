"""SYS168: a build cannot find a header that a Python package ships inside its own directory
(the signature `python-package-header-missing` in matrices/signatures/build.toml).

torch's wheel has its C++ headers under `torch/include` (torch/extension.h, ATen/, c10/),
NumPy's under `numpy/core/include` (`numpy/_core/include` from 2.0), pybind11's under
`pybind11/include`: never on a compiler's default include path. The build sees them only when
it passes the directory the package's own helper returns from the interpreter that builds
(torch.utils.cpp_extension's CppExtension/CUDAExtension, `numpy.get_include()`,
`pybind11.get_include()`). What leaves it out, by the facts that decide it:

- the build ran in pip's or uv's isolated build environment (the log names it), which has only
  the build requirements the package declares: install the package, then build without
  isolation;
- `torch/extension.h` with a torch older than 1.0 (the log or the node states the release):
  the header is torch 1.0's;
- NumPy's header: the setup.py does not pass `numpy.get_include()` (its headers are only
  ever found through it), whether or not NumPy is installed;
- pybind11's header: a pybind11 before 2.2.3 under pip 10's isolated builds, or before 2.6
  (headers installed into the prefix, which --user installs move), or a setup.py that does not
  pass `pybind11.get_include()`;
- otherwise (torch's headers, release unknown) it stays open with those conditions.
"""

from __future__ import annotations

from collections.abc import Iterable

from packaging.version import Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.fixes import fix, manual, pip_install

# the header's top directory -> the distribution whose wheel ships it
_SHIPPED_BY = {
    "torch": "torch",
    "ATen": "torch",
    "c10": "torch",
    "numpy": "numpy",
    "pybind11": "pybind11",
}
# the expression that returns a distribution's include directory, from its own API
_INCLUDE_DIR = {
    "numpy": "numpy.get_include()",
    "pybind11": "pybind11.get_include()",
}
# pybind11 2.2.3 located its headers without pip's internals, which pip 10 restricted
# (pybind11 docs/changelog.md v2.2.3, #1190); 2.6.0 ships them inside the package
# (#2433: the reworked Python package, pybind11[global] for the prefix)
_PYBIND11_PIP10 = "2.2.3"
# torch/extension.h is torch 1.0's (torch/csrc/api/include/torch/extension.h)
_EXTENSION_H = Version("1.0")


@rule("SYS168", "python-package-header-missing", Severity.ERROR)
def python_package_header_missing(facts: Facts) -> Iterable[Hit]:
    """A build cannot find a Python package's C/C++ header (torch/extension.h, numpy/arrayobject.h)

    ## What it checks
    Only a build log says it: a compiler's missing-include error for a header that a Python
    package ships in its own directory, `fatal error: torch/extension.h: No such file or
    directory` (also ATen/, c10/), `numpy/arrayobject.h`, `pybind11/pybind11.h`, in GCC's,
    clang's, MSVC's (C1083) or nvcc's words. Facts that decide why: pip's or uv's isolated
    build environment in the log, the torch release the log or the node states, the package.

    ## Why it matters
    These headers live under site-packages (torch/include, numpy/core/include,
    pybind11/include), never on the compiler's default path: the build finds them only through
    the package's own helper run by the interpreter that builds. A build isolated from the
    installed torch, a torch older than the header, or a setup.py that does not pass
    `numpy.get_include()` stops at the first file that includes one.

    ## Example
    `pip install .` of a CUDA extension: `csrc/ops.cpp:1:10: fatal error: torch/extension.h:
    No such file or directory` inside `pip-build-env-*/overlay`; `bbox.c:517:31: fatal error:
    numpy/arrayobject.h: No such file or directory` from a Cython setup.py.

    ## Fix
    In pip's isolated build: install the package in the environment, then `pip install
    <package> --no-build-isolation`. torch/extension.h with torch older than 1.0: `pip install
    "torch>=1.0"`. NumPy's header: pass `include_dirs=[numpy.get_include()]` to the Extension
    in setup.py. pybind11's: `pip install -U "pybind11>=2.2.3"` and `pybind11.get_include()`.

    ## References
    - pytorch/pytorch torch/utils/cpp_extension.py (include_paths, CppExtension, CUDAExtension)
    - numpy/numpy numpy/lib/_utils_impl.py (get_include)
    - pybind11/pybind11 pybind11/commands.py (get_include); docs/changelog.md v2.2.3 (#1190),
      v2.6.0 (#2433)
    - https://pip.pypa.io/en/stable/cli/pip_install/#cmdoption-no-build-isolation
    """
    raise Skip("only a build log states a missing package header", "log.build")


def _isolated(line: LogLine) -> bool:
    return "isolated_build" in line.stated or "build_dependency" in line.stated


def _torch(facts: Facts) -> Version | None:
    try:
        return facts.known_version("torch")
    except Skip:
        return None


def _pybind11(line: LogLine, header: str, evidence: dict[str, object]) -> Hit:
    """pybind11 before 2.2.3 located its installed headers through pip's internals, which pip
    10's isolated builds no longer expose (pybind11#1190); before 2.6 it installed them with
    distutils' `headers=` into the prefix, which --user installs move; 2.6 ships them inside
    the package, where pybind11.get_include() points, and Pybind11Extension passes it."""
    where = _INCLUDE_DIR["pybind11"]
    return Hit(
        f"the compiler cannot find {header} (line {line.line}): pybind11's headers are not "
        f"where the build looks: pybind11 before {_PYBIND11_PIP10} cannot locate them under "
        "pip 10's isolated builds, before 2.6 they went into the prefix's include directory "
        f"(which --user installs move), and a setup.py that does not pass {where} never finds "
        "them",
        evidence=evidence,
        fix=fix(
            f'Upgrade pybind11: pip install -U "pybind11>={_PYBIND11_PIP10}" (2.6 and newer '
            "ship the headers inside the package; list it in pyproject.toml's build-system "
            f"requires too), and give the Extension include_dirs=[{where}] (or build it with "
            "pybind11.setup_helpers.Pybind11Extension); a CMake build: "
            "-Dpybind11_DIR=$(python -m pybind11 --cmakedir)",
            "manual",
            pip_install(f"pybind11>={_PYBIND11_PIP10}"),
            manual(f"include_dirs=[{where}]  (in setup.py's Extension)"),
        ),
    )


@from_log("SYS168")
def python_package_header_missing_in_log(facts: Facts, line: LogLine) -> Hit:
    header = line.stated.get("missing_header") or "torch/extension.h"
    dist = _SHIPPED_BY.get(header.split("/", 1)[0], "torch")
    evidence: dict[str, object] = {"line": line.line, "header": header, "package": dist}
    stated = line.stated.get("pip_build") or line.stated.get("extension")
    package = stated or "<the package>"
    if _isolated(line):
        return Hit(
            f"the compiler cannot find {header} (line {line.line}): the build runs in pip's (or "
            f"uv's) isolated build environment, which has only the build requirements "
            f"{package} declares, not this environment's {dist}",
            evidence=evidence,
            fix=fix(
                f"Install {dist} first, then build against it without isolation: pip install "
                f"{package} --no-build-isolation (uv: uv pip install {package} "
                "--no-build-isolation); without isolation the build uses this environment's "
                "tools too: pip install setuptools wheel ninja",
                "manual",
                pip_install(dist),
                manual(f"pip install {package} --no-build-isolation"),
            ),
        )
    torch = _torch(facts) if dist == "torch" else None
    if header == "torch/extension.h" and torch is not None and torch < _EXTENSION_H:
        evidence["torch"] = str(torch)
        return Hit(
            f"the compiler cannot find torch/extension.h (line {line.line}): the header is "
            f"torch 1.0's and this build compiles against torch {torch}",
            evidence=evidence,
            fix=fix(
                "Upgrade torch to a release that has the header, then rebuild: pip install "
                '"torch>=1.0" (the release the extension\'s README names, with its CUDA build)',
                "manual",
                pip_install("torch>=1.0"),
            ),
        )
    if dist == "pybind11":
        return _pybind11(line, header, evidence)
    if dist in _INCLUDE_DIR:
        where = _INCLUDE_DIR[dist]
        return Hit(
            f"the compiler cannot find {header} (line {line.line}): {dist}'s headers are in "
            f"its package directory, never on the compiler's default path, and the build does "
            f"not pass {where}",
            evidence=evidence,
            fix=fix(
                f"Pass {dist}'s include directory to the build: in setup.py, import {dist} and "
                f"give the Extension include_dirs=[{where}] (installed in the interpreter that "
                f"builds: pip install {dist}); for a Makefile or a compiler command, add "
                f"-I\"$(python -c 'import {dist}; print({where})')\"",
                "manual",
                pip_install(dist),
                manual(f"include_dirs=[{where}]  (in setup.py's Extension)"),
            ),
        )
    raise NotStated(
        "the log does not say whether the build is isolated from the installed torch or which "
        "torch it compiles against",
        "torch",
        fix=(
            f"where pip or uv builds it: pip install torch, then pip install {package} "
            "--no-build-isolation; where torch is older than 1.0 (torch/extension.h is 1.0's): "
            'pip install "torch>=1.0"; a CMake build: find_package(Torch) with '
            "-DCMAKE_PREFIX_PATH=$(python -c 'import torch; print(torch.utils.cmake_prefix_path)')"
        ),
    )
