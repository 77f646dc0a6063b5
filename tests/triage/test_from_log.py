"""A line that establishes a cause by itself (a signature's ``confirms``) carries the rule's
finding, worded by its ``@from_log`` from the facts the log states: NCCL's ENOSPC in /dev/shm,
Ray's object store in /tmp, torch's 'driver too old (found version N)', CUDA error 804,
nvidia-container-cli's requirement, Ray's version-mismatch line, Gloo's loopback fallback.
Lines as the tools print them (sources in matrices/signatures*.toml)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from tests.triage.from_log import causes as _causes
from tests.triage.from_log import fix_text as _fix
from tests.triage.from_log import log_file


def test_nccl_enospc_confirms_sys101_with_the_segment_size(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "node-0:1234:1290 [0] misc/shmutils.cc:87 NCCL WARN Error: failed to extend "
        "/dev/shm/nccl-aBcDeF to 9637892 bytes, error: No space left on device (28)\n"
        "node-0:1234:1290 [0] misc/shmutils.cc:141 NCCL WARN Error while creating shared "
        "memory segment /dev/shm/nccl-aBcDeF (size 9637888)\n",
    )
    sys101 = _causes(cli, log)["SYS101"]
    assert (sys101["verdict"], sys101["evidence"]) == ("confirmed", "confirmed from line 1")
    (finding,) = sys101["findings"]
    assert "9.2 MiB segment" in finding["message"]
    assert "--shm-size=16g" in _fix(sys101) and "NCCL_SHM_DISABLE=1" in _fix(sys101)


def test_nccl_enospc_with_a_spec_names_its_shm_size(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "include/shm.h:28 NCCL WARN Call to posix_fallocate failed: No space left on device\n",
    )
    spec = tmp_path / "node.toml"
    spec.write_text("[system]\nshm_gib = 0.0625\nin_container = true\n")
    sys101 = _causes(cli, log, "--spec", str(spec))["SYS101"]
    assert sys101["verdict"] == "confirmed"
    assert "(/dev/shm is 64 MiB)" in sys101["findings"][0]["message"]


RAY_WARNING = (
    "2025-10-09 20:16:32,652    WARNING services.py:2159 -- WARNING: The object store is using /tmp instead\n"
    "  of /dev/shm because /dev/shm has only {shm} bytes available. This will harm performance! You may\n"
    "  be able to free up space by deleting files in /dev/shm. If you are inside a Docker container, you can\n"
    "  increase /dev/shm size by passing '--shm-size={size}gb' to 'docker run' (or add it to the run_options\n"
    "  list in a Ray cluster config). Make sure to set this to more than 30% of available RAM.\n"
)


@pytest.mark.parametrize(
    ("shm", "size", "flag"),
    [
        ("5368709120", "10.24", "--shm-size=11g"),  # Ray's figure, rounded up to whole GiB
        ("67108864", "0.07", "--shm-size=<more than 30% of RAM>"),  # Ray 1.x capped its store
    ],
)
def test_ray_object_store_warning_confirms_ray105(
    tmp_path: Path, cli: Callable[..., CliResult], shm: str, size: str, flag: str
) -> None:
    log = log_file(tmp_path, RAY_WARNING.format(shm=shm, size=size))
    found = _causes(cli, log)
    assert found["RAY105"]["verdict"] == "confirmed"
    assert flag in _fix(found["RAY105"])
    assert "emptyDir" in _fix(found["RAY105"])
    assert found["SYS101"]["verdict"] == "unknown"  # NCCL's need is not what the line says


@pytest.mark.parametrize(
    ("found_version", "variant"),
    [("11080", "cu118"), ("12040", "cu")],
)
def test_torch_driver_too_old_confirms_drv101_with_builds_the_driver_runs(
    tmp_path: Path, cli: Callable[..., CliResult], found_version: str, variant: str
) -> None:
    log = log_file(
        tmp_path,
        "UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found "
        f"version {found_version}). Please update your GPU driver\n",
    )
    drv101 = _causes(cli, log)["DRV101"]
    assert (drv101["verdict"], drv101["evidence"]) == ("confirmed", "confirmed from line 1")
    text = _fix(drv101)
    assert "Upgrade the NVIDIA driver" in text
    assert "pip install torch==" in text and f"/whl/{variant}" in text
    major, minor = int(found_version) // 1000, (int(found_version) % 1000) // 10
    assert f"CUDA <= {major}.{minor}" in drv101["findings"][0]["message"]


def test_container_cli_requirement_names_the_driver_for_that_cuda(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.4, please "
        "update your driver to a newer version, or use an earlier cuda container: unknown.\n",
    )
    spec = tmp_path / "node.toml"
    spec.write_text('[gpu]\ncuda = "12.1"\nmodels = ["Tesla V100"]\n')
    drv101 = _causes(cli, log, "--spec", str(spec))["DRV101"]
    assert drv101["verdict"] == "confirmed"
    text = _fix(drv101)
    assert "supports CUDA 12.4 (>= 550.54.14)" in text
    assert "image built for CUDA <= 12.1" in text


def test_cuda_error_804_confirms_drv101(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    log = log_file(
        tmp_path,
        "RuntimeError: Unexpected error from cudaGetDeviceCount(). Error 804: forward "
        "compatibility was attempted on non supported HW\n",
    )
    causes = _causes(cli, log)
    drv101 = causes["DRV101"]
    assert drv101["verdict"] == "confirmed"
    assert "datacenter GPUs only" in drv101["findings"][0]["message"]
    # no node: a reboot after a driver update (bare metal) first, the host driver upgrade next
    text = _fix(drv101)
    assert text.index("Reboot") < text.index("upgrade the NVIDIA driver")
    assert "cuda-compat" in text
    # the newer libcuda against the older loaded module is GPU102's cause too
    assert causes["GPU102"]["verdict"] == "confirmed"
    assert "reboot" in _fix(causes["GPU102"])


def test_forward_compat_without_torch_prefix(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    """CuPy's and CTranslate2's wording of 804 (rapidsai/cusignal#398, SYSTRAN/faster-whisper#653)."""
    for line in (
        "cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorCompatNotSupportedOnDevice: "
        "forward compatibility was attempted on non supported HW\n",
        "RuntimeError: CUDA failed with error forward compatibility was attempted on non "
        "supported HW\n",
    ):
        causes = _causes(cli, log_file(tmp_path, line))
        assert causes["GPU102"]["verdict"] == "confirmed", line


def test_cuda_error_803_confirms_gpu102_with_reboot_and_reinstall(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda "
        "functions before calling NumCudaDevices() that might have already set an error? Error "
        "803: system has unsupported display driver / cuda driver combination\n",
    )
    spec = tmp_path / "node.toml"
    spec.write_text('[gpu]\ndriver = "535.104.05"\nmodels = ["NVIDIA GeForce RTX 3090"]\n')
    gpu102 = _causes(cli, log, "--spec", str(spec))["GPU102"]
    assert gpu102["verdict"] == "confirmed"
    text = _fix(gpu102)
    assert "reboot" in text and "--reinstall nvidia-driver-535" in text


MISMATCH = (
    "RuntimeError: Version mismatch: The cluster was started with:\n"
    "    Ray: {cluster_ray}\n"
    "    Python: {cluster_py}\n"
    "This process on node 10.2.1.4 was started with:\n"
    "    Ray: {ray}\n"
    "    Python: {py}\n"
)


def test_ray_mismatch_line_confirms_the_side_that_differs(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        MISMATCH.format(cluster_ray="2.2.0", cluster_py="3.8.10", ray="2.3.0", py="3.8.10"),
    )
    found = _causes(cli, log)
    assert found["CLU101"]["verdict"] == "confirmed"
    text = _fix(found["CLU101"])
    assert "pip install ray==2.2.0" in text and "ray==2.3.0" in text
    assert found["CLU102"]["verdict"] == "ruled_out"
    # the reason names the facts CLU102 read (both Pythons), not everything the log states
    assert found["CLU102"]["reason"].endswith(
        "python_version = 3.8.10, python_cluster_version = 3.8.10"
    )


def test_ray_mismatch_patch_only_python(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    log = log_file(
        tmp_path,
        MISMATCH.format(cluster_ray="2.40.0", cluster_py="3.10.12", ray="2.40.0", py="3.10.14"),
    )
    found = _causes(cli, log)
    assert found["CLU101"]["verdict"] == "ruled_out"
    assert found["CLU102"]["verdict"] == "confirmed"
    assert "RAY_DEFAULT_PYTHON_VERSION_MATCH_LEVEL=minor" in _fix(found["CLU102"])


def test_ray_mismatch_line_cut_before_the_versions_stays_open(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(tmp_path, "RuntimeError: Version mismatch: The cluster was started with:\n")
    found = _causes(cli, log)
    assert {found[c]["verdict"] for c in ("CLU101", "CLU102")} == {"unknown"}
    assert found["CLU101"]["findings"] == []


def test_ray_mismatch_with_ray_location_lines_rules_both_out(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """Ray 0.2 printed 'Ray location:' and 'Cloudpickle:' too (ray-project/ray#1263): equal Ray
    and Python versions rule CLU101 and CLU102 out."""
    log = log_file(
        tmp_path,
        "Exception: Version mismatch: The cluster was started with:\n"
        "    Ray: 0.2.2\n    Ray location: /home/ubuntu/ray/python/ray/__init__.py\n"
        "    Python: 3.5.2\n    Cloudpickle: 0.5.2\n"
        "This process on node 172.31.4.51 was started with:\n"
        "    Ray: 0.2.2\n    Ray location: /home/ubuntu/ray/python/ray/__init__.py\n"
        "    Python: 3.5.2\n    Cloudpickle: 0.2.2\n",
    )
    found = _causes(cli, log)
    assert {found[c]["verdict"] for c in ("CLU101", "CLU102")} == {"ruled_out"}


def test_gloo_loopback_fallback_confirms_net103(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "[rank8] Warning: Unable to resolve hostname to a (local) address. Using the loopback "
        "address as fallback. Manually set the network interface with GLOO_SOCKET_IFNAME\n",
    )
    net103 = _causes(cli, log)["NET103"]
    assert net103["verdict"] == "confirmed"
    assert net103["findings"][0]["severity"] == "warning"  # harmless when all ranks are local
    text = _fix(net103)
    assert "GLOO_SOCKET_IFNAME" in text and "NCCL_SOCKET_IFNAME" in text and "/etc/hosts" in text


def test_collect_env_no_cuda_is_a_stated_absence(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """collect_env writes 'No CUDA' only when torch saw no CUDA and nvidia-smi gave nothing:
    DRV103 checks a pasted dump as it checks a probed node (vllm-project/vllm#4858)."""
    dump = tmp_path / "env.txt"
    dump.write_text(
        "PyTorch version: 2.1.2+cu121\nIs debug build: False\nCUDA used to build PyTorch: 12.1\n"
        "ROCM used to build PyTorch: N/A\n\nOS: Ubuntu 22.04.4 LTS (x86_64)\n"
        "Python version: 3.10.14 (main, Mar 21 2024, 16:24:04) [GCC 11.2.0] (64-bit runtime)\n"
        "Is CUDA available: False\nCUDA runtime version: No CUDA\n"
        "GPU models and configuration: No CUDA\nNvidia driver version: No CUDA\n"
        "cuDNN version: No CUDA\n"
    )
    result = cli("check", "--json", "--from", str(dump))
    codes = {f["code"]: f for f in result.json()["data"]["findings"]}
    assert "DRV103" in codes
    assert "no NVIDIA driver is visible" in codes["DRV103"]["message"]


@pytest.mark.parametrize(
    ("value", "confirmed", "ruled_out", "fragment"),
    [
        ("^lo,docker0", "NET102", "NET101", "keep ^lo,docker0 for NCCL_SOCKET_IFNAME only"),
        ("eth1", "NET101", "NET102", "an interface this node has (not eth1)"),
    ],
)
def test_gloo_unable_to_find_address_names_the_cause_by_its_value(
    tmp_path: Path,
    cli: Callable[..., CliResult],
    value: str,
    confirmed: str,
    ruled_out: str,
    fragment: str,
) -> None:
    log = log_file(
        tmp_path,
        "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:84] "
        f"ifa != nullptr. Unable to find address for: {value}\n",
    )
    found = _causes(cli, log)
    assert found[confirmed]["verdict"] == "confirmed"
    assert fragment in _fix(found[confirmed])
    assert "GLOO_SOCKET_IFNAME=" in _fix(found[confirmed])
    assert found[ruled_out]["verdict"] == "ruled_out"


def test_cudnn_finds_no_libcuda_on_wsl(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    """cuDNN 8's 'Could not load library X. Error: libcuda.so: ...' (facebookresearch/nougat#105,
    on WSL 2): the driver's libcuda is missing, not cuDNN; /usr/lib/wsl/lib is the fix."""
    log = log_file(
        tmp_path,
        "Could not load library libcudnn_cnn_infer.so.8. Error: libcuda.so: cannot open shared "
        "object file: No such file or directory\n",
    )
    cud154 = _causes(cli, log)["CUD154"]
    assert cud154["verdict"] == "confirmed"
    assert "libcuda.so" in cud154["findings"][0]["message"]
    assert "export LD_LIBRARY_PATH=/usr/lib/wsl/lib:$LD_LIBRARY_PATH" in _fix(cud154)
    assert "nvidia-cudnn" not in _fix(cud154)


def test_libcuda_not_found_names_wsl_path(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    """microsoft/WSL#8587: dlopen('libcuda.so') fails; /usr/lib/wsl/lib is named, first when the
    node's kernel is WSL 2's."""
    log = log_file(tmp_path, "OSError: libcuda.so: cannot open shared object file: No such file\n")
    assert "/usr/lib/wsl/lib" in _fix(_causes(cli, log)["SYS150"])
    dump = tmp_path / "uname.txt"
    dump.write_text(
        "$ uname -a\nLinux pc 5.15.153.1-microsoft-standard-WSL2 #1 SMP Fri Mar 29 23:14:13 UTC "
        "2024 x86_64 x86_64 x86_64 GNU/Linux\n"
    )
    sys150 = _causes(cli, log, "--from", str(dump))["SYS150"]
    first = sys150["findings"][0]["fix"]["actions"][0]
    assert "/usr/lib/wsl/lib" in first["text"]


def test_insufficient_driver_with_a_pasted_banner_names_branch_and_wheel(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """CUDA's 35 with a pasted nvidia-smi banner (driver 470, CUDA <= 11.4) and torch cu121:
    DRV101 confirmed; the fix names the torch wheel the driver runs and the driver branch
    (matrices/cuda/drivers.toml) for CUDA 12.1; the banner alone does not say 'no GPUs'."""
    log = log_file(
        tmp_path,
        "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version\n",
    )
    dump = tmp_path / "env.txt"
    dump.write_text(
        "NVIDIA-SMI 470.57.02    Driver Version: 470.57.02    CUDA Version: 11.4\n"
        "torch 2.1.0+cu121\n"
    )
    causes = _causes(cli, log, "--from", str(dump))
    assert causes["DRV101"]["verdict"] == "confirmed"
    text = _fix(causes["DRV101"])
    assert "cu118" in text and "nvidia-driver-530" in text
    assert causes["DRV103"]["verdict"] != "confirmed"


def test_container_runtime_without_host_driver(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """nvidia-container-cli's 'load library failed: libnvidia-ml.so.1' (NVIDIA/nvidia-docker#1711):
    the host's driver is what is missing; `--gpus all` is already what ran the hook."""
    log = log_file(
        tmp_path,
        "nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: "
        "cannot open shared object file: no such file or directory: unknown.\n",
    )
    sys150 = _causes(cli, log)["SYS150"]
    assert sys150["verdict"] == "confirmed"
    text = _fix(sys150)
    assert "NVIDIA driver on the host" in text and "apt install libnvidia-ml1" not in text


def test_nvidia_smi_banner_in_the_log_confirms_insufficient_driver(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """A log that carries nvidia-smi's banner (pytorch/pytorch#85332 pastes it on one line) states
    the loaded driver: CUDA's 35 is then DRV101's, with the torch wheel that driver runs."""
    log = log_file(
        tmp_path,
        "nvidia-smi:NVIDIA-SMI 470.57.02    Driver Version: 470.57.02    CUDA Version: 11.4\n"
        "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version\n",
    )
    drv101 = _causes(cli, log)["DRV101"]
    assert drv101["verdict"] == "confirmed"
    assert "CUDA <= 11.4" in drv101["findings"][0]["message"]
    assert "cu118" in _fix(drv101)
