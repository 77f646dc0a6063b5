"""JUnit XML (``--output-format junit``), the dialect of Jenkins' ``junit-10.xsd`` that GitLab,
Jenkins, Azure and GitHub test reporters read: one test case per rule that ran; a finding at or
above the threshold is a ``<failure>`` (so the report fails where the exit code does), a finding
below it is noted in ``<system-out>``, a rule skipped for an unknown fact is ``<skipped>`` with
the reason. With ``--strict`` a skipped rule that matters is a failure, as for the exit code."""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

from envcheck.formats.ci import CiResult, CiRun, fix_lines


def _attrs(**values: str) -> str:
    return "".join(f" {k}={quoteattr(_xml_text(v))}" for k, v in values.items())


def _xml_text(text: str) -> str:
    """Characters XML 1.0 cannot carry (control characters from a log) as visible escapes."""
    return "".join(
        c
        if c in "\t\n\r" or (" " <= c <= "\ud7ff") or ("\ue000" <= c <= "\ufffd") or c > "\uffff"
        else f"\\x{ord(c):02x}"
        for c in text
    )


def _body(result: CiResult) -> str:
    return "\n".join([result.message, *fix_lines(result.fix)])


def render_junit(run: CiRun) -> str:
    cases: list[str] = []
    failures = skipped = 0
    codes = [r.code for r in run.rules]
    gaps = {s.code for s in run.strict_gaps}
    for rule in run.rules:
        results = run.results_of(rule.code)
        failing = [r for r in results if r.failing]
        below = [r for r in results if not r.failing]
        skips = [s for s in run.skipped if s.code == rule.code]
        inner: list[str] = []
        for r in failing:
            inner.append(
                f"<failure{_attrs(type=r.severity.value, message=r.title)}>"
                f"{escape(_xml_text(_body(r)))}</failure>"
            )
        if rule.code in gaps:
            reasons = "; ".join(s.reason for s in skips)
            inner.append(
                f"<failure{_attrs(type='strict', message=f'skipped for an unknown fact that matters (--strict): {reasons}')}/>"
            )
        if inner:
            failures += 1
        elif skips and not results:
            skipped += 1
            reasons = "; ".join(
                f"{s.node}: {s.reason}" if s.node and len(skips) > 1 else s.reason for s in skips
            )
            inner.append(f"<skipped{_attrs(message=reasons)}/>")
        if below:
            text = "\n\n".join(f"{r.severity.value}: {_body(r)}" for r in below)
            inner.append(f"<system-out>{escape(_xml_text(text))}</system-out>")
        name = f"{rule.code} {rule.title}"
        open_tag = (
            f"    <testcase{_attrs(name=name, classname=f'envcheck.{run.command}.{rule.code[:3]}')}"
        )
        cases.append(
            f"{open_tag}>\n      " + "\n      ".join(inner) + "\n    </testcase>"
            if inner
            else f"{open_tag}/>"
        )
    errors = len(run.errors)
    if run.errors:
        text = "\n".join(run.errors)
        cases.append(
            f"    <testcase{_attrs(name='envcheck', classname=f'envcheck.{run.command}')}>\n"
            f"      <error{_attrs(type='internal', message=run.errors[0])}>"
            f"{escape(_xml_text(text))}</error>\n    </testcase>"
        )
    tests = len(codes) + (1 if run.errors else 0)
    counts = {"tests": str(tests), "failures": str(failures), "errors": str(errors)}
    suite = f"envcheck {run.command}"
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f"<testsuites{_attrs(name='envcheck', **counts)}>\n"
        f"  <testsuite{_attrs(name=suite, **counts, skipped=str(skipped))}>\n"
        + "".join(c + "\n" for c in cases)
        + "  </testsuite>\n</testsuites>\n"
    )
