"""Rules made from the matrix's ``[[known_bad]]`` entries."""

from __future__ import annotations

import contextlib
import dataclasses
import re
import string
from collections.abc import Callable, Iterable
from typing import Any

from packaging.utils import canonicalize_name
from packaging.version import Version

from envcheck.facts.conditions import describe, evaluate, matching_gpus, torch_cuda_stated
from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.model import parse_version, public
from envcheck.matrix.schema import Condition, FixSpec, KnownBad
from envcheck.model.finding import Severity
from envcheck.rules.base import Hit, LazyDoc, Rule, RuleDoc
from envcheck.rules.choose import torch_build_for_cuda
from envcheck.rules.fixes import from_spec


def split_sources(source: str) -> tuple[str, ...]:
    return tuple(s.strip() for s in source.split(" ; ") if s.strip())


def _packages_named(cond: Condition) -> set[str]:
    names = set(cond.packages) | set(cond.installer)
    for sub in cond.any:
        names |= _packages_named(sub)
    return names


class _Values(dict[str, Any]):
    def __missing__(self, key: str) -> str:
        return f"<{key}?>"


class _Packages:
    def __init__(self, facts: Facts) -> None:
        self.facts = facts

    def __getitem__(self, name: str) -> str:
        try:
            dist = self.facts.dist(name)
        except Skip:
            return "?"
        return dist.version if dist else "(not installed)"


def template_fields(message: str) -> set[str]:
    return {f for _, f, _, _ in string.Formatter().parse(message) if f}


# what a fix may name besides the message's facts ("install the CUDA {torch_cuda} toolkit")
FIX_FIELDS = {
    "torch_cuda": "torch's CUDA version",
    "torch_variant": "torch's CUDA variant (cuXYZ)",
    "nvcc": "nvcc's CUDA version",
    "torch_release": "torch's release without its local label (1.9.0 for 1.9.0+cpu)",
    "nvcc_torch": "the pip install line of the torch build for nvcc's CUDA, where PyTorch has one",
    "conda_toolkit": "the conda line of NVIDIA's channel label for torch's CUDA, from 11.3",
}


def _torch_variant(facts: Facts) -> str:
    cuda = torch_cuda_stated(facts)
    if cuda is None:
        raise Skip("torch is not a CUDA build")
    return f"cu{cuda.major}{cuda.minor}"


def _nvcc(facts: Facts) -> str:
    toolkit = facts.system().nvcc
    if toolkit is None or not toolkit.version:
        raise Skip("nvcc's version is unknown")
    return toolkit.version


def _nvcc_torch(facts: Facts) -> str:
    nvcc = parse_version(_nvcc(facts))
    if nvcc is None:
        raise Skip("nvcc's version is unreadable")
    current = None
    with contextlib.suppress(Skip):
        installed = facts.version("torch")
        current = public(installed) if installed is not None else None
    build = torch_build_for_cuda(facts.matrix, nvcc, current)
    if build is not None:
        return f"pip install torch=={build[0]} --index-url {build[1]}"
    # no build of that exact CUDA (12.2, 11.5): torch's cpp_extension (_check_cuda_version)
    # refuses only a toolkit of another CUDA major and warns on the minor, so the build of the
    # newest CUDA minor at or below nvcc's, of the same major, is the one that builds
    # the nearest minor below nvcc's first, then the nearest above (a toolkit newer in the minor
    # than torch's builds only warns too)
    minors = [*range(nvcc.minor - 1, -1, -1), *range(nvcc.minor + 1, 10)]
    near = [
        Version(f"{nvcc.major}.{minor}")
        for minor in minors
        if torch_build_for_cuda(facts.matrix, Version(f"{nvcc.major}.{minor}"), current)
    ]
    if near:
        found = torch_build_for_cuda(facts.matrix, near[0], current)
        assert found is not None
        return (
            f"pip install torch=={found[0]} --index-url {found[1]} (CUDA {near[0]}: PyTorch "
            f"has no CUDA {nvcc.major}.{nvcc.minor} build; torch's extension build accepts a "
            "toolkit of the same CUDA major)"
        )
    return f"PyTorch has no build for CUDA {nvcc.major}.{nvcc.minor} that envcheck knows"


# NVIDIA's conda channel labels each CUDA release (nvidia/label/cuda-X.Y.Z) from 11.3.0 on
# (docs.nvidia.com/cuda/cuda-installation-guide-linux, Conda: 'conda install cuda -c
# nvidia/label/cuda-11.3.0'); the X.Y.0 label is the minor's first release
_FIRST_CONDA_LABEL = Version("11.3")


def conda_toolkit(cuda: Version) -> str:
    """The conda install line of the CUDA toolkit of ``cuda``'s release by NVIDIA's channel label;
    for a release older than the labels, the toolkit from NVIDIA's archive."""
    if Version(f"{cuda.major}.{cuda.minor}") < _FIRST_CONDA_LABEL:
        return f"the CUDA {cuda.major}.{cuda.minor} toolkit from NVIDIA's CUDA Toolkit Archive"
    return f"conda install -c nvidia/label/cuda-{cuda.major}.{cuda.minor}.0 cuda-toolkit"


def _conda_toolkit(facts: Facts) -> str:
    cuda = torch_cuda_stated(facts)
    if cuda is None:
        raise Skip("torch is not a CUDA build")
    return conda_toolkit(cuda)


def render(message: str, facts: Facts, **extra: str) -> str:
    values = _Values(pkg=_Packages(facts), **extra)
    if "{driver}" in message:
        values["driver"] = _or_unknown(facts.driver)
    if "{python}" in message:
        values["python"] = _or_unknown(facts.python_version)
    if "{torch_cuda}" in message:
        values["torch_cuda"] = _or_unknown(lambda: torch_cuda_stated(facts))
    if "{torch_variant}" in message:
        values["torch_variant"] = _or_unknown(lambda: _torch_variant(facts))
    if "{nvcc}" in message:
        values["nvcc"] = _or_unknown(lambda: _nvcc(facts))
    if "{nvcc_torch}" in message:
        values["nvcc_torch"] = _or_unknown(lambda: _nvcc_torch(facts))
    if "{conda_toolkit}" in message:
        values["conda_toolkit"] = _or_unknown(lambda: _conda_toolkit(facts))
    if "{torch_release}" in message:
        values["torch_release"] = _or_unknown(lambda: Version(facts.torch_version().public))
    return message.format_map(values)


def render_fix(spec: FixSpec, facts: Facts) -> FixSpec:
    """The fix with the node's facts in it (torch's CUDA, its variant, nvcc's release)."""
    return dataclasses.replace(
        spec,
        summary=render(spec.summary, facts),
        pip=tuple(render(p, facts) for p in spec.pip),
        manual=tuple(render(m, facts) for m in spec.manual),
    )


def doc_text(text: str) -> str:
    """A fix template as the docs show it: each fact named in angle brackets."""

    def named(match: re.Match[str]) -> str:
        field, package = match.group(1), match.group(2)
        if package:
            return f"<the installed {package} version>"
        return f"<{FIX_FIELDS.get(field, field)}>"

    return re.sub(r"\{(\w+)(?:\[([^\]]+)\])?\}", named, text)


def _or_unknown(getter: Callable[[], object]) -> str:
    try:
        return str(getter())
    except Skip:
        return "unknown"


def _gpu_text(entry: KnownBad, facts: Facts) -> str:
    try:
        gpus = facts.gpus()
    except Skip:
        return "an unknown GPU"
    if entry.when.gpu is not None:
        with contextlib.suppress(Skip):
            gpus = matching_gpus(entry.when.gpu, facts) or gpus
    return facts.gpu_summary(gpus)


def make_rule(entry: KnownBad) -> Rule:
    def check(facts: Facts) -> Iterable[Hit]:
        if not evaluate(entry.when, facts):
            return []
        severity, evidence_text, verified = entry.severity, "", entry.verified
        if entry.evidence:
            try:
                chosen = next((e for e in entry.evidence if evaluate(e.when, facts)), None)
            except Skip as skip:
                chosen = None
                evidence_text = f"{skip.reason}; reports name " + ", ".join(
                    n for e in entry.evidence if e.when.gpu for n in e.when.gpu.names
                )
            else:
                if chosen is None:
                    return []  # the GPU is known and nothing implicates it
            if chosen is not None:
                severity, evidence_text, verified = chosen.severity, chosen.text, chosen.verified
        message = render(entry.message, facts, gpu=_gpu_text(entry, facts), evidence=evidence_text)
        evidence: dict[str, Any] = {"matrix_entry": entry.id, "verified": verified}
        for name in sorted(_packages_named(entry.when)):
            try:
                dist = facts.dist(name)
            except Skip:
                continue
            if dist is not None:
                evidence[name] = dist.version
            implied = facts.provenance.get(f"packages.{canonicalize_name(name)}")
            if implied is not None:
                evidence.setdefault("provenance", {})[name] = implied
                message = f"{message} [{name} {dist.version if dist else ''}: {implied}]"
        if evidence_text:
            evidence["evidence"] = evidence_text
        fix = from_spec(render_fix(entry.fix, facts)) if entry.fix else None
        return [Hit(message, evidence=evidence, fix=fix, severity=severity)]

    return Rule(
        code=entry.code,
        name=re.sub(r"[^a-z0-9]+", "-", entry.id.lower()).strip("-"),
        severity=entry.severity,
        title=entry.title,
        doc=LazyDoc(lambda: _doc(entry)),
        check=check,
        origin="matrix",
        verified=entry.verified,
    )


def _doc(entry: KnownBad) -> RuleDoc:
    """A data rule's docs, from its matrix entry."""
    evidence_doc = ""
    if entry.evidence:
        levels = "; ".join(
            f"{e.severity.value} when {describe(e.when)}"
            + ("" if e.verified else " (evidence UNVERIFIED)")
            for e in entry.evidence
        )
        evidence_doc = (
            f" The severity follows the evidence for the node's GPU: {levels}; {entry.severity.value} "
            "when the GPU is unknown. On other known GPUs it does not fire."
        )
    return RuleDoc(
        what=f"Fires when: {describe(entry.when)}."
        + evidence_doc
        + (f" {entry.note}" if entry.note else ""),
        why=entry.cause,
        example=entry.symptom,
        fix=_fix_doc(entry.fix) if entry.fix else "No fix is known; see the references.",
        references=split_sources(entry.source),
    )


def _fix_doc(spec: FixSpec) -> str:
    """A data rule's documented fix: its summary, and the pip requirements it installs where
    the summary does not spell them (a cause left open prints this text, so it carries the
    command, `pip install nvidia-cublas-cu12==12.3.4.1`, not only `cuBLAS 12.3.4.1`)."""
    text = doc_text(spec.summary)
    missing = [p for p in spec.pip if p not in text]
    if missing:
        text = f"{text.rstrip()} (pip install {' '.join(missing)})"
    return text


def data_rules(entries: Iterable[KnownBad]) -> list[Rule]:
    return [make_rule(e) for e in entries]


__all__ = [
    "FIX_FIELDS",
    "Severity",
    "data_rules",
    "doc_text",
    "make_rule",
    "render",
    "render_fix",
    "split_sources",
    "template_fields",
]
