"""`envcheck triage` as a user runs it: exit codes, the JSON envelope, causes checked against a
node, stdin, bad inputs, and a site overlay adding a signature."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import cli_env, run_cli

FIXTURES = Path(__file__).parent.parent / "fixtures"
LOG = str(FIXTURES / "triage" / "tinyzero_h20.log")
TINYZERO = str(FIXTURES / "ingest" / "collect_env_tinyzero_h20.txt")


def test_tinyzero_log_confirms_cublas_against_its_collect_env() -> None:
    res = run_cli("triage", LOG, "--from", TINYZERO, "--json")
    assert res.returncode == 1, res.stderr
    env = res.json()
    assert set(env) == {"schema", "command", "status", "exit_code", "data", "errors", "applied"}
    assert (env["command"], env["status"], env["exit_code"]) == ("triage", "findings", 1)
    data = env["data"]
    assert data["lines"] == 17
    matches = {m["id"]: m for m in data["matches"]}
    assert list(matches) == ["fsdp-no-shard-full-state-dict", "cublaslt-sigfpe", "ray-actor-died"]
    assert matches["fsdp-no-shard-full-state-dict"]["noise"] is True
    actor = matches["ray-actor-died"]
    assert (actor["count"], actor["first"]["line"], actor["last"]["line"]) == (3, 11, 17)
    verdicts = {c["code"]: c["verdict"] for c in actor["causes"]}
    # the OOM killer is among Ray's own reasons for a SYSTEM_ERROR exit: open without memory facts
    assert verdicts == {
        "CUD102": "confirmed",
        "RAY106": "unknown",
        "RAY107": "unknown",
        "SYS190": "unknown",
    }
    cud102 = actor["causes"][0]["findings"][0]
    assert cud102["severity"] == "error"
    assert cud102["fix"]["commands"] == ["pip install nvidia-cublas-cu12==12.3.4.1"]
    assert actor["causes"][1]["reason"]  # why it is unknown
    assert data["summary"]["confirmed"] == 2
    assert len(data["reports"]) == 1


def test_ruled_out_against_a_fixed_node(tmp_path: Path) -> None:
    spec = tmp_path / "fixed.toml"
    spec.write_text(
        '[gpu]\ndriver = "535.161.08"\nmodels = ["NVIDIA H20"]\n'
        '[packages]\ntorch = "2.4.0"\n"nvidia-cublas-cu12" = "12.3.4.1"\n',
        encoding="utf-8",
    )
    res = run_cli("triage", LOG, "--spec", str(spec), "--json")
    assert res.returncode == 1
    causes = res.json()["data"]["matches"][1]["causes"]
    assert causes[0]["code"] == "CUD102" and causes[0]["verdict"] == "ruled_out"


def test_no_known_signature_exit_0_and_text() -> None:
    res = run_cli("triage", "-", stdin="step 1 loss 0.5\nstep 2 loss 0.4\n")
    assert res.returncode == 0
    assert "no known signature" in res.stdout


def test_noise_only_exit_0() -> None:
    line = "[Error] [carb.windowing-glfw.plugin] GLFW initialization failed.\n"
    res = run_cli("triage", "-", "--json", stdin=line * 3)
    assert res.returncode == 0
    env = res.json()
    assert env["status"] == "ok"
    assert env["data"]["matches"][0]["noise"] is True
    assert env["data"]["matches"][0]["count"] == 3


def test_without_node_causes_are_unchecked_and_said_why() -> None:
    res = run_cli("triage", LOG, "--no-probe")
    assert res.returncode == 1
    assert "not checked" in res.stdout
    assert "unchecked" in res.stdout
    assert "NOISE" in res.stdout


def test_this_machine_without_gpu_is_not_used(tmp_path: Path) -> None:
    res = run_cli("triage", LOG, "--json")
    assert res.returncode == 1
    assert "no visible NVIDIA GPU" in res.json()["data"]["node_source"]


def test_markdown() -> None:
    res = run_cli("triage", LOG, "--from", TINYZERO, "--markdown")
    assert res.returncode == 1
    assert "### line 11 (x3, last at line 17): `ray-actor-died`" in res.stdout
    assert "**CUD102** CONFIRMED" in res.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["/nonexistent.log"], "no such file"),
        (["/tmp"], "directory"),
        (["-", "--from", "-"], "both be standard input"),
    ],
)
def test_bad_input(args: list[str], message: str) -> None:
    res = run_cli("triage", *args, stdin="")
    assert res.returncode == 2
    assert message in res.stderr and "Traceback" not in res.stderr


def test_binary_log_is_scanned_not_refused(tmp_path: Path) -> None:
    path = tmp_path / "core"
    path.write_bytes(bytes(range(256)) * 4096)
    res = run_cli("triage", str(path), "--no-probe")
    assert res.returncode == 0
    assert "no known signature" in res.stdout


def test_site_overlay_adds_a_signature(tmp_path: Path) -> None:
    overlay = tmp_path / "site"
    overlay.mkdir()
    (overlay / "sig.toml").write_text(
        '[[signature]]\nid = "site-quota"\npattern = "quota exceeded for project [a-z]+"\n'
        'meaning = "our storage quota"\nsource = "internal runbook"\ncauses = ["RAY103"]\n',
        encoding="utf-8",
    )
    res = run_cli(
        "triage",
        "-",
        "--matrix",
        str(overlay),
        "--json",
        "--no-probe",
        stdin="ERROR quota exceeded for project rl\n",
    )
    assert res.returncode == 1, res.stderr
    assert res.json()["data"]["matches"][0]["id"] == "site-quota"


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ('pattern = "(unclosed"', "does not compile"),
        ('pattern = "a(b|c)d"', "plain run"),
        ('pattern = "ok pattern here"\ncauses = ["XYZ999"]', "not a rule code"),
        ('pattern = "(?i)rank failed\\\\x00"', "grep -E can be given neither"),
    ],
)
def test_matrix_validate_rejects_bad_signatures(tmp_path: Path, entry: str, message: str) -> None:
    overlay = tmp_path / "site"
    overlay.mkdir()
    (overlay / "sig.toml").write_text(
        f'[[signature]]\nid = "bad"\n{entry}\nmeaning = "m"\nsource = "s"\n', encoding="utf-8"
    )
    res = run_cli("matrix", "validate", str(overlay))
    assert res.returncode == 2, res.stdout + res.stderr
    assert message in res.stdout + res.stderr


def test_python_only_syntax_in_an_overlay_keeps_the_grep_engine(tmp_path: Path) -> None:
    """`\\d`, `(?:...)` and `\\s*$` are Python's, not POSIX ERE's: grep is handed a rewrite
    (triage/ere.py) and stays the engine."""
    from envcheck.triage.grep_engine import gnu_grep

    if gnu_grep() is None:
        pytest.skip("GNU grep is not installed")
    overlay = tmp_path / "site"
    overlay.mkdir()
    (overlay / "sig.toml").write_text(
        '[[signature]]\nid = "site-rank"\npattern = "rank \\\\d+ (?:failed|died)\\\\s*$"\n'
        'meaning = "m"\nsource = "s"\n',
        encoding="utf-8",
    )
    assert run_cli("matrix", "validate", str(overlay)).returncode == 0
    res = run_cli(
        "triage",
        "-",
        "--matrix",
        str(overlay),
        "--json",
        "--no-probe",
        stdin="INFO ok\nrank 12 failed \nrank x failed\n",
    )
    data = res.json()["data"]
    assert data["engine"] == "grep"
    assert [(m["id"], m["count"]) for m in data["matches"]] == [("site-rank", 1)]


@pytest.mark.parametrize("engine", ["grep", "re"])
def test_stdin_redirected_from_a_file_scans_the_same(engine: str) -> None:
    """`envcheck triage - < job.log`: stdin is a regular file (grep reads it directly)."""
    import json
    import subprocess
    import sys

    from envcheck.triage.grep_engine import gnu_grep
    from tests.conftest import cli_env

    if engine == "grep" and gnu_grep() is None:
        pytest.skip("GNU grep is not installed")
    argv = ["triage", "-", "--no-probe", "--json", "--engine", engine]
    with open(LOG, "rb") as stdin:
        proc = subprocess.run(
            [sys.executable, "-m", "envcheck", *argv],
            stdin=stdin,
            capture_output=True,
            env=cli_env(),
            timeout=60,
            check=False,
        )
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)["data"]
    assert (data["engine"], data["lines"], data["bytes"]) == (engine, 17, Path(LOG).stat().st_size)
    assert [m["id"] for m in data["matches"]] == [
        "fsdp-no-shard-full-state-dict",
        "cublaslt-sigfpe",
        "ray-actor-died",
    ]


def test_gzipped_log_on_stdin_is_decompressed() -> None:
    """`zcat`-free: `... | gzip | envcheck triage -` finds what the plain log shows."""
    import gzip
    import json
    import subprocess
    import sys

    from tests.conftest import cli_env

    proc = subprocess.run(
        [sys.executable, "-m", "envcheck", "triage", "-", "--no-probe", "--json"],
        input=gzip.compress(Path(LOG).read_bytes()),
        capture_output=True,
        env=cli_env(),
        timeout=60,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)["data"]
    assert data["lines"] == 17
    assert [m["id"] for m in data["matches"]][-1] == "ray-actor-died"


def test_a_confirmed_causes_install_command_is_never_wrapped_at_80_columns(tmp_path) -> None:
    log = tmp_path / "job.log"
    log.write_text(
        "RuntimeError: NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible "
        "with the current PyTorch installation.\n",
        encoding="utf-8",
    )
    result = run_cli("triage", str(log), "--no-probe", env=cli_env(COLUMNS="80"))
    assert result.returncode == 1, result.stderr
    commands = [line.strip() for line in result.stdout.splitlines() if "$ pip install" in line]
    assert commands and all("--index-url https://" in c for c in commands), result.stdout
