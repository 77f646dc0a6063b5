"""TOR150's reading of pybind11's own conversion errors at a torch type: an extension whose
pybind11 registry is not torch's.

pybind11 names a function's argument or return type by its Python name when the type is
registered in the registry the module shares, and by its C++ name when it is not
(``torch::jit::StrongFunctionPtr``, ``c10d::Backend``). Modules share one registry only when
they were built with the same ``PYBIND11_INTERNALS_ID``: pybind11's internals version (its
release) and the platform ABI id, ``PYBIND11_COMPILER_TYPE``, ``PYBIND11_STDLIB``,
``PYBIND11_BUILD_ABI`` (pybind11 include/pybind11/detail/internals.h and
conduit/pybind11_platform_abi_id.h). An extension built with another pybind11 than torch's
bundled copy (a system or pip pybind11) or with other compiler ABI settings than torch's sees
none of torch's registered types: 'incompatible function arguments' and 'Unable to convert
function return value to a Python type!' (pybind11.h) name a torch C++ type. torch's
cpp_extension builds with torch's own headers and passes torch's values (PyTorch's
``torch._C._PYBIND11_COMPILER_TYPE``, ``_PYBIND11_STDLIB``, ``_PYBIND11_BUILD_ABI``)."""

from __future__ import annotations

from envcheck.facts.node import Facts
from envcheck.rules.base import Hit, LogLine
from envcheck.rules.fixes import fix, manual

SIGNATURE = "pybind11-torch-type-unregistered"

_QUERY = (
    "python -c 'import torch; print(torch.utils.cmake_prefix_path, "
    'getattr(torch._C, "_PYBIND11_COMPILER_TYPE", None), '
    'getattr(torch._C, "_PYBIND11_STDLIB", None), getattr(torch._C, "_PYBIND11_BUILD_ABI", '
    "None), torch._C._GLIBCXX_USE_CXX11_ABI)'"
)


def pybind_type_unregistered(facts: Facts, line: LogLine) -> Hit | None:
    """pybind11's error names a torch C++ type it could not convert: the extension's pybind11
    registry is not torch's. None (the cause ruled out) where the signature names no torch type:
    pybind11's error about the caller's own arguments."""
    cpp_type = line.stated.get("pybind_cpp_type")
    if not cpp_type:
        return None
    return Hit(
        f"pybind11 could not convert {cpp_type}, a type torch registers with its own pybind11, "
        f"in an extension's function (line {line.line}): the extension's pybind11 registry is "
        "not torch's. It was built with another pybind11 than the copy torch bundles (its "
        "internals version) or with other compiler ABI settings than torch's "
        "(PYBIND11_COMPILER_TYPE, PYBIND11_STDLIB, PYBIND11_BUILD_ABI, _GLIBCXX_USE_CXX11_ABI), "
        "so torch's types are unknown to it",
        evidence={"line": line.line, "type": cpp_type},
        fix=fix(
            "Rebuild the extension with torch's own build settings: through "
            "torch.utils.cpp_extension (CppExtension / CUDAExtension, or load()), which compiles "
            "against the pybind11 headers torch bundles (torch/include/pybind11) and passes "
            "torch's PYBIND11_* and _GLIBCXX_USE_CXX11_ABI values; a CMake build must put "
            "torch's include directory before any other pybind11 (uninstall a separate "
            "pybind11, or drop it from the include path) and define the values torch prints, "
            "then rebuild from a clean build directory",
            "manual",
            manual(_QUERY),
            manual("pip uninstall -y pybind11  (a separate pybind11 the build found first)"),
            manual(
                "pip install --no-build-isolation --no-cache-dir --force-reinstall <the "
                "extension's package>  (its setup.py built with torch's cpp_extension)"
            ),
        ),
    )
