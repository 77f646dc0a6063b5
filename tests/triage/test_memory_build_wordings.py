"""Memory and build failures in the words of the layer that prints them, each confirmed from the
line's own facts: NumPy's message without its exception name, container platforms' memory limits,
text-generation-inference's warmup and llama.cpp's KV cache (SYS185 in each engine's own flags),
nvcc's front end failing in the host's own headers (SYS131: the gcc its path names, or the
distribution's glibc), nvcc not found in other shells' words (SYS152), Triton's own search for
libcuda (SYS164)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file

_GCC14_TYPE_TRAITS = (
    "/usr/lib/gcc/x86_64-pc-linux-gnu/14.3.1/include/c++/type_traits(529): error: type name is "
    "not allowed"
)
_GLIBC_MATH = (
    "/usr/include/x86_64-linux-gnu/bits/mathcalls.h(79): error: exception specification is "
    'incompatible with that of previous function "cospi" (declared at line 2601 of '
    "/usr/local/cuda-12.8/bin/../targets/x86_64-linux/include/crt/math_functions.h)"
)


@pytest.mark.parametrize(
    ("line", "code", "words"),
    [
        (
            "Unable to allocate 38.1 GiB for an array with shape (100000, 51200) and data type "
            "float64",
            "SYS190",
            "dtype=np.float32",
        ),
        ("container killed due to memory limit", "SYS190", "raise the container's memory limit"),
        (
            "OutOfMemoryError: Container killed due to memory usage",
            "SYS190",
            "ECS task definition memory",
        ),
        (
            "Memory limit of 512 MiB exceeded with 523 MiB used. Consider increasing the memory "
            "limit, see https://cloud.google.com/run/docs/configuring/memory-limits",
            "SYS190",
            "gcloud run deploy --memory",
        ),
        (
            "RuntimeError: Not enough memory to handle 4096 prefill tokens. You need to decrease "
            "`--max-batch-prefill-tokens`",
            "SYS185",
            "--max-batch-prefill-tokens 2048",
        ),
        (
            "llama_kv_cache_init: failed to allocate buffer for kv cache",
            "SYS185",
            "-c 8192",
        ),
        (
            "llama_init_from_model: failed to initialize the context: failed to allocate buffer "
            "for kv cache",
            "SYS185",
            "num_ctx 8192",
        ),
        (_GCC14_TYPE_TRAITS, "SYS131", "apt install gcc-13 g++-13"),
        (_GLIBC_MATH, "SYS131", "noexcept (true)"),
        (
            '/usr/include/stdio.h(189): error: attribute "__malloc__" does not take arguments',
            "SYS131",
            "devel-ubuntu22.04",
        ),
        ("/bin/sh: line 1: /usr/local/cuda/bin/nvcc: No such file or directory", "SYS152", ""),
        ("FileNotFoundError: [Errno 2] No such file or directory: 'nvcc'", "SYS152", ""),
        ("AssertionError: libcuda.so cannot found!", "SYS164", "TRITON_LIBCUDA_PATH"),
        (
            "RuntimeError: The current installed version of x86_64-conda-linux-gnu-c++ (14.3.0) "
            "is greater than the maximum required version by CUDA 12.8. Please make sure to use "
            "an adequate version of x86_64-conda-linux-gnu-c++ (>=6.0.0, <14.0).",
            "SYS131",
            "gxx_linux-64=13",
        ),
        (
            "RuntimeError: The current installed version of gcc (13.3.0) is greater than the "
            "maximum required version by CUDA 11.7 (11.5.0)",
            "SYS131",
            "apt install gcc-11 g++-11",
        ),
        ("Failed to find nvcc.", "SYS152", "CUDA_HOME"),
        (
            "csrc\\ops.cpp(3): fatal error C1083: Cannot open include file: 'Python.h': No such "
            "file or directory",
            "SYS130",
            "python.org",
        ),
        ("error: Unable to find vcvarsall.bat", "SYS163", "Build Tools"),
        (
            "2023-01-01 12:00:00.000000: I tensorflow/core/common_runtime/bfc_allocator.cc:1101] "
            "Sum Total of in-use chunks: 10.53GiB",
            "SYS182",
            "TF_FORCE_GPU_ALLOW_GROWTH=true",
        ),
        ("MemoryError: std::bad_alloc", "SYS190", "num_workers"),
        ("RuntimeError: std::bad_alloc", "SYS190", "num_workers"),
        ("memory allocation of 34359738368 bytes failed", "SYS190", "num_workers"),
        (
            "[Error] [carb.gym.plugin] Gym cuda error: out of memory: "
            "../../../source/plugins/carb/gym/impl/Gym/GymPhysX.cpp: 1718",
            "SYS230",
            "--num_envs",
        ),
    ],
)
def test_the_line_confirms_its_cause_with_the_layers_own_fix(
    tmp_path: Path, cli: Callable[..., CliResult], line: str, code: str, words: str
) -> None:
    found = causes(cli, log_file(tmp_path, line))[code]
    assert found["verdict"] == "confirmed"
    assert words in fix_text(found)


def test_host_header_fix_reads_the_toolkit_the_log_states(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    # CUDA 12.1's nvcc accepts gcc up to 12 (matrices/cuda/host_compilers.toml): the gcc to
    # build with is that ceiling, not one below the gcc 14 whose headers failed
    log = log_file(tmp_path, "Cuda compilation tools, release 12.1, V12.1.105", _GCC14_TYPE_TRAITS)
    found = causes(cli, log)["SYS131"]
    assert found["verdict"] == "confirmed"
    text = fix_text(found)
    assert "apt install gcc-12 g++-12" in text
    assert "CUDA 12.8 or newer" in text  # the first release that accepts gcc 14


def test_the_glibc_clash_names_the_toolkit_its_path_states(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    found = causes(cli, log_file(tmp_path, _GLIBC_MATH))["SYS131"]
    assert "CUDA 12.8's math_functions.h" in found["findings"][0]["message"]


@pytest.mark.parametrize(
    "line",
    [
        # an error in the extension's own source, in nvcc's and in gcc's format: not the host
        'csrc/flash_api.cu(12): error: identifier "x" is undefined',
        "/usr/local/include/opencv4/opencv2/core.hpp(10): error: expected a ';'",
        "/usr/include/c++/11/bits/stl_vector.h:1045:9: note: candidate expects 1 argument",
        # llama.cpp's context info and a healthy KV cache line
        "llama_kv_cache_init:      CUDA0 KV buffer size =   256.00 MiB",
        # a container's normal stop
        "Essential container in task exited",
    ],
)
def test_lines_that_do_not_state_the_failure_match_none_of_these(
    tmp_path: Path, cli: Callable[..., CliResult], line: str
) -> None:
    result = cli("triage", str(log_file(tmp_path, line)), "--json", "--no-probe")
    ids = {m["id"] for m in result.json()["data"]["matches"]}
    assert not ids & {
        "nvcc-host-header-rejected",
        "llama-kv-cache-allocation-failed",
        "container-platform-memory-limit",
    }


def test_llama_mlock_warning_is_no_memory_failure(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    # the locked-memory limit (ulimit -l) refuses --mlock on healthy nodes: ENOMEM in its words,
    # but no memory ran out, so it confirms nothing
    line = (
        "warning: failed to mlock 4368302080-byte buffer (after previously locking 0 bytes): "
        "Cannot allocate memory"
    )
    result = cli("triage", str(log_file(tmp_path, line)), "--json", "--no-probe")
    (match,) = result.json()["data"]["matches"]
    assert match["id"] == "llama-mlock-warning" and match["noise"]
    assert not match["causes"]


def test_isaac_gyms_illegal_access_leaves_its_memory_causes_open(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = (
        "[Error] [carb.gym.plugin] Gym cuda error: an illegal memory access was encountered: "
        "../../../source/plugins/carb/gym/impl/Gym/GymPhysX.cpp: 6211"
    )
    result = cli("triage", str(log_file(tmp_path, line)), "--json", "--no-probe")
    (match,) = result.json()["data"]["matches"]
    assert match["id"] == "isaac-gym-cuda-error"  # not swallowed by Kit's log-prefix noise
    assert {c["code"]: c["verdict"] for c in match["causes"]} == {
        "SYS231": "unchecked",
        "SYS230": "unchecked",
    }


def test_findcuda_status_line_leaves_the_toolkit_open(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    # FindCUDA's line is a status line where CUDA is optional (a CPU build goes on): open only
    line = "-- Could NOT find CUDA (missing: CUDA_TOOLKIT_ROOT_DIR CUDA_NVCC_EXECUTABLE)"
    result = cli("triage", str(log_file(tmp_path, line)), "--json", "--no-probe")
    (match,) = result.json()["data"]["matches"]
    assert [(c["code"], c["verdict"]) for c in match["causes"]] == [("SYS152", "unchecked")]


def test_a_build_log_that_states_no_compiler_leaves_the_compiler_cause_open(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """A failed extension build whose log names no g++ version cannot clear the host compiler
    (SYS131): it stays open, with its fix as a condition, beside the build failure."""
    found = causes(
        cli,
        log_file(
            tmp_path,
            "error: command '/usr/bin/g++' failed with exit code 1\n"
            "RuntimeError: Error building extension 'fused_adam'\n",
        ),
    )
    assert found["SYS153"]["verdict"] == "confirmed"
    assert found["SYS131"]["verdict"] not in ("ruled_out", "confirmed"), found["SYS131"]
