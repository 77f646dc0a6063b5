"""SYS170-172 / TOR162: whether each installed extension will load, from its own ELF headers
(the report's ``binaries`` section): libraries the loader will not find or will find outside
the wheel meant to provide them, symbol versions (GLIBC_, GLIBCXX_, CXXABI_, ...) the copy it
loads does not define, torch symbols it expects that the installed torch does not define."""

from __future__ import annotations

import functools
from collections.abc import Iterable

from packaging.requirements import InvalidRequirement, Requirement

from envcheck.binaries.demangle import demangle
from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.model import package_names
from envcheck.matrix.schema import Soname
from envcheck.model.finding import Severity
from envcheck.names import canonicalize_name
from envcheck.rules.base import Hit, rule
from envcheck.rules.fixes import fix, manual, pip_install
from envcheck.rules.node.binaries import MAX_NAMED, _label, binaries


@rule("SYS170", "needed-library-missing", Severity.ERROR)
def missing_library(facts: Facts) -> Iterable[Hit]:
    """A shared library an installed extension needs is nowhere the loader looks

    ## What it checks
    Each `DT_NEEDED` of every GPU-stack shared object, resolved as `ld.so` does: the object's
    `RPATH` (when it has no `RUNPATH`), `LD_LIBRARY_PATH`, its `RUNPATH` with `$ORIGIN`
    expanded, `/etc/ld.so.cache`, the default directories, and for extensions that need torch,
    the libraries `import torch` has already loaded. Driver libraries (`libcuda.so.1`) are the
    DRV rules' concern. A Python extension module that cannot load is an error; a plain library
    that no import may ever load (nvshmem's MPI bootstrap, cuFile's RDMA plugin in every CUDA
    torch wheel) is only information. An extension named after the library it lacks
    (`cupy/cuda/cutensor.cpython-*.so` needing `libcutensor.so.2`) is the package's binding
    of that library, imported for its features alone (CuPy lists cuTENSOR, NCCL, cuDNN and
    cuSPARSELt as optional libraries): a warning, unless the package requires the wheel that
    ships the library, whose absence is then an error.

    ## Why it matters
    `import` fails with `ImportError: libcudart.so.12: cannot open shared object file: No such
    file or directory`, at the first use of the package rather than before the job.

    ## Example
    `flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so (flash_attn)` needs `libcudart.so.12`;
    no nvidia-cuda-runtime-cu12 wheel is installed and the system has no CUDA 12 runtime.

    ## Fix
    Install the package that ships the library (`matrices/cuda/sonames.toml` names the
    nvidia-* wheel, apt and conda package for the common ones), or install the extension built
    for the CUDA present.

    ## References
    - https://man7.org/linux/man-pages/man8/ld.so.8.html
    - https://docs.cupy.dev/en/stable/install.html (Additional CUDA Libraries: "activated only
      when the corresponding libraries are installed")
    """
    hits = []
    for file in binaries(facts).files:
        missing = [n.name for n in file.needs if n.path is None]
        if not missing:
            continue
        shipped = {m: next(iter(facts.matrix.soname(m)), None) for m in missing}
        wheels = sorted(
            {w for s in shipped.values() if s is not None for w in package_names(s.pip)[:1]}
        )
        known = [f"{m} ({_provider(s)})" for m, s in shipped.items() if s is not None]
        if wheels:
            action = fix(f"Install {', '.join(wheels)}", "manual", pip_install(*wheels))
        else:
            action = fix(
                f"Install what ships {missing[0]}",
                "manual",
                manual(f"install the package that provides {', '.join(missing)}"),
            )
        optional = (
            file.extension
            and _binding_of(file.path, missing)
            and not _requires_any(
                facts,
                file.distribution,
                [w for s in shipped.values() if s is not None for w in package_names(s.pip)],
            )
        )
        hits.append(
            Hit(
                f"{_label(file)} needs {', '.join(missing)}, which the loader finds nowhere "
                f"(RPATH/RUNPATH, LD_LIBRARY_PATH, ld.so.cache, default directories): "
                f"'{missing[0]}: cannot open shared object file'"
                + (f"; shipped by: {'; '.join(known)}" if known else "")
                + (
                    f"; it is {file.distribution or 'the package'}'s binding of that library,"
                    " so only the features that use it fail"
                    if optional
                    else ""
                ),
                evidence={"file": file.path, "missing": missing, "wheels": wheels},
                fix=action,
                severity=(
                    Severity.INFO if not file.extension else Severity.WARNING if optional else None
                ),
            )
        )
    return hits


def _stem(name: str) -> str:
    return name.split(".", 1)[0].lstrip("_").lower()


def _binding_of(path: str, missing: list[str]) -> bool:
    """Whether the extension module is named after a library it lacks: ``cutensor`` for
    ``libcutensor.so.2``, ``_nccl`` for ``libnccl.so.2``."""
    module = _stem(path.rsplit("/", 1)[-1])
    return bool(module) and any(
        _stem(m).removeprefix("lib") == module for m in missing if m.startswith("lib")
    )


@functools.lru_cache(maxsize=4096)
def _requirement(line: str) -> Requirement | None:
    """A Requires-Dist line parsed (None: not a requirement), once: SYS171 asks for the same
    package's lines for every library it checks."""
    try:
        return Requirement(line)
    except InvalidRequirement:
        return None


def _requires_any(facts: Facts, distribution: str | None, wheels: list[str]) -> bool:
    """Whether the distribution requires (not as an extra) one of ``wheels``."""
    try:
        dist = facts.dist(distribution) if distribution else None
    except Skip:
        return False
    if dist is None or not wheels:
        return False
    wanted = {canonicalize_name(w) for w in wheels}
    for line in dist.requires:
        requirement = _requirement(line)
        if requirement is None:
            continue
        marker = str(requirement.marker or "")
        if "extra" not in marker and canonicalize_name(requirement.name) in wanted:
            return True
    return False


def _uses_nvidia_wheels(facts: Facts, distribution: str | None) -> bool:
    """Whether the package is an nvidia-* wheel or requires one (not as an extra); unknown
    packages count as using them."""
    if distribution is None or canonicalize_name(distribution).startswith("nvidia-"):
        return True
    try:
        dist = facts.dist(distribution)
    except Skip:
        return True
    if dist is None:
        return True
    for line in dist.requires:
        requirement = _requirement(line)
        if requirement is None:
            continue
        if "extra" not in str(requirement.marker or "") and canonicalize_name(
            requirement.name
        ).startswith("nvidia-"):
            return True
    return False


def _provider(shipped: Soname) -> str:
    where = [
        f"pip {shipped.pip}" if shipped.pip else None,
        f"apt {shipped.apt.split(' ')[0]}" if shipped.apt else None,
        f"conda {shipped.conda.split(' ')[0]}" if shipped.conda else None,
    ]
    return ", ".join(w for w in where if w) or shipped.kind


@rule("SYS171", "needed-library-shadowed", Severity.WARNING)
def shadowed_library(facts: Facts) -> Iterable[Hit]:
    """A library an installed package needs is found outside the nvidia-* wheel that ships it

    ## What it checks
    A `DT_NEEDED` name that an installed nvidia-* wheel provides (`site-packages/nvidia/*/lib`)
    but that the loader finds first elsewhere: through `LD_LIBRARY_PATH`, `ld.so.cache` or a
    default directory (an object with `RUNPATH` lets `LD_LIBRARY_PATH` win over its own paths).

    ## Why it matters
    A system CUDA library of another release is loaded instead of the one the wheel was
    tested with: `undefined symbol` errors, `CUBLAS_STATUS_NOT_SUPPORTED`, or silently
    different kernels.

    ## Example
    `LD_LIBRARY_PATH=/usr/local/cuda-11.8/lib64`: `libcublas.so.12` of a toolkit is found
    before `site-packages/nvidia/cublas/lib/libcublas.so.12`.

    A package that requires no nvidia-* wheel (CuPy's `cupy-cuda13x` loads the CUDA Toolkit's
    libraries unless its `ctk` extra is installed) is built to use the system's copy: there
    the finding is information.

    ## Fix
    Remove the CUDA directories from `LD_LIBRARY_PATH` for the job (or put the wheel's first).

    ## References
    - https://man7.org/linux/man-pages/man8/ld.so.8.html
    """
    hits = []
    for file in binaries(facts).files:
        own = _uses_nvidia_wheels(facts, file.distribution)
        for need in file.needs:
            if need.meant and need.path:
                hits.append(
                    Hit(
                        f"{_label(file)} loads {need.name} from {need.path} (found through "
                        f"{need.via}), not the installed wheel's {need.meant}"
                        + (
                            ""
                            if own
                            else f"; {file.distribution} requires no nvidia-* wheel: it is"
                            " built to load the system's CUDA libraries"
                        ),
                        severity=None if own else Severity.INFO,
                        evidence={
                            "file": file.path,
                            "library": need.name,
                            "found": need.path,
                            "via": need.via,
                            "wheel_copy": need.meant,
                        },
                        fix=fix(
                            "Let the wheel's copy win",
                            "manual",
                            manual("drop the CUDA directories from LD_LIBRARY_PATH for the job"),
                        ),
                    )
                )
    return hits


# a copy the process has mapped already (/proc/self/maps) wins over every search path
_ALREADY = {"already loaded": ", already loaded by the process"}


@rule("SYS172", "symbol-version-missing", Severity.ERROR)
def version_missing(facts: Facts) -> Iterable[Hit]:
    """An installed extension needs a symbol version the library it will load does not define

    ## What it checks
    The object's version needs (`.gnu.version_r`: `GLIBC_2.34` from `libc.so.6`,
    `GLIBCXX_3.4.30` / `CXXABI_1.3.13` from `libstdc++.so.6`, `GCC_` from `libgcc_s`) against
    the versions defined (`.gnu.version_d`) by the copy of each library the loader finds for it;
    a copy the inspected process has already loaded (`/proc/self/maps`: a conda environment's
    libstdc++ mapped by an earlier import) is the one it gets, whatever its search path says.

    ## Why it matters
    The import fails with `version 'GLIBCXX_3.4.30' not found (required by ...)`: a wheel built
    on a newer system than the node, or a conda environment's older libstdc++ loaded first.

    ## Example
    `_C.cpython-311-x86_64-linux-gnu.so (vllm)` needs `GLIBCXX_3.4.30`; the `libstdc++.so.6`
    found (`/opt/conda/lib`) defines up to `GLIBCXX_3.4.29`.

    ## Fix
    Load a newer libstdc++ (conda: `conda install -c conda-forge "libstdcxx-ng>=12"`), or
    install a build of the package for this system's glibc (an older manylinux tag).

    ## References
    - https://gcc.gnu.org/onlinedocs/libstdc++/manual/abi.html
    - https://man7.org/linux/man-pages/man8/ld.so.8.html
    """
    hits = []
    for file in binaries(facts).files:
        for need in file.needs:
            if not need.lacking:
                continue
            hits.append(
                Hit(
                    f"{_label(file)} needs {', '.join(need.lacking)} from {need.name}; the copy "
                    f"it loads ({need.path}{_ALREADY.get(need.via or '', '')}) defines up to "
                    f"{need.has_max or 'none of that family'}"
                    f": \"version '{need.lacking[0]}' not found\"",
                    evidence={
                        "file": file.path,
                        "library": need.name,
                        "found": need.path,
                        "lacking": list(need.lacking),
                        "newest": need.has_max,
                    },
                    fix=fix(
                        f"Load a {need.name} that defines {need.lacking[-1]}",
                        "manual",
                        manual(
                            f"put a newer {need.name} first, or install a build of "
                            f"{file.distribution or 'the package'} for this system"
                        ),
                    ),
                    severity=None if file.extension else Severity.INFO,
                )
            )
    return hits


@rule("TOR162", "extension-built-for-other-torch", Severity.ERROR)
def torch_symbols(facts: Facts) -> Iterable[Hit]:
    """An installed extension expects torch symbols the installed torch does not define

    ## What it checks
    The undefined dynamic symbols of torch's C++ namespaces (`c10::`, `at::`, `torch::`) in
    each extension that links torch's libraries, looked up in the hash tables of the installed
    torch's `torch/lib/*.so` and `torch/_C`, as the loader will.

    ## Why it matters
    `import` fails with `undefined symbol: _ZN3c10...`: the extension was compiled against
    another torch release (its C++ API changed), or against the other C++ ABI
    (`_GLIBCXX_USE_CXX11_ABI`: names with `__cxx11` on one side only).

    ## Example
    `flash_attn_2_cuda...so (flash_attn)` needs `c10::cuda::SetDevice(int)`; torch 2.5.1
    exports `c10::cuda::SetDevice(signed char)`.

    ## Fix
    Install the extension's build for the installed torch (its wheel for this torch and C++
    ABI), or rebuild it against this torch (`pip install --no-build-isolation --no-cache-dir`).

    ## References
    - https://pytorch.org/docs/stable/cpp_extension.html
    """
    info = binaries(facts)
    torch = (
        facts.report.torch.data.version
        if facts.report.torch.is_ok and facts.report.torch.data
        else None
    )
    hits = []
    for file in info.files:
        if not file.torch_missing:
            continue
        names = [demangle(s) for s in file.torch_missing[:MAX_NAMED]]
        abi = any("__cxx11" in s for s in file.torch_missing)
        hits.append(
            Hit(
                f"{_label(file)} needs {len(file.torch_missing)} torch symbol(s) that the "
                f"installed torch{f' {torch}' if torch else ''} does not define, e.g. "
                f"{'; '.join(names)}: built for another torch"
                + (" or the other C++ ABI (__cxx11 names)" if abi else ""),
                evidence={
                    "file": file.path,
                    "missing": list(file.torch_missing[:20]),
                    "checked": file.torch_checked,
                    "demangled": names,
                },
                fix=fix(
                    f"Install {file.distribution or 'the extension'} built for this torch",
                    "manual",
                    manual(
                        f"reinstall {file.distribution or 'the extension'} for torch "
                        f"{torch or '(installed)'}: pip install --no-build-isolation "
                        "--no-cache-dir --force-reinstall"
                    ),
                ),
            )
        )
    return hits
