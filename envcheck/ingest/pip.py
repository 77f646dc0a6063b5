"""Package lists from pip and uv: ``pip freeze``, ``uv pip freeze``, ``pip list`` (columns, also
``-v``) and ``pip list --format=json``.

They name distributions and versions, nothing else: the packages section (and torch's version)
is known, every other section stays unknown. ``pip freeze`` leaves out pip, setuptools and
wheel (a note says so; no rule reads them). An entry without a readable version
(``name @ file:///...`` of a source tree) keeps the version ``unknown``; rules that need it skip.
"""

from __future__ import annotations

import json
import re
from urllib.parse import unquote

from packaging.utils import InvalidName, canonicalize_name

from envcheck.ingest.common import (
    FormatError,
    Source,
    blank,
    dedupe,
    dist,
    markers,
    torch_section,
    valid_version,
)
from envcheck.model.report import Distribution, NodeReport, PackagesInfo, PythonInfo
from envcheck.model.section import Section

UNKNOWN = "unknown"
_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_PINNED = re.compile(rf"^({_NAME})(?:\[[^\]]*\])?\s*===?\s*([^\s;#]+)")
_DIRECT = re.compile(rf"^({_NAME})(?:\[[^\]]*\])?\s*@\s*(\S+)")
_EDITABLE_COMMENT = re.compile(rf"^#.*\(({_NAME})==([^)\s]+)\)\s*$")
_WHEEL_FILE = re.compile(r"/([A-Za-z0-9_.]+)-([^-/]+)(?:-\d[^-/]*)?-[^-/]+-[^-/]+-[^-/]+\.whl$")
_EGG = re.compile(rf"[#&]egg=({_NAME})")


def _url_version(name: str, url: str) -> str | None:
    match = _WHEEL_FILE.search(unquote(url.split("#", 1)[0]))
    if match and canonicalize_name(match.group(1)) == canonicalize_name(name):
        return valid_version(match.group(2))
    return None


_PYTHON_LINE = re.compile(r"^python3?\s*==?\s*(3\.[0-9]+(?:\.[0-9]+)?)\s*$")


def is_freeze_line(line: str) -> bool:
    line = line.strip()
    return bool(
        _PYTHON_LINE.match(line)
        or _PINNED.match(line)
        or _DIRECT.match(line)
        or line.startswith(("-e ", "--editable "))
    )


def parse_freeze(source: Source, label: str = "pip freeze") -> NodeReport:
    dists: list[Distribution] = []
    notes: list[str] = list(source.notes)
    unnamed: list[str] = []
    pending: tuple[str, str] | None = None  # from "# Editable ... (name==version)"
    python_version: str | None = None
    for raw in source.text.splitlines():
        line = raw.strip()
        if not line:
            continue
        comment = _EDITABLE_COMMENT.match(line)
        if comment:
            pending = (comment.group(1), comment.group(2))
            continue
        if line.startswith("#"):
            continue
        if line.startswith(("-e ", "--editable ")):
            target = line.split(None, 1)[1]
            egg = _EGG.search(target)
            if pending is not None:
                dists.append(dist(pending[0], pending[1], "editable"))
            elif egg:
                dists.append(dist(egg.group(1), UNKNOWN, "editable"))
            else:
                unnamed.append(target)
            pending = None
            continue
        pending = None
        python = _PYTHON_LINE.match(line)
        if python:  # "python=3.10.12" (conda's spelling) heading a pasted freeze
            python_version = python.group(1)
            continue
        pinned = _PINNED.match(line)
        if pinned:
            dists.append(dist(pinned.group(1), pinned.group(2)))
            continue
        direct = _DIRECT.match(line)
        if direct:
            name, url = direct.group(1), direct.group(2)
            dists.append(dist(name, _url_version(name, url) or UNKNOWN))
            continue
        if line.startswith("-"):
            continue  # options such as --index-url in a requirements file
        notes.append(f"line not understood, skipped: {line[:80]}")
    if not dists:
        raise FormatError(f"format not recognised as {label}: no 'name==version' lines")
    names = {d.key for d in dists}
    partial = None
    if unnamed:
        partial = f"{len(unnamed)} editable install(s) without a name: {', '.join(unnamed[:3])}"
    if label == "pip freeze" and not names & {"pip", "setuptools"}:
        notes.append(
            "pip freeze does not list pip, setuptools or wheel: their versions are unknown"
        )
    report = _report(source, label, dedupe(dists), partial, tuple(notes))
    if python_version is not None and valid_version(python_version):
        report = report.with_sections(
            python=Section.ok(
                PythonInfo(version=python_version, markers=markers(python_version, None)),
                source=label,
                notes=("from a 'python=' line",),
            )
        )
    return report


def _report(
    source: Source,
    label: str,
    dists: tuple[Distribution, ...],
    partial: str | None,
    notes: tuple[str, ...],
) -> NodeReport:
    info = PackagesInfo(distributions=dists, partial=partial)
    report = blank(source, label)
    return report.with_sections(
        packages=Section.ok(info, source=label, notes=notes),
        torch=torch_section(info, label),
    )


def _columns(rule: str, header: str) -> list[tuple[str, int, int]]:
    """(title, start, end) of each column, from the dashed rule under the header."""
    spans = [(m.start(), m.end()) for m in re.finditer(r"-+", rule)]
    return [(header[a:b].strip(), a, b) for a, b in spans]


def parse_list(source: Source) -> NodeReport:
    """``pip list`` columns: a header, a dashed rule, then one row per distribution. Columns
    are cut where the rule's dashes are (``pip list -v`` adds Location and Installer, and an
    editable install fills an otherwise blank column)."""
    lines = [line for line in source.text.splitlines() if line.strip()]
    start = next((i for i, line in enumerate(lines) if re.match(r"^-+(\s+-+)+\s*$", line)), None)
    if start is None or start == 0 or lines[start - 1].split()[:2] != ["Package", "Version"]:
        raise FormatError("format not recognised as pip list: no 'Package  Version' header")
    columns = _columns(lines[start], lines[start - 1])
    dists: list[Distribution] = []
    notes: list[str] = list(source.notes)
    for line in lines[start + 1 :]:
        cells = {
            title: line[a : b + 40 if i == len(columns) - 1 else b].strip()
            for i, (title, a, b) in enumerate(columns)
        }
        name, version = cells.get("Package", ""), cells.get("Version", "")
        words = line.split()
        if (not _valid_name(name) or " " in version or not valid_version(version)) and (
            len(words) >= 2 and _valid_name(words[0]) and valid_version(words[1])
        ):
            # the columns do not line up (a paste that collapsed the padding): read the words
            name, version, cells = words[0], words[1], {}
        if not name or not version or not _valid_name(name) or " " in version:
            notes.append(f"line not understood, skipped: {line[:80]}")
            continue
        editable = cells.get("Editable project location") or None
        dists.append(
            Distribution(
                name=name,
                version=version,
                location=cells.get("Location") or editable,
                installer="editable" if editable else (cells.get("Installer") or None),
            )
        )
    if not dists:
        raise FormatError("format not recognised as pip list: no packages listed")
    return _report(source, "pip list", dedupe(dists), None, tuple(notes))


def parse_json(source: Source) -> NodeReport:
    """``pip list --format=json``: a JSON array of {"name", "version"[, "editable_project_location"]}."""
    try:
        data = json.loads(source.text)
    except ValueError as exc:
        raise FormatError(f"not JSON ({exc.args[0]})", where=source.name) from None
    except RecursionError:
        raise FormatError("JSON nested too deeply", where=source.name) from None
    if not isinstance(data, list) or not data:
        raise FormatError("format not recognised as pip list --format=json: not a list")
    dists: list[Distribution] = []
    for i, item in enumerate(data):
        if not (
            isinstance(item, dict)
            and isinstance(item.get("name"), str)
            and isinstance(item.get("version"), str)
            and _valid_name(item["name"])
        ):
            raise FormatError(
                "format not recognised as pip list --format=json: entry without name and version",
                key=f"[{i}]",
            )
        editable = item.get("editable_project_location")
        dists.append(
            Distribution(
                name=item["name"],
                version=item["version"],
                location=editable if isinstance(editable, str) else None,
                installer="editable" if editable else None,
            )
        )
    return _report(source, "pip list --format=json", dedupe(dists), None, source.notes)


def _valid_name(name: str) -> bool:
    try:
        canonicalize_name(name, validate=True)
    except InvalidName:
        return False
    return True


def parse_uv_freeze(source: Source) -> NodeReport:
    return parse_freeze(source, label="uv pip freeze")
