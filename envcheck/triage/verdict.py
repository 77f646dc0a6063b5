"""A signature's candidate causes checked against a node: each cause is a rule, and running it
on the node's report confirms the cause (it fires), rules it out (it runs clean) or leaves it
unknown (it was skipped for a missing fact, whose reason is kept).

Every cause carries a fix: confirmed, the finding's concrete fix; unknown or unchecked, the
rule's documented fix worded as a condition ("if /dev/shm is too small for NCCL ...: ...");
ruled out, why (the facts it was checked against). A cause a matched line establishes by itself
(the signature's ``confirms``) is confirmed "from line N" even when the rule cannot run."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from packaging.version import Version

from envcheck.matrix.model import Matrix
from envcheck.model.finding import Finding
from envcheck.model.report import NodeReport
from envcheck.rules.base import LogLine, Rule

Verdict = Literal["confirmed", "ruled_out", "unknown", "unchecked"]

# a shell command quoted in a fix's prose (`pip install ...`): one to run, unless the prose only
# names it ("before `ray start`": a bare command with no argument is a reference)
_COMMAND = re.compile(
    r"`((?:pip|pip3|uv|conda|mamba|export|docker|sudo|apt|apt-get|ray|python|python3|nvidia-smi"
    r"|envcheck|ulimit|sysctl|systemctl|srun|kubectl)\b[^`]*)`"
)


@dataclass(frozen=True)
class CauseFix:
    """What to do about a cause, in the shape of a finding's fix (``summary``, ``commands``):
    the prose keeps the commands it quotes, so it reads whole; ``commands`` are the ones to
    run, each on a line of its own."""

    summary: str
    commands: tuple[str, ...] = ()
    applicability: str | None = None  # a confirmed finding's (safe/unsafe/manual), else None

    @classmethod
    def from_text(cls, text: str) -> CauseFix:
        commands = tuple(
            dict.fromkeys(
                c
                for m in _COMMAND.finditer(text)
                if len((c := " ".join(m.group(1).split())).split()) > 2
                or (c.startswith("export ") and "=" in c)
            )
        )
        return cls(text, commands)

    @classmethod
    def from_findings(cls, findings: Sequence[Finding]) -> CauseFix | None:
        fixes = [f.fix for f in findings if f.fix is not None]
        if not fixes:
            return None
        summary = "; ".join(dict.fromkeys(f.summary for f in fixes))
        commands = tuple(dict.fromkeys(c for f in fixes for c in f.commands))
        kinds = {f.applicability for f in fixes}
        return cls(summary, commands, kinds.pop() if len(kinds) == 1 else None)

    def to_json(self) -> dict[str, Any]:
        return {
            "summary": self.summary,
            "commands": list(self.commands),
            "applicability": self.applicability,
        }


@dataclass(frozen=True)
class CauseCheck:
    code: str
    title: str
    verdict: Verdict
    reason: str | None = None  # why unknown / unchecked / ruled out
    findings: tuple[Finding, ...] = ()
    fix: CauseFix | None = None  # what to do (conditional unless confirmed); None: ruled out
    evidence: str | None = None  # "confirmed from line 3", "from the log's line 3 and the node"
    fact: str | None = None  # the unknown fact a skipped rule needed

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "title": self.title,
            "verdict": self.verdict,
            "reason": self.reason,
            "fact": self.fact,
            "evidence": self.evidence,
            "fix": self.fix.to_json() if self.fix is not None else None,
            "findings": [f.to_json() for f in self.findings],
        }


def _lower_first(text: str) -> str:
    """'A process crashed' -> 'a process crashed'; an acronym ('NCCL', 'GPU memory') stays."""
    first = text.split(" ", 1)[0]
    return text if len(first) > 1 and first[:2].isupper() else text[:1].lower() + text[1:]


def conditional_fix(rule: Rule) -> CauseFix:
    """The rule's documented fix, worded as the condition under which it applies."""
    fix = " ".join(rule.doc.fix.split()) or "see `envcheck explain " + rule.code + "`"
    return CauseFix.from_text(f"if {_lower_first(rule.title.rstrip('.'))}: {fix}")


class _Recorder:
    """A NodeReport stand-in that notes which sections a rule reads."""

    def __init__(self, report: NodeReport) -> None:
        self._report = report
        self.read: list[str] = []

    def __getattr__(self, name: str) -> Any:
        if name in NodeReport.SECTIONS and name not in self.read:
            self.read.append(name)
        return getattr(self._report, name)


def _log_lines(rule: Rule, report: NodeReport, matrix: Matrix) -> str | None:
    """The log lines behind the facts ``rule`` read ("app.log lines 3, 9"), when any."""
    from envcheck.facts.node import Facts
    from envcheck.facts.skip import Skip

    recorder = _Recorder(report)
    try:
        list(rule.check(Facts(cast(NodeReport, recorder), matrix)))
    except Skip:
        pass
    except Exception:  # the engine already reported it
        return None
    numbers: set[int] = set()
    for section in (getattr(report, name) for name in recorder.read):
        if section.is_ok and section.source and section.source.startswith("log ("):
            found = re.search(r" lines? ([0-9, ]+)\)$", section.source)
            if found:
                numbers |= {int(n) for n in found.group(1).split(", ") if n.strip().isdigit()}
    if not numbers:
        return None
    ordered = sorted(numbers)
    return f"line{'s' if len(ordered) > 1 else ''} " + ", ".join(map(str, ordered))


def check_causes(
    codes: Iterable[str],
    rules: Sequence[Rule],
    matrix: Matrix,
    report: NodeReport | None,
    unchecked_reason: str,
    confirmed_lines: Mapping[str, int | LogLine] | None = None,
) -> dict[str, CauseCheck]:
    """One CauseCheck per rule code; without a report every cause is 'unchecked' unless a matched
    line establishes it (``confirmed_lines``: code -> the line that does, as a number or as a
    LogLine with the facts the log states, which the rule's ``@from_log`` turns into a
    finding)."""
    from envcheck.engine import evaluate

    lines = {
        code: v if isinstance(v, LogLine) else LogLine("", v, "")
        for code, v in (confirmed_lines or {}).items()
    }
    by_code = {r.code: r for r in rules}
    wanted = [by_code[c] for c in dict.fromkeys(codes) if c in by_code]
    out: dict[str, CauseCheck] = {}
    # a cause a line establishes that the node's facts cannot check is worded by the rule from
    # what the log states (cluster rules included: Ray's version-mismatch line states both sides)
    for r in wanted:
        if r.code in lines and (report is None or r.scope != "node"):
            stated = _from_log(r, lines[r.code], report, matrix)
            if stated is not None:
                out[r.code] = stated
    wanted = [r for r in wanted if r.code not in out]
    if report is None:
        for r in wanted:
            if r.code in lines:
                out[r.code] = _by_line(r, lines[r.code], None, None, None)
            else:
                out[r.code] = CauseCheck(
                    r.code, r.title, "unchecked", unchecked_reason, fix=conditional_fix(r)
                )
        return _ordered(out, codes)
    # a cluster rule compares nodes: one node's facts neither confirm nor rule it out
    across = "it compares nodes: run `envcheck cluster` (or `envcheck diff` on saved reports)"
    for r in wanted:
        if r.scope != "node":
            if r.code in lines:
                out[r.code] = _by_line(r, lines[r.code], across, None, None)
            else:
                out[r.code] = CauseCheck(r.code, r.title, "unknown", across, fix=conditional_fix(r))
    wanted = [r for r in wanted if r.scope == "node"]
    result = evaluate(report, matrix, wanted)
    # the fix beside a confirmed cause is the one `envcheck fix` plans for the node
    from envcheck.plan.per_finding import planned_fixes

    node_rules = [r for r in rules if r.scope == "node"]
    result = dataclasses.replace(
        result, findings=planned_fixes(report, matrix, node_rules, result.findings)
    )
    skipped = {s.code: s for s in result.skipped}
    failed = {e.split(" ", 1)[0]: e for e in result.errors}
    for rule in wanted:
        findings = tuple(f for f in result.findings if f.code == rule.code)
        if findings and rule.code in lines:  # the line's own facts outrank the node's check
            otherwise = _stated_otherwise(rule, lines[rule.code], report, matrix)
            if otherwise is not None:
                out[rule.code] = otherwise
                continue
        if findings:
            from_log = _log_lines(rule, report, matrix)
            evidence = f"confirmed from the log's {from_log}" if from_log else None
            if rule.code in lines:
                evidence = f"confirmed from line {lines[rule.code].line}" + (
                    f" (facts read from {from_log})" if from_log else ""
                )
            out[rule.code] = CauseCheck(
                rule.code,
                rule.title,
                "confirmed",
                None,
                findings,
                fix=CauseFix.from_findings(findings)
                or CauseFix.from_text(" ".join(rule.doc.fix.split())),
                evidence=evidence,
            )
        elif rule.code in lines and (
            stated := _from_log(
                rule,
                lines[rule.code],
                report,
                matrix,
                node_ran=rule.code not in skipped and rule.code not in failed,
            )
        ):
            out[rule.code] = stated
        elif rule.code in lines:
            skip = skipped.get(rule.code)
            out[rule.code] = _by_line(
                rule,
                lines[rule.code],
                skip.reason if skip else None,
                skip.fact if skip else None,
                _line_fix(rule.code, report, matrix),
            )
        elif rule.code in skipped:
            skip = skipped[rule.code]
            out[rule.code] = CauseCheck(
                rule.code,
                rule.title,
                "unknown",
                skip.reason,
                fix=open_fix(rule, report, matrix),
                fact=skip.fact,
            )
        elif rule.code in failed:
            out[rule.code] = CauseCheck(
                rule.code, rule.title, "unknown", failed[rule.code], fix=conditional_fix(rule)
            )
        else:
            why = f"{rule.code} ran on the node's facts ({_sources(report)}) and does not fire"
            out[rule.code] = CauseCheck(rule.code, rule.title, "ruled_out", why)
    return _ordered(out, codes)


def _ordered(out: dict[str, CauseCheck], codes: Iterable[str]) -> dict[str, CauseCheck]:
    return {c: out[c] for c in dict.fromkeys(codes) if c in out}


def _from_log(
    rule: Rule,
    line: LogLine,
    report: NodeReport | None,
    matrix: Matrix,
    node_ran: bool = False,
) -> CauseCheck | None:
    """The cause a line establishes, as the finding the rule's ``@from_log`` words from the
    facts the log states (and the node's, when known); None when the rule has none or cannot
    say anything concrete (Skip): the plain line verdict applies then."""
    from envcheck.facts.node import Facts
    from envcheck.facts.skip import Skip
    from envcheck.rules import log_hit
    from envcheck.rules.base import NodeDecides, NotStated, StatedOtherwise

    hook = log_hit(rule.code)
    if hook is None or not line.signature:
        return None
    node = report if report is not None else _empty_report()
    reads = _Reads(line.stated)
    line = dataclasses.replace(line, stated=reads)
    try:
        hit = hook(Facts(node, matrix), line)
    except NodeDecides as exc:
        if node_ran and report is not None:  # the node's own check ran and did not fire
            why = f"{rule.code} ran on the node's facts ({_sources(report)}) and does not fire"
            return CauseCheck(rule.code, rule.title, "ruled_out", why)
        return CauseCheck(
            rule.code, rule.title, "unknown", exc.reason, fix=open_fix(rule, report, matrix)
        )
    except StatedOtherwise as exc:  # the line's own facts rule it out, in its terms
        return CauseCheck(rule.code, rule.title, "ruled_out", exc.reason)
    except NotStated as exc:
        stated_fix = (
            CauseFix.from_text(f"if {_lower_first(rule.title.rstrip('.'))}: {exc.fix}")
            if exc.fix
            else open_fix(rule, report, matrix)
        )
        return CauseCheck(
            rule.code, rule.title, "unknown", exc.reason, fix=stated_fix, fact=exc.fact
        )
    except Skip:
        return None
    if hit is None:
        read = [f"{k} = {reads.data[k]}" for k in reads.read if k in reads.data]
        if not read and report is not None:  # no fact of the line read: the node's ruled it out
            why = f"{rule.code} ran on the node's facts ({_sources(report)}) and does not fire"
        else:
            why = f"line {line.line} ({line.signature}) states facts that rule it out: " + (
                ", ".join(read) or "-"
            )
        return CauseCheck(rule.code, rule.title, "ruled_out", why)
    finding = rule.finding(hit, node.node)
    text = CauseFix.from_findings((finding,)) or CauseFix.from_text(" ".join(rule.doc.fix.split()))
    return CauseCheck(
        rule.code,
        rule.title,
        "confirmed",
        None,
        (finding,),
        fix=text,
        evidence=f"confirmed from line {line.line}",
    )


def _stated_otherwise(
    rule: Rule, line: LogLine, report: NodeReport | None, matrix: Matrix
) -> CauseCheck | None:
    """The cause ruled out by the facts the line states (``StatedOtherwise``), whatever the
    node's own check found: an allocation's out-of-memory line is not a start-up failure,
    however the node is configured. None when the line does not rule it out."""
    from envcheck.facts.node import Facts
    from envcheck.facts.skip import Skip
    from envcheck.rules import log_hit
    from envcheck.rules.base import StatedOtherwise

    hook = log_hit(rule.code)
    if hook is None or not line.signature:
        return None
    node = report if report is not None else _empty_report()
    try:
        hook(Facts(node, matrix), dataclasses.replace(line, stated=_Reads(line.stated)))
    except StatedOtherwise as exc:
        return CauseCheck(rule.code, rule.title, "ruled_out", exc.reason)
    except Skip:
        return None
    return None


class _Reads(Mapping[str, str]):
    """The facts a log states, noting which ones a ``@from_log`` function read."""

    def __init__(self, data: Mapping[str, str]) -> None:
        self.data = data
        self.read: list[str] = []

    def __getitem__(self, key: str) -> str:
        if key not in self.read:
            self.read.append(key)
        return self.data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)


def _empty_report() -> NodeReport:
    from envcheck.ingest.common import now
    from envcheck.model.report import Origin
    from envcheck.version import __version__

    return NodeReport(
        node="the node of the log",
        envcheck_version=__version__,
        created_at=now(),
        origin=Origin(kind="ingested", detail="no facts: the log alone"),
    )


def open_fix(rule: Rule, report: NodeReport | None, matrix: Matrix) -> CauseFix:
    """The fix of a cause the facts leave open, worded as its condition: concrete where the
    facts the log or node states give one (the GPU's architecture: the torch builds with its
    kernels, the extension rebuilt for it), else the rule's documented fix."""
    concrete = _line_fix(rule.code, report, matrix) if report is not None else None
    if concrete is None:
        return conditional_fix(rule)
    return CauseFix.from_text(f"if {_lower_first(rule.title.rstrip('.'))}: {concrete}")


def _line_fix(code: str, report: NodeReport, matrix: Matrix) -> str | None:
    """A concrete fix from the facts a line states, where the rule that would give one cannot
    run (TOR101 without the torch build: the builds with kernels for the GPU; CUD153 without
    it: the extension rebuilt for the GPU's compute capability)."""
    if code == "CUD153":
        return _extension_fix(report, matrix)
    if code != "TOR101":
        return None

    from envcheck.facts.node import Facts
    from envcheck.facts.skip import Skip
    from envcheck.rules.choose import sm, torch_choices

    facts = Facts(report, matrix)
    try:
        ccs = [facts.compute_capability(g) for g in facts.gpus()]
    except Skip:
        return _torch_only_fix(facts, matrix)
    driver: Version | None
    try:
        driver, max_cuda = facts.driver(), facts.max_cuda()[0]
    except Skip:
        driver = max_cuda = None
    choices = torch_choices(matrix, ccs=ccs, driver=driver, max_cuda=max_cuda)
    if not choices:
        return None
    oldest = min(c.release.version for c in choices)
    best = next(c for c in choices if c.release.version == oldest)
    newest = choices[0]
    url = matrix.torch_index_url(best.variant)
    archs = ", ".join(sorted({sm(cc) for cc in ccs}))
    return (
        f"install a torch build with {archs} kernels: torch {best.release.version}+{best.variant} "
        f"is the oldest the matrix knows (`pip install torch=={best.release.version} "
        f"--index-url {url}`), {newest.release.version}+{newest.variant} the newest; then "
        "reinstall what was built against torch (torchvision, vLLM, flash-attn)"
    )


def _torch_only_fix(facts: Any, matrix: Matrix) -> str | None:
    """The torch build is known and the GPU is not: the architectures its list lacks, and for
    the newer ones (a GPU newer than the build: Blackwell on a cu124 build) the oldest torch
    build the matrix knows with their kernels; None when the build's list is unknown."""
    from envcheck.facts.skip import Skip
    from envcheck.rules.choose import arch_list, covers, sm, torch_choices

    try:
        torch, variant = facts.torch_version(), facts.torch_variant()
    except Skip:
        return None
    release = matrix.torch_release(torch)
    found = arch_list(release, variant) if release is not None and variant else None
    if release is None or found is None or not found[0]:
        return None
    archs = found[0]
    top = max(a.cc for a in archs)
    newer: list[Any] = []
    for support in matrix.sm_support:
        digits = re.fullmatch(r"sm_([0-9]+)([0-9])", support.arch)
        if digits is None:
            continue
        cc = Version(f"{digits.group(1)}.{digits.group(2)}")
        if cc > top and not covers(archs, cc):
            newer.append(cc)
    if not newer:
        return None
    groups: dict[tuple[Version, str], list[Version]] = {}
    for cc in sorted(newer):
        choices = torch_choices(matrix, ccs=[cc])
        if choices:
            oldest = min(c.release.version for c in choices)
            best = next(c for c in choices if c.release.version == oldest)
            groups.setdefault((best.release.version, best.variant), []).append(cc)
    if not groups:
        return None
    steps = [
        f"{', '.join(sm(cc) for cc in ccs)}: torch {version}+{tag} or newer "
        f"(`pip install torch=={version} --index-url {matrix.torch_index_url(tag)}`)"
        for (version, tag), ccs in sorted(groups.items())
    ]
    return (
        f"torch {release.version}+{variant} has no kernels for GPUs newer than {sm(top)}; for "
        f"such a GPU install the oldest build with its kernels, " + "; ".join(steps) + ", then "
        "reinstall what was built against torch (a GPU older than its list needs an older build)"
    )


def _extension_fix(report: NodeReport, matrix: Matrix) -> str | None:
    """The extension rebuilt for the GPUs the facts name (TORCH_CUDA_ARCH_LIST in torch's
    X.Y spelling), or a CMake build for them; None when no GPU's architecture is known."""
    from envcheck.facts.node import Facts
    from envcheck.facts.skip import Skip

    facts = Facts(report, matrix)
    try:
        ccs = sorted({facts.compute_capability(g) for g in facts.gpus()})
    except Skip:
        return None
    if not ccs:
        return None
    arch_list = ";".join(f"{cc.major}.{cc.minor}" for cc in ccs)
    digits = ";".join(f"{cc.major}{cc.minor}" for cc in ccs)
    return (
        f'rebuild the extension for the GPU\'s architecture: `TORCH_CUDA_ARCH_LIST="{arch_list}" '
        "pip install --no-build-isolation --no-cache-dir --force-reinstall <the extension's "
        f'package>` (a CMake build: -DCMAKE_CUDA_ARCHITECTURES="{digits}"); a prebuilt '
        "wheel: a release built for it"
    )


def _by_line(
    rule: Rule, logline: LogLine, reason: str | None, fact: str | None, concrete: str | None
) -> CauseCheck:
    """The cause a matched line establishes, where no ``@from_log`` reading words it: confirmed
    from that line, unless the program logged it as information (an INFO line states a fact a
    healthy node prints too; it stays open, its fix worded as a condition)."""
    line = logline.line
    if logline.signature and logline.informational:
        why = (
            f"line {line} ({logline.signature}) names it, but the program logged that line as "
            "information, which healthy nodes print too"
        )
        return CauseCheck(rule.code, rule.title, "unknown", why, fix=conditional_fix(rule))
    fix = concrete or " ".join(rule.doc.fix.split())
    note = f" (the rule itself could not run: {reason})" if reason and not concrete else ""
    return CauseCheck(
        rule.code,
        rule.title,
        "confirmed",
        None,
        fix=CauseFix.from_text(fix + note),
        evidence=f"confirmed from line {line}",
        fact=fact,
    )


def _sources(report: NodeReport) -> str:
    names = [
        f"{name} from {getattr(report, name).source}"
        for name in NodeReport.SECTIONS
        if getattr(report, name).is_ok
    ]
    return "; ".join(names) or "none"


# --- the node's own binaries confirm or rule out a loading line ---------------------------------

_UNDEFINED = re.compile(r"(?:([^\s:'\"/]+\.so[.\d]*): )?undefined symbol: ([A-Za-z0-9_]+)")
_CANNOT_OPEN = re.compile(r"([^\s:'\"/]+\.so[.\d]*): cannot open shared object file")
_VERSION = re.compile(r"version [`'](\w+_[\d.]+)' not found")
_NO_KERNEL = re.compile(r"no kernel image is available")


def _binary_line(text: str) -> tuple[str, str | None, str | None] | None:
    """(the binary rule that checks the line's failure, the library named, the symbol or
    version named) for a loader or kernel-image line; None for any other line."""
    if m := _UNDEFINED.search(text):
        return "TOR162", m.group(1), m.group(2)
    if m := _CANNOT_OPEN.search(text):
        return "SYS170", m.group(1), None
    if m := _VERSION.search(text):
        return "SYS172", None, m.group(1)
    if _NO_KERNEL.search(text):
        return "TOR160", None, None
    return None


def binary_causes(
    text: str, report: NodeReport | None, matrix: Matrix, rules: Sequence[Rule]
) -> tuple[CauseCheck, ...]:
    """A log line's ``undefined symbol`` / missing library / missing symbol version / ``no kernel
    image`` checked against the node's own ELF files (the report's ``binaries`` section, read
    when triage probes the node): confirmed when the binary rule finds that failure (for the
    library or symbol the line names, where it names one), ruled out when the rule runs clean;
    nothing when the node's binaries were not read."""
    parsed = _binary_line(text)
    if parsed is None or report is None or not report.binaries.is_ok:
        return ()
    code, library, named = parsed
    rule = next((r for r in rules if r.code == code), None)
    if rule is None:
        return ()
    from envcheck.engine import evaluate

    result = evaluate(report, matrix, [rule])
    if result.skipped or result.errors:
        return ()
    findings = result.findings
    if library is not None or named is not None:

        def explains(f: Finding) -> bool:
            blob = f"{f.message} {f.evidence}"
            return (library is None or library in blob) and (named is None or named in blob)

        findings = tuple(f for f in findings if explains(f))
    if findings:
        return (
            CauseCheck(
                code,
                rule.title,
                "confirmed",
                None,
                findings,
                fix=CauseFix.from_findings(findings),
                evidence="confirmed against the node's own ELF files",
            ),
        )
    what = " ".join(p for p in (library, named) if p) or "this failure"
    why = f"{code} read the node's installed libraries and finds no {what} problem"
    return (CauseCheck(code, rule.title, "ruled_out", why),)
