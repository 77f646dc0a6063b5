"""How well envcheck's reading of a log survives the ways the same log reaches it: the corpus's
logs rewritten as another launcher, terminal, paste or user would hand them over, each rewrite
keeping the meaning (the same failure, the same facts), and the verdict compared with the
original's. A diagnosis that holds only for the log's exact bytes is fitted to the case; one
that holds under these rewrites reads the failure.

    python scripts/bench_robustness.py [--corpus tests/corpus] [--sample N] [--seed S]
                                       [--transforms a,b] [--list] [--json]

For every failure case with a log that the original reading finds (bench_accuracy's "found"),
each rewrite is judged as bench_accuracy judges the original: found, and right fix where the
original had the right fix. The figure per rewrite is the share of such cases that keep it.
``--list`` names the cases that lose it (the training corpus only: never on a held-out folder).

The rewrites (each from a real way logs travel):
  ray        every line behind Ray's worker prefix '(RayWorkerWrapper pid=4242, ip=10.0.0.7) '
  rank       every line behind torchrun's '[rank3]: '
  timestamp  every line behind kubectl logs --timestamps' RFC 3339 time
  compose    every line behind docker compose's 'trainer-1  | '
  quote      every line quoted as a GitHub comment quotes it ('> ')
  indent     every line indented by four spaces (a Markdown code block, an indented paste)
  crlf       Windows line ends
  ansi       every line coloured by a terminal (SGR red on, reset at the end)
  home       another user's home directory in paths (/home/<user>/, /Users/<user>/, /root/)
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))
sys.path.insert(0, str(REPO))

from bench_accuracy import CORPUS, Case, Outcome, evaluate_case, load_case, load_corpus  # noqa: E402


def _each_line(prefix: bytes, suffix: bytes = b"") -> Callable[[bytes], bytes]:
    def rewrite(data: bytes) -> bytes:
        lines = data.split(b"\n")
        return b"\n".join(prefix + ln + suffix if ln.strip() else ln for ln in lines)

    return rewrite


_HOME = re.compile(rb"(/home/|/Users/)[A-Za-z0-9_.-]+/|/root/")


def _home(data: bytes) -> bytes:
    return _HOME.sub(lambda m: (m.group(1) or b"/home/") + b"mlops_user7/", data)


TRANSFORMS: dict[str, Callable[[bytes], bytes]] = {
    "ray": _each_line(b"(RayWorkerWrapper pid=4242, ip=10.0.0.7) "),
    "rank": _each_line(b"[rank3]: "),
    "timestamp": _each_line(b"2026-03-04T05:06:07.123456789Z "),
    "compose": _each_line(b"trainer-1  | "),
    "quote": _each_line(b"> "),
    "indent": _each_line(b"    "),
    "crlf": lambda data: data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"),
    "ansi": _each_line(b"\x1b[31m", b"\x1b[0m"),
    "home": _home,
}


def _rewritten(case: Case, rewrite: Callable[[bytes], bytes], tmp: Path) -> Case:
    """A copy of the case whose log is rewritten (its dump and spec as they are)."""
    dest = tmp / case.id
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(case.path, dest)
    log = dest / "log.txt"
    log.write_bytes(rewrite(log.read_bytes()))
    return load_case(dest)


def _keeps(original: Outcome, other: Outcome) -> bool:
    """Does the rewritten log's reading keep what the original's had: found, and the right fix
    where the original printed it."""
    if not other.found:
        return False
    return not original.right_fix or bool(other.right_fix)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="the corpus folder")
    parser.add_argument("--sample", type=int, default=0, help="only N cases (0: all)")
    parser.add_argument("--seed", type=int, default=20, help="the sample's seed")
    parser.add_argument(
        "--transforms", default=",".join(TRANSFORMS), help="comma-separated rewrites"
    )
    parser.add_argument("--list", action="store_true", help="name the cases a rewrite loses")
    parser.add_argument("--json", action="store_true", help="the figures as JSON")
    parser.add_argument("cases", nargs="*", help="only these case ids")
    args = parser.parse_args(argv)
    names = [t for t in args.transforms.split(",") if t]
    unknown = [t for t in names if t not in TRANSFORMS]
    if unknown:
        parser.error(f"unknown rewrite {unknown[0]!r} (known: {', '.join(TRANSFORMS)})")
    blind = args.corpus.resolve().name.startswith("heldout")
    if args.list and blind:
        parser.error("--list names cases: not on a held-out folder")
    cases = [c for c in load_corpus(args.corpus) if c.kind == "failure" and c.log is not None]
    if args.cases:
        cases = [c for c in cases if c.id in set(args.cases)]
    if args.sample and args.sample < len(cases):
        cases = sorted(random.Random(args.seed).sample(cases, args.sample), key=lambda c: c.id)
    import envcheck

    print(f"envcheck from {Path(envcheck.__file__).parent}", file=sys.stderr)
    originals = {c.id: evaluate_case(c) for c in cases}
    base = [c for c in cases if originals[c.id].found]
    kept: dict[str, int] = {}
    lost: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory(prefix="envcheck-robust-") as tmp:
        for name in names:
            kept[name] = 0
            lost[name] = []
            for case in base:
                other = evaluate_case(_rewritten(case, TRANSFORMS[name], Path(tmp)))
                if _keeps(originals[case.id], other):
                    kept[name] += 1
                else:
                    lost[name].append(case.id)
    if args.json:
        figures = {n: {"kept": kept[n], "of": len(base)} for n in names}
        sys.stdout.write(json.dumps({"cases": len(cases), "rewrites": figures}, indent=2) + "\n")
        return 0
    print(f"{len(base)} of {len(cases)} failure logs found as written; kept under each rewrite:")
    for name in names:
        share = 100 * kept[name] / len(base) if base else 0.0
        print(f"  {name:<10} {share:5.1f}% ({kept[name]}/{len(base)})")
        if args.list and lost[name]:
            print("      lost: " + " ".join(lost[name]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
