"""``envcheck probe --markdown`` is the collect_env replacement: it lists every installed
package (collapsed) and reads back with ``check --from``, reproducing the probe's verdicts."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli
from tests.specs import TINYZERO


def _codes(envelope_text: str) -> list[str]:
    return sorted({f["code"] for f in json.loads(envelope_text)["data"]["findings"]})


def test_probe_markdown_piped_to_check_reproduces_the_probes_verdicts(tmp_path: Path) -> None:
    md = run_cli("probe", "--markdown")
    assert md.returncode == 0, md.stderr
    saved = tmp_path / "node.json"
    assert run_cli("probe", "-o", str(saved)).returncode == 0
    report = json.loads(saved.read_text())
    # every installed distribution, with its version, in a collapsed block
    assert "<details><summary>Packages (" in md.stdout
    for dist in report["packages"]["data"]["distributions"]:
        assert f"| {dist['name']} | {dist['version']} |" in md.stdout
    from_md = run_cli("check", "--from", "-", "--json", stdin=md.stdout)
    assert from_md.returncode in (0, 1), from_md.stderr
    from_report = run_cli("check", "--report", str(saved), "--json")
    assert _codes(from_md.stdout) == _codes(from_report.stdout)


def test_markdown_report_reads_back_losslessly(tmp_path: Path) -> None:
    from envcheck.formats.markdown import render_report
    from envcheck.ingest.common import Source
    from envcheck.ingest.detect import detect, parse
    from envcheck.ingest.spec import load_spec

    spec = tmp_path / "tinyzero.toml"
    spec.write_text(TINYZERO)
    report = load_spec(str(spec))
    text = render_report(report)
    assert detect(text) == "envcheck-markdown"
    # pasted into an issue as a quote, fences and all
    quoted = "\n".join("> " + line for line in text.splitlines())
    back = parse(Source("issue.md", quoted))
    assert back.to_dict() == report.to_dict()
    md = tmp_path / "node.md"
    md.write_text(text)
    codes = _codes(run_cli("check", "--from", str(md), "--json").stdout)
    assert codes == _codes(run_cli("check", "--spec", str(spec), "--json").stdout)
    assert "CUD102" in codes


def test_a_markdown_report_cut_before_its_json_is_named(tmp_path: Path) -> None:
    from envcheck.ingest.envcheck_md import EMBEDDED

    md = tmp_path / "cut.md"
    md.write_text(f"## envcheck report\n\n<details><summary>{EMBEDDED}</summary>\n\n```json\n")
    res = run_cli("check", "--from", str(md))
    assert res.returncode == 2
    assert "holds no JSON line" in res.stderr and "Traceback" not in res.stderr
