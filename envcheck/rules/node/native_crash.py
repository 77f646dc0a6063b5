"""A process that crashed in native code, SIGSEGV or SIGABRT (matrices/signatures/signals.toml):
the causes public threads establish, decided by what the log states where it states them.

- TOR150: a compiled extension built against another torch crashes on the installed one (a
  torch upgrade under an extension pip built and cached earlier): the crashing command imports
  a torch extension beside torch.
- SYS203: two OpenMP runtimes in one process: the log names two packages that each bring
  their own (torch's bundled libgomp / libomp and another's).
- SYS250: the crash itself, its fix by what the log shows: the import order of native packages
  (torch imported after another package that loads its own copy of a runtime), the library the
  kernel's `segfault at ... in LIB[...]` or a backtrace's first frame names and the package that
  ships it (the soname table), or a compiled package the crashing code imports.

Nothing in a bare `Segmentation fault` decides among them: the cause stays open with the steps
that tell them apart (the faulthandler's stack, the import order, a rebuild)."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Action, Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.fixes import fix, manual, pip_install

# packages whose own binaries bring an OpenMP runtime into the process, with the source that
# says so. Two of them in one process are two runtimes unless they share the file.
OPENMP_BUNDLERS: dict[str, str] = {
    "torch": "torch's wheels ship their own OpenMP runtime: torch/lib/libgomp-<hash>.so.1 on "
    "Linux, torch/lib/libomp.dylib on macOS (the wheels' RECORD)",
    "xgboost": "dmlc/xgboost docs/install.rst (macOS: 'brew install libomp'; the Linux "
    "wheel links libgomp) ; https://github.com/dmlc/xgboost/issues/7039",
    "lightgbm": "microsoft/LightGBM docs/Installation-Guide.rst (macOS: 'brew install "
    "libomp'; the Linux wheel bundles lightgbm's libgomp)",
    "sklearn": "scikit-learn's wheels vendor libgomp (scikit_learn.libs/libgomp-*.so) and "
    "libomp on macOS (sklearn/.dylibs/libomp.dylib) ; sklearn/utils/_openmp_helpers.pyx",
    "faiss": "faiss-cpu's wheels vendor libgomp (faiss_cpu.libs/libgomp-*.so)",
}
_DISTRIBUTION = {"sklearn": "scikit-learn", "faiss": "faiss-cpu"}

# the libraries a backtrace's frames pass through on the way to the one that crashed: the C
# library, the signal handlers that print the backtrace, the interpreter, libffi
_FRAMES_SKIPPED = lazy(
    r"^lib(c|pthread|dl|ucs|ucm|python3?[0-9.]*m?|ffi|gcc_s|stdc\+\+|unwind|backtrace)[.-]"
)
_IMPORT = lazy(r"\b(?:import|from)\s+([A-Za-z_][A-Za-z0-9_]*(?:\s*,\s*[A-Za-z_][A-Za-z0-9_]*)*)")
# the condition and fix of TOR150 and SYS203 where a crash's facts decide neither
_OPEN_FIXES = {
    "TOR150": "where the crash began after torch was upgraded or reinstalled: rebuild the "
    "compiled extensions against it (pip install --force-reinstall --no-cache-dir PKG)",
    "SYS203": "where two packages that bring their own OpenMP runtime are loaded (torch and "
    "xgboost, lightgbm, scikit-learn, faiss): change their import order, or make them share "
    "one libgomp/libomp",
}
_CHECK = "python -X faulthandler your_script.py  (prints each thread's Python stack at the crash)"
_GDB = "gdb -batch -ex run -ex bt --args python your_script.py  (the native frame that crashed)"


@rule("SYS250", "process-crashed-in-native-code", Severity.WARNING)
def process_crashed_in_native_code(facts: Facts) -> Iterable[Hit]:
    """A process crashed in native code (SIGSEGV, SIGABRT) without a Python error

    ## What it checks
    Only a log states it: the crash in the process's, the shell's or the kernel's words
    (`Segmentation fault (core dumped)`, `Fatal Python error: Segmentation fault`, glibc's
    `double free or corruption`, `free(): invalid pointer`, `terminate called ...`, glog's
    `*** SIGSEGV (@0x0) received by PID`, the kernel's `segfault at 0 ip ... in LIB[...]`) or
    in the words of what started it (torchrun's `exitcode : -11`, an exit status 139 or 134,
    Open MPI's `exited on signal 11`). The signal routes each line: 9, 7, 4 and 8 belong to
    SYS190, SYS101, SYS243 and CUD102. The fix is decided by what the log shows: the import
    order of the crashing command, the library the crash names and the package that ships it,
    a compiled package the code imports.

    ## Why it matters
    A native crash prints no traceback, so the job looks like a bug nobody can act on. On GPU
    nodes the causes threads establish are few: an extension compiled for another torch (or
    another release of the library it links) after an upgrade, two copies of a native runtime
    (OpenMP, libstdc++) in one process where the first import decides which one loads, a
    known-bad build of a library on this GPU.

    ## Example
    `python -c "import chainer;import torch"` ends with `Segmentation fault (core dumped)`
    while `import torch;import chainer` works.

    ## Fix
    Where the log shows torch and another native package imported: swap their order (torch
    first where it came second, the other package first where torch came first). Where the log names the package or library that crashed: rebuild or reinstall
    it against what is installed (`pip install --force-reinstall --no-cache-dir --no-binary
    PKG PKG`). Otherwise run it with `python -X faulthandler` (or under `gdb`, `bt`) to see
    which library crashed.

    ## References
    - https://github.com/espnet/espnet/pull/1446
    - https://github.com/notmahi/dobb-e/issues/4
    - https://github.com/dtamayo/reboundx/issues/123
    - https://docs.python.org/3/library/faulthandler.html
    """
    raise Skip("only a log states that a process crashed", "log.native_crash")


def _imports(line: LogLine) -> list[str]:
    """The top-level packages the crashed command imports, in order."""
    text = line.stated.get("crash_imports", "")
    names: list[str] = []
    for group in _IMPORT.findall(text):
        names += [n.strip() for n in group.split(",") if n.strip() not in names]
    package = line.stated.get("crash_package")
    if not names and package:
        names.append(package)
    return names


def _library(line: LogLine) -> str | None:
    lib = line.stated.get("crash_library")
    if lib is None:
        return None
    name = lib.rsplit("/", 1)[-1]
    return None if _FRAMES_SKIPPED.match(name) else name


def _openmp_packages(facts: Facts, line: LogLine, names: list[str]) -> list[str]:
    """The packages of the crashed process that each bring an OpenMP runtime: the command's
    imports, the one the lines above name (a pip freeze row), torch where the log states its
    version; and those the node has, only where the log shows the process loaded one of them
    (a package installed is not a package loaded: a segfault in code that imports neither,
    on a node with torch and scikit-learn installed, is not theirs)."""
    found = [n for n in names if n in OPENMP_BUNDLERS]
    named = line.stated.get("openmp_package", "").replace("scikit-learn", "sklearn")
    named = named.replace("faiss-cpu", "faiss")
    if named in OPENMP_BUNDLERS and named not in found:
        found.append(named)
    if "torch" not in found and line.stated.get("torch_version"):
        found.append("torch")
    if not found:
        return found
    for module in OPENMP_BUNDLERS:
        if module not in found and facts.known_version(_DISTRIBUTION.get(module, module)):
            found.append(module)
    return found


def _torch_extension(facts: Facts, names: list[str]) -> str | None:
    """A package built against torch that the crashing command imports beside torch: one
    whose name says it extends torch (torchsort, torch_scatter) or one the matrix's
    extensions table knows."""
    if "torch" not in names:
        return None
    for name in names:
        if name == "torch":
            continue
        if name.startswith("torch") or facts.matrix.extension(name) is not None:
            return name
    return None


def decided_cause(facts: Facts, line: LogLine) -> str | None:
    """Which of TOR150, SYS203 and SYS250 the crash line's facts decide, or None."""
    names = _imports(line)
    if _torch_extension(facts, names) is not None:
        return "TOR150"
    if len(_openmp_packages(facts, line, names)) >= 2:
        return "SYS203"
    return "SYS250"


def crash_reading(facts: Facts, line: LogLine, code: str) -> Hit | None:
    """TOR150's and SYS203's reading of a signal line: None (ruled out) where the signal
    belongs to another family, open where the facts decide another cause, else the finding."""
    from envcheck.rules.signals import routes_elsewhere

    if routes_elsewhere(line.signature, line.stated, code):
        return None
    if decided_cause(facts, line) != code:
        raise NotStated(
            f"line {line.line} states no fact that ties the crash to {code}",
            fix=_OPEN_FIXES[code],
        )
    return torch_extension_crash(facts, line) if code == "TOR150" else openmp_crash(facts, line)


def torch_extension_crash(facts: Facts, line: LogLine) -> Hit:
    """TOR150 from a crash: the extension the command imports beside torch, rebuilt."""
    ext = _torch_extension(facts, _imports(line)) or "the extension"
    dist = ext.replace("_", "-")
    return Hit(
        f"the process crashed in native code (line {line.line}) running {ext} with torch: a "
        f"compiled extension built against another torch (pip's cached build of {dist} from "
        "before a torch upgrade) crashes on the installed one",
        evidence={"line": line.line, "package": dist},
        fix=fix(
            f"Rebuild {dist} against the installed torch, bypassing pip's cached wheel: pip "
            f"install --force-reinstall --no-cache-dir {dist}",
            "manual",
            pip_install(dist, flags=("--force-reinstall", "--no-cache-dir")),
            manual(f"python -c 'import torch, {ext}'  (then the failing call again)"),
        ),
        severity=Severity.ERROR,
    )


def openmp_crash(facts: Facts, line: LogLine) -> Hit:
    """SYS203 from a crash: two packages that each bring an OpenMP runtime."""
    found = _openmp_packages(facts, line, _imports(line))
    names = " and ".join(_DISTRIBUTION.get(n, n) for n in found[:3])
    other = next((n for n in found if n != "torch"), found[-1])
    return Hit(
        f"the process crashed in native code (line {line.line}) with {names} loaded: each "
        "brings its own OpenMP runtime (libgomp / libomp), and two runtimes in one process "
        "crash in whichever runs a parallel region second",
        evidence={"line": line.line, "packages": ",".join(found)},
        fix=fix(
            f"Load one OpenMP runtime: import {other} before torch (or the other order, "
            "whichever works), or make both use the same libomp/libgomp (on macOS: one "
            "Homebrew or conda libomp for both); OMP_NUM_THREADS=1 avoids the crash at a cost",
            "manual",
            manual(f"import {other}  (as the first import, before torch)"),
            manual(
                "python -c 'import torch, sys; print(torch.__config__.parallel_info())'  "
                "(the OpenMP torch uses)"
            ),
            manual("export OMP_NUM_THREADS=1  (workaround)"),
        ),
        severity=Severity.ERROR,
    )


@from_log("SYS250")
def native_crash_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """The crash's fix by what the log shows; open (with the steps that decide it) where it
    shows nothing."""
    from envcheck.rules.signals import routes_elsewhere

    if routes_elsewhere(line.signature, line.stated, "SYS250"):
        return None
    cause = decided_cause(facts, line)
    if cause != "SYS250":
        raise NotStated(f"line {line.line}: the log's facts decide {cause}")
    if "terminate called after throwing" in line.text:
        raise NotStated(
            f"line {line.line} is C++'s terminate handler: the exception's what() line below it "
            "names the cause"
        )
    names = _imports(line)
    if len(names) >= 2 and "torch" in names:
        return _import_order(line, names)
    library = _library(line)
    if library is not None:
        return _library_hit(facts, line, library)
    framed = line.stated.get("crash_frame_package")
    package = next((n for n in reversed(names) if n not in ("torch", "numpy")), None)
    if framed is not None and framed not in ("torch", "numpy"):
        package = framed  # the code the crashing thread ran, over an import above it
    if package is not None:
        return _rebuild_hit(line, package)
    raise NotStated(
        f"line {line.line} states the crash but not where it happened",
        fix=f"find the library that crashed: {_CHECK}; where torch and another native package "
        "are imported, swap their import order (import torch first, or the other package "
        "first where torch came first); reinstall the package that crashed with pip install "
        "--force-reinstall --no-cache-dir --no-binary PKG PKG",
    )


def _import_order(line: LogLine, names: list[str]) -> Hit:
    """The crash of a process that imports torch and another native package: the order the
    log shows, swapped. The package imported first loads its copy of a runtime both use
    (OpenMP, libstdc++, protobuf) and the other runs on it; threads fix it by the other order
    (chainer, decord, open3d before torch crash where torch first works, and open3d after
    torch crashes where open3d first works)."""
    if names[0] != "torch":
        first, then = "torch", names[0]
    else:
        first, then = next(n for n in reversed(names) if n != "torch"), "torch"
    shown = ", ".join(names)
    return Hit(
        f"the process crashed (line {line.line}) with {shown} imported in that order: the "
        "package imported first loaded its own copy of a native runtime both use (OpenMP, "
        "libstdc++, protobuf), and the other crashes on it",
        evidence={"line": line.line, "imports": ",".join(names)},
        fix=fix(
            f"Swap the import order: import {first} before {then} (at the top of the script, "
            "in every module that imports either); then update the two packages so that they "
            "ship compatible runtimes",
            "manual",
            manual(f"python -c 'import {first}; import {then}'  (the order that works)"),
            manual(_CHECK),
        ),
        severity=Severity.ERROR,
    )


def _library_hit(facts: Facts, line: LogLine, library: str) -> Hit:
    wheels = facts.matrix.soname_wheels(library)
    ships = f" (shipped by {', '.join(wheels)})" if wheels else ""
    steps: list[Action] = []
    if wheels:
        steps.append(pip_install(wheels[0], flags=("--force-reinstall", "--no-cache-dir")))
    steps += [
        manual(
            f"ldd $(python -c 'import torch; print(torch._C.__file__)') | grep "
            f"{library.split('.so', 1)[0]}  (which copy loads)"
        ),
        manual(_GDB),
    ]
    return Hit(
        f"the process crashed in {library}{ships} (line {line.line}): a build of that library "
        "that does not fit this GPU, driver or the package that loads it, or two copies of it",
        evidence={"line": line.line, "library": library},
        fix=fix(
            f"Reinstall the package that ships {library} at the version the package that loads "
            "it was built with (or upgrade both); check that one copy of it loads",
            "manual",
            *steps,
        ),
        severity=Severity.ERROR,
    )


def _rebuild_hit(line: LogLine, package: str) -> Hit:
    dist = package.replace("_", "-")
    return Hit(
        f"the process crashed in native code (line {line.line}) running {package}: its "
        "prebuilt binary does not fit what is installed beside it (built against another "
        "release of a library it links)",
        evidence={"line": line.line, "package": dist},
        fix=fix(
            f"Build {dist} from source against what is installed: pip install --force-reinstall "
            f"--no-cache-dir --no-binary {dist} {dist}",
            "manual",
            pip_install(dist, flags=("--force-reinstall", "--no-cache-dir", "--no-binary", dist)),
            manual(_CHECK),
        ),
        severity=Severity.ERROR,
    )
