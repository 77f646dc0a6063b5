"""Build failures seen through another layer (matrices/signatures/build_layers.toml): uv's and
pip's wrappers and pip's isolated build environment name the build (SYS153) with the fix
threads end it with (the environment's torch, build isolation off); nvcc's host-compiler check
for MSVC and clang names SYS131 with the compiler to build with."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from tests.triage.from_log import causes as _causes
from tests.triage.from_log import fix_text as _fix


def _log(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "build.log"
    path.write_text(text + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "package"),
    [
        (
            "  Caused by: This error likely indicates that flash-attn==2.6.1 depends on torch, but "
            "doesn't declare it as a build dependency. If flash-attn==2.6.1 is a first-party "
            "package, consider adding torch to its `build-system.requires`. Otherwise, `uv pip "
            "install torch` into the environment and re-run with `--no-build-isolation`.",
            "flash-attn",
        ),
        (
            "      hint: This error likely indicates that `xformers@0.0.28.post1` depends on "
            "`torch`, but doesn't declare it as a build dependency.",
            "xformers",
        ),
        (
            "      Building cuda extension requires PyTorch (>=1.13.0) being installed, please "
            "install PyTorch first: No module named 'torch'",
            "<the package>",
        ),
        (
            '        File "/tmp/pip-build-env-7l8kq8q8/overlay/lib/python3.9/site-packages/'
            'setuptools/build_meta.py", line 334, in get_requires_for_build_wheel',
            "<the package>",
        ),
    ],
)
def test_isolated_build_names_the_build_and_turns_isolation_off(
    tmp_path: Path, cli: Callable[..., CliResult], text: str, package: str
) -> None:
    sys153 = _causes(cli, _log(tmp_path, text))["SYS153"]
    assert sys153["verdict"] == "confirmed"
    (finding,) = sys153["findings"]
    assert "isolated build environment" in finding["message"]
    assert f"pip install {package} --no-build-isolation" in _fix(sys153)


def test_isolated_build_names_the_installed_torch(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text('[packages]\ntorch = "2.1.0+cu118"\n', encoding="utf-8")
    log = _log(
        tmp_path,
        "      Building cuda extension requires PyTorch (>=1.13.0) being installed, please "
        "install PyTorch first: No module named 'torch'",
    )
    sys153 = _causes(cli, log, "--spec", str(spec))["SYS153"]
    (finding,) = sys153["findings"]
    assert "torch 2.1.0+cu118 is installed here" in finding["message"]


def test_a_missing_wheel_package_installs_the_build_tools(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    text = (
        "      hint: This error likely indicates that `mypackage @ file:///D:/test/myrepo/mypackage`"
        " depends on `wheel`, but doesn't declare it as a build dependency."
    )
    sys153 = _causes(cli, _log(tmp_path, text))["SYS153"]
    assert "pip install wheel setuptools" in _fix(sys153)
    assert "pip install mypackage --no-build-isolation" in _fix(sys153)


@pytest.mark.parametrize(
    "text",
    [
        "error: The build backend returned an error",
        "  Caused by: Call to `setuptools.build_meta:__legacy__.build_wheel` failed (exit code: 1)",
        "error: metadata-generation-failed",
        "× Encountered error while trying to install package.",
    ],
)
def test_installer_summaries_name_the_failed_build(
    tmp_path: Path, cli: Callable[..., CliResult], text: str
) -> None:
    sys153 = _causes(cli, _log(tmp_path, text))["SYS153"]
    assert sys153["verdict"] == "confirmed"
    assert "--no-build-isolation" in _fix(sys153)


def test_msvc_outside_nvccs_range(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    text = (
        "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.2\\include\\crt/host_config.h"
        "(157): fatal error C1189: #error:  -- unsupported Microsoft Visual Studio version! Only "
        "the versions between 2017 and 2022 (inclusive) are supported! The nvcc flag "
        "'-allow-unsupported-compiler' can be used to override this version check"
    )
    sys131 = _causes(cli, _log(tmp_path, text))["SYS131"]
    assert sys131["verdict"] == "confirmed"
    (finding,) = sys131["findings"]
    assert "Visual Studio 2017 to 2022" in finding["message"]
    assert "Visual Studio 2019" in _fix(sys131)
    assert "-allow-unsupported-compiler" in _fix(sys131)


def test_clang_outside_nvccs_range(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    text = (
        "/usr/local/cuda/include/crt/host_config.h:151:2: error: -- unsupported clang version! "
        "clang version must be less than 16 and greater than 3.2 ."
    )
    sys131 = _causes(cli, _log(tmp_path, text))["SYS131"]
    (finding,) = sys131["findings"]
    assert "clang 15 or older" in finding["message"]
    assert "CC=clang-15" in _fix(sys131)


def test_nvcc_minor_without_a_torch_build_names_one_of_its_major(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """nvcc 11.2: PyTorch published no cu112 build (nor one of a lower 11.x minor the matrix
    knows), so the torch build offered is one of CUDA 11, which the extension build accepts."""
    text = (
        "RuntimeError:\n    The detected CUDA version (11.2) mismatches the version that was "
        "used to compile\n    PyTorch (10.2). Please make sure to use the same CUDA versions."
    )
    cud110 = _causes(cli, _log(tmp_path, text))["CUD110"]
    fix = _fix(cud110)
    assert "PyTorch has no CUDA 11.2 build" in fix
    assert "--index-url https://download.pytorch.org/whl/cu11" in fix


def test_a_failed_flash_attn_build_names_the_release_with_wheels_for_torch(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """torch 2.4 (old ABI): flash-attn 2.7.4.post1 is the newest release whose wheels for it
    load (the 2.8.x old-ABI wheels ask for C++11 symbols): its setup downloads that wheel."""
    spec = tmp_path / "spec.toml"
    spec.write_text(
        '[python]\nversion = "3.10.12"\n[packages]\ntorch = "2.4.0+cu121"\n', encoding="utf-8"
    )
    log = _log(tmp_path, "  ERROR: Failed building wheel for flash-attn")
    sys153 = _causes(cli, log, "--spec", str(spec))["SYS153"]
    assert "pip install flash-attn==2.7.4.post1 --no-build-isolation" in _fix(sys153)


def test_a_failed_build_of_a_package_with_a_wheel_index_names_the_index(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text('[packages]\ntorch = "2.4.0+cu121"\n', encoding="utf-8")
    log = _log(tmp_path, "  ERROR: Failed building wheel for torch-scatter")
    sys153 = _causes(cli, log, "--spec", str(spec))["SYS153"]
    assert "-f https://data.pyg.org/whl/torch-2.4.0+cu121.html" in _fix(sys153)


def test_no_toolkit_names_nvidias_conda_label_for_torchs_cuda(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text('[packages]\ntorch = "2.1.0+cu121"\n', encoding="utf-8")
    log = _log(
        tmp_path,
        "OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install "
        "root.",
    )
    sys152 = _causes(cli, log, "--spec", str(spec))["SYS152"]
    assert "conda install -c nvidia/label/cuda-12.1.0 cuda-toolkit" in _fix(sys152)


def test_torchs_own_library_missing_a_torch_symbol_is_two_torch_copies(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    text = (
        "ImportError: /home/u/.local/lib/python3.10/site-packages/torch/lib/libtorch_python.so: "
        "undefined symbol: _ZN5torch3jit17parseSchemaOrNameERKSsb"
    )
    tor150 = _causes(cli, _log(tmp_path, text))["TOR150"]
    assert tor150["verdict"] == "confirmed"
    (finding,) = tor150["findings"]
    assert "two torch releases" in finding["message"]
    assert "pip uninstall -y torch" in _fix(tor150)


def test_a_library_torch_could_not_load_leaves_its_pairing_open(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    text = (
        "OSError: Could not load this library: /usr/local/lib/python3.10/dist-packages/"
        "torchaudio/lib/libtorchaudio.so"
    )
    found = _causes(cli, _log(tmp_path, text))
    assert found["TOR104"]["verdict"] == "unknown"
    assert found["TOR150"]["verdict"] == "unknown"


def test_a_jit_extension_missing_from_the_cache_clears_it(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    text = (
        "ImportError: /root/.cache/torch_extensions/py310_cu121/fused_adam/fused_adam.so: cannot "
        "open shared object file: No such file or directory"
    )
    sys153 = _causes(cli, _log(tmp_path, text))["SYS153"]
    assert sys153["verdict"] == "confirmed"
    (finding,) = sys153["findings"]
    assert "fused_adam" in finding["message"]
    assert "rm -rf ~/.cache/torch_extensions" in _fix(sys153)


def test_an_extension_linking_torch_112s_libraries_is_rebuilt(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    text = "ImportError: libtorch_cuda_cu.so: cannot open shared object file: No such file or directory"
    tor150 = _causes(cli, _log(tmp_path, text))["TOR150"]
    assert tor150["verdict"] == "confirmed"
    assert "rm -rf build/" in _fix(tor150)


@pytest.mark.parametrize(
    "text",
    [
        "RuntimeError: No such operator torchvision::nms",
        "RuntimeError: operator torchvision::roi_align does not exist",
    ],
)
def test_a_companion_operator_missing_in_either_wording(
    tmp_path: Path, cli: Callable[..., CliResult], text: str
) -> None:
    tor104 = _causes(cli, _log(tmp_path, text))["TOR104"]
    assert tor104["verdict"] == "confirmed"
    assert "torchvision" in _fix(tor104)


def test_a_failed_vllm_build_names_the_release_that_pins_the_installed_torch(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text('[packages]\ntorch = "2.3.0+cu121"\n', encoding="utf-8")
    log = _log(tmp_path, "  ERROR: Failed building wheel for vllm")
    sys153 = _causes(cli, log, "--spec", str(spec))["SYS153"]
    assert "pip install vllm==0.5.1" in _fix(sys153)


_ISOLATED_TRACEBACK = (
    '    File "/tmp/pip-build-env-fqjbnf17/overlay/lib/python3.12/site-packages/setuptools/'
    'build_meta.py", line 313, in run_setup\n'
    "      exec(code, locals())\n"
    '    File "<string>", line 23, in <module>\n'
    "  ModuleNotFoundError: No module named 'torch'\n"
    "  error: subprocess-exited-with-error\n"
)


def test_a_missing_torch_in_pips_build_environment_is_build_isolation(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """The import-time line of a traceback that ran in pip's isolated build environment names
    the build's isolation, not a torch missing from the environment."""
    py151 = _causes(cli, _log(tmp_path, _ISOLATED_TRACEBACK))["PY151"]
    assert py151["verdict"] == "confirmed"
    (finding,) = py151["findings"]
    assert "isolated build environment" in finding["message"]
    assert "pip install <the package> --no-build-isolation" in _fix(py151)


def test_pips_build_directory_names_the_package_it_was_building(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    text = (
        _ISOLATED_TRACEBACK
        + "  cwd: /tmp/pip-install-j_w5fu6j/xformers_a410e59a64e44f4680a66d17fd87f8a9\n"
        + "  Getting requirements to build wheel ... error"
    )
    py151 = _causes(cli, _log(tmp_path, text))["PY151"]
    (finding,) = py151["findings"]
    assert "building xformers from source" in finding["message"]
    assert "pip install xformers --no-build-isolation" in _fix(py151)


def test_a_compiler_killed_under_make_lowers_makes_jobs(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """make's own error line after the killed compiler: the fix lowers make's -j, not pip's
    MAX_JOBS (no Python package build is named)."""
    text = (
        "g++: fatal error: Killed signal terminated program cc1plus\n"
        "compilation terminated.\n"
        "make: *** [golpe/rules.mk:28: build/config.o] Error 1\n"
        "make: *** Waiting for unfinished jobs...."
    )
    sys160 = _causes(cli, _log(tmp_path, text))["SYS160"]
    (finding,) = sys160["findings"]
    assert "make's parallel compile jobs" in finding["message"]
    assert "make -j2" in _fix(sys160)
    assert "MAX_JOBS=4" not in _fix(sys160)


def test_a_ninja_step_killed_is_the_build_out_of_memory(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """ninja's FAILED: [code=137] names the compiler killed (SYS160); the bare Killed above it
    is worded as the build's jobs, not a training job's DataLoader workers."""
    text = (
        "[build] Killed\n"
        "[build] [27/230] Building CUDA object ggml/src/ggml-cuda/CMakeFiles/ggml-cuda.dir/"
        "template-instances/fattn-mma-f16-instance-ncols1_2-ncols2_4.cu.o\n"
        "[build] FAILED: [code=137] ggml/src/ggml-cuda/CMakeFiles/ggml-cuda.dir/"
        "template-instances/fattn-mma-f16-instance-ncols1_8-ncols2_2.cu.o"
    )
    causes = _causes(cli, _log(tmp_path, text))
    assert causes["SYS160"]["verdict"] == "confirmed"
    assert "cmake --build build -j 2" in _fix(causes["SYS160"])
    sys190 = _fix(causes["SYS190"])
    assert "fewer parallel jobs" in sys190
    assert "DataLoader" not in sys190


def test_torchs_cuda_check_parsing_none_is_a_cpu_only_torch(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    text = (
        '        File "C:\\envs\\dg\\Lib\\site-packages\\torch\\utils\\cpp_extension.py", line '
        "407, in _check_cuda_version\n"
        "          torch_cuda_version = packaging.version.parse(torch.version.cuda)\n"
        "      TypeError: expected string or bytes-like object, got 'NoneType'\n"
        "  ERROR: Failed building wheel for diff-gaussian-rasterization"
    )
    tor110 = _causes(cli, _log(tmp_path, text))["TOR110"]
    assert tor110["verdict"] == "confirmed"
    (finding,) = tor110["findings"]
    assert "torch.version.cuda is None" in finding["message"]
    assert "Install a CUDA build of torch" in _fix(tor110)


def test_a_cmake_older_than_the_project_needs_names_the_release(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    text = (
        "CMake Error at CMakeLists.txt:1 (cmake_minimum_required):\n"
        "  CMake 3.26 or higher is required.  You are running version 3.22.1"
    )
    sys153 = _causes(cli, _log(tmp_path, text))["SYS153"]
    (finding,) = sys153["findings"]
    assert "needs CMake 3.26 or newer" in finding["message"]
    assert 'pip install "cmake>=3.26"' in _fix(sys153)


def test_a_failed_pytorch3d_build_names_its_wheel_folder(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """PyTorch3D's wheels live in one folder per Python, CUDA and exact torch release."""
    spec = tmp_path / "spec.toml"
    spec.write_text('[python]\nversion = "3.10.12"\n[packages]\ntorch = "2.1.0+cu121"\n')
    log = _log(tmp_path, "  ERROR: Failed building wheel for pytorch3d")
    sys153 = _causes(cli, log, "--spec", str(spec))["SYS153"]
    assert (
        "pip install pytorch3d -f https://dl.fbaipublicfiles.com/pytorch3d/packaging/wheels/"
        "py310_cu121_pyt210/download.html" in _fix(sys153)
    )


@pytest.mark.parametrize(
    ("line", "program"),
    [
        # libiberty's xmalloc_failed, named by the program (gcc's cc1plus, the LTO compiler)
        (
            "cc1plus: out of memory allocating 1048576 bytes after a total of 3221225472 bytes",
            "cc1plus",
        ),
        ("lto1: out of memory allocating 65536 bytes after a total of 98304000 bytes", "lto1"),
        # GCC's garbage-collected heap, and BFD's linker
        ("virtual memory exhausted: Cannot allocate memory", "the compiler"),
        ("/usr/bin/ld: final link failed: memory exhausted", "the linker"),
    ],
)
def test_the_toolchain_out_of_memory_in_its_own_words_is_the_builds_jobs(
    tmp_path: Path, cli: Callable[..., CliResult], line: str, program: str
) -> None:
    """An allocation the compiler or linker was refused is the same cause as a compiler the
    kernel killed (SYS160): worded as out of memory, the build tool's jobs lowered."""
    text = f"{line}\nmake[2]: *** [CMakeFiles/kernels.dir/build.make:76: kernels.o] Error 1\n"
    sys160 = _causes(cli, _log(tmp_path, text))["SYS160"]
    assert sys160["verdict"] == "confirmed"
    (finding,) = sys160["findings"]
    assert finding["message"].startswith(f"{program} ran out of memory during the build")
    assert "make -j2" in _fix(sys160)
