"""Driver failures of platforms the corpus had few of: the proprietary module refusing a
Blackwell GPU (DRV228, the open module), TensorFlow's CUDA initialisation failure and an
unlicensed vGPU behind error 46 (DRV150), a CUDA library missing in a Jetson container
(SYS150, the NVIDIA runtime as Docker's default)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_cli
from tests.triage.from_log import causes, fix_text, log_file


def test_the_proprietary_module_refusing_a_blackwell_gpu_names_the_open_module(
    tmp_path: Path,
) -> None:
    log = log_file(
        tmp_path,
        "[    5.499014] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  580.105.08  Wed Oct 29 "
        "23:15:11 UTC 2025\n"
        "[    5.559842] NVRM: The NVIDIA GPU 0000:02:00.0 (PCI ID: 10de:2c58)\n"
        "               NVRM: installed in this system requires use of the NVIDIA open kernel "
        "modules.\n"
        "[    5.559858] NVRM: GPU 0000:02:00.0: RmInitAdapter failed! (0x22:0x56:884)\n",
    )
    found = causes(run_cli, log)
    assert found["DRV228"]["verdict"] == "confirmed"
    text = fix_text(found["DRV228"])
    assert "nvidia-driver-<branch>-open" in text and "--kernel-module-type=open" in text


def test_a_report_that_the_open_modules_are_required_reads_the_same(tmp_path: Path) -> None:
    # getsolus/packages#5575: the reporter's words for the dmesg line
    log = log_file(
        tmp_path,
        "running dmesg shows an explicit error message about the open kernel modules being "
        "required - nvidia-smi returns no devices were found",
    )
    text = fix_text(causes(run_cli, log)["DRV228"])
    assert "nvidia-driver-<branch>-open" in text


def test_tensorflow_cuda_initialisation_names_error_46_and_the_vgpu_license(
    tmp_path: Path,
) -> None:
    # DDMAL/Rodan#1332: the cloud VM's vGPU had lost its license
    log = log_file(
        tmp_path,
        "tensorflow.python.framework.errors_impl.InternalError: CUDA runtime implicit "
        "initialization on GPU:0 failed. Status: all CUDA-capable devices are busy or "
        "unavailable",
    )
    found = causes(run_cli, log)
    assert found["DRV150"]["verdict"] == "confirmed"
    text = fix_text(found["DRV150"])
    assert "sudo nvidia-smi -c DEFAULT" in text and "nvidia-gridd" in text


def test_a_cuda_library_missing_on_a_jetson_names_the_default_runtime(tmp_path: Path) -> None:
    # dusty-nv/jetson-containers#121
    log = log_file(
        tmp_path,
        "./scripts/docker_build_ml.sh all        # build all: l4t-pytorch\n"
        "OSError: libcurand.so.10: cannot open shared object file: No such file or directory\n"
        "Package: nvidia-jetpack\n",
    )
    text = fix_text(causes(run_cli, log)["SYS150"])
    assert '"default-runtime": "nvidia"' in text and "--runtime nvidia" in text


def test_a_cuda_library_missing_elsewhere_names_no_jetson_step(tmp_path: Path) -> None:
    log = log_file(
        tmp_path,
        "OSError: libcurand.so.10: cannot open shared object file: No such file or directory\n",
    )
    text = fix_text(causes(run_cli, log)["SYS150"])
    assert "default-runtime" not in text


def test_torch_device_index_assert_on_mig_names_one_mig_device(tmp_path: Path) -> None:
    # pytorch/pytorch#130181
    log = log_file(
        tmp_path,
        "on a NVIDIA-A100-SXM4-80GB-MIG-3g.40gb using 2 GPUs\n"
        'RuntimeError: device >= 0 && device < num_gpus INTERNAL ASSERT FAILED at "/opt/conda/'
        'conda-bld/pytorch_1682343997789/work/aten/src/ATen/cuda/CUDAContext.cpp":50, please '
        "report a bug to PyTorch.\n",
    )
    found = causes(run_cli, log)
    assert found["GPU119"]["verdict"] == "confirmed"
    assert "CUDA_VISIBLE_DEVICES=MIG-<UUID>" in fix_text(found["GPU119"])


def test_torch_device_index_assert_without_mig_stays_open(tmp_path: Path) -> None:
    log = log_file(
        tmp_path,
        "RuntimeError: device >= 0 && device < num_gpus INTERNAL ASSERT FAILED at "
        '"../aten/src/ATen/cuda/CUDAContext.cpp":50, please report a bug to PyTorch.\n',
    )
    assert causes(run_cli, log)["GPU119"]["verdict"] != "confirmed"


def test_fabric_manager_refusing_the_driver_names_the_driver_version(tmp_path: Path) -> None:
    # NVIDIA/gpu-driver-container#735
    log = log_file(
        tmp_path,
        "fabric manager NVIDIA GPU driver interface version 590.48.01 don't match with driver "
        "version 580.126.09.\nPlease update with matching NVIDIA driver package.\n",
    )
    found = causes(run_cli, log)
    assert found["GPU101"]["verdict"] == "confirmed"
    text = fix_text(found["GPU101"])
    assert "nvidia-fabricmanager-580=580.126.09-1" in text and "apt-mark hold" in text


def test_launch_timeout_names_windows_tdr_and_tcc(tmp_path: Path) -> None:
    # Purfview/whisper-standalone-win#411
    log = log_file(tmp_path, "CUDA error: the launch timed out and was terminated\n")
    text = fix_text(causes(run_cli, log)["DRV150"])
    assert "TdrDelay" in text and "nvidia-smi -i 0 -dm 1" in text


def test_a_gpu_bound_to_vfio_names_the_passthrough_binding(tmp_path: Path) -> None:
    log = log_file(tmp_path, "NVRM: GPU 0000:41:00.0 is already bound to vfio-pci.\n")
    text = fix_text(causes(run_cli, log)["DRV222"])
    assert "vfio-pci.ids=" in text and "nova_core" not in text


def test_nvml_blocked_in_a_container_on_wsl_names_no_cgroups(tmp_path: Path) -> None:
    # microsoft/WSL#9962
    log = log_file(
        tmp_path,
        "- [X] WSL 2\n"
        "nvidia-smi works well in wsl2, but it doesn't work properly in the docker container "
        'started in wsl2, with error "Failed to initialize NVML: GPU access blocked by the '
        'operating system".\n',
    )
    text = fix_text(causes(run_cli, log)["DRV151"])
    assert "no-cgroups=false" in text and "-dm 0" in text


def test_nvml_blocked_under_wsl_names_wddm_first(tmp_path: Path) -> None:
    log = log_file(
        tmp_path,
        "Linux version 5.15.90.1-microsoft-standard-WSL2\n"
        "Failed to initialize NVML: GPU access blocked by the operating system\n",
    )
    text = fix_text(causes(run_cli, log)["DRV151"])
    assert text.index("-dm 0") < text.index("nvidia-utils")
    assert "no-cgroups" not in text


def test_a_cpu_torch_on_a_jetson_names_nvidias_jetson_build(tmp_path: Path) -> None:
    # Lmy0217/PyTorch-aarch64#3: a CPU-only aarch64 wheel on a Jetson Nano (L4T 32.4.3)
    log = log_file(
        tmp_path,
        "Package: nvidia-jetpack\nAssertionError: Torch not compiled with CUDA enabled\n",
    )
    found = causes(run_cli, log)
    assert found["TOR110"]["verdict"] == "confirmed"
    text = fix_text(found["TOR110"])
    assert "JetPack release" in text and "download.pytorch.org" not in text


def test_lspci_showing_nouveau_on_the_gpu_names_the_blacklist(tmp_path: Path) -> None:
    log = log_file(
        tmp_path,
        "01:00.0 VGA compatible controller: NVIDIA Corporation GA102 [GeForce RTX 3090]\n"
        "\tKernel driver in use: nouveau\n"
        "\tKernel modules: nvidiafb, nouveau, nvidia_drm, nvidia\n",
    )
    found = causes(run_cli, log)
    assert found["DRV222"]["verdict"] == "confirmed"
    assert "modprobe.blacklist=nouveau" in fix_text(found["DRV222"])


def test_hip_invalid_device_function_names_the_gfx_override(tmp_path: Path) -> None:
    # ROCm/rocALUTION#197 (gfx1031: HSA_OVERRIDE_GFX_VERSION=10.3.0)
    log = log_file(
        tmp_path,
        "  Name:                    gfx1031                            \n"
        "HIP error: invalid device function\n",
    )
    found = causes(run_cli, log)
    assert found["TOR101"]["verdict"] == "confirmed"
    assert "export HSA_OVERRIDE_GFX_VERSION=10.3.0" in fix_text(found["TOR101"])


def test_rocblas_missing_tensile_library_for_rdna3_names_11(tmp_path: Path) -> None:
    log = log_file(
        tmp_path,
        "rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary.dat: No such "
        "file or directory for GPU arch : gfx1102\n",
    )
    text = fix_text(causes(run_cli, log)["TOR101"])
    assert "HSA_OVERRIDE_GFX_VERSION=11.0.0" in text
