"""The build and arch families on more of their tools' own lines: each line names its cause
(confirmed from the line alone) and the fix carries the concrete command, worded from the
versions the log states (nvcc's banner, torch's CUDA, the floor ptxas names)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from tests.triage.from_log import causes as _causes
from tests.triage.from_log import fix_text as _fix


def _log(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "build.log"
    path.write_text(text + "\n")
    return path


@pytest.mark.parametrize(
    ("text", "message", "fix"),
    [
        (
            "deepspeed.ops.op_builder.builder.MissingCUDAException: CUDA_HOME does not exist, "
            "unable to compile CUDA op(s)",
            "DeepSpeed's op builder found no CUDA toolkit",
            "conda install -c nvidia cuda-toolkit",
        ),
        (
            "FileNotFoundError: [Errno 2] No such file or directory: '/usr/local/cuda/bin/nvcc'",
            "CUDA_HOME points at a directory without nvcc (/usr/local/cuda/bin/nvcc)",
            "export CUDA_HOME=",
        ),
        (
            '  File "/tmp/pip-install-2pd30da5/flash-attn_be67/setup.py", line 89, in '
            "get_cuda_bare_metal_version\n"
            '    raw_output = subprocess.check_output([cuda_dir + "/bin/nvcc", "-V"], '
            "universal_newlines=True)\n"
            "TypeError: unsupported operand type(s) for +: 'NoneType' and 'str'",
            "ran $CUDA_HOME/bin/nvcc -V and found no CUDA toolkit",
            "export CUDA_HOME=",
        ),
        (
            "/bin/sh: 1: nvcc: not found",
            "no nvcc is on PATH",
            "cuda-toolkit",
        ),
    ],
)
def test_no_toolkit_for_the_build_in_each_tools_words(
    tmp_path: Path, cli: Callable[..., CliResult], text: str, message: str, fix: str
) -> None:
    sys152 = _causes(cli, _log(tmp_path, text))["SYS152"]
    assert sys152["verdict"] == "confirmed"
    (finding,) = sys152["findings"]
    assert message in finding["message"]
    assert fix in _fix(sys152)


def test_no_toolkit_names_torchs_cuda_release_when_the_node_states_it(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _log(tmp_path, "AssertionError: CUDA_HOME does not exist, unable to compile CUDA op(s)")
    spec = tmp_path / "node.toml"
    spec.write_text('[packages]\ntorch = "2.4.0+cu121"\n')
    sys152 = _causes(cli, log, "--spec", str(spec))["SYS152"]
    assert sys152["verdict"] == "confirmed"
    assert "conda install -c nvidia cuda-toolkit=12.1" in _fix(sys152)
    assert "CUDA_HOME=/usr/local/cuda-12.1" in _fix(sys152)


def test_apex_mismatch_reads_nvccs_banner_and_torchs_cuda(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _log(
        tmp_path,
        "torch.__version__  = 2.1.0+cu121\n"
        "Compiling cuda extensions with\n"
        "nvcc: NVIDIA (R) Cuda compiler driver\n"
        "Cuda compilation tools, release 12.3, V12.3.52\n"
        "RuntimeError: Cuda extensions are being compiled with a version of Cuda that does not "
        "match the version used to compile Pytorch binaries.  Pytorch binaries were compiled "
        "with Cuda 12.1.",
    )
    cud110 = _causes(cli, log)["CUD110"]
    assert cud110["verdict"] == "confirmed"
    (finding,) = cud110["findings"]
    assert "nvcc is CUDA 12.3, torch was built with CUDA 12.1" in finding["message"]
    fix = _fix(cud110)
    assert "export CUDA_HOME=/usr/local/cuda-12.1" in fix
    # PyTorch publishes no cu123 build: the toolkit is what has to change
    assert "no build for CUDA 12.3" in fix or "toolkit is what has to change" in fix
    assert "--index-url" not in fix


def test_cpp_extension_mismatch_offers_the_torch_build_of_nvccs_cuda(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _log(
        tmp_path,
        "RuntimeError:\n"
        "The detected CUDA version (12.1) mismatches the version that was used to compile\n"
        "PyTorch (11.8). Please make sure to use the same CUDA versions.",
    )
    cud110 = _causes(cli, log)["CUD110"]
    assert cud110["verdict"] == "confirmed"
    fix = _fix(cud110)
    assert "CUDA_HOME=/usr/local/cuda-11.8" in fix
    assert "--index-url https://download.pytorch.org/whl/cu121" in fix


def test_nvcc_without_cxx17_is_a_toolkit_older_than_torchs(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _log(tmp_path, "nvcc fatal   : Value 'c++17' is not defined for option 'std'")
    cud110 = _causes(cli, log)["CUD110"]
    assert cud110["verdict"] == "confirmed"
    (finding,) = cud110["findings"]
    assert "older than CUDA 11.0" in finding["message"]
    assert "export CUDA_HOME=" in _fix(cud110)


def test_torch_headers_name_the_gcc_they_need(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _log(
        tmp_path,
        "/opt/conda/lib/python3.8/site-packages/torch/include/c10/util/C++17.h:16:2: error: "
        "#error \"You're trying to build PyTorch with a too old version of GCC. We need GCC 9 "
        'or later."',
    )
    sys131 = _causes(cli, log)["SYS131"]
    assert sys131["verdict"] == "confirmed"
    (finding,) = sys131["findings"]
    assert "gcc 9 or newer" in finding["message"]
    assert "CC=gcc-11 CXX=g++-11" in _fix(sys131)


@pytest.mark.parametrize(
    ("text", "compiler"),
    [
        (
            "subprocess.CalledProcessError: Command '['which', 'c++']' returned non-zero exit status 1.",
            "c++",
        ),
        (
            "UserWarning: Error checking compiler version for c++: [Errno 2] No such file or "
            "directory: 'c++'",
            "c++",
        ),
    ],
)
def test_cpp_extension_finding_no_compiler(
    tmp_path: Path, cli: Callable[..., CliResult], text: str, compiler: str
) -> None:
    sys163 = _causes(cli, _log(tmp_path, text))["SYS163"]
    assert sys163["verdict"] == "confirmed"
    (finding,) = sys163["findings"]
    assert f"found no {compiler}" in finding["message"]
    assert "build-essential" in _fix(sys163)


def test_clangs_missing_python_h(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    log = _log(
        tmp_path, "/usr/include/python3.10/pyconfig.h:3:12: fatal error: 'Python.h' file not found"
    )
    sys130 = _causes(cli, log)["SYS130"]
    assert sys130["verdict"] == "confirmed"
    assert "python3-dev" in _fix(sys130)


@pytest.mark.parametrize(
    "text",
    [
        "  Building wheel for flash-attn (setup.py) ... error",
        "    Running setup.py install for flash-attn ... error",
    ],
)
def test_pips_spinner_line_names_the_package_to_build_without_isolation(
    tmp_path: Path, cli: Callable[..., CliResult], text: str
) -> None:
    sys153 = _causes(cli, _log(tmp_path, text))["SYS153"]
    assert sys153["verdict"] == "confirmed"
    assert "pip install flash-attn --no-build-isolation" in _fix(sys153)


def test_ptxas_bf16_below_ampere_is_the_gpus_floor(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _log(
        tmp_path,
        "RuntimeError: Internal Triton PTX codegen error:\n"
        "ptxas /tmp/compile-ptx-src-9e79cc, line 59; error   : Feature '.bf16' requires .target "
        "sm_80 or higher\n"
        "ptxas /tmp/compile-ptx-src-9e79cc, line 59; error   : Feature 'cvt with .f32.bf16' "
        "requires .target sm_80 or higher",
    )
    cud151 = _causes(cli, log)["CUD151"]
    assert cud151["verdict"] == "confirmed"
    (finding,) = cud151["findings"]
    assert "compute capability 8.0" in finding["message"]
    assert "float16" in _fix(cud151)


def test_ptxas_floor_other_than_bf16_names_the_stated_arch(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _log(
        tmp_path,
        "ptxas /tmp/tmpx.ptx, line 12; error   : Feature 'cvt.e4m3x2.f32' requires .target "
        "sm_89 or higher",
    )
    cud151 = _causes(cli, log)["CUD151"]
    (finding,) = cud151["findings"]
    assert "compute capability 8.9" in finding["message"]
    assert "TORCH_CUDA_ARCH_LIST" in _fix(cud151)


def test_ptxas_floor_met_by_the_nodes_gpu_is_ruled_out(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _log(
        tmp_path,
        "ptxas /tmp/tmpx.ptx, line 12; error   : Feature '.bf16' requires .target sm_80 or higher",
    )
    spec = tmp_path / "node.toml"
    spec.write_text('[gpu]\nmodels = ["A100"]\n')
    cud151 = _causes(cli, log, "--spec", str(spec))["CUD151"]
    assert cud151["verdict"] == "ruled_out"


def test_a_gpu_older_than_the_torch_build_gets_the_newest_build_that_still_has_it(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    # the arch list torch states starts above the GPU: newer builds dropped it, so the closest
    # build with its kernels is an older one, the newest that has them
    log = _log(
        tmp_path,
        "NVIDIA GeForce GTX 1080 Ti with CUDA capability sm_61 is not compatible with the "
        "current PyTorch installation.\n"
        "The current PyTorch install supports CUDA capabilities sm_75 sm_80 sm_86 sm_90 sm_100 "
        "sm_120.",
    )
    tor101 = _causes(cli, log)["TOR101"]
    assert tor101["verdict"] == "confirmed"
    (finding,) = tor101["findings"]
    fix = finding["fix"]
    assert "newer builds dropped this GPU's architecture" in fix["summary"]
    # then the other CUDA variants with sm_61 kernels, torch with its companions, and the
    # extensions rebuilt for sm_61
    command, *others = fix["commands"]
    assert "other torch builds with sm_61 kernels" in others[0]
    assert any('TORCH_CUDA_ARCH_LIST="6.1"' in o for o in others)
    release = command.split("torch==", 1)[1].split()[0]
    assert tuple(int(p) for p in release.split(".")[:2]) >= (2, 0)


def test_a_gpu_newer_than_the_torch_build_gets_the_oldest_build_that_has_it(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _log(
        tmp_path,
        "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current "
        "PyTorch installation.\n"
        "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 "
        "sm_86 sm_90.",
    )
    tor101 = _causes(cli, log)["TOR101"]
    assert "pip install torch==2.7.0 --index-url https://download.pytorch.org/whl/cu128" in _fix(
        tor101
    )


@pytest.mark.parametrize(
    ("text", "floor", "fix"),
    [
        (
            "ValueError: The quantization method awq is not supported for the current GPU. "
            "Minimum capability: 75. Current capability: 70.",
            "compute capability 7.5",
            "GPTQ or unquantized",
        ),
        (
            "RuntimeError: Current CUDA Device does not support bfloat16. Please switch dtype to "
            "float16.",
            "compute capability 8.0",
            "dtype=torch.float16",
        ),
        (
            "ValueError: bf16 mixed precision requires PyTorch >= 1.10 and a supported device.",
            "compute capability 8.0",
            "--mixed_precision fp16",
        ),
    ],
)
def test_library_floors_stated_by_vllm_torch_and_accelerate(
    tmp_path: Path, cli: Callable[..., CliResult], text: str, floor: str, fix: str
) -> None:
    cud151 = _causes(cli, _log(tmp_path, text))["CUD151"]
    assert cud151["verdict"] == "confirmed"
    (finding,) = cud151["findings"]
    assert floor in finding["message"]
    assert fix in _fix(cud151)


def test_vllms_quantization_floor_met_by_the_gpu_it_names_is_ruled_out(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    # a line whose GPU meets the floor it states is not this cause (a check the line contradicts)
    log = _log(
        tmp_path,
        "ValueError: The quantization method awq is not supported for the current GPU. "
        "Minimum capability: 75. Current capability: 80.",
    )
    assert _causes(cli, log)["CUD151"]["verdict"] == "ruled_out"


@pytest.mark.parametrize(
    ("text", "message", "fix"),
    [
        (
            "      NameError: name 'bare_metal_version' is not defined",
            "setup.py found no nvcc",
            "cuda-toolkit",
        ),
        ("error: invalid command 'bdist_wheel'", "no bdist_wheel command", "pip install wheel"),
        (
            "gcc: error trying to exec 'cc1plus': execvp: No such file or directory",
            "found no cc1plus",
            "gcc-c++",
        ),
        (
            'error: Microsoft Visual C++ 14.0 or greater is required. Get it with "Microsoft C++ '
            'Build Tools": https://visualstudio.microsoft.com/visual-cpp-build-tools/',
            "no MSVC compiler",
            "Microsoft C++ Build Tools",
        ),
    ],
)
def test_more_build_lines_name_their_cause(
    tmp_path: Path, cli: Callable[..., CliResult], text: str, message: str, fix: str
) -> None:
    found = [c for c in _causes(cli, _log(tmp_path, text)).values() if c["verdict"] == "confirmed"]
    (cause,) = found
    (finding,) = cause["findings"]
    assert message in finding["message"]
    assert fix in _fix(cause)


@pytest.mark.parametrize(
    "facts",
    [
        "PyTorch version: 2.0.1+cu117\nGPU models and configuration:\nGPU 0: NVIDIA GeForce RTX 5090",
        "| NVIDIA-SMI 570.86.10              Driver Version: 570.86.10      CUDA Version: 12.8     |\n"
        "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |\n"
        "|   0  NVIDIA GeForce RTX 5090        Off |   00000000:01:00.0  On |                  N/A |\n"
        "      torch.__version__  = 2.5.1+cu124",
    ],
)
def test_no_kernel_image_is_confirmed_from_the_gpu_and_torch_the_log_prints(
    tmp_path: Path, cli: Callable[..., CliResult], facts: str
) -> None:
    log = _log(
        tmp_path,
        facts
        + "\nRuntimeError: CUDA error: no kernel image is available for execution on the device",
    )
    found = _causes(cli, log)
    assert found["TOR101"]["verdict"] == "confirmed"
    assert "--index-url https://download.pytorch.org/whl/cu128" in _fix(found["TOR101"])
    assert found["CUD153"]["verdict"] == "ruled_out"


def test_no_kernel_image_with_a_torch_that_has_the_gpu_is_an_extensions(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _log(
        tmp_path,
        "PyTorch version: 2.7.0+cu128\nGPU 0: NVIDIA GeForce RTX 5090\n"
        "RuntimeError: CUDA error: no kernel image is available for execution on the device",
    )
    found = _causes(cli, log)
    assert found["TOR101"]["verdict"] == "ruled_out"
    assert found["CUD153"]["verdict"] == "confirmed"
    assert 'TORCH_CUDA_ARCH_LIST="12.0"' in _fix(found["CUD153"])
