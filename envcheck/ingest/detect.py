"""Which format a text is in, and the parser for each format.

Detection looks for each format's fixed markers, most specific first: an envcheck report (JSON
with ``schema`` and ``node``: use ``--report``), pip's JSON list, vLLM's collect_env (torch's plus
a ``vLLM Version`` line), torch's collect_env, SGLang's check_env, the three nvidia-smi forms,
conda's two, ``pip list`` columns and finally ``pip freeze`` (most non-blank lines are
``name==version``, ``name @ url`` or ``-e ...``). Text that matches none is "format not
recognised"; ``--from-format`` skips detection.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from envcheck.ingest import collect_env, conda, nvidia_smi, pip, vllm_env
from envcheck.ingest.common import FormatError, Source
from envcheck.model.report import NodeReport


@dataclass(frozen=True)
class Format:
    name: str  # what --from-format takes
    label: str  # how reports and messages name it
    parse: Callable[[Source], NodeReport]


FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
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
    )
}
_HEAD = 200_000


def _json_kind(text: str) -> str | None:
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
    kind = _json_kind(text)
    if kind is not None:
        return kind
    head = text[:_HEAD]
    lines = head.splitlines()
    if collect_env.looks_like(head):
        return (
            "vllm-env" if re.search(r"^\s*vLLM Version\s*:", head, re.MULTILINE) else "collect-env"
        )
    if vllm_env.looks_like_sglang(head):
        return "sglang-env"
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
    return None


def parse(source: Source, forced: str | None = None) -> NodeReport:
    """Parse one input, detecting its format unless ``forced``."""
    name = forced or detect(source.text)
    if name == "envcheck-report":
        raise FormatError(
            "this is an envcheck report (JSON): check it with --report, not --from",
            where=source.name,
        )
    if name is None:
        known = ", ".join(FORMATS)
        raise FormatError(
            f"format not recognised (envcheck reads: {known}; force one with --from-format)",
            where=source.name,
        )
    fmt = FORMATS[name]
    try:
        return fmt.parse(source)
    except FormatError as exc:
        raise FormatError(exc.message, where=exc.where or source.name, key=exc.key) from None
