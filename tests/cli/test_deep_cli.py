"""`check --deep` and `probe --deep` as a user runs them, with fakes at the edges."""

from __future__ import annotations

import time

from tests.conftest import FAKES, cli_env, run_cli


def _gpu_less(tmp_path, **extra: str) -> dict[str, str]:
    # no libcuda to load, NVML absent (the fake answers NVML_ERROR_LIBRARY_NOT_FOUND)
    env = cli_env(
        ENVCHECK_LIBCUDA=str(tmp_path / "nowhere" / "libcuda.so.1"),
        PYTHONPATH=f"{FAKES}:{cli_env().get('PYTHONPATH', '')}",
        FAKE_PYNVML_SCENARIO="none",
    )
    env.update(extra)
    return env


def test_check_deep_on_a_gpu_less_node_exits_as_today(tmp_path):
    env = _gpu_less(tmp_path)
    plain = run_cli("check", "--json", env=env)
    deep = run_cli("check", "--deep", "--json", env=env)
    assert deep.returncode == plain.returncode, deep.stderr
    data = deep.json()["data"]
    report = data["reports"][0]
    steps = {s["name"]: s for s in report["deep"]["data"]["steps"]}
    assert steps["cuda"]["status"] == "unavailable"
    assert steps["cuda"]["reason"].startswith("no NVIDIA driver:")
    assert steps["nvml_health"]["status"] == "unavailable"
    assert all(s["duration_ms"] is not None for s in steps.values())
    assert not [f for f in data["findings"] if f["code"].startswith("GPU")]
    reasons = {s["code"]: s["reason"] for s in data["skipped"]}
    assert reasons["GPU101"].startswith("no NVIDIA driver")
    # without --deep the section says how to get it
    assert plain.json()["data"]["reports"][0]["deep"]["reason"] == "not run (pass --deep)"


def test_check_deep_is_bounded_by_timeout_when_everything_hangs(tmp_path, fake_libcuda):
    env = _gpu_less(
        tmp_path,
        ENVCHECK_LIBCUDA=str(fake_libcuda),
        FAKE_CUDA_INIT="hang",
        FAKE_PYNVML_SCENARIO="nvml_hang",
    )
    start = time.monotonic()
    result = run_cli("check", "--deep", "--timeout", "1", "--json", "--select", "GPU", env=env)
    elapsed = time.monotonic() - start
    assert result.returncode == 1, result.stderr
    findings = result.json()["data"]["findings"]
    messages = [f["message"] for f in findings if f["code"] == "GPU105"]
    assert any("cuInit did not return within 1 s" in m for m in messages)
    assert any(m.startswith("NVML check hung") for m in messages)
    assert elapsed < 12  # interpreter start + probes + 1 s deadline + 1 s kill grace


def test_probe_deep_shows_a_gpu_health_block(tmp_path, fake_libcuda):
    env = _gpu_less(tmp_path, ENVCHECK_LIBCUDA=str(fake_libcuda), FAKE_CUDA_INIT="802")
    result = run_cli("probe", "--deep", env=env)
    assert result.returncode == 0, result.stderr
    assert "GPU health" in result.stdout
    assert "cuInit returned 802" in result.stdout.replace("\n", " ")


def test_deep_with_a_saved_report_is_a_usage_error(tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text('[python]\nversion = "3.11.9"\n')
    result = run_cli("check", "--spec", str(spec), "--deep", env=cli_env())
    assert result.returncode == 2 and "--deep probes this node" in result.stderr
    assert "Traceback" not in result.stderr


def test_check_deep_table_names_each_step(tmp_path):
    result = run_cli("check", "--deep", env=_gpu_less(tmp_path))
    assert result.returncode in (0, 1), result.stderr
    line = " ".join(result.stdout.split())
    assert "--deep: cuda unavailable, nvml_health unavailable, pcie ok in" in line
