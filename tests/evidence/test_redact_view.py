"""`--redact` is a view: it changes what is printed and written, never a verdict. Every rule case
runs through `check`'s own argument parsing, report loading and evaluation, with and without
--redact, and gives the same codes and severities."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from envcheck.cli import build_parser
from envcheck.cli import check as check_cmd
from envcheck.cli.common import obtain_report
from envcheck.model.scrub import anonymize
from tests.conftest import CliResult

CASES = Path(__file__).parent.parent / "rules" / "cases"
FILES = sorted(
    p for p in CASES.glob("*/*") if p.suffix in (".toml", ".json") and p.name != "expect.toml"
)
NET103 = CASES / "NET103" / "bad.toml"


@pytest.fixture(autouse=True, scope="module")
def _one_matrix() -> Iterator[None]:
    """`check` loads the matrix per run; the cases share one load (the same files)."""
    import envcheck.matrix.load as loader

    real = loader.load
    cached = functools.cache(lambda dirs: real(list(dirs)))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(loader, "load", lambda dirs=(), **kw: cached(tuple(dirs)))
        yield


def outcome(path: Path, *extra: str) -> check_cmd.CheckOutcome:
    source = "--report" if path.suffix == ".json" else "--spec"
    args = build_parser("check").parse_args(
        ["check", source, str(path), "--severity", "info", *extra]
    )
    report = obtain_report(args, anonymized=False)
    result = check_cmd.evaluate(args, [report])
    return check_cmd.redacted_view(result) if args.redact else result


def verdicts(result: check_cmd.CheckOutcome) -> list[tuple[str, str]]:
    return sorted((f.code, f.severity.value) for f in result.result.findings)


def test_there_are_rule_cases() -> None:
    assert len(FILES) >= 100


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_redact_keeps_every_verdict(path: Path) -> None:
    plain, redacted = outcome(path), outcome(path, "--redact")
    assert verdicts(redacted) == verdicts(plain)
    assert sorted(s.code for s in redacted.result.skipped) == sorted(
        s.code for s in plain.result.skipped
    )
    assert redacted.exit_code == plain.exit_code


def test_anonymizing_keeps_loopback_so_net103_survives() -> None:
    """Loopback names no machine: anonymizing keeps it readable, so even a report anonymized
    before the rules ran keeps NET103 (and the redacted view keeps it as well)."""
    from envcheck.engine import evaluate
    from envcheck.ingest.spec import load_spec
    from envcheck.matrix_validate import load
    from envcheck.rules import all_rules

    matrix = load([])
    report = load_spec(str(NET103))
    codes = {f.code for f in evaluate(anonymize(report), matrix, all_rules(matrix)).findings}
    assert "NET103" in codes
    assert "NET103" in {c for c, _ in verdicts(outcome(NET103, "--redact"))}


def test_redacted_output_hides_hostname_and_addresses(cli: Callable[..., CliResult]) -> None:
    result = cli("check", "--spec", str(NET103), "--redact", "--json")
    assert result.returncode == 1
    text = result.stdout
    for secret in ("trainer-7", "10.0.0.5"):
        assert secret not in text, secret
    data = json.loads(text)["data"]
    # loopback names no machine: it stays readable, so the finding still says what is wrong
    (net103,) = [f for f in data["findings"] if f["code"] == "NET103"]
    assert "resolves to 127.0.1.1: Gloo binds loopback" in net103["message"]
    assert data["reports"][0]["redacted"] is True
