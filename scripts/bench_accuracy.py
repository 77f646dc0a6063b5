"""Accuracy of envcheck on the corpus of real failures (tests/corpus/<id>/): how many confirmed
causes it finds, how often it prints the fix the thread established, and whether it raises
errors on clean nodes. docs/accuracy.md defines every figure; this file is the definition.

    python scripts/bench_accuracy.py [--corpus tests/corpus] [--json] [--misses]

Each case runs through the real CLI, in this process, as a user would run it:
  log.txt present  -> envcheck triage log.txt --json  (+ --from dump.txt / --spec spec.toml,
                      else --no-probe)
  otherwise        -> envcheck check --json  --from dump.txt [--spec spec.toml] | --spec spec.toml

Found (a failure case): one of the case's ``expect_codes``
  - check:  is the code of a finding (any severity);
  - triage: is a cause of a matched (non-noise) signature whose verdict is ``confirmed``, or
            whose verdict is ``unchecked``/``unknown`` (the node's facts cannot decide) while no
            cause of that same signature is confirmed. A cause the node rules out, or one listed
            beside a cause the node confirms, is not found.
Top-1: the found code is the first cause triage would have the user look at (the first
  confirmed cause of the match, else its first cause not ruled out; for check: a finding of an
  expected code is the most severe finding printed).
Right fix (a failure case with a non-empty ``expect_fix``): one ``expect_fix`` substring occurs
  (case-insensitively) in the fix summary or fix commands of a finding whose code is expected;
  for triage those are the findings of confirmed causes (an unchecked cause has no finding).
  The rate's denominator is every failure case with a non-empty expect_fix, found or not.
Fix printed: the same, but also counting the fix triage prints beside an expected cause it
  could not check on a node (the rule's documented fix, worded as a condition: "if /dev/shm is
  Docker's 64 MB default: run with `--shm-size=16g`"). Same denominator.
Error FP (a clean case): a finding of severity ``error`` (triage: in a confirmed cause).

Named (held-out cases, tests/heldout/): a case may state its failure ``family`` (loader, abi,
  driver, arch, build, nccl, graphics, python, ...) and ``expect_mentions``, the things a right
  diagnosis must name (a soname, a symbol, an architecture). Besides an expected code, such a
  case is found when a finding (check) or a confirmed or open cause (triage) names one of them
  in its message, cause or fix: a family rule that explains the line counts without a code
  written for the case. The held-out set's misses are listed as counts per family only
  (``--blind``, the default for a folder whose name starts with heldout: tests/heldout,
  tests/heldout_fresh): whoever writes rules does not read them.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "corpus"

CATEGORIES = (
    "driver",
    "cuda-libs",
    "torch-build",
    "packages",
    "vllm",
    "ray",
    "network",
    "system",
    "simulator",
    "python",
    "clean",
)


@dataclass(frozen=True)
class Case:
    id: str
    path: Path
    kind: str  # failure | clean
    category: str
    title: str
    expect_codes: tuple[str, ...]
    expect_fix: tuple[str, ...]
    expect_new: str
    notes: str
    url: str
    family: str = ""
    expect_mentions: tuple[str, ...] = ()

    @property
    def log(self) -> Path | None:
        p = self.path / "log.txt"
        return p if p.is_file() else None

    @property
    def dump(self) -> Path | None:
        p = self.path / "dump.txt"
        return p if p.is_file() else None

    @property
    def spec(self) -> Path | None:
        p = self.path / "spec.toml"
        return p if p.is_file() else None

    def argv(self) -> list[str]:
        """The command a user would run on this case's inputs."""
        if self.log is not None:
            argv = ["triage", str(self.log), "--json"]
            if self.dump is not None:
                argv += ["--from", str(self.dump)]
            if self.spec is not None:
                argv += ["--spec", str(self.spec)]
            if self.dump is None and self.spec is None:
                argv.append("--no-probe")
            return argv
        argv = ["check", "--json"]
        if self.dump is not None:
            argv += ["--from", str(self.dump)]
        if self.spec is not None:
            argv += ["--spec", str(self.spec)]
        return argv


@dataclass(frozen=True)
class Outcome:
    case: Case
    argv: tuple[str, ...]
    exit_code: int
    found: bool = False
    top1: bool = False
    right_fix: bool | None = None  # None: the case gives no concrete fix (or is clean)
    # the right fix printed at all for an expected cause, a triage cause's conditional fix
    # ("if /dev/shm is Docker's 64 MB default: ...") included
    fix_printed: bool | None = None
    as_error: bool = False  # found at severity error (the default gate)
    error_fps: tuple[str, ...] = ()  # clean cases: codes of error findings
    codes: tuple[str, ...] = ()  # what envcheck named (findings / triage causes not ruled out)
    failure: str | None = None  # envcheck could not run on the inputs (exit 2/3): its stderr
    fixes: tuple[str, ...] = field(default=(), repr=False)
    # how a failure was missed or got no right fix, in words that name no case content (the
    # held-out set's blind report counts these): see ``_mode``
    mode: str = ""

    @property
    def miss(self) -> bool:
        return self.case.kind == "failure" and not self.found

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.case.id,
            "category": self.case.category,
            "kind": self.case.kind,
            "argv": ["envcheck", *self.argv],
            "exit_code": self.exit_code,
            "expect_codes": list(self.case.expect_codes),
            "found": self.found,
            "top1": self.top1,
            "as_error": self.as_error,
            "right_fix": self.right_fix,
            "fix_printed": self.fix_printed,
            "error_fps": list(self.error_fps),
            "codes": list(self.codes),
            "failure": self.failure,
            "mode": self.mode,
            "expect_new": self.case.expect_new,
            "notes": self.case.notes,
        }


def _strs(value: Any, key: str, where: Path) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,) if value else ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{where}: {key} must be a list of strings")
    return tuple(value)


def load_case(path: Path) -> Case:
    meta_path = path / "case.toml"
    with meta_path.open("rb") as f:
        meta = tomllib.load(f)
    kind = str(meta.get("kind", "failure"))
    if kind not in ("failure", "clean"):
        raise ValueError(f"{meta_path}: kind must be 'failure' or 'clean', not {kind!r}")
    return Case(
        id=path.name,
        path=path,
        kind=kind,
        category=str(meta.get("category", "clean" if kind == "clean" else "?")),
        title=str(meta.get("title", "")),
        expect_codes=_strs(meta.get("expect_codes", []), "expect_codes", meta_path),
        expect_fix=_strs(meta.get("expect_fix", []), "expect_fix", meta_path),
        expect_new=str(meta.get("expect_new", "")),
        notes=str(meta.get("notes", "")),
        url=str(meta.get("url", "")),
        family=str(meta.get("family", "")),
        expect_mentions=_strs(meta.get("expect_mentions", []), "expect_mentions", meta_path),
    )


def load_corpus(root: Path = CORPUS) -> list[Case]:
    """Every case folder (one holding case.toml and at least one input) under ``root``."""
    cases = []
    for d in sorted(p for p in root.iterdir() if (p / "case.toml").is_file()):
        case = load_case(d)
        if case.log or case.dump or case.spec:
            cases.append(case)
    return cases


def run_cli(argv: Sequence[str]) -> tuple[int, str, str]:
    """``envcheck ARGV`` in this process: exit code, stdout, stderr."""
    from envcheck.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as exc:  # argparse usage errors
            code = exc.code if isinstance(exc.code, int) else 2
    return code, out.getvalue(), err.getvalue()


def _fix_text(finding: dict[str, Any]) -> str:
    fix = finding.get("fix") or {}
    parts = [str(fix.get("summary") or ""), *(str(c) for c in fix.get("commands") or [])]
    return "\n".join(parts)


def _has_fix(findings: Iterable[dict[str, Any]], wanted: Sequence[str]) -> bool:
    texts = [_fix_text(f).lower() for f in findings]
    return any(w.lower() in t for w in wanted for t in texts)


def _names(case: Case, *texts: Any) -> bool:
    """Does a diagnosis's text name one of what the case expects it to name?"""
    text = " ".join(str(t) for t in texts if t).lower()
    return any(m.lower() in text for m in case.expect_mentions)


def _finding_names(case: Case, finding: dict[str, Any]) -> bool:
    return bool(case.expect_mentions) and _names(
        case, finding.get("message"), finding.get("title"), _fix_text(finding)
    )


def _judge_check(case: Case, data: dict[str, Any]) -> dict[str, Any]:
    findings: list[dict[str, Any]] = list(data.get("findings") or [])
    expected = set(case.expect_codes)
    hits = [f for f in findings if f.get("code") in expected or _finding_names(case, f)]
    rank = {"error": 2, "warning": 1, "info": 0}
    worst = max((rank.get(f.get("severity", ""), 0) for f in findings), default=-1)
    return {
        "found": bool(hits),
        "top1": any(rank.get(f.get("severity", ""), 0) == worst for f in hits),
        "as_error": any(f.get("severity") == "error" for f in hits),
        "hit_findings": hits,
        "cause_fixes": (),
        "error_fps": tuple(f["code"] for f in findings if f.get("severity") == "error"),
        "codes": tuple(dict.fromkeys(str(f.get("code")) for f in findings)),
        "matched": bool(findings),
        "ruled_out": False,
        "confirmed_hit": bool(hits),
    }


def _judge_triage(case: Case, data: dict[str, Any]) -> dict[str, Any]:
    expected = set(case.expect_codes)
    found = top1 = as_error = False
    hit_findings: list[dict[str, Any]] = []
    cause_fixes: list[str] = []
    error_fps: list[str] = []
    codes: list[str] = []
    matched = ruled_out = confirmed_hit = False
    noise = False
    for match in data.get("matches") or []:
        if match.get("noise"):
            noise = True
            continue
        matched = True
        causes: list[dict[str, Any]] = list(match.get("causes") or [])
        ruled_out = ruled_out or any(
            c.get("code") in expected
            and c.get("verdict") not in ("confirmed", "unchecked", "unknown")
            for c in causes
        )
        confirmed = [c for c in causes if c.get("verdict") == "confirmed"]
        open_ = [c for c in causes if c.get("verdict") in ("unchecked", "unknown")]
        named = confirmed or open_  # a confirmed cause displaces the undecided ones
        codes += [str(c["code"]) for c in named]
        first = (confirmed or open_ or [{}])[0].get("code")
        for cause in named:
            findings = cause.get("findings") or []
            by_name = bool(case.expect_mentions) and (
                _names(case, _fix_text(cause), cause.get("evidence"))
                or any(_finding_names(case, f) for f in findings)
            )
            if cause.get("code") in expected or by_name:
                found = True
                confirmed_hit = confirmed_hit or cause in confirmed
                top1 = top1 or cause.get("code") == first
                hit_findings += cause.get("findings") or []
                cause_fixes.append(_fix_text(cause))
        for cause in confirmed:
            for f in cause.get("findings") or []:
                if f.get("severity") == "error":
                    error_fps.append(str(f.get("code")))
                    if cause.get("code") in expected or _finding_names(case, f):
                        as_error = True
    return {
        "found": found,
        "top1": top1,
        "as_error": as_error,
        "hit_findings": hit_findings,
        "cause_fixes": tuple(cause_fixes),
        "error_fps": tuple(dict.fromkeys(error_fps)),
        "codes": tuple(dict.fromkeys(codes)),
        "matched": matched,
        "noise": noise,
        "ruled_out": ruled_out,
        "confirmed_hit": confirmed_hit,
    }


# words of a fix that name no package: what is left of an expected fix once they are dropped
# names the thing it installs, pins or sets
_FIX_WORDS = frozenset(
    [
        "pip",
        "pip3",
        "python",
        "python3",
        "-m",
        "install",
        "uninstall",
        "-u",
        "--upgrade",
        "--force-reinstall",
        "--no-cache-dir",
        "-y",
        "sudo",
        "apt",
        "apt-get",
        "yum",
        "dnf",
        "conda",
        "mamba",
        "-c",
        "conda-forge",
        "nvidia",
        "export",
        "set",
        "the",
        "a",
        "an",
        "to",
        "and",
        "or",
        "of",
        "for",
        "with",
        "from",
        "in",
        "on",
        "use",
        "run",
        "reinstall",
        "upgrade",
        "downgrade",
        "update",
        "version",
    ]
)


# the forms a fix takes, for the blind report: which forms the thread's fix has and ours lacks
_FIX_FORMS = (
    ("a pin", re.compile(r"==|<=|>=|<\d|~=")),
    ("an index URL", re.compile(r"index-url|find-links|/whl/|\bcu1\d\d\b", re.I)),
    ("conda", re.compile(r"\b(conda|mamba)\b", re.I)),
    ("apt/yum", re.compile(r"\b(apt|apt-get|yum|dnf)\b", re.I)),
    ("an env var", re.compile(r"\b[A-Z][A-Z0-9_]{2,}=|\bexport\b")),
    (
        "a build flag",
        re.compile(r"no-build-isolation|TORCH_CUDA_ARCH_LIST|MAX_JOBS|CUDA_HOME|-gencode"),
    ),
    ("an upgrade", re.compile(r"(^|\s)(-U|--upgrade)\b|force-reinstall", re.I)),
    ("a pip install", re.compile(r"\bpip3? install\b", re.I)),
    (
        "a driver/kernel step",
        re.compile(r"reboot|modprobe|nvidia-driver|dkms|ubuntu-drivers", re.I),
    ),
    ("a container flag", re.compile(r"--(gpus|ipc|shm-size|runtime|device)\b")),
)


def _forms(texts: Iterable[str]) -> set[str]:
    return {name for name, rx in _FIX_FORMS for t in texts if rx.search(t)}


def _fix_forms_gap(case: Case, judged: dict[str, Any]) -> str:
    """The forms the thread's fix takes that the printed fix lacks ('an env var'), no content."""
    wanted = _forms(case.expect_fix)
    printed = _forms(_fix_text(f) for f in judged["hit_findings"])
    missing = sorted(wanted - printed)
    return f"; the thread's fix has {', '.join(missing)}" if missing else ""


def _fix_gap(case: Case, judged: dict[str, Any], output: str) -> str:
    """How far the printed fix is from the thread's, naming nothing of either (blind report):
    the thread's fix is printed for another cause of the output; it names a thing (a package,
    a variable) the printed fix also names, with another version or form; or neither."""
    lowered = output.lower()
    if any(w.lower() in lowered for w in case.expect_fix):
        return " (the thread's fix is printed elsewhere: another cause)"
    printed = " ".join(_fix_text(f) for f in judged["hit_findings"]).lower()
    for wanted in case.expect_fix:
        tokens = re.split(r"[\s=<>~!,;:'\"`()\[\]]+", wanted.lower())
        names = [t for t in tokens if len(t) >= 3 and t not in _FIX_WORDS and not t[0].isdigit()]
        if names and any(n in printed for n in names):
            return " (same thing named, another version or form)"
    return " (the thread's fix names another thing)"


def _mode(
    case: Case, judged: dict[str, Any], right: bool | None, printed: bool | None, output: str = ""
) -> str:
    """How a failure case went wrong, naming no case content: the input kind and the stage."""
    kind = "+".join(
        k for k, p in (("log", case.log), ("dump", case.dump), ("spec", case.spec)) if p
    )
    if not judged["found"]:
        if judged["ruled_out"]:
            stage = "expected cause ruled out by the node's facts"
        elif judged["matched"]:
            stage = "matched, other causes named"
        elif not case.log:
            stage = "no finding"
        elif judged.get("noise"):
            stage = "only lines known as noise matched"
        else:
            stage = "nothing matched"
    elif right is False:
        if not judged["confirmed_hit"]:
            stage = (
                "cause left open (fix only as a condition)"
                if printed
                else "cause left open, no right fix"
            )
        elif judged["hit_findings"] and any(_fix_text(f).strip() for f in judged["hit_findings"]):
            stage = (
                "confirmed, another fix printed"
                + _fix_gap(case, judged, output)[:-1]
                + _fix_forms_gap(case, judged)
                + ")"
            )
        else:
            stage = "confirmed, no fix printed"
    else:
        return ""
    return f"{kind}: {stage}"


def evaluate_case(case: Case) -> Outcome:
    argv = case.argv()
    code, out, err = run_cli(argv)
    if code not in (0, 1):
        line = err.strip().splitlines()[-1] if err.strip() else f"exit {code}"
        missed_fix = False if case.kind == "failure" and case.expect_fix else None
        return Outcome(
            case,
            tuple(argv),
            code,
            right_fix=missed_fix,
            fix_printed=missed_fix,
            failure=line,
            mode=f"exit {code}: input not read",
        )
    data = json.loads(out)["data"]
    judged = (_judge_triage if argv[0] == "triage" else _judge_check)(case, data)
    hits: list[dict[str, Any]] = judged["hit_findings"]
    if case.kind == "clean":
        return Outcome(
            case,
            tuple(argv),
            code,
            error_fps=judged["error_fps"],
            codes=judged["codes"],
        )
    right = _has_fix(hits, case.expect_fix) if case.expect_fix else None
    printed = None
    if case.expect_fix:
        texts = [t.lower() for t in judged["cause_fixes"]]
        printed = bool(right) or any(w.lower() in t for w in case.expect_fix for t in texts)
    return Outcome(
        case,
        tuple(argv),
        code,
        found=judged["found"],
        top1=judged["top1"],
        right_fix=right,
        fix_printed=printed,
        as_error=judged["as_error"],
        codes=judged["codes"],
        fixes=tuple(_fix_text(f) for f in hits),
        mode=_mode(case, judged, right, printed, out),
    )


@dataclass
class Tally:
    cases: int = 0
    failures: int = 0
    found: int = 0
    top1: int = 0
    as_error: int = 0
    fix_cases: int = 0
    right_fix: int = 0
    fix_printed: int = 0
    clean: int = 0
    clean_error_fp: int = 0
    not_run: int = 0

    def add(self, o: Outcome) -> None:
        self.cases += 1
        self.not_run += o.failure is not None
        if o.case.kind == "clean":
            self.clean += 1
            self.clean_error_fp += bool(o.error_fps)
            return
        self.failures += 1
        self.found += o.found
        self.top1 += o.top1
        self.as_error += o.as_error
        if o.right_fix is not None:
            self.fix_cases += 1
            self.right_fix += o.right_fix
            self.fix_printed += bool(o.fix_printed)

    @property
    def recall(self) -> float:
        return self.found / self.failures if self.failures else 1.0

    @property
    def fix_rate(self) -> float:
        return self.right_fix / self.fix_cases if self.fix_cases else 1.0

    @property
    def printed_rate(self) -> float:
        return self.fix_printed / self.fix_cases if self.fix_cases else 1.0

    def to_json(self) -> dict[str, Any]:
        return {
            **self.__dict__,
            "recall": round(self.recall, 4),
            "fix_rate": round(self.fix_rate, 4),
            "printed_rate": round(self.printed_rate, 4),
        }


@dataclass(frozen=True)
class Summary:
    outcomes: tuple[Outcome, ...]
    overall: Tally
    by_category: dict[str, Tally]

    @property
    def misses(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.miss]

    @property
    def wrong_fixes(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.found and o.right_fix is False]

    @property
    def false_positives(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.case.kind == "clean" and o.error_fps]

    def to_json(self) -> dict[str, Any]:
        return {
            "overall": self.overall.to_json(),
            "by_category": {k: v.to_json() for k, v in self.by_category.items()},
            "cases": [o.to_json() for o in self.outcomes],
        }


def measure(cases: Iterable[Case]) -> Summary:
    outcomes = tuple(evaluate_case(c) for c in cases)
    overall = Tally()
    by_cat: dict[str, Tally] = {}
    for o in outcomes:
        overall.add(o)
        by_cat.setdefault(o.case.category, Tally()).add(o)
    order = {c: i for i, c in enumerate(CATEGORIES)}
    ordered = dict(sorted(by_cat.items(), key=lambda kv: (order.get(kv[0], 99), kv[0])))
    return Summary(outcomes, overall, ordered)


def _pct(n: int, d: int) -> str:
    return f"{100 * n / d:5.1f}% ({n}/{d})" if d else "    -"


def blind_misses(summary: Summary) -> list[str]:
    """Held-out misses as counts per family: no case id, text or expectation is shown."""
    lines = []
    for title, group in (
        ("misses", summary.misses),
        ("found, wrong or no fix", summary.wrong_fixes),
        ("error findings on clean cases", summary.false_positives),
    ):
        counts: dict[str, int] = {}
        for o in group:
            key = o.case.family or o.case.category
            counts[key] = counts.get(key, 0) + 1
        per = ", ".join(f"{k} {n}" for k, n in sorted(counts.items(), key=lambda kv: -kv[1]))
        lines.append(f"{title} ({len(group)}): {per or '-'}")
    modes: dict[str, int] = {}
    for o in [*summary.misses, *summary.wrong_fixes]:
        if o.mode:
            key = f"{o.case.family or o.case.category:<10} {o.mode}"
            modes[key] = modes.get(key, 0) + 1
    if modes:
        lines.append("how (family, input: stage), misses and wrong fixes together:")
        lines += [f"  {n:>3}  {m}" for m, n in sorted(modes.items(), key=lambda kv: -kv[1])]
    return lines


def render(summary: Summary, misses: bool = True, blind: bool = False) -> str:
    head = (
        f"{'category':<12} {'cases':>5}  {'found':<17} {'top-1':<17} {'right fix':<17} "
        f"{'fix printed':<17} {'clean error FPs':<15}"
    )
    lines = [head, "-" * len(head)]
    rows = [*summary.by_category.items(), ("overall", summary.overall)]
    for name, t in rows:
        fps = f"{t.clean_error_fp}/{t.clean}" if t.clean else "-"
        lines.append(
            f"{name:<12} {t.cases:>5}  {_pct(t.found, t.failures):<17} "
            f"{_pct(t.top1, t.failures):<17} {_pct(t.right_fix, t.fix_cases):<17} "
            f"{_pct(t.fix_printed, t.fix_cases):<17} {fps:<15}"
        )
    if misses and blind:
        lines.append("")
        lines += blind_misses(summary)
    elif misses:
        for title, group in (
            ("misses", summary.misses),
            ("found, wrong or no fix", summary.wrong_fixes),
            ("error findings on clean cases", summary.false_positives),
        ):
            lines.append("")
            lines.append(f"{title} ({len(group)}):")
            for o in group:
                c = o.case
                why = o.failure or c.expect_new or c.notes or ""
                got = ",".join(o.error_fps if c.kind == "clean" else o.codes) or "nothing"
                want = ",".join(c.expect_codes) or "(no code)"
                lines.append(f"  {c.id:<28} [{c.category}] want {want}; got {got}")
                if why:
                    lines.append(f"      {why[:200]}")
    return "\n".join(lines)


def markdown(summary: Summary) -> str:
    """The figures and the misses as Markdown, for docs/accuracy.md."""
    out = [
        "| category | cases | found | top-1 | right fix | fix printed | clean cases with an error |",
        "|---|---:|---|---|---|---|---|",
    ]
    for name, t in [*summary.by_category.items(), ("**overall**", summary.overall)]:
        fps = f"{t.clean_error_fp} of {t.clean}" if t.clean else "-"
        out.append(
            f"| {name} | {t.cases} | {_pct(t.found, t.failures).strip()} | "
            f"{_pct(t.top1, t.failures).strip()} | {_pct(t.right_fix, t.fix_cases).strip()} | "
            f"{_pct(t.fix_printed, t.fix_cases).strip()} | {fps} |"
        )
    out += [
        "",
        "| case | category | expected | envcheck named | why it is missed |",
        "|---|---|---|---|---|",
    ]
    for o in summary.misses:
        c = o.case
        why = o.failure.split(": ", 2)[-1] if o.failure else c.expect_new or c.notes or ""
        why = why.replace("|", "/").replace("\n", " ")[:220]
        got = ", ".join(o.codes) or "nothing"
        out.append(
            f"| [{c.id}]({c.url}) | {c.category} | {', '.join(c.expect_codes) or '(none yet)'} | {got} | {why} |"
        )
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="the corpus folder")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--no-misses", action="store_true", help="only the table")
    parser.add_argument(
        "--markdown", action="store_true", help="the figures and misses as Markdown"
    )
    parser.add_argument(
        "--blind",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="the table's misses as counts per family only (default for a folder named heldout*;"
        " --json and --markdown are per case whatever this says)",
    )
    parser.add_argument("cases", nargs="*", help="only these case ids")
    args = parser.parse_args(argv)
    blind = args.corpus.resolve().name.startswith("heldout") if args.blind is None else args.blind
    cases = load_corpus(args.corpus)
    if args.cases:
        cases = [c for c in cases if c.id in set(args.cases)]
    summary = measure(cases)
    if args.json:
        sys.stdout.write(json.dumps(summary.to_json(), indent=2) + "\n")
    elif args.markdown:
        sys.stdout.write(markdown(summary) + "\n")
    else:
        sys.stdout.write(render(summary, misses=not args.no_misses, blind=blind) + "\n")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    raise SystemExit(main())
