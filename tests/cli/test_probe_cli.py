from __future__ import annotations

import json
import subprocess
import sys

import pytest

from envcheck.model.report import NodeReport
from tests.conftest import FAKES, cli_env, run_cli
from tests.distfactory import make_dist, make_fake_torch

HEAVY = ("torch", "ray", "vllm", "requests", "rich", "flash_attn")

WRAPPER = """
import json, sys
from envcheck.cli import main
rc = main(sys.argv[1:])
heavy = sorted(m for m in sys.modules if m.split('.')[0] in {heavy!r})
sys.stderr.write('\\nIMPORTED=' + json.dumps(heavy) + '\\n')
sys.exit(rc)
"""


@pytest.fixture
def fake_site(tmp_path):
    site = tmp_path / "site"
    make_fake_torch(site, "2.4.0", "12.1")
    make_dist(site, "nvidia-cublas-cu12", "12.1.3.1")
    make_dist(site, "vllm", "0.6.3", requires=("torch==2.4.0",))
    (site / "vllm").mkdir()
    (site / "vllm" / "__init__.py").write_text(
        "raise RuntimeError('envcheck must never import vllm')\n"
    )
    return site


def _run_wrapped(args, env):
    proc = subprocess.run(
        [sys.executable, "-c", WRAPPER.format(heavy=HEAVY), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    marker = proc.stderr.rsplit("IMPORTED=", 1)
    imported = json.loads(marker[1]) if len(marker) == 2 else None
    return proc, imported


def test_probe_json_reads_torch_without_importing_anything_heavy(fake_site):
    env = cli_env(PYTHONPATH=f"{fake_site}:{FAKES}", FAKE_PYNVML_SCENARIO="h100x2")
    proc, imported = _run_wrapped(["probe", "--json"], env)
    assert proc.returncode == 0, proc.stderr
    assert imported == []
    report = NodeReport.from_dict(json.loads(proc.stdout))
    assert report.torch.data.cuda == "12.1"
    assert report.torch.data.variant == "cu121"
    assert report.torch.data.installed_cuda["nvidia-cublas-cu12"] == "12.1.3.1"
    assert report.packages.data.version("vllm") == "0.6.3"
    assert [g.name for g in report.gpu.data.gpus] == ["NVIDIA H100 80GB HBM3"] * 2


def test_probe_json_is_a_versioned_report(cli):
    result = cli("probe", "--json")
    assert result.returncode == 0, result.stderr
    data = result.json()
    assert data["schema"] == 1
    assert set(NodeReport.SECTIONS) <= set(data)
    for name in NodeReport.SECTIONS:
        assert data[name]["status"] in ("ok", "unavailable", "error")
        if name == "deep":  # only probed with --deep
            assert data[name] == {**data[name], "status": "unavailable", "duration_ms": None}
            assert data[name]["reason"] == "not run (pass --deep)"
            continue
        if name == "expect":  # the user's statement, given to check (--expect), not probed
            assert data[name]["status"] == "unavailable"
            continue
        assert isinstance(data[name]["duration_ms"], float)
    assert NodeReport.from_dict(data).to_dict() == data


def test_probe_output_file(tmp_path, cli):
    out = tmp_path / "node.json"
    result = cli("probe", "-o", str(out))
    assert result.returncode == 0
    assert result.stdout == ""
    assert f"wrote {out}" in result.stderr
    assert NodeReport.from_dict(json.loads(out.read_text())).schema == 1


def test_probe_output_into_missing_directory_writes_nothing(tmp_path, cli):
    out = tmp_path / "nope" / "node.json"
    result = cli("probe", "-o", str(out))
    assert result.returncode == 2
    assert result.stderr.strip() == f"envcheck: error: {out}: directory {out.parent} does not exist"
    assert not out.parent.exists()


def test_probe_markdown(cli, fake_site):
    env = cli_env(PYTHONPATH=f"{fake_site}:{FAKES}", FAKE_PYNVML_SCENARIO="a100")
    result = run_cli("probe", "--markdown", env=env)
    assert result.returncode == 0, result.stderr
    text = result.stdout
    for heading in (
        "### GPU / driver",
        "### Python & key packages",
        "### System",
        "### Storage",
        "### Network",
    ):
        assert heading in text
    assert "<details><summary>Environment</summary>" in text
    assert "| GPU 0 | NVIDIA A100-SXM4-80GB · sm_80" in text
    assert "| torch | 2.4.0 · CUDA 12.1 · variant cu121 |" in text


def test_probe_table_shows_reasons(cli):
    env = cli_env(
        PYTHONPATH=str(FAKES), FAKE_PYNVML_SCENARIO="none", PATH="/usr/bin:/bin", COLUMNS="200"
    )
    result = run_cli("probe", env=env)
    assert result.returncode == 0
    assert "GPU / driver" in result.stdout
    assert "unavailable: NVML library (libnvidia-ml.so.1) not found" in result.stdout


def test_probe_other_python(tmp_path, cli):
    venv = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next((venv / "lib").glob("python3*/site-packages"))
    make_fake_torch(site, "2.5.1", "12.4")
    result = cli("probe", "--json", "--python", str(venv / "bin" / "python"))
    assert result.returncode == 0, result.stderr
    report = NodeReport.from_dict(result.json())
    assert report.torch.data.version == "2.5.1"
    assert report.python.data.prefix == str(venv)
    assert report.origin.detail == str(venv / "bin" / "python")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["probe", "--python", "/no/such/python"],
            "envcheck: error: --python: /no/such/python is not an executable file",
        ),
        (
            ["probe", "--python", "/bin/ls"],  # probe ran it and exited 0 with error sections
            "envcheck: error: --python: /bin/ls is not a Python interpreter (exited with 2)",
        ),
        (
            ["probe", "--json", "--python", "/bin/true"],
            "envcheck: error: --python: /bin/true is not a Python interpreter"
            " (it printed something else)",
        ),
        (
            ["probe", "--timeout", "0"],
            "envcheck: error: argument --timeout: must be > 0 and <= 86400, got 0.0"
            " (see `envcheck probe --help`)",
        ),
    ],
)
def test_probe_bad_input_is_one_line_exit_2(cli, args, message):
    result = cli(*args)
    assert result.returncode == 2
    assert result.stderr.strip() == message
    assert "Traceback" not in result.stderr


def test_probe_json_and_markdown_are_exclusive(cli):
    result = cli("probe", "--json", "--markdown")
    assert result.returncode == 2
    assert "not allowed with argument" in result.stderr


def test_redact_replaces_hostname_and_addresses(cli):
    result = cli("probe", "--json", "--redact")
    data = result.json()
    import socket

    host = socket.gethostname()
    assert data["redacted"] is True
    assert data["node"].startswith("node-") and data["node"] != host
    text = json.dumps(data["network"])
    assert host not in text
    import ipaddress

    # every address left readable is loopback or link-local (they name no machine)
    for iface in data["network"]["data"]["interfaces"]:
        for address in (*iface["ipv4"], *iface["ipv6"]):
            if not address.startswith(("ip-", "ip6-")):
                ip = ipaddress.ip_interface(address).ip
                assert ip.is_loopback or ip.is_link_local, address


def test_secrets_never_leave_the_node(cli):
    env = cli_env(
        HF_TOKEN="hf_supersecret", WANDB_API_KEY="wk_123", https_proxy="http://u:p4ss@proxy:3128"
    )
    for args in (["probe", "--json"], ["probe", "--markdown"], ["probe"]):
        out = run_cli(*args, env=env).stdout
        assert "hf_supersecret" not in out and "wk_123" not in out and "p4ss" not in out


def test_probe_loads_only_the_probe_side_of_envcheck(fake_site):
    """`envcheck probe` builds only its own subcommand: the rules, the matrix, the planners and
    the ingest parsers stay unloaded (their import time would be most of a probe's)."""
    code = (
        "import sys, json; from envcheck.cli import main; rc = main(sys.argv[1:]);"
        "sys.stderr.write('\\nLOADED=' + json.dumps(sorted({m.split('.')[1] for m in sys.modules"
        " if m.startswith('envcheck.')})) + '\\n'); sys.exit(rc)"
    )
    env = cli_env(PYTHONPATH=f"{fake_site}:{FAKES}", FAKE_PYNVML_SCENARIO="h100x2")
    proc = subprocess.run(
        [sys.executable, "-c", code, "probe", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    loaded = set(json.loads(proc.stderr.rsplit("LOADED=", 1)[1]))
    assert "probes" in loaded
    assert loaded.isdisjoint({"rules", "matrix", "plan", "ingest", "triage", "cluster", "engine"})


@pytest.mark.parametrize("args", [("probe", "--json"), ("rules", "--json"), ("probe",)])
def test_a_reader_that_leaves_early_is_not_an_error(args) -> None:
    """`envcheck probe --json | head -c 0`: no traceback, exit 0."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "envcheck", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=cli_env(),
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader leaves before the first byte: every write meets EPIPE
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0, err
    assert "Traceback" not in err and "Exception ignored" not in err


def test_a_failing_check_keeps_exit_1_when_the_reader_leaves(tmp_path) -> None:
    """A CI step `envcheck check ... | head` under pipefail must still fail on findings."""
    spec = tmp_path / "stack.toml"
    spec.write_text(
        '[gpu]\ndriver = "535.104.05"\nmodels = ["NVIDIA H20"]\n'
        '[packages]\ntorch = "2.4.0+cu121"\n"nvidia-cublas-cu12" = "12.1.3.1"\n'
        'numpy = "1.26.4"\n'
    )
    for fmt in ((), ("--json",)):
        proc = subprocess.Popen(
            [sys.executable, "-m", "envcheck", "check", "--spec", str(spec), *fmt],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=cli_env(),
        )
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=60) == 1, err
        assert "Traceback" not in err


def test_stderr_to_the_same_closed_pipe_keeps_the_exit_code(tmp_path) -> None:
    """`envcheck check 2>&1 | head -1`: the summary line on stderr meets the closed pipe too."""
    spec = tmp_path / "stack.toml"
    spec.write_text(
        '[gpu]\ndriver = "535.104.05"\nmodels = ["NVIDIA H20"]\n'
        '[packages]\ntorch = "2.4.0+cu121"\n"nvidia-cublas-cu12" = "12.1.3.1"\n'
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "envcheck", "check", "--spec", str(spec)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=cli_env(),
    )
    assert proc.stdout is not None
    proc.stdout.close()
    assert proc.wait(timeout=60) == 1
