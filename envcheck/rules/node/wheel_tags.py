"""PKG194: pip refused a wheel file because none of its tags is one this interpreter and
platform accept (pypa/pip src/pip/_internal/req/req_install.py / resolution/resolvelib's
``UnsupportedWheel``: f"{wheel.filename} is not a supported wheel on this platform."), for any
package. The file name carries everything pip compared (PEP 427 / the platform compatibility
tags spec): ``{name}-{version}(-{build})?-{python tag}-{abi tag}-{platform tag}.whl``. The tags
are read with ``packaging.utils.parse_wheel_filename``; the Python each accepts from the
interpreter and ABI tags (``cp310``: CPython 3.10 only; ``abi3``: that version and later;
``py3``: any); the platform from the platform tag (``manylinux_2_34_x86_64``: Linux x86_64 with
glibc 2.34 or newer). Against the node's Python (stated by the log, a pasted environment or a
spec), glibc, OS and CPU, the rule names the tag that does not fit and the two ways out: the
same release's file for this node (its name with this node's tags) or a node (a Python
environment) the file is for. A local version label (flash-attn's ``+cu12torch2.5cxx11abiFALSE``)
is not a tag pip checks, but it names the torch, CUDA and C++ ABI the file was built for: the
replacement must match those too."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import unquote

from packaging.tags import Tag
from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Action, Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.fixes import fix, manual

_WHEEL = lazy(r"(?P<file>[A-Za-z0-9_.+%!-]+\.whl) is not a supported wheel on this platform")
_PY = lazy(r"^(?P<impl>cp|py|pp)(?P<major>[23])(?P<minor>[0-9]*)$")
_MANYLINUX = lazy(r"^manylinux_(?P<major>[0-9]+)_(?P<minor>[0-9]+)_(?P<arch>.+)$")
# PEP 600's legacy aliases: manylinux1 is glibc 2.5, manylinux2010 2.12, manylinux2014 2.17
_LEGACY = {"manylinux1": "2.5", "manylinux2010": "2.12", "manylinux2014": "2.17"}
_LABEL_TORCH = lazy(r"torch(?P<torch>[0-9]+\.[0-9]+)")
_ARCH = {"amd64": "x86_64", "x86_64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}


@dataclass(frozen=True)
class WheelTarget:
    """What one wheel file is for: the Pythons (``(3, 10)``; ``abi3`` from that one on; None:
    any 3.x), the OS, the CPU and the oldest glibc its platform tags name."""

    pythons: tuple[tuple[int, int], ...]
    stable_abi: bool
    os: str | None  # "linux", "windows", "macos"; None for 'any'
    arch: str | None
    glibc: Version | None


def _python(tag: Tag) -> tuple[int, int] | None:
    found = _PY.match(tag.interpreter)
    if found is None or not found.group("minor"):
        return None
    return int(found.group("major")), int(found.group("minor"))


def _platform(platform: str) -> tuple[str | None, str | None, Version | None]:
    if platform == "any":
        return None, None, None
    if platform.startswith("win"):
        return (
            "windows",
            _ARCH.get(platform.split("_", 1)[-1], "x86" if platform == "win32" else None),
            None,
        )
    if platform.startswith("macosx"):
        return "macos", _ARCH.get(platform.rsplit("_", 1)[-1]), None
    legacy = platform.split("_", 1)
    if legacy[0] in _LEGACY:
        return "linux", _ARCH.get(legacy[1], legacy[1]), Version(_LEGACY[legacy[0]])
    many = _MANYLINUX.match(platform)
    if many is not None:
        glibc = Version(f"{many.group('major')}.{many.group('minor')}")
        return "linux", _ARCH.get(many.group("arch"), many.group("arch")), glibc
    if platform.startswith("linux_"):
        return "linux", _ARCH.get(platform[len("linux_") :], platform[len("linux_") :]), None
    return None, None, None


def wheel_target(tags: Iterable[Tag]) -> WheelTarget:
    """The Pythons and the platform a wheel's tags name (the first platform tag's, for files
    with several: they differ only in the glibc of their aliases)."""
    tags = sorted(tags, key=str)
    pythons = tuple(sorted({p for p in (_python(t) for t in tags) if p is not None}))
    os, arch, glibc = _platform(tags[0].platform) if tags else (None, None, None)
    glibcs = [g for g in (_platform(t.platform)[2] for t in tags) if g is not None]
    return WheelTarget(
        pythons=pythons,
        stable_abi=any(t.abi == "abi3" for t in tags),
        os=os,
        arch=arch,
        glibc=min(glibcs) if glibcs else glibc,
    )


def _py_words(python: tuple[int, int]) -> str:
    return f"{python[0]}.{python[1]}"


def _retagged(file: str, python: tuple[int, int]) -> str:
    """The file name with its Python and ABI tags set to ``python``'s CPython ones (the same
    release's file for this interpreter, where its publisher built one)."""
    stem, _, rest = file[: -len(".whl")].rpartition("-")  # rest: the platform tag
    head, _, _abi = stem.rpartition("-")
    head, _, _py = head.rpartition("-")
    cp = f"cp{python[0]}{python[1]}"
    return f"{head}-{cp}-{cp}-{rest}.whl"


def _built_for(facts: Facts, file: str) -> str:
    """The words on the file's local version label (as written: packaging lowercases it), and
    the torch it names against the torch installed, where the log or the environment states
    one (flash-attn's ``+cu12torch2.5cxx11abiFALSE``: torch 2.5's C++ API)."""
    version = file.split("-")[1] if file.count("-") >= 4 else ""
    label = version.partition("+")[2]
    if not label:
        return ""
    words = (
        f"; its local label +{label} names what it was built against (CUDA, torch, C++ ABI), "
        "which the replacement must match as well"
    )
    named = _LABEL_TORCH.search(label)
    torch = facts.known_version("torch") if named is not None else None
    if (
        named is not None
        and torch is not None
        and f"{torch.major}.{torch.minor}" != named.group("torch")
    ):
        words += (
            f" (it names torch {named.group('torch')}, and torch {torch} is installed: "
            f"pick the file labelled torch{torch.major}.{torch.minor})"
        )
    return words


def _node_python(facts: Facts) -> Version | None:
    try:
        return facts.python_version()
    except Skip:
        return None


@rule("PKG194", "wheel-tags-not-supported", Severity.ERROR)
def wheel_tags_not_supported(facts: Facts) -> Iterable[Hit]:
    """pip refused a wheel file whose tags this Python or platform does not accept

    ## What it checks
    pip's `X.whl is not a supported wheel on this platform` for any package: the file name's
    Python, ABI and platform tags (`cp310-cp310-linux_x86_64`) against the Python, OS, CPU and
    glibc the log, a pasted environment or a spec states. Only a log states the refusal.

    ## Why it matters
    pip installs a wheel only when one of its tags is among this interpreter's; repeating the
    install with the same file fails the same way, and a requirements file that pins one URL
    fails on every other Python.

    ## Example
    `ERROR: flash_attn-2.7.2.post1+cu12torch2.5cxx11abiFALSE-cp310-cp310-linux_x86_64.whl is
    not a supported wheel on this platform.` under Python 3.12: the file is for CPython 3.10.

    ## Fix
    Install the same release's file for this node (the `cp312-cp312` one for Python 3.12; a
    local label such as `+cu12torch2.5cxx11abiFALSE` must also match the torch, CUDA and C++
    ABI installed), or create a Python environment the file is for (`conda create -n py310
    python=3.10`, `uv venv --python 3.10`). `python -m pip debug --verbose` lists the tags this
    pip accepts.

    ## References
    - pypa/pip src/pip/_internal/models/wheel.py, src/pip/_internal/req/constructors.py
    - https://packaging.python.org/en/latest/specifications/platform-compatibility-tags/
    """
    raise Skip("only a log line states the wheel pip refused", "log.wheel_file")


def _env_commands(python: tuple[int, int]) -> list[Action]:
    words = _py_words(python)
    return [
        manual(f"conda create -n py{python[0]}{python[1]} python={words}"),
        manual(f"uv venv --python {words}"),
    ]


@from_log("PKG194")
def wheel_tags_in_log(facts: Facts, line: LogLine) -> Hit:
    stated = line.stated.get("wheel_file")
    found = _WHEEL.search(line.text)
    file = unquote(stated or (found.group("file") if found else "")).rsplit("/", 1)[-1]
    if not file:
        raise NotStated("the line does not name the wheel file", "log.wheel_file")
    try:
        name, version, _build, tags = parse_wheel_filename(file)
    except InvalidWheelFilename:
        raise NotStated(
            f"{file} is not a wheel file name pip could read", "log.wheel_file"
        ) from None
    target = wheel_target(tags)
    who = "uv" if "URL dependency is incompatible" in line.text else "pip"
    where = " ".join(
        w
        for w in (
            {"linux": "Linux", "windows": "Windows", "macos": "macOS"}.get(target.os or ""),
            target.arch,
        )
        if w
    )
    pys = ", ".join(_py_words(p) for p in target.pythons)
    if target.pythons:
        pys = f"CPython {pys}{' and later' if target.stable_abi else ''}"
    wants = " on ".join(w for w in (pys, where) if w) or "another platform"
    if target.glibc is not None:
        wants += f" (glibc {target.glibc} or newer)"
    built = _built_for(facts, file)
    node_py = _node_python(facts)
    here = (node_py.major, node_py.minor) if node_py is not None else None
    evidence: dict[str, object] = {
        "line": line.line,
        "wheel": file,
        "tags": sorted(str(t) for t in tags),
        "python": str(node_py) if node_py is not None else None,
    }
    python_fits = (
        here is None
        or not target.pythons
        or (here in target.pythons or (target.stable_abi and here >= min(target.pythons)))
    )
    if here is not None and not python_fits:
        theirs = target.pythons[0]
        mine = _retagged(file, here)
        summary = (
            f"The wheel is for {wants} and this Python is {_py_words(here)}: install the same "
            f"release's cp{here[0]}{here[1]} file ({mine}, where its publisher built one){built}; "
            f"or run it under Python {_py_words(theirs)} (conda create -n "
            f"py{theirs[0]}{theirs[1]} python={_py_words(theirs)}, or uv venv --python "
            f"{_py_words(theirs)})"
        )
        return Hit(
            f"{who} refused {file} (line {line.line}): its tags are for {wants}, and this Python is "
            f"{node_py}",
            evidence=evidence,
            fix=fix(summary, "unsafe", manual(f"pip install {mine}"), *_env_commands(theirs)),
        )
    other = _platform_mismatch(facts, target, line.stated.get("wheel_host_tag"))
    if other is not None:
        return Hit(
            f"{who} refused {file} (line {line.line}): its tags are for {wants}, and {other}",
            evidence=evidence,
            fix=fix(
                f"Install {name} {version.public} from a file built for this node's platform "
                f"(pip install {name}=={version.public} picks one where the index has it; else a "
                f"source build), or run it where the file is for ({wants}){built}",
                "unsafe",
                manual(f"pip install {name}=={version.public}"),
            ),
        )
    first = target.pythons[0] if target.pythons else None
    summary = (
        f"The wheel is for {wants}: pip accepts it only under that Python and platform. Check "
        "the interpreter pip runs under (python -m pip debug --verbose lists the tags it "
        f"accepts) and install the file whose tags it lists{built}"
    )
    actions: list[Action] = [manual("python -m pip debug --verbose")]
    if first is not None:
        summary += (
            f", or run it under Python {_py_words(first)} (conda create -n py{first[0]}{first[1]} "
            f"python={_py_words(first)}, or uv venv --python {_py_words(first)})"
        )
        actions += _env_commands(first)
    return Hit(
        f"{who} refused {file} (line {line.line}): its tags are for {wants}"
        + (f" and this Python is {node_py}" if node_py is not None else ""),
        evidence=evidence,
        fix=fix(summary, "unsafe", *actions),
    )


def _platform_mismatch(facts: Facts, target: WheelTarget, host_tag: str | None) -> str | None:
    """What in the node's stated system the file's platform tag excludes: another OS or CPU
    (uv's hint names this node's platform tag), a glibc older than its manylinux tag; None when
    nothing stated is against it."""
    if host_tag:
        os, arch, _glibc = _platform(host_tag)
        if (target.os and os and target.os != os) or (target.arch and arch and target.arch != arch):
            return f"this node's platform is {host_tag}"
    try:
        system = facts.system()
    except Skip:
        return None
    arch = _ARCH.get(system.arch or "", system.arch)
    if target.arch and arch and target.arch != arch:
        return f"this node's CPU is {arch}"
    glibc = system.glibc
    if target.glibc is not None and glibc:
        try:
            if Version(glibc) < target.glibc:
                return f"this node's glibc is {glibc}"
        except ValueError:
            return None
    return None
