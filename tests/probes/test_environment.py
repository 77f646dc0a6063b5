from __future__ import annotations

import pytest

from envcheck.probes.environment import probe_env
from envcheck.redact import REDACTED, redact_value


def test_steering_variables_kept_and_others_dropped(stage):
    env = {
        "NCCL_SOCKET_IFNAME": "eth0",
        "GLOO_SOCKET_IFNAME": "^lo,docker0",
        "RAY_memory_usage_threshold": "0.9",
        "CUDA_VISIBLE_DEVICES": "0,1",
        "LD_LIBRARY_PATH": "/usr/local/cuda/lib64",
        "no_proxy": "localhost",
        "EDITOR": "vim",
        "SHELL": "/bin/bash",
    }
    variables = probe_env(stage.ctx(env=env)).data.variables
    for kept in (
        "NCCL_SOCKET_IFNAME",
        "GLOO_SOCKET_IFNAME",
        "RAY_memory_usage_threshold",
        "CUDA_VISIBLE_DEVICES",
        "LD_LIBRARY_PATH",
        "no_proxy",
    ):
        assert variables[kept] == env[kept]
    assert "EDITOR" not in variables and "SHELL" not in variables


@pytest.mark.parametrize(
    "name",
    [
        "HF_TOKEN",
        "WANDB_API_KEY",
        "RAY_REDIS_PASSWORD",
        "AWS_SECRET_ACCESS_KEY",
        "NCCL_CREDENTIALS",
        "VLLM_API_KEY",
        "ISAAC_NUCLEUS_PASSWORD",
    ],
)
def test_secret_names_are_always_redacted(stage, name):
    info = probe_env(
        stage.ctx(env={name: "s3cr3t-value", "VLLM_API_KEY": "k", "HF_TOKEN": "hf_abc"})
    ).data
    if name in info.variables:
        assert info.variables[name] == REDACTED
    assert "s3cr3t-value" not in repr(info) and "hf_abc" not in repr(info)


def test_proxy_credentials_are_redacted(stage):
    env = {
        "https_proxy": "http://alice:pa55@proxy.corp:3128",
        "HTTP_PROXY": "http://proxy.corp:3128",
    }
    info = probe_env(stage.ctx(env=env)).data
    assert info.variables["https_proxy"] == f"http://{REDACTED}@proxy.corp:3128"
    assert info.variables["HTTP_PROXY"] == "http://proxy.corp:3128"
    assert info.redacted == ("https_proxy",)


def test_redact_value_plain():
    assert redact_value("NCCL_DEBUG", "WARN") == ("WARN", False)
