"""Which format a text is in, and the parser for each format.

Detection looks for each format's fixed markers, most specific first: an envcheck report (JSON
with ``schema`` and ``node``: use ``--report``), pip's JSON list, ``envcheck probe --markdown``
(its embedded report), vLLM's collect_env (torch's plus
a ``vLLM Version`` line), torch's collect_env, SGLang's check_env, the three nvidia-smi forms,
conda's two, ``pip list`` columns and finally ``pip freeze`` (most non-blank lines are
``name==version``, ``name @ url`` or ``-e ...``), loose environment text, and a network
listing (``ip addr``, ``ifconfig``, ``/etc/hosts``, ``ibstat``; also read beside any detected
format). Text that matches none is "format not recognised"; ``--from-format`` skips
detection.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from envcheck.ingest import (
    collect_env,
    conda,
    envcheck_md,
    loose,
    net_text,
    nvidia_smi,
    nvidia_smi_xml,
    paste,
    pip,
    vllm_env,
)
from envcheck.ingest.common import FormatError, NoFactsError, Source
from envcheck.model.report import NodeReport, PackagesInfo
from envcheck.model.section import Section


@dataclass(frozen=True)
class Format:
    name: str  # what --from-format takes
    label: str  # how reports and messages name it
    parse: Callable[[Source], NodeReport]


FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format("envcheck-markdown", envcheck_md.LABEL, envcheck_md.parse),
        Format("collect-env", "collect_env", collect_env.parse),
        Format("vllm-env", vllm_env.VLLM_LABEL, vllm_env.parse_vllm),
        Format("sglang-env", vllm_env.SGLANG_LABEL, vllm_env.parse_sglang),
        Format("pip-freeze", "pip freeze", pip.parse_freeze),
        Format("uv-pip-freeze", "uv pip freeze", pip.parse_uv_freeze),
        Format("pip-list", "pip list", pip.parse_list),
        Format("pip-json", "pip list --format=json", pip.parse_json),
        Format("conda-list", "conda list", conda.parse_list),
        Format("conda-env", "conda env export", conda.parse_env_export),
        Format("nvidia-smi", "nvidia-smi", nvidia_smi.parse_screen),
        Format("nvidia-smi-q", "nvidia-smi -q", nvidia_smi.parse_query),
        Format("nvidia-smi-csv", "nvidia-smi --query-gpu", nvidia_smi.parse_csv),
        Format("nvidia-smi-xml", nvidia_smi_xml.LABEL, nvidia_smi_xml.parse),
        Format("env-text", loose.LABEL, loose.parse),
        Format("net-text", net_text.LABEL, net_text.parse),
    )
}
_HEAD = 200_000


def json_kind(text: str) -> str | None:
    stripped = text.lstrip()
    if not stripped.startswith(("[", "{")):
        return None
    try:
        data = json.loads(stripped)
    except (ValueError, RecursionError):
        return None
    if isinstance(data, dict) and (
        {"schema", "node"} <= data.keys() or {"schema", "command", "data"} <= data.keys()
    ):
        return "envcheck-report"
    if (
        isinstance(data, list)
        and data
        and all(isinstance(i, dict) and "name" in i and "version" in i for i in data)
    ):
        return "pip-json"
    return None


def _freeze_like(lines: list[str]) -> bool:
    candidates = [line for line in lines if line.strip() and not line.lstrip().startswith("#")]
    if not candidates:
        return False
    good = sum(1 for line in candidates if pip.is_freeze_line(line))
    pinned = sum(1 for line in candidates if "==" in line or " @ " in line)
    return pinned >= 1 and good / len(candidates) >= 0.8


def detect(text: str) -> str | None:
    """The format name of ``text``, or None."""
    kind = json_kind(text)
    if kind is not None:
        return kind
    head = text[:_HEAD]
    lines = head.splitlines()
    if envcheck_md.looks_like(text):  # its JSON line can lie past the head
        return "envcheck-markdown"
    if collect_env.looks_like(head):
        return (
            "vllm-env" if re.search(r"^\s*vLLM Version\s*:", head, re.MULTILINE) else "collect-env"
        )
    if vllm_env.looks_like_sglang(head):
        return "sglang-env"
    if nvidia_smi_xml.looks_like(head):
        return "nvidia-smi-xml"
    if "==============NVSMI LOG==============" in head:
        return "nvidia-smi-q"
    if nvidia_smi.looks_like_screen(head):
        return "nvidia-smi"
    first = next((line for line in lines if line.strip()), "")
    if nvidia_smi.csv_header(first) is not None:
        return "nvidia-smi-csv"
    if re.search(r"^#\s*packages in environment at ", head, re.MULTILINE) or re.search(
        r"^#\s*Name\s+Version\s+Build\s+Channel", head, re.MULTILINE
    ):
        return "conda-list"
    if re.search(r"^dependencies:\s*$", head, re.MULTILINE) and re.search(
        r"^(name|channels|prefix):", head, re.MULTILINE
    ):
        return "conda-env"
    if re.search(r"^Package\s+Version\s*(\s\S.*)?\n-+\s+-+", head, re.MULTILINE):
        return "pip-list"
    if _freeze_like(lines):
        return "pip-freeze"
    if loose.facts_stated(head):
        return "env-text"
    if net_text.looks_like(head):
        return "net-text"
    return None


_FENCE = re.compile(r"^\s*(?:```|~~~)[A-Za-z0-9_-]*\s*")
# formats read whole even when other sections follow (their own markers span the text)
_WHOLE = {"envcheck-report", "envcheck-markdown", "sglang-env", "conda-env", "pip-json"}
_MIXED = {"collect-env", "vllm-env", "sglang-env", "nvidia-smi", "nvidia-smi-q"}


def unwrap(text: str) -> str:
    """Text as pasted into an issue, without what the pasting added: markdown fences (the line
    count is kept, so line numbers still point into the file), '> ' quote markers when most
    lines carry them, and full-width colons."""
    lines = text.splitlines()
    lines = [_FENCE.sub("", line) if _FENCE.match(line) else line for line in lines]
    filled = [line for line in lines if line.strip()]
    quoted = [
        line
        for line in filled
        if line.lstrip().startswith(">") and not line.lstrip().startswith(">>>")
    ]
    if filled and len(quoted) >= 0.6 * len(filled):
        lines = [
            re.sub(r"^\s*>\s?", "", line) if line.lstrip().startswith(">") else line
            for line in lines
        ]
    return "\n".join(lines).replace("：", ":")


def parse(source: Source, forced: str | None = None) -> NodeReport:
    """Parse one input, detecting its format unless ``forced``. A fixed format followed by
    other text (a collect_env and then a ``pip list``) also gets the packages the rest names."""
    stops: set[int] = set()
    if json_kind(source.text) is None:
        stops = paste.boundaries(source.text)
        source = dataclasses.replace(source, text=unwrap(source.text))
    name = forced or detect(source.text)
    if forced is None and name not in _WHOLE:
        parts = paste.mixed(source.text, stops)
        if parts is not None:  # interfaces or ibstat among the sections: their network too
            return net_text.with_network(paste.parse(source, stops, parts), source)
    if name == "envcheck-report":
        raise FormatError(
            "this is an envcheck report (JSON): check it with --report, not --from",
            where=source.name,
        )
    if name is None and forced is None and paste.split(source.text, stops):
        # sections only (ldd, ray status, env | grep NCCL): says what it skipped
        return net_text.with_network(paste.parse(source, stops), source)
    if name is None:
        known = ", ".join(FORMATS)
        raise NoFactsError(
            f"format not recognised (envcheck reads: {known}; force one with --from-format)"
            + first_not_understood(source.text),
            where=source.name,
        )
    fmt = FORMATS[name]
    try:
        report = fmt.parse(source)
    except FormatError as exc:
        if forced is None and paste.split(source.text, stops):
            # a marker matched but its parser refused the whole text: read the sections
            return paste.parse(source, stops)
        raise FormatError(exc.message, where=exc.where or source.name, key=exc.key) from None
    if name in _MIXED and forced is None:
        report = _with_listed_packages(report, source)
    if forced is None:  # interfaces, /etc/hosts or ibstat pasted beside the environment
        report = net_text.with_network(report, source)
    return report


def first_not_understood(text: str) -> str:
    """'; line N not understood: '...'' for the first line that is not blank (secrets hidden,
    cut at 60 characters), or '' for a text with none."""
    from envcheck.redact import redact_text

    for number, line in enumerate(text.splitlines()[:100_000], 1):
        if line.strip():
            shown = redact_text(line.strip())[:60]
            return f"; line {number} not understood: {shown!r}"
    return ""


def _with_listed_packages(report: NodeReport, source: Source) -> NodeReport:
    """Packages that rows after the report name (a mixed paste), added to a partial list."""
    packages = report.packages.data if report.packages.is_ok else None
    if packages is not None and not packages.partial:
        return report
    extra = loose.harvest(source.text).packages
    known = {d.key for d in packages.distributions} if packages is not None else set()
    added = tuple(d for d in extra if d.key not in known and d.key != "torch")
    if len(added) < 2:  # a stray "name 1.2" line is not a package list
        return report
    merged = PackagesInfo(
        distributions=(packages.distributions if packages else ()) + added,
        partial=packages.partial if packages else "pasted text names only some packages",
    )
    notes = (*report.packages.notes, f"{len(added)} package(s) from the list pasted after it")
    return report.with_sections(
        packages=Section.ok(merged, source=report.packages.source, notes=notes)
    )
