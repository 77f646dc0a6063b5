from __future__ import annotations

import json

import pytest

from envcheck.model.report import NodeReport
from tests.conftest import FAKES, cli_env, run_cli
from tests.distfactory import make_dist, make_fake_torch
from tests.specs import TINYZERO


@pytest.fixture
def tinyzero(tmp_path):
    path = tmp_path / "stack.toml"
    path.write_text(TINYZERO)
    return path


def _envelope(result):
    data = result.json()
    assert list(data) == ["schema", "command", "status", "exit_code", "data", "errors", "applied"]
    return data


def test_issue_example_spec(tinyzero, cli):
    result = cli("check", "--spec", str(tinyzero), "--json")
    assert result.returncode == 1
    env = _envelope(result)
    assert (env["schema"], env["command"], env["status"], env["exit_code"]) == (
        1,
        "check",
        "findings",
        1,
    )
    by_code = {f["code"]: f for f in env["data"]["findings"]}
    cublas = by_code["CUD102"]
    assert cublas["severity"] == "error" and "NVIDIA H20" in cublas["message"]
    assert cublas["fix"]["commands"] == ["pip install nvidia-cublas-cu12==12.3.4.1"]
    assert cublas["fix"]["applicability"] == "safe"
    assert "/usr/local/cuda-12.1/lib64" in by_code["CUD104"]["message"]
    assert "Unable to find address for: ^lo" in by_code["NET102"]["message"]
    assert "127.0.1.1" in by_code["NET103"]["message"]
    assert "64 MiB" in by_code["SYS101"]["message"] and "/dev/shm" in by_code["RAY105"]["message"]
    assert "97% full" in by_code["RAY103"]["message"]


def test_envelope_contract(tinyzero, cli):
    env = _envelope(cli("check", "--spec", str(tinyzero), "--json", "--verbose"))
    data = env["data"]
    assert set(data) == {"reports", "findings", "skipped", "gaps", "summary"}
    for finding in data["findings"]:
        assert set(finding) == {
            "code",
            "severity",
            "title",
            "message",
            "node",
            "evidence",
            "fix",
            "references",
        }
        assert finding["severity"] in ("error", "warning", "info")
        if finding["fix"] is not None:
            assert {"summary", "commands", "applicability"} <= set(finding["fix"])
            assert finding["fix"]["applicability"] in ("safe", "unsafe", "manual")
    for skipped in data["skipped"]:
        assert set(skipped) == {"code", "reason", "node", "fact"} and skipped["reason"]
    report = NodeReport.from_dict(data["reports"][0])
    assert report.origin.kind == "declared"
    assert data["summary"]["error"] == sum(f["severity"] == "error" for f in data["findings"])


def test_json_is_emitted_when_clean(tmp_path, cli):
    spec = tmp_path / "ok.toml"
    spec.write_text('[packages]\ntorch = "2.5.1"\nnumpy = "1.26.4"\n')
    result = cli("check", "--spec", str(spec), "--json")
    assert result.returncode == 0
    env = _envelope(result)
    assert env["status"] == "ok" and env["data"]["findings"] == []


@pytest.mark.parametrize(
    ("args", "code"),
    [
        ((), 0),
        (("--severity", "warning"), 1),
        (("--severity", "warning", "--ignore", "CUD104"), 0),
        (("--severity", "warning", "--select", "TOR,PKG"), 0),
    ],
)
def test_severity_select_ignore(tmp_path, cli, args, code):
    # one warning only (CUD104); torch 2.4.0+cu121 would also imply PyPI's cuBLAS 12.1.3.1 (CUD102)
    spec = tmp_path / "warn.toml"
    spec.write_text(
        '[packages]\ntorch = "2.5.1+cu121"\n\n[env]\nLD_LIBRARY_PATH = "/usr/local/cuda-12.1/lib64"\n'
    )
    assert cli("check", "--spec", str(spec), *args).returncode == code


def test_unknown_selector_is_usage_error(tinyzero, cli):
    result = cli("check", "--spec", str(tinyzero), "--select", "ZZZ")
    assert result.returncode == 2
    assert (
        result.stderr.strip()
        == "envcheck: error: no rule code starts with 'ZZZ' (see `envcheck rules`)"
    )


def test_bad_severity_is_usage_error(tinyzero, cli):
    result = cli("check", "--spec", str(tinyzero), "--severity", "fatal")
    assert result.returncode == 2 and "must be one of: error, warning, info" in result.stderr


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[gpu]\ndriver = "535.104.05"\nmodel = ["NVIDIA H20"]\n',
            ":3: key 'gpu.model': unknown key",
        ),
        (
            "[python]\nversion = 3.10\n",
            ":2: key 'python.version': expected a string, got a number (3.1)",
        ),
        (
            '[packages]\ntorch = "two.four"\n',
            ":2: key 'packages.torch': invalid version 'two.four'",
        ),
        (
            '[system]\nshm_gib = "64m"\n',
            ":2: key 'system.shm_gib': expected a number, got a string ('64m')",
        ),
        ("[packages\ntorch = 1\n", ": invalid TOML:"),
        (
            '[network]\nhostname_resolves_to = "not-an-ip"\n',
            ":2: key 'network.hostname_resolves_to': invalid IP address 'not-an-ip'",
        ),
        (
            '[system]\ndisks = [{ path = "/tmp/ray", size_gib = 10, free_gib = 30 }]\n',
            "key 'system.disks[0]': needs 0 <= free_gib <= size_gib",
        ),
        ("[oops]\n", ":1: key 'oops': unknown key"),
    ],
)
def test_bad_spec_is_one_line_exit_2(tmp_path, cli, text, message):
    spec = tmp_path / "bad.toml"
    spec.write_text(text)
    result = cli("check", "--spec", str(spec))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"envcheck: error: {spec}")
    assert message in lines[0]
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_missing_spec_file(cli, tmp_path):
    result = cli("check", "--spec", str(tmp_path / "nope.toml"))
    assert (
        result.returncode == 2
        and result.stderr.strip() == f"envcheck: error: {tmp_path / 'nope.toml'}: no such file"
    )


def test_saved_report_round_trip(tmp_path, cli):
    saved = tmp_path / "node.json"
    assert cli("probe", "-o", str(saved)).returncode == 0
    result = cli("check", "--report", str(saved), "--json")
    assert result.returncode in (0, 1)
    env = _envelope(result)
    assert env["data"]["reports"][0] == json.loads(saved.read_text())


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not JSON"),
        ('{"schema": 7}', "unsupported report schema 7"),
        ("[]", "expected a JSON object"),
    ],
)
def test_bad_report(tmp_path, cli, content, message):
    path = tmp_path / "node.json"
    path.write_text(content)
    result = cli("check", "--report", str(path))
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr


def test_report_from_a_check_envelope(tinyzero, tmp_path, cli):
    out = tmp_path / "check.json"
    cli("check", "--spec", str(tinyzero), "-o", str(out))
    result = cli("check", "--report", str(out), "--json")
    assert {f["code"] for f in result.json()["data"]["findings"]} >= {"CUD102", "NET102"}


def test_default_command_is_check(cli):
    result = cli("--json")
    assert result.returncode in (0, 1)
    assert result.json()["command"] == "check"


def test_table_and_markdown_outputs(tinyzero, cli):
    table = run_cli("check", "--spec", str(tinyzero), "--verbose", env=cli_env(COLUMNS="200"))
    assert (
        "ERROR" in table.stdout
        and "CUD102" in table.stdout
        and "$ pip install nvidia-cublas-cu12==12.3.4.1" in table.stdout
    )
    assert "Skipped (facts unknown):" in table.stdout
    assert "error(s)" in table.stderr
    md = cli("check", "--spec", str(tinyzero), "--markdown")
    assert "| error | CUD102 |" in md.stdout


def test_settings_file(tinyzero, tmp_path, cli):
    (tmp_path / "envcheck.toml").write_text('ignore = ["CUD", "NET", "RAY", "SYS"]\n')
    result = cli("check", "--spec", str(tinyzero), "--json", cwd=tmp_path)
    assert result.returncode == 0
    assert result.json()["data"]["findings"] == []


def test_pyproject_settings_and_cli_override(tinyzero, tmp_path, cli):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.envcheck]\nselect = ["RAY103"]\nseverity = "warning"\n'
    )
    result = cli("check", "--spec", str(tinyzero), "--json", cwd=tmp_path)
    assert {f["code"] for f in result.json()["data"]["findings"]} == {"RAY103"}
    result = cli("check", "--spec", str(tinyzero), "--json", "--select", "NET102", cwd=tmp_path)
    assert {f["code"] for f in result.json()["data"]["findings"]} == {"NET102"}


def test_bad_settings_file(tinyzero, tmp_path, cli):
    (tmp_path / "envcheck.toml").write_text('select = ["TOR"]\nseverty = "warning"\n')
    result = cli("check", "--spec", str(tinyzero), cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip().startswith(
        f"envcheck: error: {tmp_path / 'envcheck.toml'}:2: key 'severty': unknown key"
    )


def test_check_json_imports_nothing_heavy(tmp_path):
    import subprocess
    import sys

    site = tmp_path / "site"
    make_fake_torch(site, "2.4.0", "12.1")
    make_dist(site, "ray", "2.40.0")
    (site / "ray").mkdir()
    (site / "ray" / "__init__.py").write_text("raise RuntimeError('never import ray')\n")
    code = (
        "import sys, json; from envcheck.cli import main; rc = main(['check', '--json']);"
        # _hashlib: OpenSSL's libcrypto, ~2.5 ms of a run (cachefiles.sha256, torch_symbols)
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'ray', 'requests', 'rich', 'vllm', '_hashlib'));"
        "sys.stderr.write('\\nIMPORTED=' + json.dumps(bad))"
    )
    env = cli_env(PYTHONPATH=f"{site}:{FAKES}", FAKE_PYNVML_SCENARIO="h100x2")
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert json.loads(proc.stderr.rsplit("IMPORTED=", 1)[1]) == []
    data = json.loads(proc.stdout)
    assert data["data"]["reports"][0]["torch"]["data"]["cuda"] == "12.1"
