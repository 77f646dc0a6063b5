"""`envcheck matrix refresh` as a user runs it, against the loopback index."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import cli_env, run_cli

RECORDED = "torch,vllm,ray,xformers,flash-attn,isaacsim"


def _args(server, tmp_path, *extra: str) -> list[str]:
    return [
        "matrix",
        "refresh",
        "--index-url",
        server.index,
        "--output",
        str(tmp_path / "out"),
        "--cache-dir",
        str(tmp_path / "cache"),
        "--timeout",
        "5",
        # the default list minus the packages whose pages are not recorded
        *([] if "--packages" in extra else ["--packages", RECORDED]),
        *extra,
    ]


def test_refresh_then_cached_refresh_then_offline(index_server, tmp_path) -> None:
    index_server.serve_fixtures()
    first = run_cli(*_args(index_server, tmp_path))
    assert first.returncode == 0, first.stderr
    lines = first.stdout.splitlines()
    assert lines[0] == f"index: {index_server.index} (--index-url)"
    assert any(line.startswith("torch ") and "releases" in line for line in lines)
    assert f"wrote {tmp_path / 'out' / 'vllm.toml'}" in first.stdout
    assert "unknown: vllm 0.2.1: metadata file: HTTP 404" in first.stdout
    assert lines[-1].startswith("requests: ")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "flash-attn.toml",
        "isaacsim.toml",
        "ray.toml",
        "torch.toml",
        "vllm.toml",
        "xformers.toml",
    ]
    again = run_cli(*_args(index_server, tmp_path, "--json"))
    envelope = again.json()
    assert envelope["command"] == "matrix refresh" and envelope["status"] == "ok"
    assert envelope["data"]["requests"]["requests"] == 6  # one conditional request per package
    assert all(not p["changes"] and not p["written"] for p in envelope["data"]["packages"])
    before = index_server.requests()
    offline = run_cli(*_args(index_server, tmp_path, "--offline", "--packages", "vllm,ray"))
    assert offline.returncode == 0 and index_server.requests() == before
    assert "no change: kept" in offline.stdout


def test_dry_run_shows_the_diff_and_writes_nothing(index_server, tmp_path) -> None:
    index_server.serve_fixtures()
    result = run_cli(*_args(index_server, tmp_path, "--dry-run", "--packages", "ray"))
    assert result.returncode == 0
    assert "added    ray_wheels 2.9.0" in result.stdout and "would write" in result.stdout
    assert result.stdout.rstrip().endswith("dry run: nothing written")
    assert not (tmp_path / "out").exists()


def test_a_failing_package_gives_exit_1_and_partial(index_server, tmp_path) -> None:
    index_server.serve_fixtures()
    index_server.page("isaacsim", b"{]")
    result = run_cli(*_args(index_server, tmp_path, "--json", "--packages", "isaacsim,ray"))
    envelope = result.json()
    assert result.returncode == 1 and envelope["status"] == "partial" and envelope["exit_code"] == 1
    assert "isaacsim: project page:" in envelope["errors"][0]["message"]
    text = run_cli(*_args(index_server, tmp_path, "--packages", "isaacsim"))
    assert text.returncode == 1 and "FAILED: project page:" in text.stdout


def test_project_missing_from_the_index(index_server, tmp_path) -> None:
    result = run_cli(*_args(index_server, tmp_path, "--packages", "torch", "--retries", "0"))
    assert result.returncode == 1 and "HTTP 404" in result.stdout


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--since", "not-a-version"], "--since 'not-a-version' is not a version"),
        (["--packages", "pandas"], "cannot refresh pandas: known packages are"),
        (["--workers", "0"], "must be positive"),
        (["--offline", "--no-cache"], "cannot go with --no-cache"),
    ],
)
def test_usage_errors(index_server, tmp_path, extra, message) -> None:
    result = run_cli(*_args(index_server, tmp_path, *extra))
    assert result.returncode == 2 and message in result.stderr
    assert result.stdout == "" and not (tmp_path / "out").exists()


def test_non_http_index_is_refused_with_a_clear_message(tmp_path) -> None:
    result = run_cli(
        "matrix", "refresh", "--index-url", "file:///opt/pypi/simple", "--output", str(tmp_path)
    )
    assert result.returncode == 2 and "HTTP(S) indexes only" in result.stderr


def test_configured_non_http_extras_are_noted(index_server, tmp_path) -> None:
    index_server.serve_fixtures()
    env = cli_env(
        PIP_INDEX_URL=index_server.index,
        PIP_EXTRA_INDEX_URL="file:///opt/pypi/simple",
        PIP_CONFIG_FILE=os.devnull,
    )
    args = ["matrix", "refresh", "--packages", "ray", "--output", str(tmp_path / "o"), "--no-cache"]
    result = run_cli(*args, env=env)
    assert result.returncode == 0, result.stderr
    assert "note: skipping index file:///opt/pypi/simple: not an HTTP(S) index" in result.stderr
    assert result.stdout.startswith(f"index: {index_server.index} (PIP_INDEX_URL)")


def test_building_the_parser_imports_no_http_library() -> None:
    code = (
        "import sys; from envcheck.cli import build_parser; build_parser();"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('requests', 'urllib3', 'rich')];"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout
