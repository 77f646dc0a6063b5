"""SYS: what the OS must provide to build and load compiled wheels (Python headers, a host
compiler the CUDA toolkit accepts, a new enough glibc, the system libraries simulators load).

These rules read the node and, in ``envcheck triage``, the facts a build or import log states
(`fatal error: Python.h: No such file or directory`, `version `GLIBC_2.32' not found`, torch's
g++ check, `libGLU.so.1: cannot open shared object file`), so the cause is confirmed from the
log's own line.
"""

from __future__ import annotations

from collections.abc import Iterable

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.model import package_names
from envcheck.model.finding import Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import apt_words, fix, manual, set_env

JIT_BUILDERS = ("deepspeed", "triton")  # compile C/C++ against Python.h on the node at run time

# shared library -> the Debian/Ubuntu package that ships it (for the fix line)
SYSTEM_LIBRARIES = {
    "libGLU.so.1": "libglu1-mesa",
    "libGL.so.1": "libgl1",
    "libEGL.so.1": "libegl1",
    "libvulkan.so.1": "libvulkan1",
    "libOSMesa.so.6": "libosmesa6",
    "libOSMesa.so.8": "libosmesa6",
}
# the same library's package under its older name, which threads install on Ubuntu <= 22.04 and
# Debian <= 11 (libgl1-mesa-glx: a transitional package on Ubuntu 22.04, gone in Debian 12;
# matrices/cuda/sonames.toml's libGL.so.1 entry)
OLDER_PACKAGES = {"libgl1": "libgl1-mesa-glx"}
# libraries opencv-python loads that opencv-python-headless does not (the [[soname]] note)
HEADLESS_AVOIDS = frozenset({"libGL.so.1"})


def _python_minor(facts: Facts) -> str | None:
    try:
        version = facts.python_version()
    except Skip:
        return None
    return f"{version.major}.{version.minor}"


@rule("SYS130", "python-headers-missing", Severity.ERROR)
def python_headers(facts: Facts) -> Iterable[Hit]:
    """The Python development headers (Python.h) are missing

    ## What it checks
    Whether `Python.h` exists for the interpreter (the probe looks in its include directory), with
    a package that compiles C/C++ against it at run time (DeepSpeed ops, Triton's launcher); in
    `triage`, a compiler's `fatal error: Python.h: No such file or directory`.

    ## Why it matters
    JIT-built extensions (DeepSpeed's fused ops, torch cpp_extension, Triton) include Python.h;
    without the interpreter's development package every such build fails.

    ## Example
    DeepSpeed building FusedAdam in a venv on Ubuntu with Python 3.10 and no python3.10-dev.

    ## Fix
    Install the headers for the interpreter in use: `sudo apt-get install python3-dev` (or
    `python3.10-dev`, the X.Y of the venv's Python; `dnf install python3-devel` on RHEL); conda
    and uv-managed Pythons ship them.

    ## References
    - https://github.com/deepspeedai/DeepSpeed/issues/3223
    """
    section = facts.report.python
    info = section.data if section.is_ok else None
    if info is None or info.headers is not False:
        return []
    logged = (section.source or "").startswith("log (")
    if not logged and not any(_present(facts, name) for name in JIT_BUILDERS):
        return []
    minor = _python_minor(facts)
    package = f"python{minor}-dev" if minor else "python3-dev"
    return [
        Hit(
            f"Python.h is missing for Python {minor or '(this interpreter)'}: C/C++ extensions "
            "built on this node (DeepSpeed ops, torch cpp_extension, Triton) cannot compile",
            evidence={"python": minor},
            # a build log's failure is certain; a probed node may never build anything
            severity=None if logged else Severity.WARNING,
            fix=fix(
                f"Install the Python development headers: sudo apt-get install python3-dev "
                f"({package} for this interpreter; RHEL/Rocky: dnf install python3-devel; a "
                "conda Python ships them: conda install python)",
                "manual",
                manual(f"sudo apt-get install -y {package}"),
                manual("dnf install python3-devel  (RHEL/Rocky)"),
            ),
        )
    ]


@from_log("SYS130")
def python_headers_in_log(facts: Facts, line: LogLine) -> Hit:
    """The compiler's own `Python.h: No such file or directory` establishes the cause; the
    Python version comes from the node or from a site-packages path the log shows."""
    minor = _python_minor(facts) or line.stated.get("site_python")
    if "C1083" in line.text:  # MSVC: a Windows Python without its Include folder
        return Hit(
            f"MSVC cannot find Python.h (line {line.line}): the Python the build runs has no "
            "development headers (the embeddable package, or a venv of one)",
            evidence={"line": line.line, "python": minor},
            fix=fix(
                "Build with a Python that has its headers: the full installer from python.org "
                "(its Include folder holds Python.h) or a conda Python, then rebuild in a venv "
                "of it",
                "manual",
                manual("py -0p  (the Pythons installed; build with one from python.org or conda)"),
            ),
        )
    package = f"python{minor}-dev" if minor else "python3-dev"
    also = f" ({package} for Python {minor})" if minor else ""
    return Hit(
        f"the compiler cannot find Python.h (line {line.line}): the Python development headers "
        f"are not installed for Python {minor or '(this interpreter)'}",
        evidence={"line": line.line, "python": minor},
        fix=fix(
            f"Install the Python development headers: sudo apt-get install python3-dev{also} "
            "(RHEL/Rocky: dnf install python3-devel; a conda Python ships them)",
            "manual",
            manual(f"sudo apt-get install -y {package}"),
            manual("dnf install python3-devel  (RHEL/Rocky)"),
        ),
    )


def _present(facts: Facts, name: str) -> bool:
    try:
        return facts.version(name) is not None
    except Skip:
        return False


@rule("SYS131", "host-compiler-vs-cuda", Severity.ERROR)
def host_compiler(facts: Facts) -> Iterable[Hit]:
    """The host g++ is outside the range the CUDA toolkit accepts, or compiles an older C++ standard than the build's headers need

    ## What it checks
    The g++ a CUDA extension build found against the versions that build's CUDA toolkit accepts,
    as torch's cpp_extension states them (`The current installed version of g++ (4.8.5) is less
    than the minimum required version by CUDA 11.7 (6.0.0) ... (>=6.0.0, <12.0)`), or, where a
    log states the g++ (`gcc (Ubuntu 13.2.0-23ubuntu4) 13.2.0`) and nvcc's release but no range,
    the newest gcc that release's nvcc accepts (`matrices/cuda/host_compilers.toml`); in
    `triage`, nvcc's own host_config.h check for gcc (`gcc versions later than 12 are not
    supported`), MSVC (`Only the versions between 2017 and 2022 (inclusive) are supported`) and
    clang (`clang version must be less than 16`); the other direction on Windows, MSVC's
    standard library refusing an nvcc older than it supports (`error STL1002: Unexpected
    compiler version, expected CUDA 12.4 or newer`: that CUDA, or an older MSVC toolset); and
    a C++17 standard-library name the
    compiler does not declare (`'optional' in namespace 'std' does not name a template type`,
    `'std::optional' has not been declared`, clang's `no template named 'optional' in
    namespace 'std'`, nvcc's `namespace "std" has no member "optional"`, MSVC's C2039): the
    build compiles C++14 or older (a setup.py's `-std=c++14`, `CMAKE_CXX_STANDARD 14`, a gcc
    before 11 without a flag) while torch's headers (C++17 since torch 2.1) or another
    header need C++17; the fix sets `-std=c++17` where the build states its standard.

    ## Why it matters
    nvcc refuses host compilers older or newer than its supported range; source builds of
    flash-attn, xformers, DeepSpeed ops and other CUDA extensions stop there.

    ## Example
    CentOS 7's g++ 4.8.5 building flash-attn against CUDA 11.7.

    ## Fix
    Install a g++ in the accepted range and point the build at it (`CC=gcc-9 CXX=g++-9`, or
    devtoolset / conda's gxx); build flash-attn with `pip install flash-attn
    --no-build-isolation` so it sees the installed torch. Or move to the first CUDA toolkit
    whose nvcc accepts this gcc (`matrices/cuda/host_compilers.toml`: gcc 13 needs CUDA 12.4).

    ## References
    - https://github.com/Dao-AILab/flash-attention/issues/246
    - https://docs.nvidia.com/cuda/cuda-installation-guide-linux/ (supported host compilers)
    - https://github.com/microsoft/STL/blob/main/stl/inc/yvals_core.h (STL1002)
    - https://github.com/pytorch/pytorch/pull/85969 (torch's headers need C++17)
    - https://github.com/meta-pytorch/multipy/issues/312
    """
    system = facts.system()
    if system.gxx is not None and system.gxx_needed is None:
        return _gcc_above_nvcc_ceiling(facts, system.gxx)
    if system.gxx is None and _from_log(facts):
        # a build log that states no compiler version cannot clear the compiler: the failed
        # build it shows may be this one (a probed node never states g++: there it does not apply)
        raise Skip("the log states neither the host g++ version nor the range CUDA accepts")
    if system.gxx is None or system.gxx_needed is None:
        return []
    try:
        found, accepted = Version(system.gxx), SpecifierSet(system.gxx_needed.replace(" ", ""))
    except (InvalidVersion, InvalidSpecifier):
        raise Skip(f"g++ {system.gxx!r} or its range {system.gxx_needed!r} unreadable") from None
    if accepted.contains(found, prereleases=True):
        return []
    gcc = _newest_accepted_major(accepted)
    return [
        Hit(
            f"g++ {found} is outside the range this CUDA toolkit accepts ({system.gxx_needed}): CUDA "
            "extensions cannot be compiled here",
            evidence={"gxx": str(found), "accepted": str(accepted)},
            fix=fix(
                f"Use a g++ in the range CUDA accepts ({system.gxx_needed}) for the build: "
                f"apt install gcc-{gcc} g++-{gcc}, export CC=gcc-{gcc} CXX=g++-{gcc} (conda: "
                f"conda install -c conda-forge gcc_linux-64={gcc} gxx_linux-64={gcc}; RHEL 7: "
                f"devtoolset-{gcc}), "
                "then rebuild, e.g. pip install flash-attn --no-build-isolation",
                "manual",
                manual(f"apt install gcc-{gcc} g++-{gcc}"),
                set_env(CC=f"gcc-{gcc}", CXX=f"g++-{gcc}"),
            ),
        )
    ]


def _from_log(facts: Facts) -> bool:
    """Whether the node's system facts are what a log states (triage's reading of it)."""
    source = facts.report.system.source
    return source is not None and source.startswith("log (")


def _gcc_above_nvcc_ceiling(facts: Facts, gxx: str) -> list[Hit]:
    """The g++ a build log states against the newest gcc the stated CUDA toolkit's nvcc
    accepts (host_config.h, the matrix's ``nvcc.gcc_max.<cuda>``): a gcc above it stops every
    CUDA compile of the build."""
    from envcheck.rules import nvcc_host

    nvcc = facts.system().nvcc
    if nvcc is None or not nvcc.version:
        return []
    top = nvcc_host.gcc_max(facts.matrix, nvcc.version)
    if top is None:
        raise Skip(f"the newest gcc CUDA {nvcc.version}'s nvcc accepts is not in the matrix")
    try:
        major = Version(gxx).major
    except InvalidVersion:
        raise Skip(f"g++ {gxx!r} unreadable") from None
    if major <= top:
        return []
    newer = nvcc_host.first_cuda_for_gcc(facts.matrix, major)
    toolkit = (
        f"; or CUDA {newer[0]} or newer, whose nvcc accepts gcc up to {newer[1]}"
        if newer is not None
        else "; or a newer CUDA toolkit that accepts this gcc"
    )
    return [
        Hit(
            f"g++ {gxx} is newer than CUDA {nvcc.version}'s nvcc accepts (gcc {top} at most, "
            "its host_config.h): CUDA extensions cannot be compiled with it",
            evidence={"gxx": gxx, "nvcc": nvcc.version, "gcc_max": top},
            fix=fix(
                f"Build with gcc {top}: apt install gcc-{top} g++-{top}, export CC=gcc-{top} "
                f"CXX=g++-{top} NVCC_PREPEND_FLAGS='-ccbin /usr/bin/g++-{top}' (conda: conda "
                f"install -c conda-forge gcc_linux-64={top} gxx_linux-64={top}){toolkit}",
                "manual",
                manual(f"apt install gcc-{top} g++-{top}"),
                set_env(
                    CC=f"gcc-{top}",
                    CXX=f"g++-{top}",
                    NVCC_PREPEND_FLAGS=f"-ccbin /usr/bin/g++-{top}",
                ),
            ),
        )
    ]


def _newest_accepted_major(accepted: SpecifierSet) -> int:
    """The newest gcc major a range accepts: one below an exclusive upper bound (``<12.0`` ->
    11), the bound itself when inclusive; 9 (accepted by every CUDA 11 and 12 toolkit) when
    the range has no upper bound."""
    for spec in accepted:
        try:
            bound = Version(spec.version)
        except InvalidVersion:
            continue
        if spec.operator == "<":
            return bound.major - 1 if bound.minor == 0 and bound.micro == 0 else bound.major
        if spec.operator == "<=":
            return bound.major
    return 9


_DISTRO = {"ubuntu": "Ubuntu", "debian": "Debian", "rhel": "RHEL", "rocky": "Rocky Linux"}


def _with_glibc(facts: Facts, needed: str) -> str:
    """The LTS releases of common distributions whose glibc has ``needed`` (the matrix's
    `[[os_release]]`), oldest first: where the wheel loads."""
    try:
        want = Version(needed)
    except InvalidVersion:
        return "Ubuntu 22.04 has 2.35"
    best: dict[str, tuple[Version, str]] = {}
    for r in facts.matrix.os_releases:
        if r.os in _DISTRO and r.glibc >= want and (r.os not in best or r.glibc < best[r.os][0]):
            best[r.os] = (r.glibc, f"{_DISTRO[r.os]} {r.version} has {r.glibc}")
    ordered = [text for _, text in sorted(best.values())]
    return ", ".join(ordered) if ordered else f"no distribution the matrix knows has {needed}"


@rule("SYS132", "glibc-too-old-for-wheel", Severity.ERROR)
def glibc_lacking(facts: Facts) -> Iterable[Hit]:
    """The system glibc is older than a compiled wheel needs

    ## What it checks
    A `GLIBC_X.Y` symbol version the loader could not find (`/lib64/libc.so.6: version
    `GLIBC_2.32' not found`), against the system glibc when it is known; and a symbol of glibc
    itself that a binary references without a version label (`undefined symbol: fcntl64`), with
    the release that added it (`matrices/packages/glibc_symbols.toml`, from glibc's ABI list:
    fcntl64 2.28, __libc_single_threaded 2.32, stat64 2.33).

    ## Why it matters
    Wheels built on a newer OS than their manylinux tag promises (vLLM's `_C` before its wheels
    were re-tagged, Isaac Sim's, many CUDA extensions) import only where glibc has every symbol
    version they use: CentOS 7 (glibc 2.17) cannot load vLLM >= 0.7.3.

    ## Example
    `Failed to import from vllm._C with ImportError("/lib64/libc.so.6: version `GLIBC_2.32' not
    found")` on CentOS 7.9.

    ## Fix
    Run on an OS (or in a container image) whose glibc is at least X.Y (Ubuntu 22.04 has 2.35),
    or build the package from source on this OS; on CentOS 7, stay on a release built for it
    (vLLM < 0.7.3).

    ## References
    - https://github.com/vllm-project/vllm/issues/15469
    - https://github.com/vllm-project/vllm/issues/6562
    - https://github.com/isaac-sim/IsaacLab/issues/3695
    - bminor/glibc sysdeps/unix/sysv/linux/x86_64/64/libc.abilist
    """
    system = facts.system()
    if system.glibc_lacks is None:
        return []
    return [_lacking(facts, system.glibc_lacks, system.glibc_needed_by, system.glibc)]


def _lacking(
    facts: Facts,
    lacks: str,
    needed_by: str | None,
    glibc: str | None,
    *,
    symbol: str | None = None,
) -> Hit:
    """SYS132's finding: a binary (``needed_by``, where the line names it) needs glibc ``lacks``
    (its GLIBC_x.y version node, or the release that added ``symbol``) that this glibc lacks."""
    have = f" (this system has {glibc})" if glibc else ""
    dist = _glibc_needer(facts, needed_by)
    by = f" ({dist}'s {needed_by})" if dist else ""
    need = (
        f"{symbol}, which glibc exports from {lacks} on"
        if symbol
        else f"GLIBC_{lacks}, which this glibc lacks"
    )
    if dist is None:
        return Hit(
            f"a binary needs {need}{have}: the wheel was built for a newer OS",
            evidence={"needs": lacks, "glibc": glibc, "symbol": symbol},
            fix=fix(
                f"Run on an OS or container image with glibc >= {lacks} "
                f"({_with_glibc(facts, lacks)}), or build the package from "
                "source here (pip install <package> --no-binary <package>), or install a "
                "release of the package whose wheel was built for this glibc (its manylinux "
                "tag)",
                "manual",
                manual(
                    f"use a base image with glibc >= {lacks} (e.g. ubuntu:22.04 "
                    "or the project's own container image)"
                ),
            ),
        )
    # the line names the package whose wheel needs it: the fixes threads take are that
    # package's own (an older release built for this glibc, or a build from source here),
    # besides a newer OS (vllm-project/vllm#15469: vLLM < 0.7.3 on CentOS 7)
    version = facts.known_version(dist)
    older = (
        f'"{dist}<{version.public}"' if version is not None else f'"{dist}<the installed release"'
    )
    return Hit(
        f"a binary{by} needs {need}{have}: the {dist} wheel was built for a newer OS",
        evidence={
            "needs": lacks,
            "glibc": glibc,
            "package": dist,
            "required_by": needed_by,
            "symbol": symbol,
        },
        fix=fix(
            f"Install a {dist} release whose wheel was built for this glibc (an older one: "
            f"pip install {older}; its manylinux tag says the glibc it needs), or build "
            f"{dist} from source here (pip install --no-binary {dist} --force-reinstall "
            f"{dist}), or run on an OS or container image with glibc >= "
            f"{lacks} ({_with_glibc(facts, lacks)})",
            "manual",
            manual(f"pip install {older}  (a release built for this glibc)"),
            manual(f"pip install --no-binary {dist} --force-reinstall --no-cache-dir {dist}"),
            manual(
                f"use a base image with glibc >= {lacks} (e.g. ubuntu:22.04 or "
                "the project's own container image)"
            ),
        ),
    )


@from_log("SYS132")
def glibc_symbol_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """An `undefined symbol` of glibc itself (`undefined symbol: fcntl64`, no version label):
    the release that added it (the matrix's glibc symbols, from glibc's ABI list) is the glibc
    the binary needs. A node whose glibc has it rules the cause out. Lines without such a symbol
    (the loader's GLIBC_x.y lines) are left to the node's facts."""
    symbol = line.stated.get("undefined_symbol")
    added = facts.matrix.first_release("glibc", "symbol", symbol) if symbol else None
    if symbol is None or added is None:
        raise Skip("the line names no glibc symbol the matrix knows", "log.loader")
    glibc: str | None = None
    try:
        glibc = facts.system().glibc
    except Skip:
        glibc = None
    if glibc:
        try:
            if Version(glibc) >= added:
                return None  # this glibc exports it: another library failed to provide it
        except InvalidVersion:
            pass
    return _lacking(facts, str(added), line.stated.get("library_path"), glibc, symbol=symbol)


def _glibc_needer(facts: Facts, path: str | None) -> str | None:
    """The distribution whose file (under site-packages) a GLIBC line says needs the version;
    None outside site-packages and for glibc's own libraries."""
    if not path:
        return None
    found = _SITE_TOP.search(path)
    if found is None or found.group("top").startswith("_"):
        return None
    from envcheck.rules.node.imports import distribution_of

    top = found.group("top")
    if top.endswith(".libs"):  # auditwheel's vendored folder: numpy.libs -> numpy
        top = top.removesuffix(".libs")
    return distribution_of(facts, top)


_SITE_TOP = lazy(r"[/\\](?:site|dist)-packages[/\\](?P<top>[A-Za-z0-9_.]+?)(?:\.libs)?[/\\]")


# /etc/os-release IDs of the distributions whose packages are RPMs (dnf/yum) and of those whose
# are Debian's (apt)
RPM_FAMILY = frozenset({"rhel", "rocky", "almalinux", "centos", "fedora", "amzn", "ol"})
DEB_FAMILY = frozenset({"ubuntu", "debian", "linuxmint", "pop"})


def _os_family(facts: Facts) -> str | None:
    """ "rhel" or "debian" for the node's distribution (its os-release ID, or the one a log's
    environment list names); None where unknown."""
    try:
        os_id = (facts.system().os_id or "").lower()
    except Skip:
        return None
    if os_id in RPM_FAMILY:
        return "rhel"
    if os_id in DEB_FAMILY:
        return "debian"
    return None


@rule("SYS133", "system-library-missing", Severity.ERROR)
def system_library_missing(facts: Facts) -> Iterable[Hit]:
    """A system library a simulator or renderer loads is missing

    ## What it checks
    Shared libraries a log says the loader could not open (`libGLU.so.1: cannot open shared
    object file`) that come from the OS's packages (GLU, GL, EGL, the Vulkan loader, OSMesa).

    ## Why it matters
    Isaac Sim's RTX / iray renderer loads libGLU at start-up; without it the renderer fails
    (`Creating rtx::raytracing::SubsurfaceContext failed`, `HydraEngine rtx failed creating scene
    renderer`). Container images and new OS releases often lack these packages.

    ## Example
    Isaac Sim 5.1 on Ubuntu 26.04 without libglu1-mesa.

    ## Fix
    Install the package that ships the library (`apt install libglu1-mesa` for libGLU.so.1,
    `libvulkan1` for libvulkan.so.1, `libosmesa6` for OSMesa); on the RHEL family (RHEL, Rocky,
    AlmaLinux, CentOS, Fedora, Amazon Linux: the node's os-release ID, or the distribution a log's
    environment list names) the RPM the `[[soname]]` table names (`dnf install mesa-libGL`),
    beside apt's where the distribution is unknown.

    ## References
    - https://github.com/isaac-sim/IsaacLab/issues/5777
    - https://github.com/mani-skill/ManiSkill/issues/160
    """
    try:
        missing = facts.libraries().missing
    except Skip:
        return []
    known = [(lib, SYSTEM_LIBRARIES[lib]) for lib in missing if lib in SYSTEM_LIBRARIES]
    if not known:
        return []
    packages = sorted({pkg for _, pkg in known})
    older = [OLDER_PACKAGES[p] for p in packages if p in OLDER_PACKAGES]
    # what the [[soname]] table adds (other names of the package, the wheel that avoids it)
    notes = " ".join(
        dict.fromkeys(e.note for lib, _ in known for e in facts.matrix.soname(lib) if e.note)
    )
    # the RHEL family's package for the same library (the [[soname]] table's dnf field)
    rpms = sorted(
        {
            name
            for lib, _ in known
            for e in facts.matrix.soname(lib)
            for name in package_names(e.dnf)[:1]
        }
    )
    family = _os_family(facts)
    if family == "rhel" and rpms:
        return [
            Hit(
                f"{', '.join(lib for lib, _ in known)} cannot be opened: the OS package that "
                f"ships {'it' if len(known) == 1 else 'them'} is not installed",
                evidence={"missing": [lib for lib, _ in known], "os_family": family},
                fix=fix(
                    f"Install {' '.join(rpms)}: sudo dnf install {' '.join(rpms)} (sudo yum "
                    f"install {' '.join(rpms)} where dnf is not there)",
                    "manual",
                    manual(f"sudo dnf install -y {' '.join(rpms)}"),
                ),
            )
        ]
    rhel = (
        f"; on RHEL, Rocky, AlmaLinux, CentOS, Fedora or Amazon Linux: sudo dnf install "
        f"{' '.join(rpms)} (or yum install {' '.join(rpms)})"
        if rpms and family is None
        else ""
    )
    return [
        Hit(
            f"{', '.join(lib for lib, _ in known)} cannot be opened: the OS package that ships "
            f"{'it' if len(known) == 1 else 'them'} is not installed",
            evidence={"missing": [lib for lib, _ in known]},
            fix=fix(
                f"Install {' '.join(packages)}: {apt_words(' '.join(packages))}"
                + (f"; older releases: {apt_words(' '.join(older))}" if older else "")
                + rhel
                + (f". {notes}" if notes else ""),
                "manual",
                manual(f"sudo apt-get install -y {' '.join(packages)}"),
                *(
                    [manual(f"sudo apt-get install -y {' '.join(older)}  (Ubuntu <= 22.04)")]
                    if older
                    else []
                ),
                *([manual(f"sudo dnf install -y {' '.join(rpms)}  (RHEL family)")] if rhel else []),
                *(
                    [
                        manual(
                            "pip uninstall -y opencv-python && pip install "
                            "opencv-python-headless  (when cv2 is what loads it)"
                        )
                    ]
                    if any(lib in HEADLESS_AVOIDS for lib, _ in known)
                    else []
                ),
            ),
        )
    ]
