"""The mined-lines table (tests/triage/data/mined_lines.toml): real failure lines from public
threads, each with its family and the codes that name its cause, and how envcheck's scan names
them, per family. ``python -m tests.triage.mined_lines`` prints the rates (docs/accuracy.md)."""

from __future__ import annotations

import io
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from envcheck.matrix.model import Matrix
from envcheck.matrix.schema import Signature
from envcheck.matrix_validate import load
from envcheck.triage.encoding import normalize
from envcheck.triage.scan import Scanner

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DATA = Path(__file__).parent / "data" / "mined_lines.toml"


@dataclass(frozen=True)
class Mined:
    text: str
    url: str
    family: str
    expect: tuple[str, ...]
    miss: str = ""


def mined() -> list[Mined]:
    with DATA.open("rb") as fh:
        rows = tomllib.load(fh)["line"]
    return [
        Mined(r["text"], r["url"], r["family"], tuple(r["expect"]), r.get("miss", "")) for r in rows
    ]


def matched(scanner: Scanner, text: str) -> list[Signature]:
    """The signatures (noise left out) the scan names in a log of this one line, read as triage
    reads a log (UTF-16, CRLF and colour codes undone: envcheck.triage.encoding)."""
    result = scanner.scan(io.BytesIO(normalize(text.encode() + b"\n")))
    return [t.signature for t in result.ordered() if not t.signature.noise]


def names_cause(signatures: list[Signature], expect: tuple[str, ...]) -> bool:
    return any(code in s.causes for s in signatures for code in expect)


def rates(matrix: Matrix | None = None) -> dict[str, tuple[int, int, int]]:
    """Per family: (lines, lines any signature matched, lines whose cause a signature names)."""
    scanner = Scanner((matrix or load([])).signatures, "re")
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for row in mined():
        sigs = matched(scanner, row.text)
        tally = out[row.family]
        tally[0] += 1
        tally[1] += bool(sigs)
        tally[2] += names_cause(sigs, row.expect)
    return {family: (t[0], t[1], t[2]) for family, t in sorted(out.items())}


def main() -> None:
    total = [0, 0, 0]
    print(f"{'family':<10} {'lines':>5} {'matched':>8} {'cause named':>12}")
    for family, (n, hit, named) in rates().items():
        print(f"{family:<10} {n:>5} {hit:>8} {named:>12}  ({100 * named / n:.0f}%)")
        total = [total[0] + n, total[1] + hit, total[2] + named]
    print(
        f"{'all':<10} {total[0]:>5} {total[1]:>8} {total[2]:>12}  ({100 * total[2] / total[0]:.0f}%)"
    )


if __name__ == "__main__":
    main()
