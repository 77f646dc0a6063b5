"""An environment pasted into the log itself: a ``collect_env`` block, an ``nvidia-smi`` table,
``vllm collect-env`` or SGLang's ``check_env`` printed before or after the traceback, as issue
threads and job logs hold them. Its facts (the GPU, the driver, torch's version and CUDA, the
packages) decide causes a matched line leaves open ("no kernel image" on which GPU, with which
torch), so triage reads them like the facts of a ``--from`` dump, from the log's head.

Only the fixed formats count (each found by its own markers, envcheck/ingest/detect.py):
loose prose ("torch 2.1") in a log is too often a line about something else. Beside them, the
host's container engine and limits pasted with the failure (``docker info``, daemon.json, the
NVIDIA Container Toolkit's config.toml and version, ``ulimit -a``, ``df -h /dev/shm``, ``free
-h``: sections with markers of their own, envcheck/ingest/container_text.py and
shell_values.py), ``pip list`` with its header and rule, ``conda list`` with its header and
``pip freeze`` (three ``name==version`` rows or more, or such pins run together on one line by
rendered Markdown, and nothing else on it: a ``pip install`` command is not one) are read the
same way, and so is the ``- Key: value`` report of ``transformers
env`` and its kin (envcheck/ingest/library_env.py), a block no error line looks like.
"""

from __future__ import annotations

import dataclasses
import gzip
import re
import zlib

from envcheck.errors import InputError
from envcheck.model.report import NodeReport

# formats a log may carry pasted inside it, found by markers no error line has
PASTED_FORMATS = (
    "collect-env",
    "vllm-env",
    "sglang-env",
    "nvidia-smi",
    "nvidia-smi-q",
    "nvidia-smi-xml",
)
# sections of a pasted text a log may carry beside its lines (ingest/paste.py's kinds)
PASTED_SECTIONS = frozenset(
    {
        "docker-info",
        "daemon-json",
        "toolkit-config",
        "toolkit-version",
        "ulimit",
        "df",
        "free",
        "nvidia-smi-csv",
        "pip-list",
        "conda-list",
        "pip-freeze",
    }
)
HEAD = 2 * 1024 * 1024  # bytes of the log read for a pasted environment


def pasted_environment(text: str, name: str) -> NodeReport | None:
    """The node as an environment block pasted in ``text`` describes it; None when the text
    holds none (or one that does not parse)."""
    from envcheck.ingest.common import FormatError, Source
    from envcheck.ingest.detect import FORMATS, detect, unwrap

    text = unwrap(text)
    found = detect(text)
    if found not in PASTED_FORMATS:
        sections = _with_one_line_freeze(_pasted_sections(text, name), text, name)
        return _with_library_env(sections, text, name)
    try:
        report = FORMATS[found].parse(Source(name, text))
    except (FormatError, ValueError):
        return None
    label = FORMATS[found].label
    origin = dataclasses.replace(report.origin, detail=f"{label} pasted in {name}")
    return dataclasses.replace(report, origin=origin)


# a string each of PASTED_SECTIONS' formats holds (docker info's fields, daemon.json's keys,
# the toolkit's version line and config table, ulimit's, df's and free's headers, nvidia-smi's
# --query-gpu command and its CSV header's compute_cap column)
_SECTION_MARKERS = (
    "Runtimes:",
    "Default Runtime:",
    "Cgroup Version:",
    "Server Version:",
    '"runtimes"',
    '"default-runtime"',
    "NVIDIA Container ",
    "build date: ",
    "nvidia-container-cli]",
    "no-cgroups",
    "(kbytes, -",
    "Mounted on",
    "/dev/shm",
    "buff/cache",
    "--query-gpu",
    "compute_cap",
    "Package ",
    "# packages in environment at",
)


# a ``pip freeze`` row alone on its line (``name==version``, ``name[extra]==version``); three in
# a row are a pasted ``pip freeze`` (or requirements file), the section's own marker
_FREEZE_ROW = re.compile(
    r"^[ \t]*[A-Za-z0-9][A-Za-z0-9._-]*(?:\[[^\]\n]*\])?[ \t]*==[ \t]*[0-9][A-Za-z0-9.+!_-]*[ \t]*\r?$",
    re.MULTILINE,
)
_FREEZE_RUN = 3
# the same rows run together on one line, as rendered Markdown joins a pasted ``pip freeze``
_PIN = r"[A-Za-z0-9][A-Za-z0-9._-]*(?:\[[^\]\s]*\])?==[0-9][A-Za-z0-9.+!_-]*"
_ONE_LINE_FREEZE = re.compile(
    rf"^[ \t]*(?:{_PIN}[ \t]+){{{_FREEZE_RUN - 1},}}{_PIN}[ \t]*\r?$", re.MULTILINE
)


def _freeze_rows(text: str, starts: list[int]) -> set[int]:
    """The lines of runs of ``_FREEZE_RUN`` or more ``pip freeze`` rows."""
    import bisect

    rows = sorted({bisect.bisect_right(starts, m.start()) - 1 for m in _FREEZE_ROW.finditer(text)})
    marked: set[int] = set()
    run: list[int] = []
    for row in [*rows, -2]:
        if run and row == run[-1] + 1:
            run.append(row)
            continue
        if len(run) >= _FREEZE_RUN:
            marked.update(run)
        run = [row]
    return marked


def _near_markers(text: str) -> str:
    """The text with only the lines near a marker kept (the rest blank, so line numbers hold):
    a long log is split into sections only where one can be."""
    import bisect

    starts = [0, *(m.end() for m in re.finditer("\n", text))]
    found = re.finditer("|".join(map(re.escape, _SECTION_MARKERS)), text)
    marked = sorted(
        {bisect.bisect_right(starts, m.start()) - 1 for m in found} | _freeze_rows(text, starts)
    )
    lines = text.splitlines()
    keep = [False] * len(lines)
    for i in marked:
        for j in range(max(0, i - _BEFORE), min(len(lines), i + _AFTER)):
            keep[j] = True
    return "\n".join(line if kept else "" for line, kept in zip(lines, keep, strict=False))


_BEFORE, _AFTER = 60, 400  # lines a section may start before its marker, and run after it


def _with_library_env(report: NodeReport | None, text: str, name: str) -> NodeReport | None:
    """``report`` with what a library env report pasted in the log states (``transformers
    env``'s ``- Key: value`` block, envcheck/ingest/library_env.py), the sections first."""
    from envcheck.ingest import library_env

    if not any(marker in text for marker in library_env.MARKERS):
        return report
    stated = library_env.parse_in(text, name)
    if stated is None:
        return report
    if report is None:
        return stated
    from envcheck.ingest.merge import merge

    return merge([report, stated])


def _with_one_line_freeze(report: NodeReport | None, text: str, name: str) -> NodeReport | None:
    """``report`` with the packages of a ``pip freeze`` whose rows run together on one line
    (``torch==2.3.0 transformers==4.41.2 ...``: three pins or more and nothing else, so a
    ``pip install`` command is not one)."""
    if "==" not in text:
        return report
    from envcheck.ingest import pip
    from envcheck.ingest.common import FormatError, Source

    read = [] if report is None else [report]
    for match in _ONE_LINE_FREEZE.finditer(text):
        number = text.count("\n", 0, match.start()) + 1
        rows = "\n".join(match.group().split())
        try:
            stated = pip.parse_freeze(Source(f"{name} line {number}", rows))
        except (FormatError, ValueError):
            continue
        origin = dataclasses.replace(stated.origin, detail=f"pip freeze pasted in {name}")
        read.append(dataclasses.replace(stated, origin=origin))
    if len(read) <= 1:
        return read[0] if read else None
    from envcheck.ingest.merge import merge

    return merge(read)


def _pasted_sections(text: str, name: str) -> NodeReport | None:
    """The container engine and limits sections pasted in the log, and the GPUs an nvidia-smi
    --query-gpu CSV lists (name, compute_cap), None when there are none."""
    if not any(marker in text for marker in _SECTION_MARKERS) and not (
        "==" in text and _FREEZE_ROW.search(text)
    ):
        return None  # the common case: no section to look for, no line-by-line split
    from envcheck.ingest.common import Source
    from envcheck.ingest.paste import parse_sections

    report = parse_sections(Source(name, _near_markers(text)), PASTED_SECTIONS)
    if report is None:
        return None
    origin = dataclasses.replace(report.origin, detail=f"host's set-up pasted in {name}")
    return dataclasses.replace(report, origin=origin)


def read_head(path: str, limit: int = HEAD) -> str | None:
    """The first ``limit`` bytes of the log file (gzip decompressed), as text; None for
    standard input (already consumed by the scan) or an unreadable file."""
    if path == "-":
        return None
    from envcheck.triage.run import open_log

    try:
        stream, _ = open_log(path)
    except InputError:
        return None
    try:
        data = stream.read(limit)
    except (OSError, EOFError, gzip.BadGzipFile, zlib.error):
        return None
    finally:
        stream.close()
    return data.decode("utf-8", errors="replace")
