"""envcheck.ray_hook in this process (the real-cluster test is tests/cluster/test_worker_hook.py)."""

from __future__ import annotations

import pytest

from envcheck import ray_hook
from envcheck.errors import UsageError


def test_runtime_env_adds_the_hook_and_keeps_the_users_settings() -> None:
    base = {"env_vars": {"TOKENIZERS_PARALLELISM": "false"}, "pip": ["vllm==0.6.3"]}
    env = ray_hook.runtime_env(base, require=["vllm", "flash-attn"], ignore=["NET103"])
    assert env == {
        "worker_process_setup_hook": "envcheck.ray_hook.check_worker",
        "pip": ["vllm==0.6.3"],
        "env_vars": {
            "TOKENIZERS_PARALLELISM": "false",
            "ENVCHECK_FAIL_ON": "error",
            "ENVCHECK_REQUIRE": "vllm,flash-attn",
            "ENVCHECK_IGNORE": "NET103",
        },
    }
    assert base == {"env_vars": {"TOKENIZERS_PARALLELISM": "false"}, "pip": ["vllm==0.6.3"]}


def test_runtime_env_refuses_to_replace_another_hook() -> None:
    with pytest.raises(ValueError, match="already has a worker_process_setup_hook"):
        ray_hook.runtime_env({"worker_process_setup_hook": "mylib.setup"})


@pytest.fixture
def worker_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("ENVCHECK_REQUIRE", "ENVCHECK_HOOK", "ENVCHECK_WORKER_CHECKED"):
        # set first, so that undoing removes what check_worker() sets (delenv of an absent
        # variable records nothing, and the mark would outlive the test)
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    monkeypatch.setenv("ENVCHECK_SELECT", "NET101")
    monkeypatch.delenv("GLOO_SOCKET_IFNAME", raising=False)
    return monkeypatch


def test_a_clean_process_passes_and_is_marked(worker_env: pytest.MonkeyPatch) -> None:
    import os

    ray_hook.check_worker()
    assert os.environ[ray_hook.CHECKED] == "1"


def test_findings_and_missing_packages_fail_the_process(worker_env: pytest.MonkeyPatch) -> None:
    worker_env.setenv("GLOO_SOCKET_IFNAME", "nosuch0")
    worker_env.setenv("ENVCHECK_REQUIRE", "packaging,no-such-dist-xyz")
    with pytest.raises(ray_hook.WorkerCheckError) as caught:
        ray_hook.check_worker()
    assert [f.code for f in caught.value.findings] == ["NET101"]
    assert caught.value.missing == ("no-such-dist-xyz",)
    text = str(caught.value)
    assert "LD_LIBRARY_PATH:" in text and "-m pip install no-such-dist-xyz" in text


def test_off_switch_and_bad_settings(worker_env: pytest.MonkeyPatch) -> None:
    worker_env.setenv("GLOO_SOCKET_IFNAME", "nosuch0")
    worker_env.setenv("ENVCHECK_HOOK", "off")
    ray_hook.check_worker()
    worker_env.setenv("ENVCHECK_HOOK", "on")
    worker_env.setenv("ENVCHECK_FAIL_ON", "fatal")
    with pytest.raises(UsageError, match="fail_on must be one of"):
        ray_hook.check_worker()
