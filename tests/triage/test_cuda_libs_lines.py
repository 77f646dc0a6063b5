"""CUDA-library log lines whose facts confirm their cause from the log itself: the nvcc and torch
CUDA a build states (CUD110, with the toolkit to install), FlashInfer's JIT toolkit, NCCL's
config error, vLLM's PyNccl; lines copied from the corpus threads."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from envcheck.cli import main

CUROBO = """RuntimeError:
  The detected CUDA version (10.1) mismatches the version that was used to compile
  PyTorch (11.8). Please make sure to use the same CUDA versions.
"""
DEEPSPEED = (
    "deepspeed.ops.op_builder.builder.CUDAMismatchException: >- DeepSpeed Op Builder: Installed "
    "CUDA version 12.2 does not match the version torch was compiled with 11.7, unable to "
    "compile cuda/cpp extensions without a matching cuda version.\n"
)
FLASHINFER_JIT = """Failed to get device capability: SM 12.x requires CUDA >= 12.9
CUDA_HOME: /usr/local/cuda
CUDA_VERSION: 12.8
FLASHINFER_CUDA_VERSION: 12.8
"""
FLASH_ATTN = (
    "RuntimeError: FlashAttention is only supported on CUDA 11.6 and above.  Note: make sure "
    "nvcc has a supported version by running nvcc -V.\n"
)


def _triage(tmp_path: Path, log: str, *extra: str) -> dict[str, Any]:
    """`envcheck triage LOG --json ...` in this process (as the accuracy benchmark runs it)."""
    path = tmp_path / "job.log"
    path.write_text(log)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["triage", str(path), "--json", *extra])
    assert code == 1, err.getvalue()
    data: dict[str, Any] = json.loads(out.getvalue())["data"]
    return data


def _cause(data: dict[str, Any], code: str) -> dict[str, Any]:
    causes = [c for m in data["matches"] for c in m["causes"] if c["code"] == code]
    assert causes, [m["signature"] for m in data["matches"]]
    return causes[0]


def _facts(data: dict[str, Any]) -> dict[str, str]:
    return {f["fact"]: f["value"] for f in data["facts"]}


@pytest.mark.parametrize(
    ("log", "nvcc", "torch_cuda", "toolkit"),
    [
        (CUROBO, "10.1", "11.8", "CUDA_HOME=/usr/local/cuda-11.8"),
        (DEEPSPEED, "12.2", "11.7", "CUDA 11.7"),
    ],
    ids=["cpp-extension", "deepspeed"],
)
def test_build_line_confirms_cud110_with_the_toolkit_to_install(
    tmp_path: Path, log: str, nvcc: str, torch_cuda: str, toolkit: str
) -> None:
    data = _triage(tmp_path, log, "--no-probe")
    facts = _facts(data)
    assert (facts["nvcc_version"], facts["torch_cuda"]) == (nvcc, torch_cuda)
    cause = _cause(data, "CUD110")
    assert cause["verdict"] == "confirmed"
    assert cause["findings"] and cause["findings"][0]["severity"] == "error"
    assert toolkit in cause["fix"]["summary"]
    assert f"nvcc {nvcc}" in cause["findings"][0]["message"]


def test_same_major_build_line_rules_cud110_out(tmp_path: Path) -> None:
    log = CUROBO.replace("(10.1)", "(11.7)")
    cause = _cause(_triage(tmp_path, log, "--no-probe"), "CUD110")
    assert cause["verdict"] == "ruled_out"


def test_flashinfer_jit_toolkit_against_the_declared_torch(tmp_path: Path) -> None:
    """vllm#44305: FlashInfer's JIT used /usr/local/cuda (12.8) under torch cu130."""
    spec = tmp_path / "node.toml"
    spec.write_text('[gpu]\ncompute_capability = "12.0"\n[packages]\ntorch = "2.11.0+cu130"\n')
    data = _triage(tmp_path, FLASHINFER_JIT, "--spec", str(spec))
    assert _facts(data)["nvcc_version"] == "12.8"
    cause = _cause(data, "CUD110")
    assert cause["verdict"] == "confirmed"
    assert "CUDA_HOME=/usr/local/cuda-13.0" in cause["fix"]["summary"]


def test_flash_attn_build_uses_the_dumps_nvcc(tmp_path: Path) -> None:
    """flash-attention#825: the line says a build ran; nvcc 10.1 and torch cu121 come from the
    pasted environment."""
    dump = tmp_path / "env.txt"
    dump.write_text(
        'My environment is "torch.__version__  = 2.3.1+cu121"\n\n'
        "nvcc: NVIDIA (R) Cuda compiler driver\n"
        "Cuda compilation tools, release 10.1, V10.1.243\n"
    )
    data = _triage(tmp_path, FLASH_ATTN, "--from", str(dump))
    cause = _cause(data, "CUD110")
    assert cause["verdict"] == "confirmed"
    assert "CUDA_HOME=/usr/local/cuda-12.1" in cause["fix"]["summary"]


def test_flash_attn_build_with_a_matching_toolkit_is_ruled_out(tmp_path: Path) -> None:
    spec = tmp_path / "node.toml"
    spec.write_text('[packages]\ntorch = "2.3.1+cu121"\n[system]\nnvcc = "12.1"\n')
    cause = _cause(_triage(tmp_path, FLASH_ATTN, "--spec", str(spec)), "CUD110")
    assert cause["verdict"] == "ruled_out"


def test_nccl_config_error_names_two_nccl_wheels(tmp_path: Path) -> None:
    log = (
        "DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:219, "
        "invalid argument, NCCL version 2.14.3\n"
        "ncclInvalidArgument: Invalid value for an argument.\nLast error:\n"
        "Invalid config blocking attribute value -2147483648\n"
    )
    spec = tmp_path / "node.toml"
    spec.write_text(
        '[packages]\ntorch = "2.1.0"\n"nvidia-nccl-cu11" = "2.14.3"\n"nvidia-nccl-cu12" = "2.18.1"\n'
    )
    cause = _cause(_triage(tmp_path, log, "--spec", str(spec)), "CUD121")
    assert cause["verdict"] == "confirmed"
    assert "pip uninstall -y nvidia-nccl-cu11" in json.dumps(cause["findings"])
    # alone, the log states the NCCL loaded (2.14.3) and that it is older than torch's (NCCL
    # rejects the config torch's headers fill in): established from the line, the stale wheel
    # named from the version (torch 2.0's nvidia-nccl-cu11 pin)
    alone = _cause(_triage(tmp_path, log, "--no-probe"), "CUD121")
    assert (alone["verdict"], alone["evidence"]) == ("confirmed", "confirmed from line 4")
    assert "pip uninstall -y nvidia-nccl-cu11" in json.dumps(alone["findings"])
    # a package list with one NCCL wheel: the old library comes from elsewhere, not CUD121
    spec.write_text('[packages]\ntorch = "2.1.0"\n"nvidia-nccl-cu12" = "2.18.1"\n')
    one = _cause(_triage(tmp_path, log, "--spec", str(spec)), "CUD121")
    assert one["verdict"] == "ruled_out"


def test_pynccl_without_device_points_at_conda_torch(tmp_path: Path) -> None:
    log = "[rank0]: AttributeError: 'PyNcclCommunicator' object has no attribute 'device'\n"
    # vLLM's pynccl.py leaves `device` unset only when NCCLLibrary() failed: the line
    # establishes that vLLM found no NCCL library (conda's torch links it statically)
    cause = _cause(_triage(tmp_path, log, "--no-probe"), "CUD107")
    assert (cause["verdict"], cause["evidence"]) == ("confirmed", "confirmed from line 1")
    assert "pip install vllm==" in json.dumps(cause["findings"])


def test_sigfpe_without_a_space_is_the_cublas_crash(tmp_path: Path) -> None:
    """lmdeploy#3342: the shell prints 'Floating point exception(core dumped)'."""
    data = _triage(tmp_path, "Floating point exception(core dumped)\n", "--no-probe")
    assert _cause(data, "CUD102")["verdict"] == "unchecked"


def test_watchdog_timeout_on_dgx_spark_confirms_the_arm_nccl_hang(tmp_path: Path) -> None:
    """vllm#42354: 2x DGX Spark (GB10, aarch64) with vLLM 0.25.1 (torch 2.11.0, NCCL 2.28.9)."""
    log = (
        "[Rank 1] Watchdog caught collective operation timeout:\n"
        "WorkNCCL(SeqNum=12590, OpType=_ALLGATHER_BASE, NumelIn=1404928, NumelOut=2809856,\n"
        "         Timeout(ms)=600000) ran for 600060 milliseconds before timing out.\n"
    )
    spec = tmp_path / "node.toml"
    spec.write_text(
        '[gpu]\ncompute_capability = "12.1"\n[packages]\nvllm = "0.25.1"\n[system]\narch = "aarch64"\n'
    )
    cause = _cause(_triage(tmp_path, log, "--spec", str(spec)), "CUD122")
    assert cause["verdict"] == "confirmed"
    assert "nvidia-nccl-cu13==2.30.7" in cause["fix"]["summary"]
    spec.write_text(spec.read_text().replace("aarch64", "x86_64"))
    assert _cause(_triage(tmp_path, log, "--spec", str(spec)), "CUD122")["verdict"] == "ruled_out"


def test_pip_conflict_on_a_cuda_wheel_confirms_cud101(tmp_path: Path) -> None:
    """verl#1554: the resolver line names torch and the cuDNN it pins; the matrix knows PyPI's
    torch 2.6.0 pins, so the fix is the exact wheel."""
    log = (
        'torch 2.6.0 requires nvidia-cudnn-cu12==9.1.0.70; platform_system == "Linux" and '
        'platform_machine == "x86_64", but you have nvidia-cudnn-cu12 9.8.0.87 which is '
        "incompatible.\n"
    )
    cause = _cause(_triage(tmp_path, log, "--no-probe"), "CUD101")
    assert cause["verdict"] == "confirmed"
    assert "pip install nvidia-cudnn-cu12==9.1.0.70" in json.dumps(cause["findings"])


@pytest.mark.parametrize(
    ("banner", "code", "verdict"),
    [
        ("NCCL version 2.28.9+cuda13.0", "CUD122", "confirmed"),
        ("NCCL version 2.28.9+cuda12.9", "CUD123", "confirmed"),
        # before 2.28.9 NCCL's proxy used a strong CAS: no ARM hang, the banner does not confirm it
        ("NCCL version 2.27.5+cuda12.9", "CUD123", "unknown"),
        # fixed NCCL loaded; the spec lists no packages, so the wheel clauses stay open
        ("NCCL version 2.30.7+cuda13.0", "CUD122", "unknown"),
    ],
)
def test_nccl_banner_states_the_loaded_nccl(
    tmp_path: Path, banner: str, code: str, verdict: str
) -> None:
    """NCCL_DEBUG=INFO's banner names the NCCL the job loaded (wheel or system): on an aarch64
    host a release 2.28.9-2.29.2 is the ARM hang, whatever the package list says."""
    log = (
        f"gh200-node:3301:3301 [0] NCCL INFO {banner}\n"
        "[rank0]:[E1112 10:01:02.000000000 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught "
        "collective operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=1, "
        "NumelOut=1, Timeout(ms)=600000) ran for 600011 milliseconds before timing out.\n"
    )
    spec = tmp_path / "node.toml"
    spec.write_text('[gpu]\nmodels = ["GH200"]\n[system]\narch = "aarch64"\n')
    data = _triage(tmp_path, log, "--spec", str(spec))
    assert _facts(data)["nccl_version"] == banner.split()[2].split("+", maxsplit=1)[0]
    assert _cause(data, code)["verdict"] == verdict
