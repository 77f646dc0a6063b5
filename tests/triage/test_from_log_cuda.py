"""Lines that establish a CUDA-library or /dev/shm cause by themselves (``@from_log``): NCCL's
bare 'Error while creating shared memory segment' (SYS101, on a container or a small
/dev/shm), a wheel's libcusparse missing an nvJitLink symbol (CUD104), vLLM's PyNccl without
a device (CUD107) and NCCL's 'Invalid config blocking attribute value' (CUD121). Lines as the
tools print them (sources in matrices/signatures*.toml)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from tests.triage.from_log import causes as _causes
from tests.triage.from_log import fix_text as _fix

SHM_LINE = (
    "node:221:300 [3] misc/shmutils.cc:113 NCCL WARN Error while creating shared memory "
    "segment /dev/shm/nccl-pZafXL (size 7340384)\n"
)


def _file(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_bare_shm_create_failure_in_a_container_confirms_sys101(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _file(tmp_path, "job.log", SHM_LINE)
    spec = _file(tmp_path, "node.toml", "[system]\nin_container = true\n")
    sys101 = _causes(cli, log, "--spec", str(spec))["SYS101"]
    assert (sys101["verdict"], sys101["evidence"]) == ("confirmed", "confirmed from line 1")
    (finding,) = sys101["findings"]
    assert "7.0 MiB segment" in finding["message"]
    assert "the node is a container" in finding["message"]
    assert "--shm-size=" in _fix(sys101) and "--ipc=host" in _fix(sys101)


@pytest.mark.parametrize(
    ("spec", "verdict"),
    [
        ("[system]\nin_container = false\n", "unknown"),  # the line says no reason: open
        ("[system]\nshm_gib = 32\nin_container = true\n", "ruled_out"),  # room enough
        ("[system]\nshm_gib = 0.0625\n", "confirmed"),  # 64 MiB, container or not
    ],
)
def test_bare_shm_create_failure_depends_on_the_node(
    tmp_path: Path, cli: Callable[..., CliResult], spec: str, verdict: str
) -> None:
    log = _file(tmp_path, "job.log", SHM_LINE)
    node = _file(tmp_path, "node.toml", spec)
    assert _causes(cli, log, "--spec", str(node))["SYS101"]["verdict"] == verdict


def test_bare_shm_create_failure_alone_names_dev_shm(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """The line names the segment NCCL creates in /dev/shm: alone (the node unknown) it confirms
    SYS101; only a node known not to be a container leaves it open (above)."""
    sys101 = _causes(cli, _file(tmp_path, "job.log", SHM_LINE))["SYS101"]
    assert sys101["verdict"] == "confirmed"
    assert "--shm-size=" in _fix(sys101)


def test_shm_create_failure_stating_enospc_confirms_sys101_anywhere(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _file(
        tmp_path, "job.log", SHM_LINE.replace(")\n", "), error: No space left on device (28)\n")
    )
    sys101 = _causes(cli, log)["SYS101"]
    assert sys101["verdict"] == "confirmed"
    assert "No space left on device" in sys101["findings"][0]["message"]


def test_shm_create_failure_stating_another_errno_stays_open_in_a_container(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _file(tmp_path, "job.log", SHM_LINE.replace(")\n", "), error: Permission denied (13)\n"))
    spec = _file(tmp_path, "node.toml", "[system]\nin_container = true\n")
    sys101 = _causes(cli, log, "--spec", str(spec))["SYS101"]
    assert sys101["verdict"] == "unknown" and "Permission denied (13)" in sys101["reason"]


NVJITLINK = (
    "ImportError: /opt/venv/lib/python3.11/site-packages/torch/lib/../../nvidia/cusparse/lib/"
    "libcusparse.so.12: undefined symbol: __nvJitLinkAddData_12_1, version libnvJitLink.so.12\n"
)


def test_wheel_cusparse_missing_nvjitlink_symbol_confirms_cud104(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    cud104 = _causes(cli, _file(tmp_path, "job.log", NVJITLINK))["CUD104"]
    assert cud104["verdict"] == "confirmed"
    assert "__nvJitLinkAddData_12_1" in cud104["findings"][0]["message"]
    fix = _fix(cud104)
    assert (
        "export LD_LIBRARY_PATH=/opt/venv/lib/python3.11/site-packages/nvidia/nvjitlink/lib:"
        "$LD_LIBRARY_PATH"
    ) in fix


def test_nvjitlink_with_toolkit_on_ld_library_path_drops_it(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    spec = _file(
        tmp_path, "node.toml", '[env]\nLD_LIBRARY_PATH = "/usr/local/cuda-12.1/lib64:/opt/x/lib"\n'
    )
    cud104 = _causes(cli, _file(tmp_path, "job.log", NVJITLINK), "--spec", str(spec))["CUD104"]
    assert cud104["verdict"] == "confirmed"
    assert "LD_LIBRARY_PATH=/usr/local/cuda-12.1/lib64" in cud104["findings"][0]["message"]
    (finding,) = cud104["findings"]
    assert any(
        c.startswith("export LD_LIBRARY_PATH=") and "/opt/x/lib" in c and "cuda-12.1" not in c
        for c in finding["fix"]["commands"]
    )


def test_toolkit_library_missing_nvjitlink_symbol_stays_open(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _file(
        tmp_path,
        "job.log",
        "ImportError: /usr/local/cuda/lib64/libcusparse.so.12: undefined symbol: "
        "__nvJitLinkAddData_12_1, version libnvJitLink.so.12\n",
    )
    assert _causes(cli, log)["CUD104"]["verdict"] == "unknown"


PYNCCL = (
    '[rank0]:   File "/env/lib/python3.10/site-packages/vllm/distributed/device_communicators/'
    'pynccl.py", line 113, in all_reduce\n'
    "[rank0]:     assert tensor.device == self.device, (\n"
    "[rank0]: AttributeError: 'PyNcclCommunicator' object has no attribute 'device'\n"
)


def test_pynccl_without_device_confirms_cud107(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    cud107 = _causes(cli, _file(tmp_path, "job.log", PYNCCL))["CUD107"]
    assert (cud107["verdict"], cud107["evidence"]) == ("confirmed", "confirmed from line 3")
    assert "found no NCCL library" in cud107["findings"][0]["message"]
    assert "pip install vllm==" in _fix(cud107)


def test_pynccl_without_device_names_the_installed_vllm(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    spec = _file(tmp_path, "node.toml", '[packages]\nvllm = "0.6.0"\n')
    cud107 = _causes(cli, _file(tmp_path, "job.log", PYNCCL), "--spec", str(spec))["CUD107"]
    assert cud107["verdict"] == "confirmed"
    assert "pip install vllm==0.6.0" in _fix(cud107)


BLOCKING = (
    "DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:219, invalid "
    "argument, NCCL version 2.14.3\n"
    "ncclInvalidArgument: Invalid value for an argument.\n"
    "Last error:\n"
    "Invalid config blocking attribute value -2147483648\n"
)


def test_invalid_blocking_config_confirms_cud121_naming_the_old_wheel(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    cud121 = _causes(cli, _file(tmp_path, "job.log", BLOCKING))["CUD121"]
    assert (cud121["verdict"], cud121["evidence"]) == ("confirmed", "confirmed from line 4")
    message = cud121["findings"][0]["message"]
    assert "NCCL 2.14.3" in message and "nvidia-nccl-cu11 2.14.3" in message
    assert "pip uninstall -y nvidia-nccl-cu11" in _fix(cud121)


def test_invalid_blocking_config_with_one_nccl_wheel_is_ruled_out(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    spec = _file(
        tmp_path,
        "node.toml",
        '[packages]\ntorch = "2.1.0"\n"nvidia-nccl-cu12" = "2.18.1"\n',
    )
    cud121 = _causes(cli, _file(tmp_path, "job.log", BLOCKING), "--spec", str(spec))["CUD121"]
    assert cud121["verdict"] == "ruled_out"


CT2_LINE = (
    "RuntimeError: CUDA failed with error CUDA driver version is insufficient for CUDA runtime "
    "version\n"
)


@pytest.mark.parametrize(
    ("driver", "verdict"), [("470.256.02", "confirmed"), ("535.183.01", "ruled_out")]
)
def test_ctranslate2_driver_error_checks_its_cuda12_floor(
    tmp_path: Path, cli: Callable[..., CliResult], driver: str, verdict: str
) -> None:
    spec = _file(
        tmp_path,
        "node.toml",
        f'[gpu]\nmodels = ["NVIDIA GeForce RTX 3050"]\ndriver = "{driver}"\n\n'
        '[packages]\n"faster-whisper" = "1.1.1"\nctranslate2 = "4.6.0"\n',
    )
    drv140 = _causes(cli, _file(tmp_path, "job.log", CT2_LINE), "--spec", str(spec))["DRV140"]
    assert drv140["verdict"] == verdict
    if verdict == "confirmed":
        assert "525.60.13 or newer" in _fix(drv140)


def test_nvjitlink_symbol_without_a_path_confirms_cud104_and_drops_the_toolkit(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """The versioned entry point alone (pytorch#152783's title line) says an older nvJitLink
    loaded first: confirmed, the fix drops the toolkit from LD_LIBRARY_PATH or puts the
    wheel's directory first, found by Python whatever the environment's site-packages."""
    log = _file(
        tmp_path,
        "job.log",
        "undefined symbol: __nvJitLinkCreate_12_8, version libnvJitLink.so.12\n",
    )
    cud104 = _causes(cli, log)["CUD104"]
    assert cud104["verdict"] == "confirmed"
    assert "CUDA 12.8's nvJitLink" in cud104["findings"][0]["message"]
    fix = _fix(cud104)
    assert "unset LD_LIBRARY_PATH" in fix
    assert "nvidia.nvjitlink.lib" in fix
    assert "nvidia-nvjitlink-cu12>=12.8" in fix


def test_nvjitlink_symbol_without_a_path_and_the_toolkit_stated_sets_the_rest(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    spec = _file(
        tmp_path, "node.toml", '[env]\nLD_LIBRARY_PATH = "/usr/local/cuda-12.4/lib64:/opt/x/lib"\n'
    )
    log = _file(
        tmp_path,
        "job.log",
        "undefined symbol: __nvJitLinkCreate_12_8, version libnvJitLink.so.12\n",
    )
    (finding,) = _causes(cli, log, "--spec", str(spec))["CUD104"]["findings"]
    assert "export LD_LIBRARY_PATH=/opt/x/lib" in finding["fix"]["commands"]
