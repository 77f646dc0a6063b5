"""conda's package lists: ``conda list`` (columns) and ``conda env export`` (YAML).

Both list every package of the environment, conda's and pip's (channel ``pypi`` / the ``pip:``
block), so the list is complete. conda names differ from pip's for torch (``pytorch``); its
build string says the CUDA it was built with (``py3.10_cuda12.1_cudnn9.1.0_0``) or ``cpu``.
The ``python`` package gives the interpreter's version. Packages conda installed carry the
installer ``conda`` (rules use it: conda's torch links NCCL statically).
``conda env export --from-history`` lists only what was asked for, without versions: that list
is partial.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from envcheck.ingest.common import (
    FormatError,
    Source,
    blank,
    dedupe,
    markers,
    torch_section,
    valid_version,
)
from envcheck.ingest.pip import UNKNOWN
from envcheck.model.report import Distribution, NodeReport, PackagesInfo, PythonInfo
from envcheck.model.section import Section

CONDA_TO_PIP = {"pytorch": "torch", "pytorch-cpu": "torch", "pytorch-gpu": "torch"}
_CUDA_BUILD = re.compile(r"cuda(\d+)\.?(\d+)")
_ROW = re.compile(r"^(\S+)\s+(\S+)(?:\s+(\S+))?(?:\s+(\S+))?\s*$")
_PREFIX = re.compile(r"^#\s*packages in environment at\s+(.+?):?\s*$")


@dataclass(frozen=True)
class CondaPackage:
    name: str
    version: str
    build: str | None
    channel: str | None  # "pypi" for pip-installed packages


def torch_cuda(build: str | None) -> tuple[str | None, bool]:
    """CUDA of a conda pytorch build string, and whether the string says (cpu builds: None)."""
    if not build:
        return None, False
    match = _CUDA_BUILD.search(build)
    if match:
        return f"{match.group(1)}.{match.group(2)}", True
    return None, "cpu" in build


def to_report(
    source: Source,
    label: str,
    packages: list[CondaPackage],
    prefix: str | None,
    partial: str | None = None,
    notes: tuple[str, ...] = (),
) -> NodeReport:
    dists: list[Distribution] = []
    python: str | None = None
    torch_build: str | None = None
    for pkg in packages:
        if pkg.name == "python" and pkg.channel != "pypi":
            python = valid_version(pkg.version)
            continue
        name = CONDA_TO_PIP.get(pkg.name, pkg.name) if pkg.channel != "pypi" else pkg.name
        if name == "torch" and pkg.channel != "pypi":
            torch_build = pkg.build
        installer = "pip" if pkg.channel == "pypi" else "conda"
        dists.append(Distribution(name=name, version=pkg.version, installer=installer))
    if not dists and python is None:
        raise FormatError(f"format not recognised as {label}: no packages listed")
    info = PackagesInfo(distributions=dedupe(dists), partial=partial)
    cuda, known = torch_cuda(torch_build)
    report = blank(source, label)
    python_section = report.python
    if python is not None:
        env_name = prefix.rstrip("/").rsplit("/", 1)[-1] if prefix else None
        python_section = Section.ok(
            PythonInfo(
                version=python,
                prefix=prefix,
                env_kind="conda",
                env_name=env_name,
                markers=markers(python, None),
            ),
            source=label,
        )
    return report.with_sections(
        packages=Section.ok(info, source=label, notes=notes),
        torch=torch_section(info, label, cuda=cuda, cuda_known=known),
        python=python_section,
    )


def parse_list(source: Source) -> NodeReport:
    """``conda list``: '# packages in environment at PREFIX:', a '# Name Version Build Channel'
    header, then one row per package."""
    prefix = None
    packages: list[CondaPackage] = []
    notes: list[str] = list(source.notes)
    seen_header = False
    for raw in source.text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            found = _PREFIX.match(line)
            if found:
                prefix = found.group(1)
            seen_header = seen_header or ("Name" in line and "Version" in line)
            continue
        row = _ROW.match(line)
        if row is None:
            notes.append(f"line not understood, skipped: {line[:80]}")
            continue
        name, version, build, channel = row.groups()
        if channel is None and build == "pypi":
            build, channel = None, "pypi"
        packages.append(CondaPackage(name, version, build, channel))
    if not seen_header and prefix is None:
        raise FormatError("format not recognised as conda list: no '# Name Version' header")
    return to_report(source, "conda list", packages, prefix, notes=tuple(notes))


_SPEC = re.compile(r"^([A-Za-z0-9_.+-]+)(?:=([^=\s]+))?(?:=(\S+))?$")
_PIP_SPEC = re.compile(r"^([A-Za-z0-9_.\[\]-]+?)\s*==\s*(\S+)$")


def parse_env_export(source: Source) -> NodeReport:
    """``conda env export``: YAML with name, channels, dependencies (conda specs ``name=ver=build``
    and a nested ``pip:`` list of ``name==version``) and prefix. Read line by line: the format
    is fixed and a YAML library is not needed for it."""
    prefix = None
    in_deps = False
    in_pip = False
    packages: list[CondaPackage] = []
    notes: list[str] = list(source.notes)
    unversioned: list[str] = []
    for raw in source.text.splitlines():
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        indent = len(raw) - len(raw.lstrip())
        line = raw.strip()
        if indent == 0:
            in_deps = line == "dependencies:"
            in_pip = False
            if line.startswith("prefix:"):
                prefix = line.split(":", 1)[1].strip() or None
            continue
        if not in_deps or not line.startswith("- "):
            continue
        item = line[2:].strip().strip("'\"")
        if item == "pip:":
            in_pip = True
            continue
        if in_pip and indent > 2:
            pinned = _PIP_SPEC.match(item)
            if pinned:
                packages.append(CondaPackage(pinned.group(1), pinned.group(2), None, "pypi"))
            else:
                name = re.split(r"[\s<>=!~@;\[]", item, maxsplit=1)[0]
                packages.append(CondaPackage(name, UNKNOWN, None, "pypi"))
                unversioned.append(name)
            continue
        in_pip = False
        spec = _SPEC.match(item)
        if spec is None:
            notes.append(f"dependency not understood, skipped: {item[:80]}")
            continue
        name, version, build = spec.groups()
        if "::" in name:
            name = name.split("::", 1)[1]
        if version is None:
            unversioned.append(name)
        packages.append(CondaPackage(name, version or UNKNOWN, build, None))
    if not packages:
        raise FormatError("format not recognised as conda env export: no dependencies")
    partial = None
    if unversioned and not any(p.build for p in packages):
        partial = "conda env export --from-history lists only the packages asked for"
    elif unversioned:
        notes.append(f"no version given for {', '.join(unversioned[:5])}")
    return to_report(source, "conda env export", packages, prefix, partial, tuple(notes))
