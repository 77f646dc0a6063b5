"""Shared pieces of the text parsers: reading and decoding input, the blank ingested report,
and the facts several formats derive the same way (torch's build, PEP 508 markers, OS names).

A parser fills only what its text says; every other section stays unavailable with the reason
"not in <format>", so rules skip instead of guessing.
"""

from __future__ import annotations

import codecs
import datetime as _dt
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from envcheck.errors import InputError
from envcheck.inputs import MAX_BYTES, utf16_codec  # one cap for every input
from envcheck.model.report import Distribution, NodeReport, Origin, PackagesInfo, TorchBuild
from envcheck.model.section import Section
from envcheck.probes.torch_build import is_cuda_dist, variant_of
from envcheck.version import __version__

STDIN = "-"
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


class FormatError(InputError):
    """Text that is not in a format envcheck reads (or not in the one forced)."""


class NoFactsError(FormatError):
    """Readable text that states no environment fact in any format envcheck reads (prose, a
    log): ``check`` refuses it; ``triage`` checks the log's causes without a node instead."""


@dataclass(frozen=True)
class Source:
    """One input as text: where it came from, and what decoding it needed."""

    name: str  # the path as given, or "<stdin>"
    text: str
    notes: tuple[str, ...] = ()

    @property
    def stem(self) -> str:
        return "stdin" if self.name == "<stdin>" else (Path(self.name).stem or self.name)


def decode(data: bytes, name: str) -> Source:
    """Bytes to text. UTF-16 with a BOM (PowerShell's `>`) or without one (every other byte
    NUL) and UTF-8 are read as such; other bytes are replaced, with a note. NUL bytes in UTF-8
    text mean binary data: refused."""
    notes: list[str] = []
    codec = utf16_codec(data[:65536])
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        text = data.decode("utf-16", errors="replace")
        notes.append("decoded as UTF-16 (byte order mark)")
    elif codec is not None:  # Windows' UTF-16 without its mark: every other byte NUL
        text = data.decode(codec, errors="replace")
        notes.append(f"decoded as {codec.upper()} (no byte order mark)")
    else:
        if b"\x00" in data[:65536]:
            raise FormatError("format not recognised: binary data, not text", where=name)
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            text = data.decode("utf-8", errors="replace")
            notes.append(f"not valid UTF-8 (first bad byte at offset {exc.start}); replaced")
    text = _ANSI.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    return Source(name=name, text=text, notes=tuple(notes))


def read_source(path: str) -> Source:
    """A file (or ``-`` for standard input) as a Source; at most MAX_BYTES."""
    from envcheck.inputs import read_bytes

    name = "<stdin>" if path == STDIN else path
    data = read_bytes(
        path,
        limit=MAX_BYTES,
        error=FormatError,
        too_big="for an environment report (for a log, use `envcheck triage`)",
    )
    if not data.strip():
        raise FormatError("format not recognised: the input is empty", where=name)
    return decode(data, name)


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def blank(source: Source, label: str) -> NodeReport:
    """A report with every section unknown, marked as ingested from ``source`` as ``label``."""
    reason = f"not in {label}"
    unknown: Section[Any] = Section.unavailable(reason, source=label)
    return NodeReport(
        node=source.stem,
        envcheck_version=__version__,
        created_at=now(),
        origin=Origin(kind="ingested", detail=f"{source.name} ({label})"),
        gpu=unknown,
        python=unknown,
        packages=unknown,
        torch=unknown,
        system=unknown,
        storage=unknown,
        libraries=unknown,
        network=unknown,
        env=unknown,
        graphics=unknown,
        workload=unknown,
    )


def valid_version(text: str | None) -> str | None:
    """The text when it is a PEP 440 version, else None."""
    if not text:
        return None
    try:
        Version(text)
    except InvalidVersion:
        return None
    return text


def major_minor(text: str | None) -> str | None:
    """'12.1.105' -> '12.1'; None when the text is not a version."""
    if not valid_version(text):
        return None
    release = Version(text or "").release
    return f"{release[0]}.{release[1] if len(release) > 1 else 0}"


def markers(version: str, arch: str | None, implementation: str = "CPython") -> dict[str, str]:
    """The PEP 508 marker environment a Linux Python of this version and implementation has."""
    v = Version(version)
    out = {
        "implementation_name": implementation.lower(),
        "platform_python_implementation": implementation,
        "python_version": f"{v.major}.{v.minor}",
        "python_full_version": version,
        "sys_platform": "linux",
        "platform_system": "Linux",
        "os_name": "posix",
    }
    if arch:
        out["platform_machine"] = arch
    return out


_OS_IDS = {
    "ubuntu": "ubuntu",
    "debian": "debian",
    "centos": "centos",
    "red hat": "rhel",
    "rocky": "rocky",
    "almalinux": "almalinux",
    "alibaba": "alinux",
    "amazon": "amzn",
    "fedora": "fedora",
    "opensuse": "opensuse",
}


def parse_os(pretty: str | None) -> tuple[str | None, str | None]:
    """('ubuntu', '22.04') from 'Ubuntu 22.04.3 LTS'; Nones when the name is unfamiliar."""
    if not pretty:
        return None, None
    lower = pretty.lower()
    os_id = next((v for k, v in _OS_IDS.items() if lower.startswith(k)), None)
    match = re.search(r"\b(\d+(?:\.\d+)?)", pretty)
    version = match.group(1) if match else None
    return os_id, version


def dist(name: str, version: str, installer: str | None = None) -> Distribution:
    return Distribution(name=name, version=version, installer=installer)


def dedupe(dists: list[Distribution]) -> tuple[Distribution, ...]:
    """First occurrence of each distribution name wins (text lists repeat them)."""
    seen: set[str] = set()
    out = []
    for d in dists:
        if d.key not in seen:
            seen.add(d.key)
            out.append(d)
    return tuple(out)


def torch_section(
    packages: PackagesInfo | None,
    label: str,
    *,
    version: str | None = None,
    cuda: str | None = None,
    cuda_known: bool = False,
    hip: str | None = None,
    notes: tuple[str, ...] = (),
) -> Section[TorchBuild]:
    """torch's build from what a text says: its version (``+cuXYZ`` label or the package list)
    and, when stated, the CUDA it was built with (``cuda_known``: None then means a CPU build)."""
    listed = packages.get("torch") if packages is not None else None
    version = version or (listed.version if listed else None)
    if version is None:
        if packages is not None and not packages.partial:
            return Section.unavailable("torch is not installed", source=label)
        return Section.unavailable(f"torch not in {label}", source=label)
    local, variant = variant_of(version, cuda, hip, known=cuda_known)
    installed = (
        {d.key: d.version for d in packages.distributions if is_cuda_dist(d.name)}
        if packages is not None
        else {}
    )
    build = TorchBuild(
        version=version,
        local_label=local,
        cuda=cuda or (_label_cuda(local) if local else None),
        hip=hip,
        variant=variant,
        installed_cuda=installed,
    )
    return Section.ok(build, source=label, notes=notes)


def _label_cuda(label: str) -> str | None:
    match = re.fullmatch(r"cu(\d+)(\d)", label)
    return f"{match.group(1)}.{match.group(2)}" if match else None


def canonical(name: str) -> str:
    return canonicalize_name(name)
