"""The loader and ABI families print the fixes threads establish, in the spellings they use,
worked out from the line's own facts and the tables: apt and apt-get, conda with and without
conda-forge's channel, libpython's --enable-shared, the container toolkit for the driver's
libraries, the libstdc++ runtime of the GCC that introduced a label, and for an undefined
symbol the extension's distribution (egg directories too), the Python it was tagged for, the
C++ ABI and the package's own wheel index. Lines and names other than the corpus's, so the
tests show the builders generalize (tests/fix_threads.toml tallies the threads)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from envcheck.rules.node.abi import owner
from tests.builtin_matrix import builtin_matrix
from tests.conftest import CliResult
from tests.triage.from_log import causes as _causes
from tests.triage.from_log import fix_text as _fix
from tests.triage.from_log import log_file

MATRIX = builtin_matrix()


def _confirmed(cli: Callable[..., CliResult], log: Path, code: str, *args: str) -> str:
    cause = _causes(cli, log, *args)[code]
    assert cause["verdict"] == "confirmed", cause
    return _fix(cause)


def test_an_os_library_prints_apt_and_apt_get_and_both_conda_spellings(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "OSError: sndfile library not found",
        "OSError: libsndfile.so.1: cannot open shared object file: No such file or directory",
    )
    text = _confirmed(cli, log, "SYS150")
    entry = MATRIX.soname("libsndfile.so.1")[0]
    apt = (entry.apt or "").split()[0]
    assert f"sudo apt install {apt}" in text and f"apt-get install {apt}" in text
    assert f"sudo apt-get update && sudo apt-get install -y {apt}" in text
    if entry.conda:
        conda = entry.conda.split()[0]
        assert f"conda install -c conda-forge {conda}" in text
        assert f"conda install {conda}" in text


def test_libpython_with_the_old_abi_flag_names_enable_shared_and_the_dev_package(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "python3: error while loading shared libraries: libpython3.7m.so.1.0: cannot open "
        "shared object file: No such file or directory",
    )
    text = _confirmed(cli, log, "SYS150")
    assert "--enable-shared" in text
    assert 'PYTHON_CONFIGURE_OPTS="--enable-shared" pyenv install --force 3.7' in text
    assert "libpython3.7-dev" in text
    assert "get_config_var(" in text and "LIBDIR" in text


def test_the_drivers_library_in_a_container_names_the_toolkit_and_compose_gpus(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "/opt/app/bin/worker: error while loading shared libraries: libnvidia-ml.so.1: cannot "
        "open shared object file: No such file or directory",
    )
    text = _confirmed(cli, log, "SYS150")
    assert "--gpus all" in text
    assert "nvidia-container-toolkit" in text
    assert "capabilities: [gpu]" in text


def test_the_container_hook_failing_names_the_toolkit_reinstall(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "nvidia-container-cli: initialization error: load library failed: libcuda.so.1: cannot "
        "open shared object file: no such file or directory: unknown.",
    )
    text = _confirmed(cli, log, "SYS150")
    assert "sudo apt-get install --reinstall -y nvidia-container-toolkit" in text


def test_sonames_the_table_added_name_their_packages(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    crypt = log_file(
        tmp_path,
        "./tool: error while loading shared libraries: libcrypt.so.1: "
        "cannot open shared object file: No such file or directory",
    )
    assert "sudo dnf install -y libxcrypt-compat" in _confirmed(cli, crypt, "SYS150")
    cudnn7 = tmp_path / "cudnn7.log"
    cudnn7.write_text(
        "ImportError: libcudnn.so.7: cannot open shared object file: No such file or directory\n"
    )
    text = _confirmed(cli, cudnn7, "SYS150")
    assert "conda install cudnn" in text and "libcudnn7" in text
    assert "pip install" not in text  # cuDNN 7 has no wheel


def test_cudnn_sublibraries_name_conda_and_ubuntu_packages_for_their_major(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    eight = log_file(
        tmp_path,
        "Could not load library libcudnn_cnn_infer.so.8. Error: libcudnn_cnn_infer.so.8: "
        "cannot open shared object file: No such file or directory",
    )
    text = _confirmed(cli, eight, "CUD154")
    assert "conda install -c conda-forge cudnn=8" in text
    assert "sudo apt install nvidia-cudnn" in text
    assert "nvidia-cudnn-cu11==8.*" in text
    assert "import os, nvidia.cublas.lib, nvidia.cudnn.lib" in text
    nine = tmp_path / "nine.log"
    nine.write_text(
        "Unable to load any of {libcudnn_graph.so.9.1.0, libcudnn_graph.so.9.1, "
        "libcudnn_graph.so.9, libcudnn_graph.so}\n"
        "Could not load library libcudnn_ops.so.9. Error: libcudnn_ops.so.9: cannot open "
        "shared object file: No such file or directory\n"
    )
    text = _confirmed(cli, nine, "CUD154")
    assert "conda install -c conda-forge cudnn=9" in text
    assert "nvidia-cudnn" not in text.replace("nvidia-cudnn-cu12", "")  # Ubuntu's is cuDNN 8


def test_a_system_libstdcxx_names_the_runtime_of_the_gcc_that_introduced_the_label(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: /usr/lib64/libstdc++.so.6: version `GLIBCXX_3.4.30' not found (required "
        "by /home/u/miniforge3/envs/sim/lib/python3.11/site-packages/open3d/cpu/pybind.so)",
    )
    text = _confirmed(cli, log, "SYS151")
    gcc = MATRIX.libstdcxx_label("GLIBCXX_3.4.30")
    assert gcc is not None
    major = gcc.gcc.split(".")[0]
    assert f"conda install -c conda-forge libstdcxx-ng={major} libgcc-ng={major}" in text
    assert "export LD_LIBRARY_PATH=/home/u/miniforge3/envs/sim/lib:$LD_LIBRARY_PATH" in text
    assert "sudo apt-get install libstdc++6" in text


def test_an_egg_directory_names_its_distribution() -> None:
    path = (
        "/opt/conda/lib/python3.8/site-packages/pointnet2_ops-3.0.0-py3.8-linux-x86_64.egg/"
        "pointnet2_ops/_ext.cpython-38-x86_64-linux-gnu.so"
    )
    assert owner(path, MATRIX) == ("pointnet2_ops", "pointnet2-ops")


def test_a_python_symbol_reinstalls_with_this_interpreter_and_names_the_files_python(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: /srv/venv/lib/python3.13/site-packages/ujson.cpython-312-x86_64-linux-gnu"
        ".so: undefined symbol: _PyThreadState_UncheckedGet",
    )
    cause = _causes(cli, log)["TOR150"]
    assert cause["verdict"] == "confirmed"
    (finding,) = cause["findings"]
    assert "tagged for Python 3.12" in finding["message"]
    text = _fix(cause)
    assert "python -m pip install --upgrade --force-reinstall --no-cache-dir ujson" in text
    assert "python -m pip uninstall -y ujson" in text


def test_an_old_abi_string_symbol_names_torchs_cxx11_abi_flag(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: /env/lib/python3.11/site-packages/natten/libnatten.cpython-311-x86_64-"
        "linux-gnu.so: undefined symbol: _ZN3c1015SmallVectorBase4growEPvmSs",
    )
    cause = _causes(cli, log)["TOR150"]
    (finding,) = cause["findings"]
    assert "pre-C++11 std::string" in finding["message"]
    assert "torch._C._GLIBCXX_USE_CXX11_ABI" in _fix(cause)


def test_a_pyg_extension_names_pygs_wheel_index_for_the_nodes_torch(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "OSError: /env/lib/python3.10/site-packages/torch_sparse/_convert_cuda.so: undefined "
        "symbol: _ZN3c106detail19maybe_wrap_dim_slowIlEET_S2_S2_b",
    )
    spec = tmp_path / "spec.toml"
    spec.write_text('[packages]\ntorch = "2.4.0+cu121"\n')
    text = _confirmed(cli, log, "TOR150", "--spec", str(spec))
    assert "pip install torch-sparse -f https://data.pyg.org/whl/torch-2.4.0+cu121.html" in text
    # without the node's torch the README's placeholders stay
    bare = _confirmed(cli, log, "TOR150")
    assert "https://data.pyg.org/whl/torch-${TORCH}+${CUDA}.html" in bare


def test_macos_symbol_not_found_with_dyld_hex_mode_names_the_extension(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: dlopen(/Users/u/venv/lib/python3.11/site-packages/torch_cluster/_grid_cpu"
        ".so, 0x0002): Symbol not found: __ZN2at4_ops6select4callERKNS_6TensorExx",
    )
    cause = _causes(cli, log)["TOR150"]
    assert cause["verdict"] == "confirmed"
    assert "pip install torch-cluster -f https://data.pyg.org/whl/" in _fix(cause)


def test_torchs_own_library_missing_a_python_symbol_reinstalls_torch_for_this_python(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: /srv/py/lib/python3.8/site-packages/torch/lib/libtorch_python.so: "
        "undefined symbol: PyCode_NewWithPosOnlyArgs",
    )
    spec = tmp_path / "spec.toml"
    spec.write_text('[packages]\ntorch = "1.13.1"\n')
    text = _confirmed(cli, log, "TOR150", "--spec", str(spec))
    # the installed release, rebuilt for this Python: no --upgrade to another torch
    assert "python -m pip install --force-reinstall --no-cache-dir torch==1.13.1" in text
    assert "--upgrade" not in text


def test_a_bare_extension_file_name_names_its_module_and_the_rebuild(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: knn_cuda_ext.cpython-39-x86_64-linux-gnu.so: undefined symbol: "
        "_ZN3c104cuda20CUDACachingAllocator9allocatorE",
    )
    cause = _causes(cli, log)["TOR150"]
    assert cause["verdict"] == "confirmed"
    (finding,) = cause["findings"]
    assert "module knn_cuda_ext" in finding["message"]
    text = _fix(cause)
    # a compiled part's module name is not a distribution's: no command installs a made-up
    # `knn-cuda-ext`; the environment's RECORD says which distribution installed it
    assert "knn-cuda-ext" not in text
    assert "packages_distributions" in text and "'knn_cuda_ext'" in text
    assert "--no-build-isolation --no-cache-dir --force-reinstall <the distribution" in text
    assert "rm -rf build/" in text


def test_a_private_submodule_or_a_library_name_alone_stays_open(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    for i, name in enumerate(("_C.cpython-310-x86_64-linux-gnu.so", "libfoo.so")):
        log = tmp_path / f"{i}.log"
        log.write_text(f"ImportError: {name}: undefined symbol: _ZN3c104cuda9SetDeviceEi\n")
        assert _causes(cli, log)["TOR150"]["verdict"] != "confirmed"


def test_torchs_python_binding_symbol_imports_torch_first(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: /opt/venv/lib/python3.9/site-packages/roi_align/_ext.cpython-39-x86_64-"
        "linux-gnu.so: undefined symbol: THPDtypeType",
    )
    text = _confirmed(cli, log, "TOR150")
    assert text.startswith("import torch before importing roi_align")
    assert "# import torch  (before import roi_align)" in text


def test_a_system_libstdcxx_names_gcc_at_the_release_that_introduced_the_label(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "OSError: /lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.31' not found "
        "(required by /home/u/mambaforge/envs/g/lib/python3.11/site-packages/pycolmap.so)",
    )
    entry = MATRIX.libstdcxx_label("GLIBCXX_3.4.31")
    assert entry is not None
    assert f"conda install -c conda-forge gcc={entry.gcc}" in _confirmed(cli, log, "SYS151")


def test_onnxruntimes_and_ctranslate2s_wordings_confirm_the_loader_cause(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    ort = log_file(
        tmp_path,
        "[E:onnxruntime:Default, provider_bridge_ort.cc:1862 TryGetProviderInfo_CUDA] "
        "/onnxruntime_src/onnxruntime/core/session/provider_bridge_ort.cc:1539 "
        "onnxruntime::Provider& onnxruntime::ProviderLibrary::Get() [ONNXRuntimeError] : 1 : "
        "FAIL : Failed to load library libonnxruntime_providers_cuda.so with error: "
        "libcufft.so.11: cannot open shared object file: No such file or directory",
    )
    text = _confirmed(cli, ort, "SYS150")
    assert "pip install nvidia-cufft-cu12==11.*" in text
    # conda's CUDA library packages follow the SONAME's major
    assert "conda install -c conda-forge libcufft=11" in text
    ct2 = tmp_path / "ct2.log"
    ct2.write_text("RuntimeError: Library libcublas.so.12 is not found or cannot be loaded\n")
    assert "pip install nvidia-cublas-cu12==12.*" in _confirmed(cli, ct2, "SYS150")


def test_a_cuda_library_an_extension_loads_names_that_package_s_build(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """bitsandbytes built for CUDA 11 opens libcudart.so.11.0 on a CUDA 12 node: besides the
    CUDA 11 runtime, the way out threads take is the package's build for the node's CUDA."""
    site = "/opt/conda/lib/python3.10/site-packages"
    log = log_file(
        tmp_path,
        "Traceback (most recent call last):",
        '  File "/home/u/run.py", line 2, in <module>',
        "    import bitsandbytes",
        f'  File "{site}/bitsandbytes/__init__.py", line 6, in <module>',
        "    from . import cuda_setup, utils, research",
        f'  File "{site}/bitsandbytes/cextension.py", line 20, in <module>',
        "    lib = ct.cdll.LoadLibrary(binary_path)",
        "OSError: libcudart.so.11.0: cannot open shared object file: No such file or directory",
    )
    text = _confirmed(cli, log, "SYS150")
    assert "pip install --upgrade --force-reinstall --no-cache-dir bitsandbytes" in text
    assert "nvidia-cuda-runtime-cu11==11.*" in text


def test_torch_s_own_frame_or_a_system_library_names_no_package_build(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    site = "/usr/lib/python3/dist-packages"
    torch_frame = log_file(
        tmp_path,
        f'  File "{site}/torch/__init__.py", line 229, in <module>',
        "    _load_global_deps()",
        "OSError: libcublas.so.11: cannot open shared object file: No such file or directory",
    )
    text = _confirmed(cli, torch_frame, "SYS150")
    # no "build of torch for the node's CUDA" upgrade (torch's frame is no extension of its
    # own); reinstalling torch from its CUDA index, which brings the wheel, is the thread's form
    assert "--upgrade --force-reinstall --no-cache-dir torch" not in text
    assert "--index-url https://download.pytorch.org/whl/cu11" in text
    aio = tmp_path / "aio.log"
    aio.write_text(
        f'  File "{site}/deepspeed/ops/op_builder/builder.py", line 8, in <module>\n'
        "ImportError: libaio.so.1: cannot open shared object file: No such file or directory\n"
    )
    assert "--force-reinstall --no-cache-dir deepspeed" not in _confirmed(cli, aio, "SYS150")
