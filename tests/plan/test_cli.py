"""`envcheck fix`, `envcheck lock` and `check --lock` as a user runs them."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import cli_env, run_cli
from tests.plan.conftest import TINYZERO_SPEC, LocalIndex

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@pytest.fixture
def tinyzero(tmp_path: Path) -> Path:
    path = tmp_path / "stack.toml"
    path.write_text(TINYZERO_SPEC, encoding="utf-8")
    return path


def test_fix_spec_prints_the_cublas_fix(tinyzero: Path) -> None:
    result = run_cli("fix", "--no-resolve", "--spec", str(tinyzero))
    assert result.returncode == 1, result.stderr
    assert "$ pip install nvidia-cublas-cu12==12.3.4.1" in result.stdout
    assert "[safe] CUD102" in result.stdout
    assert "Nothing was changed" in result.stdout
    assert "Traceback" not in result.stderr


def test_fix_json_envelope(tinyzero: Path) -> None:
    result = run_cli("fix", "--no-resolve", "--spec", str(tinyzero), "--json")
    data = result.json()
    assert set(data) == {"schema", "command", "status", "exit_code", "data", "errors", "applied"}
    assert (data["command"], data["status"], data["exit_code"]) == ("fix", "findings", 1)
    plan = data["data"]["plan"]
    assert set(plan) == {
        "node",
        "steps",
        "conflicts",
        "addressed",
        "remaining",
        "iterations",
        "converged",
        "notes",
        "resolved",
        "resolver",
    }
    assert plan["resolved"] is False and "--no-resolve" in plan["resolver"]
    step = plan["steps"][0]
    assert set(step) == {"command", "applicability", "codes", "reason", "action"}
    assert step["codes"] == ["CUD102"]


@pytest.mark.parametrize("fmt", ["sh", "requirements", "conda"])
def test_fix_writes_files_atomically_and_never_overwrites(
    tinyzero: Path, tmp_path: Path, fmt: str
) -> None:
    out = tmp_path / f"plan.{fmt}"
    first = run_cli("fix", "--no-resolve", "--spec", str(tinyzero), "--format", fmt, "-o", str(out))
    assert first.returncode == 1 and out.exists()
    assert "nvidia-cublas-cu12==12.3.4.1" in out.read_text(encoding="utf-8")
    if fmt == "conda":
        assert yaml.safe_load(out.read_text(encoding="utf-8"))["dependencies"]
    again = run_cli("fix", "--no-resolve", "--spec", str(tinyzero), "--format", fmt, "-o", str(out))
    assert again.returncode == 2
    assert again.stderr.strip().endswith("file exists (use --force to overwrite)")
    forced = run_cli(
        "fix", "--no-resolve", "--spec", str(tinyzero), "--format", fmt, "-o", str(out), "--force"
    )
    assert forced.returncode == 1


def test_fix_exits_1_while_findings_remain(tmp_path: Path) -> None:
    """Issue 14: a driver-470 H100 whose torch is already the closest build: no step answers
    DRV102, which remains (beside DRV110: no CUDA build runs sm_90 on R470, the driver upgrade is
    a manual step); that is exit 1 (findings remain), not 0."""
    spec = tmp_path / "d470.toml"
    spec.write_text(
        '[gpu]\ndriver = "470.182.03"\nmodels = ["NVIDIA H100 80GB HBM3"]\n'
        '[python]\nversion = "3.10.12"\n[packages]\ntorch = "2.0.1+cu118"\n',
        encoding="utf-8",
    )
    result = run_cli("fix", "--no-resolve", "--spec", str(spec))
    assert result.returncode == 1, result.stderr
    assert "DRV102" in result.stdout and "2 finding(s) remain; exit 1" in result.stderr
    data = run_cli("fix", "--no-resolve", "--spec", str(spec), "--json").json()
    assert (data["status"], data["exit_code"]) == ("findings", 1)
    assert [f["code"] for f in data["data"]["plan"]["remaining"]] == ["DRV110", "DRV102"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--apply", "--spec", "X"], "--apply changes the environment"),
        (["--snapshot", "s.txt"], "--snapshot only applies with --apply"),
        (["--spec", "/nonexistent.toml"], "/nonexistent.toml: no such file"),
        (["--format", "yaml"], "invalid choice"),
    ],
)
def test_fix_usage_errors(args: list[str], message: str) -> None:
    result = run_cli("fix", *args)
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr


def test_fix_apply_snapshot_target_is_refused_before_any_work(tmp_path: Path) -> None:
    """A --snapshot that cannot be written is one line, exit 2, before the plan is made or
    printed (the plan was printed, then the error; a directory was 'file exists')."""
    missing = tmp_path / "missing" / "s.txt"
    for snapshot, message in (
        (missing, f"{missing}: directory {missing.parent} does not exist"),
        (tmp_path, f"{tmp_path}: is a directory"),
    ):
        result = run_cli("fix", "--apply", "--no-resolve", "--snapshot", str(snapshot))
        assert result.returncode == 2 and result.stdout == ""
        assert result.stderr == f"envcheck: error: {message}\n"


def test_fix_bad_spec_names_file_line_and_key(tmp_path: Path) -> None:
    spec = tmp_path / "bad.toml"
    spec.write_text('[gpu]\ndriver = "535.104.05"\nmodel = ["H20"]\n', encoding="utf-8")
    result = run_cli("fix", "--no-resolve", "--spec", str(spec))
    assert result.returncode == 2
    assert f"{spec}:3: key 'gpu.model'" in result.stderr


def _lock(local_index: LocalIndex, *args: str, cwd: Path) -> tuple[int, str, str]:
    result = run_cli(
        "lock",
        "--index-url",
        local_index.url,
        "--matrix",
        str(local_index.overlay),
        *args,
        cwd=cwd,
    )
    return result.returncode, result.stdout, result.stderr


def test_lock_then_gate_the_lock_on_the_hardware(local_index: LocalIndex, tmp_path: Path) -> None:
    node = tmp_path / "node.toml"
    node.write_text(
        '[gpu]\ndriver = "535.104.05"\nmodels = ["NVIDIA H20", "NVIDIA H20"]\n'
        '[python]\nversion = "3.10.12"\n[system]\nglibc = "2.35"\n',
        encoding="utf-8",
    )
    code, out, err = _lock(
        local_index, "--spec", str(node), "vllm==0.6.3", "-o", "req.lock", cwd=tmp_path
    )
    assert code == 0, err
    lock = (tmp_path / "req.lock").read_text(encoding="utf-8")
    assert re.search(r"^nvidia-cublas-cu12==12\.3\.4\.1 ;[^\n]*\\\n    --hash=sha256:", lock, re.M)
    assert "# Choices:" in lock and "CUD102 on this target" in lock
    assert "x86_64-manylinux_2_35" in lock
    assert "override" in out
    gate = run_cli(
        "check",
        "--lock",
        str(tmp_path / "req.lock"),
        "--spec",
        str(node),
        "--json",
        "--lock-offline",
    )
    assert gate.returncode == 0, gate.stdout
    # the same stack without envcheck's override fails the gate on this hardware
    plain = lock.replace("nvidia-cublas-cu12==12.3.4.1", "nvidia-cublas-cu12==12.1.3.1")
    (tmp_path / "plain.lock").write_text(plain, encoding="utf-8")
    bad = run_cli(
        "check",
        "--lock",
        str(tmp_path / "plain.lock"),
        "--spec",
        str(node),
        "--json",
        "--lock-offline",
    )
    assert bad.returncode == 1
    assert "CUD102" in {f["code"] for f in bad.json()["data"]["findings"]}
    # the lock is never overwritten without --force
    code, _, err = _lock(
        local_index, "--spec", str(node), "vllm==0.6.3", "-o", "req.lock", cwd=tmp_path
    )
    assert code == 2 and "file exists" in err


def test_lock_rtx5090_torch_is_cu128(local_index: LocalIndex, tmp_path: Path) -> None:
    code, _out, err = _lock(
        local_index,
        "torch",
        "--gpu",
        "NVIDIA GeForce RTX 5090",
        "--driver",
        "570.86.15",
        "--python",
        "3.11",
        "--format",
        "pylock",
        "-o",
        "pylock.toml",
        cwd=tmp_path,
    )
    assert code == 0, err
    text = (tmp_path / "pylock.toml").read_text(encoding="utf-8")
    data = tomllib.loads(text)
    assert {p["name"]: p["version"] for p in data["packages"]}["torch"] == "2.11.0+cu128"
    flat = " ".join(line.lstrip("#").strip() for line in text.splitlines())
    assert "cu126: no kernels for NVIDIA GeForce RTX 5090 (sm_120)" in flat
    gate = run_cli(
        "check",
        "--lock-offline",
        "--lock",
        str(tmp_path / "pylock.toml"),
        "--spec",
        str(_node(tmp_path, "570.86.15", "NVIDIA GeForce RTX 5090")),
        "--select",
        "TOR,DRV",
    )
    assert gate.returncode == 0, gate.stdout


def _node(tmp_path: Path, driver: str, gpu: str) -> Path:
    path = tmp_path / f"node-{driver}.toml"
    path.write_text(
        f'[gpu]\ndriver = "{driver}"\nmodels = ["{gpu}"]\n[python]\nversion = "3.11.9"\n',
        encoding="utf-8",
    )
    return path


def test_lock_conda_is_yaml(local_index: LocalIndex, tmp_path: Path) -> None:
    code, _, err = _lock(
        local_index,
        "vllm==0.6.4",
        "--python",
        "3.11",
        "--gpu",
        "NVIDIA H100 80GB HBM3",
        "--driver",
        "535.104.05",
        "--format",
        "conda",
        "-o",
        "environment.yml",
        cwd=tmp_path,
    )
    assert code == 0, err
    text = (tmp_path / "environment.yml").read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    pip_section = next(d for d in data["dependencies"] if isinstance(d, dict))["pip"]
    pins = {entry.split()[0]: entry for entry in pip_section}
    assert "torch==2.5.1" in pins and "vllm==0.6.4" in pins
    # no overrides here: every pip pin carries its hashes (pip checks them under conda)
    assert all(" --hash=sha256:" in entry for entry in pip_section)
    assert data["channels"] == ["conda-forge", "nodefaults"]
    assert "conda-forge::python=3.11" in data["dependencies"]
    assert "minor-version compatibility" in text and "NVIDIA_REQUIRE_CUDA" in text


def test_lock_conflict_names_the_driver_and_writes_nothing(
    local_index: LocalIndex, tmp_path: Path
) -> None:
    code, out, _err = _lock(
        local_index,
        "vllm==0.6.4",
        "--python",
        "3.11",
        "--driver",
        "470.182.03",
        "--gpu",
        "NVIDIA A100-SXM4-80GB",
        "-o",
        "x.lock",
        cwd=tmp_path,
    )
    assert code == 1
    flat = " ".join(out.split())  # the table wraps at the terminal's width
    assert "CONFLICT" in flat and ">= 525.60.13" in flat and ">= 550.54.14" in flat
    assert not (tmp_path / "x.lock").exists()


def test_lock_refuses_a_set_that_fails_the_rules(local_index: LocalIndex, tmp_path: Path) -> None:
    """The test wheels carry no Python tags, so ray 2.40.0 resolves for Python 3.13; the rules
    know it has no 3.13 wheels (RAY101): the lock is not written unless --force."""
    args = ("torch==2.5.1", "ray==2.40.0", "--python", "3.13", "-o", "x.lock")
    code, out, err = _lock(local_index, *args, cwd=tmp_path)
    assert code == 1, (out, err)
    assert "RAY101" in out and "lock not written" in err
    assert not (tmp_path / "x.lock").exists()
    code, out, err = _lock(local_index, *args, "--force", cwd=tmp_path)
    assert code == 1 and (tmp_path / "x.lock").exists()
    # a dry run writes nothing, so its -o is not checked (envcheck.output, from main) ...
    dev = run_cli("lock", "torch==2.5.1", "--python", "3.11", "--dry-run", "-o", "/dev/null")
    assert dev.returncode == 0
    # ... otherwise -o is checked before any work: a device is refused up front (a stream,
    # /dev/null or /dev/stdout, is written in place: tests/security/test_output_race.py)
    zero = _lock(
        local_index, "torch==2.5.1", "--python", "3.11", "-o", "/dev/zero", "--force", cwd=tmp_path
    )
    assert zero[0] == 2 and "not a regular file" in zero[2]


def test_lock_reports_what_the_lock_brings_not_what_the_target_has(
    local_index: LocalIndex, tmp_path: Path
) -> None:
    """A hostname that resolves to loopback (NET103) is the target's, on the bare target as on
    the resolved set: not the lock's doing. ray 2.40.0 on Python 3.13 (RAY101) is: only that
    one is reported (the bare target is checked with the rules that found something in the
    resolved set)."""
    node = tmp_path / "node.toml"
    node.write_text(
        '[python]\nversion = "3.13.1"\n'
        '[network]\nhostname = "node1"\nhostname_resolves_to = "127.0.1.1"\n',
        encoding="utf-8",
    )
    code, out, err = _lock(
        local_index,
        "torch==2.5.1",
        "ray==2.40.0",
        "--spec",
        str(node),
        "--json",
        "--force",
        "-o",
        "x.lock",
        cwd=tmp_path,
    )
    assert code == 1, (out, err)
    codes = {f["code"] for f in json.loads(out)["data"]["findings"]}
    assert "RAY101" in codes and "NET103" not in codes, codes
    bare = run_cli("check", "--spec", str(node), "--json").json()["data"]["findings"]
    assert "NET103" in {f["code"] for f in bare}  # the target itself has it


def test_lock_usage_errors(tmp_path: Path) -> None:
    nothing = run_cli("lock", "--python", "3.11", cwd=tmp_path)
    assert nothing.returncode == 2 and "nothing to lock" in nothing.stderr
    no_python = run_cli("lock", "torch", cwd=tmp_path)
    assert no_python.returncode == 2 and "--python" in no_python.stderr
    bad = run_cli("lock", "torch>>2", "--python", "3.11", cwd=tmp_path)
    assert bad.returncode == 2 and "invalid requirement" in bad.stderr
    profile = run_cli("lock", "--profile", "nope", "--python", "3.11", cwd=tmp_path)
    assert profile.returncode == 2 and "known: " in profile.stderr


def test_lock_without_uv_says_how_to_install(tmp_path: Path) -> None:
    env = cli_env(ENVCHECK_UV=str(tmp_path / "no-uv"))
    result = run_cli("lock", "torch==2.5.1", "--python", "3.11", env=env, cwd=tmp_path)
    assert result.returncode == 2
    assert (
        result.stderr.count("\n") == 1
        or "pip install 'envcheck-gpu[lock]'" in result.stderr.splitlines()[-1]
    )
    assert "pip install 'envcheck-gpu[lock]'" in result.stderr


def test_lock_profile_dry_run(tmp_path: Path) -> None:
    result = run_cli(
        "lock",
        "--profile",
        "tinyzero",
        "--gpu",
        "NVIDIA H20 x8",
        "--driver",
        "535.104.05",
        "--dry-run",
        "--json",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    stack = result.json()["data"]["stack"]
    assert stack["target"]["python"] == "3.9" and len(stack["target"]["gpus"]) == 8
    assert stack["overrides"] == ["nvidia-cublas-cu12==12.3.4.1"]
    assert stack["profile"].startswith("tinyzero: ")
    assert any("flash-attn" in step for step in stack["manual"])
    listed = run_cli("lock", "--list-profiles")
    assert all(
        name in listed.stdout
        for name in ("tinyzero", "verl", "openrlhf", "rlinf-behavior", "omnigibson")
    )


def test_lock_spec_without_python_takes_the_profiles(tmp_path: Path) -> None:
    spec = tmp_path / "node.toml"
    spec.write_text('[gpu]\ndriver = "535.104.05"\nmodels = ["NVIDIA H20"]\n', encoding="utf-8")
    result = run_cli("lock", "--spec", str(spec), "--profile", "tinyzero", "--dry-run", "--json")
    target = result.json()["data"]["stack"]["target"]
    assert (target["python"], target["driver"], target["gpus"]) == (
        "3.9",
        "535.104.05",
        ["NVIDIA H20"],
    )
    flags = run_cli(
        "lock",
        "--spec",
        str(spec),
        "torch==2.5.1",
        "--python",
        "3.12",
        "--driver",
        "550.54.15",
        "--dry-run",
        "--json",
    )
    target = flags.json()["data"]["stack"]["target"]
    assert (target["python"], target["driver"], target["gpus"]) == (
        "3.12",
        "550.54.15",
        ["NVIDIA H20"],
    )


def test_lock_diff_upgrade_package_and_the_verdict_of_each_side(
    local_index: LocalIndex, tmp_path: Path
) -> None:
    node = _node(tmp_path, "535.104.05", "NVIDIA H20")
    code, _, err = _lock(
        local_index, "--spec", str(node), "vllm==0.6.3", "-o", "old.lock", cwd=tmp_path
    )
    assert code == 0, err
    # vllm may move (and torch and its cuBLAS with it); every other pin of old.lock stays
    code, _, err = _lock(
        local_index,
        "--spec",
        str(node),
        "vllm==0.6.4",
        "--from-lock",
        "old.lock",
        "--upgrade-package",
        "vllm",
        "--upgrade-package",
        "torch",
        "--upgrade-package",
        "nvidia-cublas-cu12",
        "-o",
        "new.lock",
        cwd=tmp_path,
    )
    assert code == 0, err
    diff = run_cli("lock", "diff", "old.lock", "new.lock", "--spec", str(node), cwd=tmp_path)
    assert diff.returncode == 0, diff.stderr
    assert "~ vllm 0.6.3 -> 0.6.4 (up)" in diff.stdout
    assert "~ torch 2.4.0 -> 2.5.1 (up)" in diff.stdout
    assert "numpy" not in diff.stdout and "filelock" not in diff.stdout  # kept pins
    assert "passes the rules" in diff.stdout
    # a lock whose cuBLAS is torch 2.4.0's own fails the rules on this H20 node (CUD102)
    old = (tmp_path / "old.lock").read_text(encoding="utf-8")
    (tmp_path / "bad.lock").write_text(
        old.replace("nvidia-cublas-cu12==12.3.4.1", "nvidia-cublas-cu12==12.1.3.1"),
        encoding="utf-8",
    )
    worse = run_cli(
        "lock", "diff", "old.lock", "bad.lock", "--spec", str(node), "--json", cwd=tmp_path
    )
    assert worse.returncode == 1
    data = worse.json()["data"]
    assert data["moved"] == {"nvidia-cublas-cu12": {"old": "12.3.4.1", "new": "12.1.3.1"}}
    assert (data["old"]["verdict"], data["new"]["verdict"]) == (
        "passes the rules",
        "fails the rules",
    )
    assert [f["code"] for f in data["new"]["findings"]] == ["CUD102"]
    usage = run_cli("lock", "diff", "old.lock", "--python", "3.11", cwd=tmp_path)
    assert usage.returncode == 2 and "two lock files" in usage.stderr
    alone = run_cli("lock", "vllm", "--upgrade-package", "vllm", "--python", "3.11")
    assert alone.returncode == 2 and "--from-lock" in alone.stderr


def test_lock_names_a_missing_lock_file_first(tmp_path: Path) -> None:
    """`lock diff` asked for the target's Python, and `--from-lock` said 'nothing to lock',
    when the real problem was a lock file that does not exist."""
    missing = tmp_path / "old.lock"
    there = tmp_path / "new.lock"
    there.write_text("numpy==1.26.4\n", encoding="utf-8")
    for args in (
        ["lock", "diff", str(missing), str(there)],
        ["lock", "--from-lock", str(missing), "--upgrade-package", "vllm", "--python", "3.11"],
    ):
        result = run_cli(*args)
        assert result.returncode == 2 and result.stdout == ""
        assert result.stderr == f"envcheck: error: {missing}: no such file\n"


def test_lock_header_names_no_local_index_of_this_machine(
    local_index: LocalIndex, tmp_path: Path
) -> None:
    """Issue 14: pip's configuration here adds file:// mirrors; a lock never lists them (they
    are left out with a note) and a command-line file:// index is refused (exit 2)."""
    conf = tmp_path / "pip.conf"
    conf.write_text(
        f"[global]\nindex-url = {local_index.url}\n"
        f"extra-index-url = {local_index.file_url}\nfind-links = {local_index.wheels}\n",
        encoding="utf-8",
    )
    env = cli_env(PIP_CONFIG_FILE=str(conf))
    for var in ("PIP_FIND_LINKS", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL"):
        env.pop(var, None)
    result = run_cli(
        "lock", "vllm==0.6.4", "--python", "3.11", "-o", "x.lock", env=env, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    text = (tmp_path / "x.lock").read_text(encoding="utf-8")
    assert "file://" not in text and str(local_index.root) not in text
    assert "left out 2 local index(es)" in " ".join(text.split())
    assert local_index.url in text
    refused = run_cli(
        "lock", "vllm==0.6.4", "--python", "3.11", "--index-url", local_index.file_url, cwd=tmp_path
    )
    assert refused.returncode == 2 and "names no local path" in refused.stderr


def test_lock_unreachable_index_has_its_own_exit_code(tmp_path: Path) -> None:
    from tests.index.wheels import WheelIndexes

    closed = WheelIndexes(tmp_path / "closed").start()
    dead = closed.url("pypi")
    closed.stop()
    env = cli_env(UV_HTTP_RETRIES="0")
    result = run_cli(
        "lock",
        "torch==2.5.1",
        "--python",
        "3.11",
        "--index-url",
        dead,
        "-o",
        "x.lock",
        env=env,
        cwd=tmp_path,
    )
    assert result.returncode == 4, result.stderr
    assert f"could not reach {dead.rsplit('/', 2)[0]}" in result.stderr
    assert "nothing was written; exit 4" in result.stderr
    assert "no resolution" not in result.stderr and not (tmp_path / "x.lock").exists()
