"""Driver, architecture and cuDNN lines whose fix the log's own facts decide: torch's cuDNN
version check (CUD104, the cuDNN it was built with), Docker without the NVIDIA runtime (DRV103,
the NVIDIA Container Toolkit), CUDA's unknown error (the nvidia_uvm reload), torch's extension
builder on an arch it does not know (TOR101), cuDNN status errors (open causes). Lines as the
tools print them, copied from the threads named in matrices/signatures/*.toml."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from tests.triage.from_log import causes as _causes
from tests.triage.from_log import fix_text as _fix

CUDNN_TUPLE = (
    "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (8, 9, 2) but "
    "found runtime version (8, 5, 0). PyTorch already comes bundled with cuDNN. One option to "
    "resolving this error is to ensure PyTorch can find the bundled cuDNN.one possibility is "
    "that there is a conflicting cuDNN in LD_LIBRARY_PATH.\n"
)
CUDNN_OLD = (
    "RuntimeError: cuDNN version mismatch: PyTorch was compiled against 7102 but linked "
    "against 7600\n"
)
DOCKER = (
    'docker: Error response from daemon: could not select device driver "" with '
    "capabilities: [[gpu]].\n"
)


def _file(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_cudnn_incompatibility_names_the_cudnn_torch_was_built_with(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    cud104 = _causes(cli, _file(tmp_path, "job.log", CUDNN_TUPLE))["CUD104"]
    assert cud104["verdict"] == "confirmed"
    message = cud104["findings"][0]["message"]
    assert "built with cuDNN 8.9.2 but loaded cuDNN 8.5.0" in message
    fix = _fix(cud104)
    assert "pip install 'nvidia-cudnn-cu12==8.9.2.*'" in fix
    assert "unset LD_LIBRARY_PATH" in fix
    assert "conda install cudnn=8.9.2" in fix


def test_cudnn_incompatibility_on_a_node_with_a_toolkit_first_drops_it(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    spec = _file(
        tmp_path,
        "node.toml",
        '[env]\nLD_LIBRARY_PATH = "/public/apps/cudnn/v8.0.3.33-cuda.11.0/cuda/lib64:/opt/x/lib"\n',
    )
    cud104 = _causes(cli, _file(tmp_path, "job.log", CUDNN_TUPLE), "--spec", str(spec))["CUD104"]
    assert cud104["verdict"] == "confirmed"
    (finding,) = cud104["findings"]
    assert "export LD_LIBRARY_PATH=/opt/x/lib" in finding["fix"]["commands"]


def test_cudnn_incompatibility_picks_the_wheel_of_torch_s_cuda_major(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    spec = _file(tmp_path, "node.toml", '[packages]\ntorch = "2.0.1+cu118"\n')
    log = _file(tmp_path, "job.log", CUDNN_TUPLE.replace("(8, 9, 2)", "(8, 7, 0)"))
    cud104 = _causes(cli, log, "--spec", str(spec))["CUD104"]
    assert cud104["verdict"] == "confirmed"
    assert "pip install 'nvidia-cudnn-cu11==8.7.0.*'" in _fix(cud104)


def test_cudnn_7_mismatch_has_no_wheel_to_offer(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    cud104 = _causes(cli, _file(tmp_path, "job.log", CUDNN_OLD))["CUD104"]
    assert cud104["verdict"] == "confirmed"
    fix = _fix(cud104)
    assert "cuDNN 7.1.2" in fix and "conda install cudnn=7.1.2" in fix
    assert "nvidia-cudnn" not in fix


def test_docker_without_gpu_runtime_names_the_container_toolkit(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    drv103 = _causes(cli, _file(tmp_path, "job.log", DOCKER))["DRV103"]
    assert drv103["verdict"] == "confirmed"
    fix = _fix(drv103)
    assert "nvidia-container-toolkit" in fix
    assert "nvidia-ctk runtime configure --runtime=docker" in fix
    assert "systemctl restart docker" in fix


def test_compose_nvidia_driver_without_the_toolkit(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _file(
        tmp_path,
        "job.log",
        'Error response from daemon: could not select device driver "nvidia" with '
        "capabilities: [[compute utility]]\n",
    )
    drv103 = _causes(cli, log)["DRV103"]
    assert drv103["verdict"] == "confirmed"
    assert "nvidia-container-toolkit" in _fix(drv103)


def test_torch_found_no_gpu_gives_the_container_its_gpus(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _file(tmp_path, "job.log", "RuntimeError: No CUDA GPUs are available\n")
    drv103 = _causes(cli, log)["DRV103"]
    assert drv103["verdict"] == "confirmed"
    fix = _fix(drv103)
    assert "docker run --gpus all" in fix and "runtime: nvidia" in fix
    assert "nvidia-ctk" not in fix


def test_torch_found_no_gpu_with_cuda_visible_devices_empty_unsets_it(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _file(tmp_path, "job.log", "RuntimeError: No CUDA GPUs are available\n")
    spec = _file(tmp_path, "node.toml", '[env]\nCUDA_VISIBLE_DEVICES = ""\n')
    drv103 = _causes(cli, log, "--spec", str(spec))["DRV103"]
    assert drv103["verdict"] == "confirmed"
    assert "CUDA_VISIBLE_DEVICES='' hides every GPU" in drv103["findings"][0]["message"]
    assert "unset CUDA_VISIBLE_DEVICES" in _fix(drv103)


@pytest.mark.parametrize(
    "line",
    [
        "UserWarning: CUDA initialization: CUDA unknown error - this may be due to an "
        "incorrectly set up environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after "
        "program start. Setting the available devices to be zero.",
        "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda "
        "functions before calling NumCudaDevices() that might have already set an error? "
        "Error 999: unknown error",
        "E external/xla/xla/stream_executor/cuda/cuda_driver.cc:268] failed call to cuInit: "
        "CUDA_ERROR_UNKNOWN: unknown error",
    ],
)
def test_cuda_unknown_error_reloads_nvidia_uvm(
    tmp_path: Path, cli: Callable[..., CliResult], line: str
) -> None:
    drv150 = _causes(cli, _file(tmp_path, "job.log", line + "\n"))["DRV150"]
    assert drv150["verdict"] == "confirmed"
    fix = _fix(drv150)
    assert "sudo rmmod nvidia_uvm && sudo modprobe nvidia_uvm" in fix and "reboot" in fix


def test_extension_builder_unknown_arch_installs_a_torch_with_it(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _file(tmp_path, "job.log", "ValueError: Unknown CUDA arch (12.0) or GPU not supported\n")
    tor101 = _causes(cli, log)["TOR101"]
    assert tor101["verdict"] == "confirmed"
    assert "whl/cu128" in _fix(tor101)


def test_cudnn_status_error_stays_open_between_its_causes(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _file(tmp_path, "job.log", "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED\n")
    causes = _causes(cli, log)
    assert {causes[c]["verdict"] for c in ("CUD104", "CUD101", "DRV104")} == {"unchecked"}


NO_IMAGE = "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"


def test_no_kernel_image_where_torch_covers_the_gpu_rebuilds_the_extension(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    spec = _file(
        tmp_path,
        "node.toml",
        '[gpu]\nmodels = ["A100"]\ndriver = "535.104.05"\n[packages]\ntorch = "2.1.0+cu121"\n',
    )
    causes = _causes(cli, _file(tmp_path, "job.log", NO_IMAGE), "--spec", str(spec))
    assert causes["TOR101"]["verdict"] == "ruled_out"
    assert causes["CUD153"]["verdict"] == "confirmed"
    assert 'TORCH_CUDA_ARCH_LIST="8.0" pip install --no-build-isolation' in _fix(causes["CUD153"])


def test_no_kernel_image_where_torch_lacks_the_gpu_is_torch_s_not_an_extension_s(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    spec = _file(
        tmp_path,
        "node.toml",
        '[gpu]\nmodels = ["RTX 5090"]\ndriver = "570.124.04"\n[packages]\ntorch = "2.5.1+cu124"\n',
    )
    causes = _causes(cli, _file(tmp_path, "job.log", NO_IMAGE), "--spec", str(spec))
    assert causes["TOR101"]["verdict"] == "confirmed"
    assert causes["CUD153"]["verdict"] == "ruled_out"


def test_no_kernel_image_alone_leaves_the_extension_open(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    causes = _causes(cli, _file(tmp_path, "job.log", NO_IMAGE))
    assert causes["TOR101"]["verdict"] == "unknown"  # whose kernel it was is not stated
    assert causes["CUD153"]["verdict"] == "unknown"


def test_ctranslate2_cudnn9_not_loadable_names_wheel_and_path(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _file(
        tmp_path,
        "job.log",
        "Unable to load any of {libcudnn_ops.so.9.1.0, libcudnn_ops.so.9.1, libcudnn_ops.so.9, "
        "libcudnn_ops.so}\nInvalid handle. Cannot load symbol cudnnCreateTensorDescriptor\n",
    )
    spec = _file(tmp_path, "node.toml", '[packages]\nnvidia-cudnn-cu12 = "8.9.2.26"\n')
    cud154 = _causes(cli, log, "--spec", str(spec))["CUD154"]
    assert cud154["verdict"] == "confirmed"
    assert "cuDNN 8, not the 9 the program wants" in cud154["findings"][0]["message"]
    fix = _fix(cud154)
    assert "pip install 'nvidia-cudnn-cu12==9.*'" in fix
    assert "nvidia.cudnn.lib.__file__" in fix and "libcudnn9-cuda-12" in fix


def test_cudnn8_sublibrary_not_loadable(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    log = _file(
        tmp_path,
        "job.log",
        "Could not load library libcudnn_ops_infer.so.8. Error: libcudnn_ops_infer.so.8: cannot "
        "open shared object file: No such file or directory\n",
    )
    cud154 = _causes(cli, log)["CUD154"]
    assert cud154["verdict"] == "confirmed"
    assert "libcudnn_ops_infer.so.8" in cud154["findings"][0]["message"]
    assert "ctranslate2==4.4.0" in _fix(cud154)


@pytest.mark.parametrize(
    ("log", "versions"),
    [
        (
            "Jun 30 11:07:05 gpu-0 kernel: NVRM: API mismatch: the client has the version "
            "535.54.03, but#012NVRM: this kernel module has the version 530.30.02.  Please\n",
            "user-space driver 535.54.03, kernel module 530.30.02",
        ),
        (
            "[   12.014918] NVRM: API mismatch: the client has the version 570.153.02, but\n"
            "               NVRM: this kernel module has the version 570.144.  Please\n",
            "user-space driver 570.153.02",
        ),
    ],
)
def test_nvrm_api_mismatch_reboots(
    tmp_path: Path, cli: Callable[..., CliResult], log: str, versions: str
) -> None:
    gpu102 = _causes(cli, _file(tmp_path, "job.log", log))["GPU102"]
    assert gpu102["verdict"] == "confirmed"
    assert versions in gpu102["findings"][0]["message"]
    assert "reboot" in _fix(gpu102)


@pytest.mark.parametrize(
    ("line", "spelled"),
    [
        ("ptxas fatal   : Value 'sm_90a' is not defined for option 'gpu-name'", "without 9.0a"),
        ("nvcc fatal   : Unsupported gpu architecture 'compute_120'", "without 12.0"),
    ],
)
def test_compiler_unknown_arch_spells_torch_cuda_arch_list(
    tmp_path: Path, cli: Callable[..., CliResult], line: str, spelled: str
) -> None:
    cud150 = _causes(cli, _file(tmp_path, "job.log", line + "\n"))["CUD150"]
    assert cud150["verdict"] == "confirmed"
    assert f"TORCH_CUDA_ARCH_LIST {spelled}" in _fix(cud150)


INSUFFICIENT = (
    "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version\n"
)


def test_insufficient_driver_on_a_node_with_a_driver_confirms_drv101(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    spec = _file(tmp_path, "node.toml", '[gpu]\nmodels = ["A100"]\ndriver = "470.182.03"\n')
    causes = _causes(cli, _file(tmp_path, "job.log", INSUFFICIENT), "--spec", str(spec))
    assert causes["DRV101"]["verdict"] == "confirmed"
    message = causes["DRV101"]["findings"][0]["message"]
    assert "newer than the loaded driver supports" in message and "CUDA <= 11.4" in message
    assert "--index-url https://download.pytorch.org/whl/cu11" in _fix(causes["DRV101"])


def test_insufficient_driver_without_node_facts_stays_open(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    causes = _causes(cli, _file(tmp_path, "job.log", INSUFFICIENT))
    assert causes["DRV101"]["verdict"] == "unknown"
    assert causes["DRV103"]["verdict"] == "unchecked"


def test_ctranslate2_insufficient_driver_is_not_torch_s(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    spec = _file(tmp_path, "node.toml", '[gpu]\nmodels = ["A100"]\ndriver = "535.183.01"\n')
    log = _file(
        tmp_path,
        "job.log",
        "RuntimeError: CUDA failed with error CUDA driver version is insufficient for CUDA "
        "runtime version\n",
    )
    assert _causes(cli, log, "--spec", str(spec))["DRV101"]["verdict"] == "unknown"
