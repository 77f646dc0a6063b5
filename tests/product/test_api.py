"""The Python API (envcheck.preflight / probe / check / triage): the same typed results the CLI
renders, one exception type for a failed pre-flight, and a light ``import envcheck``."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import envcheck
from envcheck.errors import EnvcheckError
from tests.conftest import run_cli
from tests.specs import TINYZERO

REPO = Path(__file__).resolve().parents[2]
LOG = REPO / "tests" / "fixtures" / "triage" / "tinyzero_h20.log"

# a site rule that fires wherever `packaging` is installed (it is: envcheck depends on it)
SITE_RULE = textwrap.dedent(
    """\
    [[known_bad]]
    code = "SITE001"
    id = "site-test-ban"
    title = "packaging is banned on this test site"
    severity = "error"
    message = "packaging {pkg[packaging]} is installed"
    symptom = "none: a test rule"
    cause = "the test says so"
    source = "tests/product/test_api.py"
    [known_bad.when]
    packages = { packaging = "" }
    """
)


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "tinyzero.toml"
    path.write_text(TINYZERO, encoding="utf-8")
    return path


@pytest.fixture
def site(tmp_path: Path) -> Path:
    folder = tmp_path / "site"
    folder.mkdir()
    (folder / "site.toml").write_text(SITE_RULE, encoding="utf-8")
    return folder


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return set(json.loads(out.stdout.splitlines()[-1]))


def test_import_envcheck_is_light() -> None:
    modules = _modules_after("import envcheck; assert envcheck.__version__")
    heavy = {"envcheck.api", "rich", "packaging", "requests", "torch", "ray", "pynvml"}
    assert not modules & heavy
    assert not any(m.startswith(("envcheck.commands", "envcheck.rules")) for m in modules)


def test_api_names_load_on_first_use_without_rich_or_torch() -> None:
    modules = _modules_after("import envcheck; envcheck.preflight; envcheck.PreflightError")
    assert "envcheck.api" in modules
    assert not modules & {"rich", "torch", "ray", "requests"}


def test_unknown_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = envcheck.nope  # type: ignore[attr-defined]


def test_check_a_spec_gives_what_the_cli_gives(spec: Path) -> None:
    outcome = envcheck.check(spec)
    cli = run_cli("check", "--spec", str(spec), "--json")
    assert outcome.exit_code == cli.returncode == 1
    assert [f.code for f in outcome.findings] == [f["code"] for f in cli.json()["data"]["findings"]]
    assert outcome.envelope()["data"]["findings"] == cli.json()["data"]["findings"]
    assert "CUD102" in {f.code for f in outcome.failing}


def test_check_takes_a_report_select_and_ignore(spec: Path) -> None:
    report = envcheck.check(spec).reports[0]
    only_cud = envcheck.check(report, select="CUD")
    assert only_cud.findings and {f.code[:3] for f in only_cud.findings} == {"CUD"}
    without = envcheck.check(report.to_dict(), ignore=["CUD", "NET"])
    assert not {f.code[:3] for f in without.findings} & {"CUD", "NET"}


def test_probe_returns_this_nodes_report() -> None:
    report = envcheck.probe(timeout=5)
    assert report.python.is_ok and report.python.data is not None
    assert report.python.data.version.startswith(f"{sys.version_info[0]}.{sys.version_info[1]}")


def test_preflight_raises_one_exception_carrying_the_findings(site: Path) -> None:
    with pytest.raises(envcheck.PreflightError) as caught:
        envcheck.preflight(matrix=[site], select="SITE")
    error = caught.value
    assert [f.code for f in error.findings] == ["SITE001"]
    assert error.outcome.exit_code == 1
    assert "SITE001 error: packaging" in str(error)


def test_preflight_returns_the_outcome_when_nothing_reaches_fail_on(site: Path) -> None:
    outcome = envcheck.preflight(matrix=[site], select="SITE", ignore="SITE001")
    assert outcome.exit_code == 0 and not outcome.failing


def test_preflight_rejects_a_bad_level() -> None:
    with pytest.raises(EnvcheckError, match="fail_on must be one of"):
        envcheck.preflight(fail_on="fatal")  # type: ignore[arg-type]


def test_triage_text_gives_what_the_cli_gives(spec: Path) -> None:
    text = LOG.read_text(encoding="utf-8")
    result = envcheck.triage(text, node=spec)
    cli = run_cli("triage", str(LOG), "--spec", str(spec), "--json", "--engine", "re")
    assert result.exit_code == cli.returncode == 1
    ours = [(m.tally.signature.id, [c.code for c in m.causes]) for m in result.matches]
    theirs = [(m["id"], [c["code"] for c in m["causes"]]) for m in cli.json()["data"]["matches"]]
    assert ours == theirs
    verdicts = {c.code: c.verdict for m in result.matches for c in m.causes}
    cli_verdicts = {
        c["code"]: c["verdict"] for m in cli.json()["data"]["matches"] for c in m["causes"]
    }
    assert verdicts == cli_verdicts


def test_triage_without_a_node_leaves_causes_unchecked() -> None:
    import envcheck.triage.run  # the package is the attribute now, and still callable

    result = envcheck.triage(LOG.read_bytes())
    assert result.failures
    assert {c.verdict for m in result.failures for c in m.causes} == {"unchecked"}
    assert envcheck.triage("all good\n").exit_code == 0


def test_the_package_is_typed() -> None:
    assert (REPO / "envcheck" / "py.typed").is_file()


def test_the_readme_example_runs() -> None:
    import re

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## From Python") :]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    proc = subprocess.run(
        [sys.executable, "-c", code.group(1)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr
    assert "no-kernel-image" in proc.stdout or proc.returncode == 1


def test_check_strict_gives_what_the_cli_gives(tmp_path: Path) -> None:
    """A node whose GPU list is unknown: --strict turns the skipped rules that matter into exit 1,
    through the API as on the command line."""
    partial = tmp_path / "partial.toml"
    partial.write_text('[python]\nversion = "3.10.12"\n', encoding="utf-8")
    loose = envcheck.check(partial)
    strict = envcheck.check(partial, strict=True)
    cli = run_cli("check", "--spec", str(partial), "--strict", "--json")
    assert loose.exit_code == 0
    assert strict.exit_code == cli.returncode == 1


def test_probe_deep_on_a_node_without_a_driver(tmp_path: Path) -> None:
    """deep=("gpu",) runs the CUDA-driver step: on this GPU-less machine it reports the missing
    driver as a fact, exactly as `envcheck probe --deep` does."""
    report = envcheck.probe(timeout=5, deep=("gpu",))
    assert report.deep.is_ok and report.deep.data is not None
    assert report.deep.data.cuda is not None
