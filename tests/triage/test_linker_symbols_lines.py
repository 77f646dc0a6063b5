"""The ABI and loader families in the forms threads fix them with, derived from the line's own
facts and the tables (matrices/signatures/linker_symbols.toml; envcheck/rules/node/abi.py and
loader.py): a vLLM module other than vllm/_C, a path pasted in backticks or cut short, the torch
a wheel's local tag names, the CUDA wheels of every major a SONAME ships in, torch's CUDA build
as the way to its libraries, the libstdc++.so.6 link a conda environment lacks, musl's loader.
Lines, paths and names other than the corpus cases', so the builders are shown to generalize."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.builtin_matrix import builtin_matrix
from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file, saved_node

MATRIX = builtin_matrix()


def _confirmed(cli: Callable[..., CliResult], log: Path, code: str, *args: str) -> str:
    cause = causes(cli, log, *args)[code]
    assert cause["verdict"] == "confirmed", cause
    return fix_text(cause)


def test_a_vllm_module_other_than_c_confirms_the_torch_pin(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: /srv/venv/lib/python3.9/site-packages/vllm/layernorm_ops.cpython-39-x86_64-"
        "linux-gnu.so: undefined symbol: _ZN3c104cuda20CUDACachingAllocator9allocatorE",
    )
    text = _confirmed(cli, log, "VLM101")
    assert "pip install torch==" in text and "vllm --force-reinstall" in text.replace(
        "--force-reinstall vllm", "vllm --force-reinstall"
    )


def test_a_vllm_module_with_a_cuda_symbol_stays_open(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: /srv/venv/lib/python3.9/site-packages/vllm/cache_ops.cpython-39-x86_64-"
        "linux-gnu.so: undefined symbol: cudaLaunchKernelExC",
    )
    assert causes(cli, log)["VLM101"]["verdict"] != "confirmed"


def test_a_path_in_backticks_is_read_without_them(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "`/opt/env/lib/python3.11/site-packages/pytorch3d/_C.cpython-311-x86_64-linux-gnu.so: "
        "undefined symbol: _ZNK3c1010TensorImpl4sizeEl`",
    )
    cause = causes(cli, log)["TOR150"]
    assert cause["verdict"] == "confirmed", cause
    assert "`" not in cause["findings"][0]["evidence"]["library"]
    assert cause["findings"][0]["evidence"]["distribution"] == "pytorch3d"


def test_an_extension_built_in_place_at_a_relative_or_elided_path_is_rebuilt(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    for path in (
        "myproj/ops/roi/roi_cuda.cpython-38-x86_64-linux-gnu.so",
        "(...)/myproj/csrc/ext/ext.so",
        ".../megatron/fused_kernels/build/fused_mix_prec_layer_norm_cuda.so",
    ):
        log = log_file(
            tmp_path,
            f"ImportError: {path}: undefined symbol: _ZN3c1015SmallVectorBase8grow_podEPvmm",
        )
        text = _confirmed(cli, log, "TOR150")
        folder = path.split(")/")[-1].removeprefix(".../").rsplit("/", 1)[0]
        assert f"rm -rf build/ {folder}/*.so" in text, text
        assert "--no-build-isolation" in text
        # c10::SmallVectorBase::grow_pod(void*, size_t, size_t): torch's wheels export it up to
        # 1.10.2 (matrices/generated/torch_symbols.tsv), the prebuilt copy's way out
        assert "pip install torch==1.10.2" in text


def test_a_package_path_cut_to_the_root_is_read_as_the_package(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "/mmcv/_ext.cpython-39-x86_64-linux-gnu.so: undefined symbol: _ZN2at4_ops3add4callERKNS_6TensorES4_RKN3c106ScalarE",
    )
    text = _confirmed(cli, log, "TOR150")
    assert "download.openmmlab.com/mmcv/dist/" in text
    # the placeholders come with a filled example of the index, as threads spell it
    assert "e.g. TORCH=2.1.0 CUDA=cu121: https://download.openmmlab.com/mmcv/dist/cu121/" in text


def test_the_torch_a_wheels_local_tag_names_is_the_other_way_out(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "OSError: /venv/lib/python3.12/site-packages/torch_spline_conv/_basis_cuda.so: undefined "
        "symbol: _ZNK3c106SymInt22maybe_as_int_slow_pathEv",
    )
    node = saved_node(tmp_path, **{"torch": "2.9.0", "torch-spline-conv": "1.2.2+pt26cu124"})
    text = _confirmed(cli, log, "TOR150", "--report", str(node))
    assert "pip install torch==2.6.*" in text
    assert "local tag names torch 2.6" in text


def test_a_torch_symbol_names_the_torch_change_even_without_a_tag(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: /venv/lib/python3.10/site-packages/spconv/core_cc.cpython-310-x86_64-linux-"
        "gnu.so: undefined symbol: _ZN3c106detail14torchCheckFailEPKcS2_jRKSs",
    )
    text = _confirmed(cli, log, "TOR150")
    # every torch release exports torchCheckFail; the `Ss` spelling is the pre-C++11 ABI's, so
    # the difference is the ABI (PyPI's torch is pre-C++11 up to 2.6), not a release
    assert "_GLIBCXX_USE_CXX11_ABI" in text
    assert "pre-C++11 ABI up to 2.6" in text
    # the ABI reading and the package's own builder both call for the rebuild: printed once
    rebuild = "pip install --no-build-isolation --no-cache-dir --force-reinstall --no-binary spconv"
    assert sum(line.startswith(rebuild) for line in text.splitlines()) == 1, text


def test_a_cudnn_soname_of_unknown_cuda_offers_each_majors_wheel_newest_first(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "OSError: libcudnn.so.8: cannot open shared object file: No such file or directory",
    )
    text = _confirmed(cli, log, "SYS150")
    assert "nvidia-cudnn-cu12==8.* (CUDA 12)" in text and "nvidia-cudnn-cu11==8.* (CUDA 11)" in text
    assert text.index("nvidia-cudnn-cu12==8.*") < text.index("nvidia-cudnn-cu11==8.*")


def test_torchs_cuda_build_is_offered_for_a_library_its_wheels_ship(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: libcublasLt.so.12: cannot open shared object file: No such file or directory",
    )
    text = _confirmed(cli, log, "SYS150")
    assert "pip install --force-reinstall --no-cache-dir torch==" in text
    assert "--index-url https://download.pytorch.org/whl/cu12" in text
    assert "import torch before the package that needs it" in text


def test_torch_failing_to_load_its_own_cuda_library_reinstalls_torch_first(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        '  File "/home/a/.venv/lib/python3.11/site-packages/torch/__init__.py", line 290, in <module>',
        "    from torch._C import *  # noqa: F403",
        "ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory",
    )
    node = saved_node(tmp_path, torch="2.5.1+cu124")
    text = _confirmed(cli, log, "SYS150", "--report", str(node))
    first = text.split("\n", 1)[0]
    command = (
        "pip install --force-reinstall --no-cache-dir torch==2.5.1 --index-url "
        "https://download.pytorch.org/whl/cu124"
    )
    assert command in first
    assert first.index(command) < first.index("nvidia-cudnn")


def test_a_system_libstdcxx_picked_in_a_conda_env_names_the_missing_link(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: /usr/lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.31' not "
        "found (required by /data/miniforge3/envs/rl/lib/python3.11/site-packages/ext/_core.so)",
    )
    text = _confirmed(cli, log, "SYS151")
    entry = MATRIX.libstdcxx_label("GLIBCXX_3.4.31")
    assert entry is not None and entry.libstdcxx_file
    assert (
        f"cd /data/miniforge3/envs/rl/lib && ln -sf {entry.libstdcxx_file} libstdc++.so.6" in text
    )


def test_musl_names_the_alpine_package_or_the_glibc_image(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "Error loading shared library libgomp.so.1: No such file or directory (needed by "
        "/usr/local/lib/python3.12/site-packages/scikit_learn.libs/libx.so)",
    )
    assert "apk add --no-cache so:libgomp.so.1" in _confirmed(cli, log, "SYS150")
    log = log_file(
        tmp_path,
        "Error loading shared library libc.so.6: No such file or directory (needed by "
        "/usr/local/lib/python3.12/site-packages/numpy/core/_multiarray_umath.so)",
    )
    text = _confirmed(cli, log, "SYS150")
    assert "apk add --no-cache gcompat" in text and "python:3.X-slim" in text


def test_an_unknown_soname_names_debians_package_by_its_naming_rule(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "OSError: libswresample.so.4: cannot open shared object file: No such file or directory",
    )
    text = _confirmed(cli, log, "SYS150")
    assert "most likely libswresample4" in text
    assert "sudo apt-get update && sudo apt-get install -y libswresample4" in text


def test_debian_package_spells_versions_dev_links_and_skips_nvidias() -> None:
    from envcheck.rules.node.loader import debian_package

    assert debian_package("libxcb-icccm.so.4") == "libxcb-icccm4"
    assert debian_package("libSDL2-2.0.so.0") == "libsdl2-2.0-0"
    assert debian_package("libbar.so") == "libbar-dev"
    assert debian_package("libcusolverMg.so.11") is None


def test_a_cuda_runtime_of_an_old_release_names_the_importers_build(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: libcudart.so.10.2: cannot open shared object file: No such file or directory",
    )
    text = _confirmed(cli, log, "SYS150")
    first = text.split("\n", 1)[0]
    assert first.startswith("When the node's CUDA is another")
    assert "a build for CUDA 10.2" in first
    assert "<the package importing libcudart.so.10.2>" in text


def test_a_cuda_library_of_another_major_than_torchs_puts_the_importer_first(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: libcublasLt.so.11: cannot open shared object file: No such file or directory",
    )
    node = saved_node(tmp_path, torch="2.4.1+cu124")
    text = _confirmed(cli, log, "SYS150", "--report", str(node))
    summary = text.split("\n", 1)[0]
    assert "torch's CUDA here is 12, the package that loads libcublasLt.so.11 is a build" in summary
    assert summary.index("torch's CUDA here is 12") < summary.index("nvidia-cublas-cu11")


def test_an_nvcc_stub_symbol_names_the_nvcc_of_torchs_cuda(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: /venv/lib/python3.8/site-packages/roi_ops/_C.cpython-38-x86_64-linux-gnu.so"
        ": undefined symbol: __cudaRegisterFatBinaryEnd",
    )
    text = _confirmed(cli, log, "TOR150")
    assert "export CUDA_HOME=/usr/local/cuda-<torch.version.cuda>" in text
    assert "pip install roi-ops --no-build-isolation" in text
    built_in_place = log_file(
        tmp_path,
        "ImportError: /work/det/lib/model/roi_align/_ext/roi_align/_roi_align.so: undefined "
        "symbol: __cudaPopCallConfiguration",
    )
    text = _confirmed(cli, built_in_place, "TOR150")
    assert "export CUDA_HOME=/usr/local/cuda-<torch.version.cuda>" in text
    assert "rm -rf build/ /work/det/lib/model/roi_align/_ext/roi_align/*.so" in text


def test_an_egg_install_is_rebuilt_from_its_checkout_and_conda_gets_its_spelling(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: /opt/miniconda3/envs/seg/lib/python3.8/site-packages/spatial_ops-1.2.0+"
        "3f2a1c-py3.8-linux-x86_64.egg/spatial_ops/_ext.cpython-38-x86_64-linux-gnu.so: "
        "undefined symbol: _ZN3c1015SmallVectorBaseIjE8grow_podEPvmm",
    )
    cause = causes(cli, log)["TOR150"]
    assert cause["verdict"] == "confirmed", cause
    assert cause["findings"][0]["evidence"]["distribution"] == "spatial-ops"
    text = fix_text(cause)
    assert text.startswith("spatial-ops was installed from a source checkout by python setup.py")
    assert "rm -rf build/ && python setup.py install" in text
    # SmallVectorBase<unsigned int>::grow_pod: exported by torch 1.11.0 .. 2.3.1
    assert "conda install pytorch=2.3.1 -c pytorch" in text


def test_a_glibc_line_names_the_package_whose_wheel_needs_it(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: /lib64/libc.so.6: version `GLIBC_2.34' not found (required by "
        "/home/u/.venv/lib/python3.11/site-packages/onnxruntime/capi/onnxruntime_pybind11_state"
        ".so)",
    )
    node = saved_node(tmp_path, onnxruntime="1.20.1")
    text = _confirmed(cli, log, "SYS132", "--report", str(node))
    assert 'pip install "onnxruntime<1.20.1"' in text
    assert "pip install --no-binary onnxruntime --force-reinstall" in text
    assert "glibc >= 2.34" in text
    plain = log_file(tmp_path, "./tool: /lib64/libc.so.6: version `GLIBC_2.34' not found")
    assert "pip install <package> --no-binary <package>" in _confirmed(cli, plain, "SYS132")
