"""The ABI family: a compiled extension of any package that fails to load with `undefined
symbol` (TOR150).

The line names the extension (`<site-packages>/<pkg>/_C.so: undefined symbol: _ZN3c10...`):
its top-level directory gives the owning distribution (the matrix's `[[import_name]]` table
where the names differ), the mangled symbol says which library should provide it (c10 / at /
torch -> torch; cu*, cublas, cudnn, nccl -> CUDA; Py* -> the Python C API), and that gives the
cause: built for another torch (version or C++ ABI), another CUDA, another Python. Packages whose
releases the matrix pairs with torch (vLLM, flash-attn, the companions) are judged by their own
rules (VLM101, TOR103, TOR104, TOR120) on the node's facts; for them this rule stays open.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.model import Matrix
from envcheck.matrix.schema import Extension, RemovedSymbol
from envcheck.model.finding import Action, Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.extension_builds import install_text
from envcheck.rules.fixes import fix, manual, pip_install
from envcheck.rules.node.abi_unnamed import (
    linked_program,
    pinned_torch_index,
    unnamed_extension,
    unnamed_file,
)
from envcheck.rules.node.native_crash import crash_reading
from envcheck.rules.node.torch_symbol_span import SpanReading, span_reading
from envcheck.rules.node.wheel_index_torch import (
    index_cause,
    index_fix,
    page_is_other_torch,
    stated_index,
)

_SITE_PATH = lazy(r"/(?:site|dist)-packages/(?P<top>[A-Za-z0-9_.+-]+)")
_TORCH = lazy(r"^_ZN?K?(?:St|N)?K?(?:3c10|2at|5torch|6caffe2)")
_TORCH_ANY = lazy(r"(?:3c10|2at|5torch)")
_CUDA_DRIVER = lazy(r"^cu[A-Z][A-Za-z0-9_]*$")
_CUDA_LIB = lazy(
    r"^(?:cuda[A-Z]|cublas|cusparse|cufft|curand|cusolver|cudnn|nccl|__nvJitLink|nvrtc)"
)
_PYTHON = lazy(r"^_?Py[A-Z_]")


def demangle(symbol: str) -> str | None:
    """The C++ name of an Itanium-mangled symbol (``_ZN3c104cuda9SetDeviceEi`` ->
    ``c10::cuda::SetDevice(int)``); None for a C symbol, one the demangler cannot read, or
    when the demangler (itanium-demangler, pure Python) is not installed."""
    if not symbol.startswith("_Z"):
        return None
    try:
        from itanium_demangler import parse  # type: ignore[import-untyped]
    except ImportError:
        return None
    try:
        node = parse(symbol)
    except Exception:  # a truncated or unusual symbol: show it mangled
        return None
    return str(node) if node is not None else None


def provider(symbol: str) -> str:
    """Which library should define ``symbol``: torch, cuda-driver, cuda, nvcc (the runtime
    entry points nvcc's generated host code calls: `__cudaRegisterFatBinary...`,
    `__cudaPush/PopCallConfiguration`, which each nvcc release pairs with its own libcudart),
    python or other."""
    if _TORCH.match(symbol) or (symbol.startswith("_Z") and _TORCH_ANY.search(symbol[:40])):
        return "torch"
    if symbol.startswith("THP"):  # torch's Python bindings (THPVariableClass), in libtorch_python
        return "torch"
    if symbol.startswith("__cuda"):  # nvcc's registration stubs (__cudaPopCallConfiguration)
        return "nvcc"
    if _CUDA_DRIVER.match(symbol):
        return "cuda-driver"
    if _CUDA_LIB.match(symbol):
        return "cuda"
    if _PYTHON.match(symbol):
        return "python"
    return "other"


# a C++ symbol of a CUDA library's own namespace (cuDNN's `cudnn::`, NCCL's, cuBLASLt's, TensorRT's
# nvinfer1::) or one whose name says CUDA: one of the CUDA libraries may be the copy that lacks it
_CUDA_NAMESPACE = lazy(r"(?:cudnn|cublas|cusparse|cufft|curand|cusolver|nccl|nvinfer|nvrtc|cuda)")


def cuda_owned(symbol: str) -> bool:
    """Whether a CUDA library (or the driver, or the runtime nvcc pairs) may be the one that
    should define ``symbol``: only then can a CUDA library's copy on the loader's path (CUD104)
    or an nvidia-* wheel off torch's pin (CUD101) be why it does not resolve. torch's, the
    Python C API's and any other library's symbol rule both out."""
    source = provider(symbol)
    if source in ("cuda", "cuda-driver", "nvcc"):
        return True
    if source != "other":
        return False
    return bool(_CUDA_NAMESPACE.search(symbol[:60].lower()))


def owner(path: str, matrix: Matrix) -> tuple[str, str | None] | None:
    """(top-level import name, distribution) of an extension from its path under
    site-packages; None for a path elsewhere. The distribution is None for a top-level
    extension file named as a package's compiled part (``foo_C.cpython-310-...so``) that no
    table names: its name is not its distribution's, and a made-up name must not reach a
    command."""
    found = _SITE_PATH.search(path)
    if found is None:
        return None
    top = found.group("top")
    if top.endswith(".egg"):  # setuptools' egg directory: <name>-<version>-py3.X-<platform>.egg
        top = top.split("-", 1)[0]
    single = top.endswith(".so") or ".cpython-" in top or ".abi3" in top
    if single:  # a top-level extension file
        top = top.split(".", 1)[0]
    return top, distribution(top, matrix, single_file=single)


def distribution(top: str, matrix: Matrix, *, single_file: bool) -> str | None:
    """The distribution that installs the top-level module ``top``: the matrix's
    `[[import_name]]` entry (from wheels' top_level.txt / RECORD), else the compiled-ops
    package that lists it (`[[extension]]` modules and ops: apex's amp_C, apex_C), else, for a
    package directory or a plainly named module file (ujson), its own name (the distribution's
    name in most wheels); None for a top-level file named as a compiled part of a larger
    package (`*_C`, `*_cuda`, `*_ext`, ...) that no table names."""
    entry = matrix.import_name(top)
    if entry is not None and entry.distribution:
        return canonicalize_name(entry.distribution)
    extension = matrix.extension(top)
    if extension is not None:
        return canonicalize_name(extension.package)
    if single_file and _COMPILED_PART.search(top):
        return None
    if top.startswith("_"):  # a private module (`_torch_sox`): no distribution is named so
        return None  # (PEP 508 names begin with a letter or digit); only a table or RECORD says
    return canonicalize_name(top)


# a top-level extension file named as the compiled part of a larger package (apex_C, amp_C,
# grouped_gemm_cuda, fused_dense_lib, quant_cuda_kernels), not as a distribution of its own
# (ujson.cpython-312-...so is ujson's): which distribution installed it only its RECORD says
_COMPILED_PART = lazy(
    r"(?:_C|_cuda|_cu|_cpp|_ext|_ops|_kernels?|_backend|_lib|_impl|_native|_cxx|_core)$"
)


def _source_only(extension: Extension) -> bool:
    """Whether a compiled-ops package is installed only from its repository (its documented
    build clones it or installs `git+https://...`, and it has no wheel index): a reinstall by
    its name from the package index gets nothing, or another project (apex)."""
    return (
        extension.wheel_index is None and extension.build is not None and "git" in extension.build
    )


# the variable of the setup.py files whose CachedWheelsCommand downloads a release wheel
# unless it is set (flash-attn's, causal-conv1d's, mamba-ssm's `*_FORCE_BUILD=TRUE`); not a
# variable that only switches CUDA ops on (FORCE_CUDA=1)
_ENV_ASSIGNMENT = lazy(r"^[A-Z][A-Z0-9_]*_FORCE_BUILD=TRUE ")


def _forced_build(extension: Extension) -> bool:
    """Whether the package's documented build sets the variable that makes its setup.py compile
    (causal-conv1d's CAUSAL_CONV1D_FORCE_BUILD=TRUE): without it, setup.py installs a prebuilt
    release wheel, so a plain reinstall (even --no-binary) is not the rebuild."""
    return extension.build is not None and _ENV_ASSIGNMENT.match(extension.build) is not None


def paired_with_torch(matrix: Matrix) -> set[str]:
    """Distributions whose releases the matrix pairs with torch releases, each judged by its
    own rule on the node's facts."""
    names: set[str] = {canonicalize_name(c.package) for c in matrix.companions}
    if matrix.vllm_releases:
        names.add("vllm")
    if matrix.flash_attn_releases:
        names.add("flash-attn")
    return names


@rule("TOR150", "extension-undefined-symbol", Severity.ERROR)
def extension_undefined_symbol(facts: Facts) -> Iterable[Hit]:
    """The compiled extension of a package was built against another torch, CUDA or Python

    ## What it checks
    A log line `<site-packages>/<pkg>/<ext>.so: undefined symbol: <symbol>` of any package: the
    distribution that owns the extension (from the path), the symbol demangled, and the library
    expected to provide it (c10/at::/torch:: -> torch, `cu*`/cuBLAS/cuDNN/NCCL -> CUDA, `Py*`
    -> Python). vLLM, flash-attn and the torch companions are left to their own rules, which
    compare versions on the node. macOS's `Symbol not found` (dlopen; macOS 12's `Symbol not
    found: (__Z...)`, `symbol not found in flat namespace '__Z...'`, the extension on dyld4's
    `Referenced from: <UUID> /path` line) and Windows' `DLL load failed ... The specified
    procedure could not be found` (Python 3.7's `DLL load failed:` too) are read the same way;
    a C++ program glibc names in `<program>: symbol lookup error: <program>: undefined symbol`
    is one linked against another libtorch (release or C++ ABI), and a line that names no file
    at all still establishes an extension built against another torch when the symbol is
    torch's (abi_unnamed.py); an extension
    outside site-packages (built in place) gets the rebuild; torch's own library or a CUDA
    wheel's that misses a CUDA runtime symbol names the mixed CUDA copies; an NCCL symbol
    (`ncclCommInitRankConfig`) names the NCCL that loads as older than the build's; a symbol a library
    release removed (the matrix's `[[removed_symbol]]`: `iJIT_NotifyEvent`, gone from MKL
    2024.1) names the last release that has it. A wheel index page of the package's own that
    the log installed it from (PyG's `data.pyg.org/whl/torch-1.9.0+cu111.html`, OpenMMLab's,
    detectron2's, DGL's) names the torch its wheels were built for: where that is not the
    installed torch, the fix names both ways out, that page's torch or the installed torch's
    page (wheel_index_torch.py). An extension that links torch 1.12's `libtorch_cuda_cu.so` is
    named by the traceback's innermost frame outside torch or by the pip line that installed
    it, and gets its wheel for the installed torch before the source-tree rebuild. An
    extension another library imports whenever its distribution is installed (the matrix's
    `imported_when_installed`: transformer_engine under accelerate) also gets its removal,
    `pip uninstall -y transformer-engine`, for a job that does not use it. Only a log states an undefined symbol. A
    native crash (`Segmentation fault`, glibc's `double free or corruption`) of a command that
    imports a torch extension beside torch (`python -c "import torchsort, torch; ..."`) is
    read as this cause too (native_crash.py): its fix, the rebuild without pip's cache.
    A torch symbol is looked up in the table of torch's exported symbols by release
    (matrices/generated/torch_symbols.tsv, read from the release wheels' dynamic symbol tables
    by scripts/gen_torch_symbols.py): the releases that export it are the ones the extension
    was built for ("2.2.2 .. 2.12.1"), the installed torch past them or before them says which
    side, and the fix pins the nearest release that has it (with the torchvision / torchaudio
    paired with it); a symbol every release exports in the other C++ ABI's spelling names the
    `_GLIBCXX_USE_CXX11_ABI` mismatch instead, and the installed torch inside the span rules
    a torch release out (torch_symbol_span.py).
    pybind11's own `incompatible function arguments` / `Unable to convert function return
    value to a Python type!` at a torch C++ type (`torch::jit::StrongFunctionPtr`,
    `c10d::Backend`) is an extension whose pybind11 registry is not torch's (another pybind11
    release or compiler ABI than torch's, PYBIND11_INTERNALS_ID; pybind_registry.py).

    ## Why it matters
    An extension compiled against one torch (or C++ ABI, CUDA major, Python) links symbols
    that another does not export: the import fails, and reinstalling the same prebuilt wheel
    does not help.

    ## Example
    `.../site-packages/mmcv/_ext.cpython-310-x86_64-linux-gnu.so: undefined symbol:
    _ZN3c104cuda9SetDeviceEi` (`c10::cuda::SetDevice(int)`): mmcv was built for another torch.

    ## Fix
    Install the package's build for the installed torch (its wheel index for that torch and
    CUDA), or rebuild it against the installed torch: `pip install --no-build-isolation
    --no-cache-dir --force-reinstall <pkg>`. A symbol of the pre-C++11 std::string (`Ss`) under
    a C++11-ABI torch (conda-forge's, a container's, PyPI's from 2.7 on) is not fixed by another
    wheel of the package: rebuild it, or install PyPI's torch of the same release
    (`matrices/packages/cxx_abi.toml`).

    ## References
    - bminor/glibc elf/dl-lookup.c ("undefined symbol: %s%s%s")
    - torch's release wheels, torch/lib/lib{c10,torch_cpu,torch_cuda,torch_python}.so .dynsym
      (scripts/gen_torch_symbols.py)
    - https://github.com/ai-dynamo/nixl/issues/1798
    - https://github.com/Dao-AILab/flash-attention/issues/931
    - pybind/pybind11 include/pybind11/detail/internals.h (PYBIND11_INTERNALS_ID)
    - https://github.com/llvm/torch-mlir/issues/138
    """
    raise Skip("only a log line states an undefined symbol", "log.abi")


def _torch_text(facts: Facts) -> str:
    try:
        torch = facts.known_version("torch")
    except Skip:
        return "the installed torch"
    if torch is None:
        return "the installed torch"
    cuda = None
    with contextlib.suppress(Skip):  # a release stated without its build
        cuda = facts.torch_cuda()
    return f"torch {torch}" + (f" (CUDA {cuda})" if cuda else "")


@from_log("TOR150")
def extension_undefined_symbol_in_log(facts: Facts, line: LogLine) -> Hit | None:
    from envcheck.rules.node.pybind_registry import (
        SIGNATURE as PYBIND_SIGNATURE,
    )
    from envcheck.rules.node.pybind_registry import (
        pybind_type_unregistered,
    )
    from envcheck.rules.signals import SIGNAL_SIGNATURES

    if line.signature in SIGNAL_SIGNATURES:  # a native crash: native_crash.py decides
        return crash_reading(facts, line, "TOR150")
    if line.signature == PYBIND_SIGNATURE:  # pybind11's conversion error at a torch type
        return pybind_type_unregistered(facts, line)
    path = line.stated.get("library_path")
    symbol = line.stated.get("undefined_symbol")
    windows = _WINDOWS.search(line.text)
    if windows is not None:
        return _windows_entry_point(facts, line, windows.group(1))
    old_library = line.stated.get("torch_library")
    if old_library is not None:
        return _old_torch_library(facts, line, old_library)
    program = line.stated.get("linked_program")
    if path is None and program and symbol is not None and provider(symbol) == "torch":
        # `<program>: symbol lookup error: <program>: undefined symbol: _ZN2at...`: a C++
        # program linked against another libtorch (abi_unnamed.py)
        return linked_program(facts, line, program, symbol, demangle(symbol))
    if path is None and symbol is None and (stated := _stated_cuda_mismatch(facts, line)):
        return stated
    if path is None and symbol is not None and provider(symbol) != "other":
        bare = _BARE_EXTENSION.search(line.text)  # `foo.cpython-310-x86_64-linux-gnu.so: ...`
        path = bare.group("file") if bare is not None else None
    if path is None and symbol is not None and provider(symbol) == "torch" and unnamed_file(line):
        # no file on the line (`Error loading extension: undefined symbol: _ZN3c10...`): a torch
        # symbol still establishes an extension built against another torch
        return unnamed_extension(facts, line, symbol, demangle(symbol))
    if path is None or symbol is None:
        raise NotStated(
            f"line {line.line} does not name the extension's path and the symbol",
            "libraries.unresolved",
        )
    removed = facts.matrix.removed_symbol(symbol)
    if removed is not None:
        return _removed_symbol(facts, line, path, removed)
    owned = owner(path, facts.matrix)
    if owned is None and _BARE_NAME.match(path):  # the extension module's bare file name
        top = path.split(".", 1)[0]
        owned = top, distribution(top, facts.matrix, single_file=True)
    if owned is None and (relative := _RELATIVE_PACKAGE.match(path)) is not None:
        # a path cut to `<package>/<ext>.so` (a pasted excerpt): a package the matrix knows
        top = relative.group("top")
        if facts.matrix.import_name(top) is not None or facts.matrix.extension(top) is not None:
            owned = top, distribution(top, facts.matrix, single_file=False)
        elif (installed := _installed_as(facts, top)) is not None:
            # a package the node states installed (`lmcache/c_ops...so` with lmcache in the
            # spec, LMCache#1294): its distribution, not a source tree of that name
            owned = top, installed
    if owned is None:
        return _source_build(facts, line, path, symbol)
    top, named = owned
    if named is None:
        return _unnamed_distribution(facts, line, path, symbol, top)
    dist = named
    if (
        dist in ("torch", "nvidia")
        and not symbol.startswith("nccl")  # NCCL against torch's pin: CUD101 / the nccl rules
        and (provider(symbol) in ("cuda", "cuda-driver") or _VERSIONED.search(line.text))
    ):
        return _mixed_cuda(facts, line, path, symbol)
    if dist == "torch" and provider(symbol) == "torch":
        return _mixed_torch(facts, line, path, symbol)
    if dist in ("torch", "nvidia") and provider(symbol) != "python":
        raise NotStated(
            f"{path} is torch's own library or one of its CUDA wheels: CUD104 and CUD101 judge "
            "which copies load and whether they match torch's pins on the node",
            "libraries.cuda_libraries",
        )
    if dist in paired_with_torch(facts.matrix):
        raise NotStated(
            f"{dist}'s own rule compares its release with the node's torch", f"packages.{dist}"
        )
    readable = demangle(symbol)
    shown = f"{symbol} ({readable})" if readable else symbol
    source = provider(symbol)
    version = facts.known_version(dist)
    pin = f"{dist}=={version}" if version is not None else dist
    rebuild = pip_install(
        pin,
        flags=("--no-build-isolation", "--no-cache-dir", "--force-reinstall", "--no-binary", dist),
    )
    have = f"{dist} {version}" if version is not None else dist
    cxx11 = "__cxx11" in symbol or "B5cxx11" in symbol
    old_abi = not cxx11 and _OLD_ABI_STRING.search(symbol) is not None
    if source == "torch":
        torch = _torch_text(facts)
        abi = (
            " with the other C++ ABI (the symbol uses std::__cxx11: _GLIBCXX_USE_CXX11_ABI "
            "differs between the extension and torch)"
            if cxx11
            else (
                " with the other C++ ABI (the symbol uses the pre-C++11 std::string, `Ss`: the "
                "extension was built with _GLIBCXX_USE_CXX11_ABI=0, torch with 1)"
                if old_abi
                else ""
            )
        )
        cause = f"{have}'s extension was built against another torch than {torch}{abi}"
        summary = (
            f"Install the {dist} build made for {torch} (its wheel for that torch and CUDA), or "
            f"rebuild it against the installed torch: pip install {pin} --no-build-isolation "
            f"--no-cache-dir --force-reinstall "
            f"(with --no-binary {dist} to compile it here when the index only has the mismatched "
            "wheel)"
        )
        # a source checkout reuses its stale objects unless its build/ folder goes first
        # (FRNN#18, torch-batch-svd#7, pytorch#2172: rm the build folder, then reinstall)
        summary += "; from a source checkout, rm -rf build/ first (a stale build is reused)"
        actions = [rebuild, manual("rm -rf build/  (in a source checkout, before reinstalling)")]
        if symbol.startswith("THP"):  # resolved against the torch already loaded in the process
            summary = f"import torch before importing {top} (it resolves {symbol} against " + (
                "the torch already loaded); if that does not help: "
                + summary[0].lower()
                + summary[1:]
            )
            actions = [manual(f"import torch  (before import {top})"), *actions]
        if cxx11 or old_abi:
            summary += (
                "; a prebuilt wheel must carry torch's C++ ABI (python -c 'import torch; "
                "print(torch._C._GLIBCXX_USE_CXX11_ABI)': True takes the cxx11abiTRUE wheel, "
                "False the cxx11abiFALSE one)"
            )
            actions.append(
                manual("python -c 'import torch; print(torch._C._GLIBCXX_USE_CXX11_ABI)'")
            )
    elif source == "cuda-driver":
        cause = (
            f"{have}'s extension calls a CUDA driver function the installed NVIDIA driver does "
            "not have: the driver is older than the CUDA it was built with"
        )
        summary = (
            "Upgrade the NVIDIA driver to one that supports the CUDA the package was built for "
            f"(`nvidia-smi` shows the newest CUDA it supports), or install a {dist} build for "
            "an older CUDA"
        )
        actions = [manual("nvidia-smi  (the driver's newest CUDA, top right)")]
    elif source == "nvcc":
        torch = _torch_text(facts)
        cause = (
            f"{have}'s extension was compiled by an nvcc of another CUDA release than the CUDA "
            f"runtime that loads it ({torch}'s): nvcc's generated code calls {symbol}, which "
            "that runtime does not have"
        )
        summary = (
            f"Rebuild {dist} with the nvcc of torch's CUDA (python -c 'import torch; "
            "print(torch.version.cuda)'): export CUDA_HOME=/usr/local/cuda-<that version> and "
            f"PATH=$CUDA_HOME/bin:$PATH, then pip install {pin} --no-build-isolation "
            "--no-cache-dir --force-reinstall; or install the torch build for the CUDA of the "
            "nvcc that compiled it (nvcc --version)"
        )
        actions = [
            manual(
                "export CUDA_HOME=/usr/local/cuda-<torch.version.cuda> PATH=$CUDA_HOME/bin:$PATH"
            ),
            rebuild,
            manual("nvcc --version; python -c 'import torch; print(torch.version.cuda)'  (equal?)"),
        ]
    elif source == "cuda" and symbol.startswith("nccl"):
        # NCCL's API (ncclCommInitRankConfig, ncclCommRegister, ...) grows by release: the
        # extension was built against a newer NCCL than the libnccl.so.2 that loads
        wheels = facts.matrix.soname_wheels("libnccl")
        wheel = next((w for w in wheels if w.endswith("-cu12")), wheels[0] if wheels else None)
        cause = (
            f"{have}'s extension was built against a newer NCCL than the libnccl.so.2 that "
            f"loads ({symbol} is NCCL's; the nvidia-nccl wheel torch pins, or a system "
            "libnccl2 found first on LD_LIBRARY_PATH, is older)"
        )
        summary = (
            "Load an NCCL at least as new as the one it was built with: "
            + (f"pip install -U {wheel} (or the release torch pins), " if wheel else "")
            + "and drop any system NCCL directory from LD_LIBRARY_PATH; or rebuild "
            f"{dist} against the installed NCCL: pip install {pin} --no-build-isolation "
            "--no-cache-dir --force-reinstall"
        )
        actions = [
            *([pip_install(wheel, flags=("-U",))] if wheel else []),
            manual("python -c 'import torch; print(torch.cuda.nccl.version())'  (the NCCL loaded)"),
            manual("echo $LD_LIBRARY_PATH  (no system NCCL before the wheel's)"),
            rebuild,
        ]
    elif source == "cuda":
        cause = (
            f"{have}'s extension was built against another CUDA release than the CUDA "
            "libraries that load (another CUDA major, or the toolkit's libraries on "
            "LD_LIBRARY_PATH before the wheels')"
        )
        summary = (
            f"Install the {dist} build for torch's CUDA ({_torch_text(facts)}), and drop CUDA "
            f"toolkit directories from LD_LIBRARY_PATH; or rebuild: pip install "
            f"{pin} --no-build-isolation --no-cache-dir --force-reinstall "
            f"(with --no-binary {dist} to compile it here when the index only has the mismatched "
            "wheel)"
        )
        actions = [
            rebuild,
            manual("echo $LD_LIBRARY_PATH  (no /usr/local/cuda*/lib64 before the wheels)"),
        ]
    elif source == "python":
        built = _CPYTHON_TAG.search(path)
        for_python = f" (its file is tagged for Python 3.{built.group(1)})" if built else ""
        cause = (
            f"{have}'s extension was built for another Python than the one importing it"
            f"{for_python}: a copy installed by another interpreter, or a release older than "
            "this Python's C API"
        )
        # the installed release's wheel for this Python when the version is known, else the
        # newest release (built for this Python's C API)
        again = pin if version is not None else dist
        upgrade = () if version is not None else ("--upgrade",)
        summary = (
            f"Reinstall {dist} with this interpreter, in a release built for this Python: "
            f"python -m pip install {' '.join((*upgrade, '--force-reinstall', '--no-cache-dir'))} "
            f"{again} (a source build compiles it against this Python); or run {dist} with the "
            "Python it was built for"
        )
        actions = [
            manual(f"python -m pip uninstall -y {dist}  (with the interpreter that fails)"),
            pip_install(again, flags=(*upgrade, "--force-reinstall", "--no-cache-dir")),
            manual("python -c 'import sys; print(sys.version)'  (the Python importing it)"),
        ]
    else:
        cause = (
            f"{have}'s extension was built against another version of a library it links "
            "than the one that loads"
        )
        summary = (
            f"Reinstall {dist} so it is built against the installed libraries: pip install "
            f"{pin} --no-build-isolation --no-cache-dir --force-reinstall "
            f"(with --no-binary {dist} to compile it here when the index only has the mismatched "
            "wheel)"
        )
        actions = [rebuild]
    extension = facts.matrix.extension(dist) or facts.matrix.extension(top)
    if extension is not None and source in ("torch", "cuda"):
        # a compiled-ops package with its own wheel index / build (matrices/packages/extensions.toml)
        text, ext_actions = install_text(facts, extension)
        summary = f"Install the {extension.package} build made for {_torch_text(facts)}: {text}"
        if _source_only(extension) or _forced_build(extension):
            # the index has no build of it (apex's name is another project's), or its setup.py
            # downloads a prebuilt wheel unless the build's variable is set
            actions = [*ext_actions, *(a for a in actions if a is not rebuild)]
        else:
            summary += (
                f"; or reinstall it against the installed torch: pip install {pin} "
                "--no-build-isolation --no-cache-dir --force-reinstall"
            )
            actions = [*ext_actions, *actions]
    known = facts.matrix.import_name(top)
    if (
        known is not None
        and known.note
        and not (extension is not None and source in ("torch", "cuda"))
    ):  # which distribution ships the extension, where
        note = _wheel_index(known.note, facts)
        summary += f". {note.rstrip('.')}"
        index = _FIND_LINKS.search(note)
        if index is not None:  # the package's own wheel index, as its README gives it
            actions = [manual(index.group(0).rstrip(".,;")), *actions]
    page = stated_index(line) if source == "torch" else None
    if page is not None and not page_is_other_torch(facts, page):
        page = None  # the page's torch is the installed one: the symbol says something else
    if page is not None:
        # the log installed it from the wheel index page of another torch (PyG's
        # torch-1.9.0+cu111.html under Colab's 1.10: pytorch_geometric#3484): that page's
        # torch, or the installed torch's page
        cause += index_cause(dist, page)
        lead, index_actions = index_fix(facts, dist, page)
        summary = f"{lead}. {summary}"
        actions = [*index_actions, *actions]
    reading = span_reading(facts, symbol, readable) if source == "torch" else None
    if reading is not None:  # the releases of torch that export the symbol (the wheels' table)
        cause += reading.cause
    built_for = _built_for_torch(version) if source == "torch" else None
    if source == "torch" and page is None and (built_for or not _release_ruled_out(reading)):
        # the other way out threads take: the torch it was built for back (the version's local
        # tag names it whatever the symbols table says of the installed torch)
        spanned = reading.pin if reading is not None and not built_for else ()
        torch_pin = (
            f"torch=={built_for}.*"
            if built_for
            else " ".join(spanned) or "torch==<the release it was built for>"
        )
        torch_index = pinned_torch_index(facts, spanned)
        summary += (
            f"; or install the torch {have} was built for: pip install {torch_pin}"
            + (f" --index-url {torch_index}" if torch_index else "")
            + (f" (its version's local tag names torch {built_for})" if built_for else "")
            + (" (a torch release that exports the symbol)" if spanned else "")
            + (" (with the torchvision / torchaudio of that release)" if len(spanned) < 2 else "")
        )
        actions.append(
            pip_install(*spanned, index_url=torch_index)
            if spanned
            else manual(f"pip install {torch_pin}  (the torch {have} was built for)")
        )
        if _CONDA_ENV.search(path):  # a conda environment: its own spelling of the same change
            built_for = built_for or _conda_release(spanned)
            conda_pin = f"pytorch={built_for}" if built_for else "pytorch=<that release>"
            summary += f" (in this conda environment: conda install {conda_pin} -c pytorch)"
            actions.append(manual(f"conda install {conda_pin} -c pytorch  (conda's spelling)"))
    egg = _EGG.search(path)
    if egg is not None and source in ("torch", "cuda", "nvcc", "other"):
        # `python setup.py install` put it there from a source checkout: that checkout is what
        # rebuilds it (the index may not have the package at all)
        summary = (
            f"{dist} was installed from a source checkout by python setup.py install (its "
            f"{egg.group(0).strip('/')} folder): in that checkout rm -rf build/, then python "
            "setup.py install again (or pip install --no-build-isolation .) against the "
            f"installed torch. Otherwise: {summary[0].lower()}{summary[1:]}"
        )
        actions = [
            manual("rm -rf build/ && python setup.py install  (in the package's source checkout)"),
            manual("pip install --no-build-isolation --no-cache-dir .  (same checkout)"),
            *actions,
        ]
    if source == "torch" and old_abi:  # a pre-C++11-ABI build against a C++11-ABI torch
        first, abi_actions = old_abi_first(facts, line, dist)
        summary = f"{first}. Otherwise: {summary[0].lower()}{summary[1:]}"
        actions = [*abi_actions, *actions]
    named_entry = facts.matrix.import_name(top)
    if named_entry is not None and named_entry.imported_when_installed:
        # TaskMatrix#116: transformers' import reached transformer_engine_extensions through
        # accelerate only because transformer-engine was installed; uninstalling it fixed it
        summary += (
            f"; or, when the job does not use {dist} itself, remove it "
            f"(pip uninstall -y {dist}): {named_entry.imported_when_installed} import it "
            "whenever it is installed"
        )
        actions.append(manual(f"pip uninstall -y {dist}  (when the job does not use it)"))
    return Hit(
        f"{path} (package {dist}, line {line.line}) cannot resolve {shown}, which {source_text(source)} "
        f"should provide: {cause}",
        evidence={
            "line": line.line,
            "library": path,
            "distribution": dist,
            "module": top,
            "symbol": symbol,
            "demangled": readable,
            "provider": source,
        },
        fix=fix(summary, "manual", *actions),
    )


def _unnamed_distribution(facts: Facts, line: LogLine, path: str, symbol: str, top: str) -> Hit:
    """A top-level extension module (``<site-packages>/foo_C.cpython-310-...so``) no table maps
    to its distribution: the cause is read from the symbol as for any package, and the fix
    first asks the environment which distribution installed the module (its RECORD, through
    importlib.metadata) instead of guessing a name for the install command."""
    readable = demangle(symbol)
    shown = f"{symbol} ({readable})" if readable else symbol
    source = provider(symbol)
    torch = _torch_text(facts)
    against = {
        "torch": f"another torch than {torch}",
        "cuda": "another CUDA release than the CUDA libraries that load",
        "cuda-driver": "a newer CUDA than the installed NVIDIA driver supports",
        "nvcc": f"an nvcc of another CUDA release than {torch}'s runtime",
        "python": "another Python than the one importing it"
        + (
            f" (its file is tagged for Python 3.{t.group(1)})"
            if (t := _CPYTHON_TAG.search(path))
            else ""
        ),
        "other": "another version of a library it links than the one that loads",
    }[source]
    which = (
        f'python -c "from importlib.metadata import packages_distributions as p; '
        f"print(p().get('{top}'))\"  (the distribution that installed {top})"
    )
    dist = f"<the distribution that installed {top}>"
    again = (
        f"python -m pip install --force-reinstall --no-cache-dir {dist}"
        if source == "python"
        else f"pip install --no-build-isolation --no-cache-dir --force-reinstall {dist}"
    )
    summary = (
        f"Find the distribution that installed {top} ({which.split('  (', maxsplit=1)[0]}; its "
        f"dist-info RECORD lists {top}'s file), then reinstall it built against the installed "
        + ("Python" if source == "python" else "torch")
        + f": {again}"
        + ("; from a source checkout, rm -rf build/ first (a stale build is reused)")
    )
    actions: list[Action] = [manual(which), manual(again)]
    reading = span_reading(facts, symbol, readable) if source == "torch" else None
    spanned = reading.pin if reading is not None else ()
    if source == "torch" and not _release_ruled_out(reading):
        torch_pin = " ".join(spanned) or "torch==<that release>"
        summary += f"; or install the torch it was built for: pip install {torch_pin}"
        actions.append(
            pip_install(*spanned)
            if spanned
            else manual("pip install torch==<the release it was built for>")
        )
    return Hit(
        f"{path} (module {top}, line {line.line}) cannot resolve {shown}, which "
        f"{source_text(source)} should provide: the extension was built against {against} "
        f"(no table of the matrix names the distribution that installs {top})"
        + (reading.cause if reading is not None else ""),
        evidence={
            "line": line.line,
            "library": path,
            "distribution": None,
            "module": top,
            "symbol": symbol,
            "demangled": readable,
            "provider": source,
        },
        fix=fix(summary, "manual", *actions),
    )


# a wheel's local version naming the torch it was built for: PyG's `+pt28cu128`, `+pt113cu117`
# (torch 2.8, 1.13), and `torch2.1` spellings (flash-attn's and others' wheel tags)
_PT_TAG = lazy(r"(?:^|[^a-z])pt([0-9])([0-9]{1,2})(?:cu[0-9]+|cpu)?(?:$|[^0-9])")
_TORCH_TAG = lazy(r"torch([0-9]+)\.([0-9]+)")


def _release_ruled_out(reading: SpanReading | None) -> bool:
    """Whether the symbols table rules a torch release out as the difference: the installed
    torch exports the symbol too, or every release exports it (in the other C++ ABI's
    spelling, a torch pin of the same ABI only moves the failure)."""
    if reading is None:
        return False
    return reading.side in ("inside", "abi", "every")


def _conda_release(pins: tuple[str, ...]) -> str | None:
    """The release of a ``torch==X`` pin, as conda's ``pytorch=X`` spells it."""
    return next((p.split("==", 1)[1] for p in pins if p.startswith("torch==")), None)


def _built_for_torch(version: Version | None) -> str | None:
    """The torch release (major.minor) a package's version names in its local tag: PyG's
    wheel index versions (`torch_cluster 1.6.3+pt28cu128`: torch 2.8); None otherwise."""
    if version is None or not version.local:
        return None
    local = version.local.replace("_", ".")
    found = _PT_TAG.search(local)
    if found is not None:
        return f"{found.group(1)}.{int(found.group(2))}"
    named = _TORCH_TAG.search(local)
    return f"{named.group(1)}.{named.group(2)}" if named is not None else None


_LOCAL_CUDA = lazy(r"\+(?P<variant>cu[0-9]{2,3})\b")


def old_abi_first(
    facts: Facts, line: LogLine, dist: str, pin: str | None = None
) -> tuple[str, list[Action]]:
    """The fix when the symbol names the pre-C++11 std::string (``Ss``): the extension was built
    with _GLIBCXX_USE_CXX11_ABI=0, as every prebuilt wheel made for PyPI's torch up to the
    matrix's last pre-C++11 release is, and the torch that loads is a C++11-ABI build
    (conda-forge's pytorch, a container's or a source build, PyPI's from 2.7 on). Another wheel of
    the same package has the same ABI: the extension is built here against this torch, or torch
    becomes PyPI's build of the same release (the pytorch channel's under conda). ``pin``: the
    requirement to build (``torchvision==0.13.0``, the release paired with torch)."""
    target = pin or dist
    rebuild = (
        f"build {dist} here against this torch (pip install --no-build-isolation --no-cache-dir "
        f"--force-reinstall --no-binary {dist} {target})"
    )
    torch_text = facts.known_version("torch") or line.stated.get("torch_version")
    last_major = facts.matrix.constant("torch.pre_cxx11_abi_last.major")
    last_minor = facts.matrix.constant("torch.pre_cxx11_abi_last.minor")
    torch = None
    with contextlib.suppress(InvalidVersion, TypeError):
        torch = Version(str(torch_text)) if torch_text else None
    official = (
        "PyPI's / download.pytorch.org's torch of the same release (pre-C++11 ABI up to 2.6; "
        "conda: conda install pytorch -c pytorch, not conda-forge's)"
    )
    actions: list[Action] = [
        pip_install(
            target,
            flags=(
                "--no-build-isolation",
                "--no-cache-dir",
                "--force-reinstall",
                "--no-binary",
                dist,
            ),
        )
    ]
    if (
        torch is not None
        and last_major is not None
        and last_minor is not None
        and (torch.major, torch.minor) <= (int(last_major), int(last_minor))
    ):
        variant = _LOCAL_CUDA.search(f"{torch_text} {line.stated.get('torch_version', '')}")
        url = facts.matrix.torch_index_url(variant.group("variant")) if variant else None
        pin = f"torch=={torch.public}"
        official = (
            f"PyPI's build of the same release: pip install {pin}"
            + (f" --index-url {url}" if url else "")
            + " (conda: conda install pytorch -c pytorch, not conda-forge's)"
        )
        actions.append(manual(f"pip install {pin}" + (f" --index-url {url}" if url else "")))
    newer = (
        torch is not None
        and last_major is not None
        and last_minor is not None
        and (torch.major, torch.minor) > (int(last_major), int(last_minor))
    )
    loads = (
        f"the torch that loads it, {torch}, is a C++11-ABI build (PyPI's torch wheels use it from "
        f"{int(last_major or 0)}.{int(last_minor or 0) + 1} on)"
        if newer
        else (
            "where the torch that loads it is a C++11-ABI build (conda-forge's pytorch, a "
            "container's or a source build, PyPI's from 2.7 on; python -c 'import torch; "
            "print(torch._C._GLIBCXX_USE_CXX11_ABI)' prints True)"
        )
    )
    if newer:
        official = "an older torch (its PyPI wheels up to 2.6 are pre-C++11 ABI)"
    return (
        f"{dist}'s extension uses the pre-C++11 ABI (std::string as `Ss`), as the prebuilt wheels "
        f"made for PyPI's torch do; {loads}, another wheel of {dist} has the same ABI: {rebuild}, "
        f"or install {official}",
        actions,
    )


_BUILT_CUDA = lazy(r"and (?P<module>[A-Za-z0-9_]+) has CUDA version (?P<cuda>[0-9]+\.[0-9]+)")


def _stated_cuda_mismatch(facts: Facts, line: LogLine) -> Hit | None:
    """A package's own import check that compares the CUDA it was built with against torch's
    (PyG's torch_scatter / torch_sparse: 'PyTorch has CUDA version 11.8 and torch_scatter has
    CUDA version 12.1'), or finds no library for the installed torch release (DGL's graphbolt
    named for torch.__version__): its build for the installed torch and CUDA, from its wheel
    index."""
    module = line.stated.get("ext_module")
    entry = facts.matrix.extension(module) if module else None
    if entry is None:
        return None
    built = _BUILT_CUDA.search(line.text)
    torch_cuda = line.stated.get("torch_cuda")
    versions = (
        f" (torch's CUDA {torch_cuda}, {entry.package}'s {built.group('cuda')})"
        if torch_cuda and built
        else ""
    )
    text, actions = install_text(facts, entry, cuda_stated=torch_cuda)
    torch = line.stated.get("torch_version")
    what = (
        f"has no library for the installed torch {torch}: it was built for other torch releases"
        if built is None and torch
        else f"was built for another CUDA than the installed torch{versions}"
    )
    return Hit(
        f"{entry.package} {what} (line {line.line}): a wheel for another torch or CUDA (torch "
        "was upgraded or reinstalled after it, or it came from another find-links index)",
        evidence={"line": line.line, "package": entry.package, "torch_cuda": torch_cuda},
        fix=fix(
            f"Reinstall {entry.package} for the installed torch and its CUDA: {text}",
            "manual",
            *actions,
        ),
    )


# a top-level extension module named by its file alone (no directory): a public module name,
# not a shared library (lib*.so) nor a package's private submodule (_C.so)
_BARE_EXTENSION = lazy(
    r"(?:^|[\s'\"(])(?P<file>[A-Za-z][A-Za-z0-9_]*\.(?:cpython-[0-9a-z_-]+|abi3)\.so)"
    r": undefined symbol"
)
# a path inside a conda environment (the spelling its users fix with: conda install)
_CONDA_ENV = lazy(r"/(?:(?:ana|mini)conda[0-9]*|miniforge[0-9]*|mambaforge|\.conda)/")
# setuptools' egg directory: `python setup.py install` from a source checkout
_EGG = lazy(r"/[A-Za-z0-9_.+-]+\.egg/")
_ELIDED = lazy(r"^\(?(?:\.\.\.|…)\)?/*")
_RELATIVE_PACKAGE = lazy(r"^/?(?P<top>[A-Za-z_][A-Za-z0-9_]*)/[^/]+\.so$")
_BARE_NAME = lazy(r"^[A-Za-z][A-Za-z0-9_]*\.(?:cpython-[0-9a-z_-]+|abi3)\.so$")
# the pre-C++11 std::string in a mangled name (`Ss`, std::basic_string<char> of the old ABI);
# the C++11 ABI's is NSt7__cxx1112basic_string... (Itanium C++ ABI, libstdc++'s dual ABI)
_OLD_ABI_STRING = lazy(r"(?<=[A-Za-z_])Ss(?=[A-Za-z_]|$)")  # not inside a <len><name>


def pre_cxx11_torch_symbol(symbol: str | None) -> bool:
    """A torch symbol (c10, at::, torch::) that passes the pre-C++11 std::string (``Ss``): the
    library that wants it was built with _GLIBCXX_USE_CXX11_ABI=0."""
    if not symbol or "__cxx11" in symbol or "B5cxx11" in symbol:
        return False
    return provider(symbol) == "torch" and _OLD_ABI_STRING.search(symbol) is not None


_CPYTHON_TAG = lazy(r"\.cpython-3([0-9]+)")
_FIND_LINKS = lazy(r"pip install [A-Za-z0-9_.-]+ -f https://\S+")


def _wheel_index(note: str, facts: Facts) -> str:
    """A table note's wheel index with the node's torch filled in: ${TORCH} is the release
    (2.1.0) and ${CUDA} its variant (cu121, cpu), as PyG's READMEs spell them; the
    placeholders stay when the node does not say."""
    if "${TORCH}" not in note:
        return note
    try:
        torch = facts.known_version("torch")
    except Skip:
        return note
    if torch is None:
        return note
    variant = torch.local or ""
    if not re.fullmatch(r"cu[0-9]+|cpu", variant):
        return note
    return note.replace("${TORCH}", torch.base_version).replace("${CUDA}", variant)


def _removed_symbol(facts: Facts, line: LogLine, path: str, entry: RemovedSymbol) -> Hit:
    """A symbol a release of the library it belongs to removed (the `[[removed_symbol]]`
    table): the library that fails was built against an earlier release; pin the last one
    that has it until the failing package has a build for the new one."""
    name = entry.removed_by
    have = facts.known_version(name)
    here = f" ({name} {have} is installed)" if have is not None else ""
    last = entry.last or f"<{entry.removed_in}"
    pin = f"{name}=={last}" if entry.last else f"{name}<{entry.removed_in}"
    library = entry.library or name
    note = f" {entry.note}" if entry.note else ""
    return Hit(
        f"{path} (line {line.line}) cannot resolve {entry.symbol}, which {library} "
        f"{entry.removed_in} removed{here}: it was built against {library} {last} or older "
        f"and a newer {name} loads.{note}",
        evidence={
            "line": line.line,
            "library": path,
            "symbol": entry.symbol,
            "removed_by": name,
            "removed_in": str(entry.removed_in),
        },
        fix=fix(
            f"Install the last {library} release that has {entry.symbol}: conda install "
            f"{pin} (in a conda environment; mamba install {pin}), or pip install "
            f'"{name}<{entry.removed_in}"; pin it (an environment.yml `- {pin}` line) until the '
            "failing package has a build for the newer release",
            "manual",
            manual(f"conda install {pin}"),
            pip_install(f"{name}<{entry.removed_in}"),
        ),
    )


_VERSIONED = lazy(r"undefined symbol: [A-Za-z0-9_]+, version (lib[A-Za-z0-9_]+\.so[.0-9]*)")


def _old_torch_library(facts: Facts, line: LogLine, library: str) -> Hit:
    """An extension links libtorch_cuda_cu.so / libtorch_cuda_cpp.so, which only torch 1.12 and
    older ship: it was built for an older torch, or a stale build directory was reinstalled
    (FRNN#18: remove the build folders, then reinstall). Where a traceback frame names an
    installed compiled-ops package with its own wheel index (PyG's, OpenMMLab's), its wheel
    for the installed torch comes first, with the index page the log installed it from
    (wheel_index_torch.py) when that page serves another torch."""
    torch = _torch_text(facts)
    installed = None
    with contextlib.suppress(Skip):
        installed = facts.known_version("torch")
    # torch 1.8 to 1.12 split libtorch_cuda in two only in its CUDA 11 builds (BUILD_SPLIT_CUDA):
    # under one of those releases the extension's wheel is of another CUDA build
    split_era = installed is not None and installed.release[:2] <= (1, 12)
    older = (
        f"another build of torch {installed.major}.{installed.minor} than {torch} (of 1.8 to "
        "1.12 only the CUDA 11 builds split libtorch_cuda in two)"
        if split_era and installed is not None
        else f"an older torch than {torch}"
    )
    cause = (
        f"a compiled extension links {library}.so (line {line.line}), a library only torch 1.12 "
        f"and older ship (later wheels have libtorch_cuda.so): it was built for {older}, or "
        "its install reused a stale build"
    )
    summary = (
        f"Rebuild the extension against {torch}: in its source tree rm -rf build/ (and the "
        "stale *.so files setup.py left there), then pip install --no-build-isolation "
        "--no-cache-dir --force-reinstall . (or install its wheel built for this torch); the "
        "traceback's last frame above this line names the package"
    )
    actions = [
        manual("rm -rf build/  (in the extension's source tree)"),
        manual("pip install --no-build-isolation --no-cache-dir --force-reinstall ."),
    ]
    top = line.stated.get("ext_package") or line.stated.get("index_package")
    extension = facts.matrix.extension(top) if top else None
    evidence: dict[str, object] = {"line": line.line, "library": f"{library}.so"}
    if extension is not None and extension.wheel_index is not None:
        # an installed wheel from the package's own index, not a source tree: its wheel for
        # the installed torch (pytorch_scatter#211: libtorch_cuda_cu.so, the wheels of
        # another torch)
        dist = extension.package
        cause = (
            f"{dist}'s extension links {library}.so (line {line.line}), a library only torch "
            f"1.12 and older ship (later wheels have libtorch_cuda.so): {dist} was built for "
            f"{older}"
        )
        text, ext_actions = install_text(facts, extension)
        summary = (
            f"Install the {dist} build made for {torch}: {text}; or, where {dist} was built "
            "from a source checkout, rm -rf build/ there (and the stale *.so files setup.py "
            "left) and pip install --no-build-isolation --no-cache-dir --force-reinstall ."
        )
        actions = [*ext_actions, *actions]
        page = stated_index(line)
        if page is not None and page_is_other_torch(facts, page):
            cause += index_cause(dist, page)
            lead, index_actions = index_fix(facts, dist, page)
            summary = f"{lead}. {summary}"
            actions = [*index_actions, *actions]
        evidence["distribution"] = dist
    return Hit(cause, evidence=evidence, fix=fix(summary, "manual", *actions))


def _mixed_torch(facts: Facts, line: LogLine, path: str, symbol: str) -> Hit:
    """torch's own library misses a torch symbol: its libraries come from two torch releases (a
    partial upgrade, a second copy under ~/.local or another site-packages shadowing the
    environment's): threads end it by removing every copy and reinstalling one
    (pytorch/pytorch#15800: 'Remove anything/everything related to your previously installed
    PyTorch')."""
    readable = demangle(symbol)
    shown = f"{symbol} ({readable})" if readable else symbol
    version = None
    with contextlib.suppress(Skip):
        version = facts.known_version("torch")
    pin = f"torch=={version}" if version is not None else "torch"
    # a conda environment's torch may be conda's package (pytorch, pytorch-nightly) beside
    # pip's: pytorch/pytorch#13893 (soumith: a mix of pytorch-nightly and pytorch; conda
    # uninstall both, pip uninstall torch, then install one)
    conda = _CONDA_ENV.search(path) is not None
    python = line.stated.get("site_python")
    local = (
        f"~/.local/lib/python{python}/site-packages/torch"
        if python
        else "~/.local/lib/python3.X/site-packages/torch"
    )
    return Hit(
        f"torch's own {path} (line {line.line}) cannot resolve {shown}, a symbol of torch itself: "
        "the torch libraries loaded come from two torch releases (a second copy of torch, e.g. "
        "under ~/.local, shadows this environment's, or an upgrade left files of the old one)",
        evidence={"line": line.line, "library": path, "symbol": symbol},
        fix=fix(
            f"Remove every copy of torch and install one: pip uninstall -y torch (repeat until pip "
            f"says it is not installed; also remove {local} and torch's files under "
            f"/usr/local/lib if a source build installed any"
            + (
                "; in this conda environment also conda uninstall -y pytorch (and "
                "pytorch-nightly, whichever conda list shows)"
                if conda
                else ""
            )
            + f"), then pip install --no-cache-dir {pin} (from the index of its CUDA variant)",
            "manual",
            *(
                [manual("conda uninstall -y pytorch pytorch-nightly  (those conda list shows)")]
                if conda
                else []
            ),
            manual("pip uninstall -y torch  (repeat until none is left)"),
            manual(f"rm -rf {local}  (a user-site copy that shadows the environment's)"),
            pip_install(pin, flags=("--no-cache-dir", "--force-reinstall")),
        ),
    )


def _mixed_cuda(facts: Facts, line: LogLine, path: str, symbol: str) -> Hit:
    """torch's own library or a CUDA wheel's that misses a CUDA symbol (`libtorch_cuda.so:
    undefined symbol: cudaGraphInstantiateWithFlags, version libcudart.so.11.0`): the copy of
    the CUDA library that loaded is not the one it was built with (a toolkit's on
    LD_LIBRARY_PATH, a wheel of another release); a driver symbol means an older driver."""
    versioned = _VERSIONED.search(line.text)
    other = versioned.group(1) if versioned else "the CUDA library that defines it"
    if provider(symbol) == "cuda-driver":
        return Hit(
            f"{path} (line {line.line}) cannot resolve {symbol}, a function of the NVIDIA "
            "driver's libcuda: the driver is older than the CUDA this build needs",
            evidence={"line": line.line, "library": path, "symbol": symbol},
            fix=fix(
                "Upgrade the NVIDIA driver to one that supports torch's CUDA (`nvidia-smi` "
                "shows the newest CUDA it supports), or install the torch build for an older "
                "CUDA",
                "manual",
                manual("nvidia-smi  (the driver's newest CUDA, top right)"),
            ),
        )
    return Hit(
        f"{path} (line {line.line}) cannot resolve {symbol} in {other}: the copy of {other} "
        "that loaded is from another CUDA release than the one it was built with (a CUDA "
        "toolkit's directory on LD_LIBRARY_PATH, or an nvidia-* wheel of another version)",
        evidence={"line": line.line, "library": path, "symbol": symbol, "loaded": other},
        fix=fix(
            "Let torch load the CUDA libraries of its own wheels: drop CUDA toolkit "
            "directories (/usr/local/cuda*/lib64) from LD_LIBRARY_PATH (or unset "
            "LD_LIBRARY_PATH) for the job, and reinstall the nvidia-* wheels torch pins: "
            "pip install --force-reinstall torch==<the installed version> (same index)",
            "manual",
            manual("unset LD_LIBRARY_PATH  (or remove /usr/local/cuda*/lib64 from it)"),
            manual("pip check  (nvidia-* wheels that differ from torch's pins)"),
            manual(f"ldd {path} | grep {other.split('.so')[0]}  (which copy loads)"),
        ),
    )


# CPython's dynload_win.c: 'DLL load failed while importing %s: ' from 3.8 on, 'DLL load failed: '
# before it (no module), then the system's text of ERROR_PROC_NOT_FOUND (zh-CN: 找不到指定的程序)
_WINDOWS = lazy(
    r"DLL load failed(?: while importing ([A-Za-z0-9_.]+))?: "
    r"(?:The specified (?:procedure|program)|找不到 ?指定的程序)"
)


def _installed_as(facts: Facts, top: str) -> str | None:
    """The distribution the node states installed under the import name ``top`` (its own name,
    or with `_` spelled `-`); None where the packages are unknown or none is."""
    for name in dict.fromkeys((top, top.replace("_", "-"))):
        if facts.known_version(name) is not None:
            return name
    return None


def _windows_entry_point(facts: Facts, line: LogLine, module: str | None) -> Hit:
    """Windows names neither the symbol nor the file: only the module being imported (`_C`;
    Python 3.7 and older not even that); the traceback above it names the package."""
    torch = _torch_text(facts)
    named = f"the extension module {module}" if module else "the extension module being imported"
    package = f"<the package importing {module}>" if module else "<the package being imported>"
    return Hit(
        f"Windows could not resolve an entry point of {named} (line "
        f"{line.line}): it was built against another torch (or library) than {torch}",
        evidence={"line": line.line, "module": module},
        fix=fix(
            f"Install the package's build made for {torch} (the wheel for that torch, CUDA and "
            "Python), or rebuild it against the installed torch: pip install "
            f"--no-build-isolation --no-cache-dir --force-reinstall {package}; or install the "
            "torch release the package was built for",
            "manual",
            manual("pip install --no-build-isolation --no-cache-dir --force-reinstall <package>"),
            manual('python -c "import torch; print(torch.__version__)"  (the torch it must match)'),
        ),
    )


def _source_build(facts: Facts, line: LogLine, path: str, symbol: str) -> Hit:
    """An extension outside site-packages (a project built in place, `python setup.py develop`,
    `pip install -e .`): no distribution to reinstall; its build is older than the torch (or
    CUDA, Python) now installed, and rebuilding it from a clean tree is the fix."""
    path = _ELIDED.sub("", path)  # a pasted path cut short: '(...)/pkg/x.so', '.../pkg/x.so'
    if "/" in path and provider(symbol) == "python":
        return _source_build_python(line, path, symbol)
    if "/" not in path or provider(symbol) not in ("torch", "cuda", "nvcc", "other"):
        raise NotStated(
            f"{path} is not under site-packages: the line does not say which distribution built it",
            "libraries.unresolved",
        )
    folder = path.rsplit("/", 1)[0]
    readable = demangle(symbol)
    shown = f"{symbol} ({readable})" if readable else symbol
    source = provider(symbol)
    against = _torch_text(facts) if source == "torch" else "the libraries now installed"
    nvcc = source == "nvcc"
    if nvcc:  # compiled by another CUDA's nvcc than the runtime torch loads
        against = f"the CUDA of {_torch_text(facts)}"
    reading = span_reading(facts, symbol, readable) if source == "torch" else None
    offer_torch = source == "torch" and not _release_ruled_out(reading)
    spanned = reading.pin if reading is not None else ()
    torch_pin = " ".join(spanned) or "torch==<that release>"
    return Hit(
        f"{path} (built in place, outside site-packages; line {line.line}) cannot resolve "
        f"{shown}, which {source_text(source)} should provide: the extension was compiled "
        f"against another version than {against}" + (reading.cause if reading else ""),
        evidence={
            "line": line.line,
            "library": path,
            "symbol": symbol,
            "demangled": readable,
            "provider": source,
        },
        fix=fix(
            f"Rebuild the extension against {against}: in the project that built it, rm -rf "
            "build/ and the stale .so (a setup.py project: python setup.py clean --all), then "
            "pip install --no-build-isolation -e . (or python setup.py build develop)"
            + (
                "; or install the torch release the extension was built against (pip install "
                f"{torch_pin}) when it is a prebuilt copy"
                if offer_torch
                else ""
            )
            + (
                " with the nvcc of torch's CUDA first on PATH: export CUDA_HOME=/usr/local/"
                "cuda-<torch.version.cuda> PATH=$CUDA_HOME/bin:$PATH (nvcc --version must show "
                "torch's CUDA)"
                if nvcc
                else ""
            ),
            "manual",
            *(
                [
                    manual(
                        "export CUDA_HOME=/usr/local/cuda-<torch.version.cuda> "
                        "PATH=$CUDA_HOME/bin:$PATH"
                    )
                ]
                if nvcc
                else []
            ),
            manual(f"rm -rf build/ {folder}/*.so  (in the project's source tree)"),
            # distutils' clean command: --all removes build/ (the thread's fix, audio#171)
            manual("python setup.py clean --all  (a setup.py project: removes build/ too)"),
            manual("pip install --no-build-isolation --no-cache-dir -e ."),
            *(
                [
                    pip_install(*spanned)
                    if spanned
                    else manual(
                        "pip install torch==<the release it was built against>  (a prebuilt copy)"
                    )
                ]
                if offer_torch
                else []
            ),
        ),
    )


def _source_build_python(line: LogLine, path: str, symbol: str) -> Hit:
    """An extension built in place (outside site-packages) that misses a CPython C API symbol:
    it was compiled by another interpreter (Python 2 vs 3, another minor release, a debug
    build) than the one importing it; the same interpreter rebuilds it."""
    folder = path.rsplit("/", 1)[0]
    built = _CPYTHON_TAG.search(path)
    for_python = f" (its file is tagged for Python 3.{built.group(1)})" if built else ""
    return Hit(
        f"{path} (built in place, outside site-packages; line {line.line}) cannot resolve "
        f"{symbol}, which the Python C API should provide: the extension was compiled by "
        f"another Python than the one importing it{for_python}",
        evidence={"line": line.line, "library": path, "symbol": symbol, "provider": "python"},
        fix=fix(
            "Rebuild the extension with the same interpreter that runs it: in the project, rm "
            f"-rf build/ and {folder}/*.so, then python setup.py build_ext --inplace (or python "
            "-m pip install --no-build-isolation -e .) with that python; or run it with the "
            "Python it was built for",
            "manual",
            manual(f"rm -rf build/ {folder}/*.so  (in the project's source tree)"),
            manual("python setup.py build_ext --inplace  (with the interpreter that imports it)"),
            manual("python -c 'import sys; print(sys.executable, sys.version)'"),
        ),
    )


def source_text(source: str) -> str:
    return {
        "torch": "torch (libtorch / libc10)",
        "cuda-driver": "the NVIDIA driver (libcuda)",
        "cuda": "a CUDA library",
        "nvcc": "the CUDA runtime of the nvcc that compiled it",
        "python": "the Python C API",
        "other": "a library the extension links",
    }[source]


def names_other_package(facts: Facts, line: LogLine, modules: Iterable[str]) -> str | None:
    """The extension a generic loader line (`<path>.so: undefined symbol: ...`) names, when
    its path is a package's (under site-packages, any directory, or a bare extension file name) and names none
    of ``modules`` (flash_attn, vllm, torchvision): that line says another package failed, so a
    cause about these is ruled out by it. None when the line names no such path or names one
    of them (the cause stays for its rule to judge)."""
    path = line.stated.get("library_path")
    program = line.stated.get("linked_program")
    if not path and program:  # `<program>: symbol lookup error: <program>: ...`: a program's
        return program
    if not path:
        return None
    # a package's path: under site-packages, a bare extension file name, or any directory
    # (a source tree's `/mmcv/_ext...so`, a build's `build/lib.../x.so`); only a file named
    # alone without its package's tag (`_C.so`) may still be one of ``modules``'
    owned = owner(path, facts.matrix)
    if owned is None and not _BARE_NAME.match(path) and "/" not in path:
        return None
    if any(m in path for m in modules):
        return None
    # a module whose installing distribution a table names (torchaudio 0.x's top-level
    # `_torch_sox`): the line names that distribution, whatever the file is called
    if owned is not None and owned[1] is not None and owned[1].replace("-", "_") in modules:
        return None
    return path


def owning_distribution(facts: Facts, line: LogLine) -> str | None:
    """The distribution that installed the extension a loader line names (its path under
    site-packages, through the matrix's import-name and compiled-ops tables); None when the
    line names no such path or no table says."""
    path = line.stated.get("library_path")
    owned = owner(path, facts.matrix) if path else None
    return owned[1] if owned is not None else None


@from_log("TOR103")
def flash_attn_symbol_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """flash-attn's pairing with torch (TOR103) as a generic undefined-symbol line decides it:
    ruled out when the failing extension is another package's (the line names its path); open
    otherwise, for the rule to judge on the node's versions. flash-attn's own extension lines
    have their signature (abi.toml's undefined-symbol-flash-attn)."""
    if names_other_package(facts, line, ("flash_attn",)) is not None:
        return None
    if line.signature == "flash-attn-import-traceback":
        built = _flash_attn_without_wheel(facts, line)
        if built is not None:
            return built
    raise NotStated(
        f"line {line.line} does not name another package's extension: TOR103 compares "
        "flash-attn's release with the node's torch",
        "packages.flash-attn",
    )


def _flash_attn_without_wheel(facts: Facts, line: LogLine) -> Hit | None:
    """flash-attn's import failing (its __init__'s frame, line) where the installed release has
    no release wheel for the node's torch: a build made here against this torch would load,
    so the one installed was made for the torch present when it was installed (a release wheel
    of an older torch, or a build against it) and torch has changed since
    (flash-attention#1348: 2.5.6 under torch 2.4, whose wheels stop at torch 2.3). None where
    a fact is unknown or the release has a wheel for this torch."""
    from envcheck.rules.node.flash_attn import _flash_attn_fix

    flash = facts.known_version("flash-attn")
    torch = facts.known_version("torch")
    release = facts.matrix.flash_attn_release(flash) if flash is not None else None
    if torch is None or release is None or not release.prebuilt_torch:
        return None
    mm = f"{torch.major}.{torch.minor}"
    if mm in release.prebuilt_torch:
        return None
    remedy = _flash_attn_fix(facts, torch)
    return Hit(
        f"flash-attn {flash} fails to import (line {line.line}) under torch {torch}, for which "
        f"it has no release wheel (its wheels: torch {', '.join(release.prebuilt_torch)}): it "
        "was installed for the torch present then, and torch has changed since",
        evidence={"line": line.line, "flash_attn": str(flash), "torch": str(torch)},
        fix=remedy,
    )


@from_log("VLM101")
def vllm_undefined_symbol_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """`vllm/_C.abi3.so: undefined symbol: <a torch symbol>`: vLLM's compiled ops were built
    against another torch than the one installed (each vLLM release pins torch with `==`); the
    line establishes it whatever the node says. The fix is the torch the installed vLLM pins
    (the matrix's `[[vllm]]` entry when the node states vLLM's version), or vLLM reinstalled so
    that pip brings that torch back."""
    symbol = line.stated.get("undefined_symbol")
    if names_other_package(facts, line, ("vllm",)) is not None:
        return None  # the failing extension is another package's
    if unnamed_file(line) and "vllm" not in line.text:
        raise NotStated(
            f"line {line.line} names no extension file: VLM101 compares vLLM's torch pin with "
            "the node's torch",
            "packages.vllm",
        )
    if symbol is None or provider(symbol) != "torch":
        raise NotStated(
            f"line {line.line} does not show a torch symbol: VLM101 compares vLLM's torch pin "
            "with the node's torch",
            "packages.vllm",
        )
    readable = demangle(symbol)
    shown = f"{symbol} ({readable})" if readable else symbol
    vllm = facts.known_version("vllm")
    release = facts.matrix.vllm_release(vllm) if vllm is not None else None
    torch = _torch_text(facts)
    pinned = [
        f"{name}{spec}"
        for name, spec in (
            ("torch", release.torch if release else None),
            ("torchvision", release.torchvision if release else None),
        )
        if spec is not None and str(spec).startswith("==")
    ]
    have = f"vllm {vllm}" if vllm is not None else "the installed vLLM"
    if pinned:
        summary = (
            f"Install the torch {have} pins: pip install {' '.join(pinned)} (from the index "
            f"of the CUDA variant you use); or pip install vllm=={vllm} --force-reinstall, "
            "which brings that torch back"
        )
        actions = [pip_install(*pinned)]
    else:
        again = f"vllm=={vllm}" if vllm is not None else "vllm"
        summary = (
            f"Install the torch the installed vLLM pins (`pip show vllm`: Requires torch==X): "
            f"pip install torch==<that version>; or reinstall vLLM so pip brings its torch: "
            f"pip install {again} --force-reinstall; a vLLM built from source: rebuild it "
            "against this torch (python use_existing_torch.py, then pip install -e . "
            "--no-build-isolation)"
        )
        actions = [
            manual("pip show vllm  (Requires: torch==X, the torch its ops were built for)"),
            pip_install(again, flags=("--force-reinstall",)),
        ]
    return Hit(
        f"vLLM's compiled ops ({line.stated.get('library_path') or 'vllm/_C'}, line {line.line}) "
        f"cannot resolve {shown}, a torch symbol: {have} was built against another torch than "
        f"{torch} (vLLM pins torch exactly)",
        evidence={"line": line.line, "symbol": symbol, "demangled": readable, "vllm": str(vllm)},
        fix=fix(summary, "manual", *actions),
    )
