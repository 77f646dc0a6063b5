"""Metamorphic benchmark of ``envcheck triage``: does a known failure stay found however its log
text reached us? Each corpus case with a log (tests/corpus, the training set; never the held-out
set) is triaged as it is and then with its log rewritten the way a paste, a terminal, a log
collector or a program rewrites text (HTML-escaped, typographic quotes, hard-wrapped, quoted in
Markdown, behind log prefixes, JSON-escaped, ...); per transformation it reports how many of the
cases found in the plain form are still found, and how many of those printed with the thread's
fix still get it (bench_accuracy.py's definitions of found and right fix):

    python scripts/bench_transforms.py [--transform NAME ...] [--list] [--lost] [CASE ...]

The rewritten log is written beside copies of the case's other inputs in a temporary folder and
triaged through the real CLI (scripts/bench_accuracy.py's ``evaluate_case``).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import textwrap
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_accuracy import CORPUS, REPO, Case, evaluate_case, load_case, load_corpus

_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}


def html(text: str) -> str:
    """An HTML page's text copied as source (GitHub's and Jinja's escaping: ``&#39;``)."""
    return re.sub(r"[&<>\"']", lambda m: _ESCAPES[m.group()], text)


def html_hex(text: str) -> str:
    """Python's html.escape: ``&#x27;`` for the apostrophe."""
    return html(text).replace("&#39;", "&#x27;").replace("&quot;", "&#34;")


def html_nbsp(text: str) -> str:
    """Escaped, each space an ``&nbsp;`` (a rendered code block copied as HTML)."""
    return html(text).replace(" ", "&nbsp;")


def nbsp(text: str) -> str:
    """Each space a non-breaking space (U+00A0: copied from a web page or a chat)."""
    return text.replace(" ", "\u00a0")


def _smart(line: str) -> str:
    out = []
    for i, ch in enumerate(line):
        before = line[i - 1] if i else " "
        opening = before.isspace() or before in "([{<=,"
        if ch == "'":
            out.append("\u2018" if opening else "\u2019")
        elif ch == '"':
            out.append("\u201c" if opening else "\u201d")
        else:
            out.append(ch)
    return "".join(out)


def smart_quotes(text: str) -> str:
    """Typographic quotes as a word processor or chat client writes them."""
    return "\n".join(_smart(line) for line in text.split("\n"))


_FULLWIDTH = {c: chr(ord(c) + 0xFEE0) for c in "'\"():,;!?"}


def fullwidth(text: str) -> str:
    """Punctuation a CJK input method writes full width (＂ （ ） ： ，)."""
    return "".join(_FULLWIDTH.get(c, c) for c in text)


def zero_width(text: str) -> str:
    """A zero-width space after every 7th character and a joiner in words (chat clients)."""
    out = []
    for line in text.split("\n"):
        pieces = [line[i : i + 7] for i in range(0, len(line), 7)]
        out.append("\u200b".join(pieces).replace("or", "o\u200dr"))
    return "\n".join(out)


def wrap(text: str) -> str:
    """Hard-wrapped at 72 columns on word boundaries (e-mail, a forum's editor)."""
    lines = []
    for line in text.split("\n"):
        lines += textwrap.wrap(line, 72, break_long_words=False, break_on_hyphens=False) or [""]
    return "\n".join(lines)


def wrap_cut(text: str) -> str:
    """Cut every 80 characters (a terminal's width, copied from its screen)."""
    lines = []
    for line in text.split("\n"):
        lines += [line[i : i + 80] for i in range(0, len(line), 80)] or [""]
    return "\n".join(lines)


def _each_line(prefix: Callable[[int], str]) -> Callable[[str], str]:
    def apply(text: str) -> str:
        return "\n".join(prefix(i) + line for i, line in enumerate(text.split("\n")))

    return apply


quote = _each_line(lambda i: "> ")
timestamp = _each_line(lambda i: f"2024-05-01T12:{i // 60 % 60:02d}:{i % 60:02d}.123456Z ")
rank = _each_line(lambda i: "[rank0]: ")
ray = _each_line(lambda i: "(RayWorkerWrapper pid=4321) ")
ray_ip = _each_line(lambda i: "(pid=4321, ip=10.0.0.12) ")
ray_actor_ip = _each_line(lambda i: "(RayWorkerWrapper pid=48213, ip=10.0.3.7) ")
srun = _each_line(lambda i: "3: ")
mpi = _each_line(lambda i: "[1,3]<stderr>:")
pdsh = _each_line(lambda i: "gpu-node-07: ")
buildkit = _each_line(lambda i: f"#12 {i * 0.01:.3f} ")
pytest_e = _each_line(lambda i: "E       ")
kubectl = _each_line(lambda i: f"worker-0 | 2024-05-01 12:00:{i % 60:02d},042 ERROR ")


def ansi(text: str) -> str:
    """The first word of each line coloured, and the line reset (a coloured logger)."""
    return "\n".join(
        re.sub(r"^(\s*)(\S+)", "\\1\x1b[1;31m\\2\x1b[0m", line) + ("\x1b[0m" if line else "")
        for line in text.split("\n")
    )


def crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


def tabs(text: str) -> str:
    """Indentation and runs of spaces as tabs."""
    return re.sub(r" {2,}", "\t", text).replace("\n ", "\n\t")


def json_whole(text: str) -> str:
    """The whole log one JSON string on one line (a structured logger's ``message``)."""
    return json.dumps({"level": "error", "message": text}) + "\n"


def docker_json(text: str) -> str:
    """Docker's json-file log driver: one JSON object per line, its text JSON-escaped."""
    return "".join(
        json.dumps({"log": line + "\n", "stream": "stderr", "time": "2024-05-01T12:00:00Z"}) + "\n"
        for line in text.split("\n")
    )


def repr_list(text: str) -> str:
    """Python's repr of the lines as a list (``print(traceback.format_exception(...))``)."""
    return repr([line + "\n" for line in text.split("\n")]) + "\n"


def repr_dict(text: str) -> str:
    """Python's repr of a dict holding the text (``print({'error': str(e)})``)."""
    return repr({"error": text, "rank": 0}) + "\n"


TRANSFORMS: dict[str, Callable[[str], str]] = {
    "plain": lambda t: t,
    "html": html,
    "html-hex": html_hex,
    "html-nbsp": html_nbsp,
    "nbsp": nbsp,
    "smart-quotes": smart_quotes,
    "fullwidth": fullwidth,
    "zero-width": zero_width,
    "wrap": wrap,
    "wrap-cut": wrap_cut,
    "quote": quote,
    "ansi": ansi,
    "timestamp": timestamp,
    "rank": rank,
    "ray": ray,
    "ray-ip": ray_ip,
    "ray-actor-ip": ray_actor_ip,
    "srun": srun,
    "mpi": mpi,
    "pdsh": pdsh,
    "buildkit": buildkit,
    "pytest": pytest_e,
    "kubectl": kubectl,
    "crlf": crlf,
    "tabs": tabs,
    "json": json_whole,
    "docker-json": docker_json,
    "repr-list": repr_list,
    "repr-dict": repr_dict,
}


def transformed_case(case: Case, name: str, into: Path) -> Case:
    """A copy of ``case`` under ``into`` with its log rewritten by transformation ``name``."""
    assert case.log is not None
    folder = into / case.id
    folder.mkdir(parents=True)
    for part in ("case.toml", "dump.txt", "spec.toml"):
        if (case.path / part).is_file():
            shutil.copyfile(case.path / part, folder / part)
    text = case.log.read_bytes().decode("utf-8", errors="replace")
    (folder / "log.txt").write_bytes(TRANSFORMS[name](text).encode("utf-8"))
    return load_case(folder)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument(
        "--transform", action="append", choices=sorted(TRANSFORMS), help="(repeatable)"
    )
    parser.add_argument("--list", action="store_true", help="list the transformations")
    parser.add_argument("--lost", action="store_true", help="name the cases each one loses")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--every", type=int, default=1, help="only every Nth case (a quicker sample; default 1)"
    )
    parser.add_argument("cases", nargs="*")
    args = parser.parse_args(argv)
    if args.list:
        for name, fn in TRANSFORMS.items():
            print(f"{name:<14} {(fn.__doc__ or '').strip().splitlines()[0] if fn.__doc__ else ''}")
        return 0
    if args.corpus.resolve().name == "heldout":
        print("the held-out set is blind: transform the training corpus only", file=sys.stderr)
        return 2
    cases = [c for c in load_corpus(args.corpus) if c.log is not None and c.kind == "failure"]
    if args.cases:
        cases = [c for c in cases if c.id in set(args.cases)]
    cases = cases[:: max(1, args.every)]
    outcomes = {c.id: evaluate_case(c) for c in cases}
    plain = {i for i, o in outcomes.items() if o.found}
    fixed = {i for i, o in outcomes.items() if o.right_fix}
    names = [n for n in (args.transform or list(TRANSFORMS)) if n != "plain"]
    rows: dict[str, dict[str, object]] = {}
    tmp = Path(tempfile.mkdtemp(prefix="envcheck-transforms-"))
    try:
        for name in names:
            kept, fix_kept, gained, lost = 0, 0, 0, []
            for case in cases:
                outcome = evaluate_case(transformed_case(case, name, tmp / name))
                if case.id in plain:
                    kept += outcome.found
                    if not outcome.found:
                        lost.append(case.id)
                else:
                    gained += outcome.found
                if case.id in fixed:
                    fix_kept += bool(outcome.right_fix)
                    if not outcome.right_fix and outcome.found:
                        lost.append(case.id + " (fix)")
            rows[name] = {
                "kept": kept,
                "of": len(plain),
                "fix_kept": fix_kept,
                "fix_of": len(fixed),
                "gained": gained,
                "lost": lost,
            }
            if not args.json:
                pct = 100 * kept / len(plain) if plain else 100.0
                fix_pct = 100 * fix_kept / len(fixed) if fixed else 100.0
                print(
                    f"{name:<14} {kept:>4}/{len(plain):<4} {pct:5.1f}% kept   right fix "
                    f"{fix_kept:>4}/{len(fixed):<4} {fix_pct:5.1f}% kept",
                    flush=True,
                )
                if args.lost and lost:
                    print("    lost: " + " ".join(lost), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        print(json.dumps({"cases": len(cases), "plain_found": len(plain), "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    raise SystemExit(main())
