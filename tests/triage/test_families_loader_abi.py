"""The loader, ABI, Python-import and build families: one generic signature set each, read by
rules that word the cause and a concrete fix from the line's own facts, for any package.

Lines are in the formats the libraries print them (glibc's elf/dl-load.c, dl-version.c and
dl-lookup.c; CPython's ceval.c and importlib; torch.utils.cpp_extension; nvcc's
host_config.h), with library and package names other than the ones the corpus covers, so the
tests show the families generalize."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from envcheck.rules.node.abi import demangle, owner, provider
from tests.builtin_matrix import builtin_matrix
from tests.conftest import CliResult
from tests.triage.from_log import causes as _causes
from tests.triage.from_log import fix_text as _fix
from tests.triage.from_log import log_file

MATRIX = builtin_matrix()


def _spec(tmp_path: Path, text: str) -> Path:
    spec = tmp_path / "spec.toml"
    spec.write_text(text)
    return spec


# --- tables -----------------------------------------------------------------------------------


def test_soname_lookup_finds_a_file_name_with_more_version_parts_and_python_minors() -> None:
    assert [e.pip for e in MATRIX.soname("libcudnn.so.9.1.0")] == [
        e.pip for e in MATRIX.soname("libcudnn.so.9")
    ]
    assert MATRIX.soname("libcudnn.so.9")
    assert MATRIX.soname("libpython3.11.so.1.0")[0].name == "libpython3.X.so.1.0"
    assert MATRIX.soname("libnot-a-library.so.3") == ()
    # one SONAME shared by CUDA majors: one entry per major
    assert {e.cuda_major for e in MATRIX.soname("libcurand.so.10")} == {11, 12, 13}


def test_libstdcxx_labels_name_the_first_gcc_release() -> None:
    entry = MATRIX.libstdcxx_label("GLIBCXX_3.4.30")
    assert entry is not None and entry.gcc == "12.1.0"
    cxxabi = MATRIX.libstdcxx_label("CXXABI_1.3.13")
    assert cxxabi is not None and cxxabi.gcc_major == 11
    assert MATRIX.libstdcxx_label("GLIBCXX_9.9.9") is None


def test_os_releases_carry_glibc_and_libstdcxx_from_the_distro_table() -> None:
    jammy = MATRIX.os_glibc("ubuntu", "22.04")
    assert jammy is not None and jammy.glibcxx_max == "GLIBCXX_3.4.30"
    rocky = MATRIX.os_glibc("rocky", "9")
    assert rocky is not None and str(rocky.glibc) == "2.34"


def test_import_names_map_to_distributions_and_removals() -> None:
    cv2 = MATRIX.import_name("cv2.dnn")
    assert cv2 is not None and cv2.distribution == "opencv-python"
    six = MATRIX.import_name("torch._six")
    assert six is not None and (six.removed_by, str(six.removed_in)) == ("torch", "2.0")
    assert MATRIX.import_name("torch") is None


# --- ABI mechanism ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("symbol", "expected"),
    [
        ("_ZN3c104cuda9SetDeviceEi", "torch"),
        ("_ZNK3c1010TensorImpl4sizeEl", "torch"),
        ("_ZN2at4_ops5zeros4callEv", "torch"),
        ("cuTensorMapEncodeTiled", "cuda-driver"),
        ("cudaGetDriverEntryPointByVersion", "cuda"),
        ("cublasLtMatmul", "cuda"),
        ("PyUnicode_AsUTF8", "python"),
        ("_ZN6google8protobuf7MessageD2Ev", "other"),
    ],
)
def test_provider_reads_the_library_a_symbol_belongs_to(symbol: str, expected: str) -> None:
    assert provider(symbol) == expected


def test_demangle_shows_the_cxx_name_and_leaves_c_symbols() -> None:
    pytest.importorskip("itanium_demangler")
    assert demangle("_ZN3c104cuda9SetDeviceEi") == "c10::cuda::SetDevice(int)"
    assert demangle("cuTensorMapEncodeTiled") is None
    assert demangle("_ZN2at4_ops15to_dtype_layout4callERKNS_6TensorEN3c108optionalINS5_") is None


def test_owner_is_the_distribution_of_the_top_level_directory() -> None:
    path = "/env/lib/python3.11/site-packages/cv2/cv2.abi3.so"
    assert owner(path, MATRIX) == ("cv2", "opencv-python")
    # a top-level extension file: its distribution from the tables (apex's ops), never made up
    top = "/env/lib/python3.11/site-packages/grouped_gemm_cuda.cpython-311-x86_64-linux-gnu.so"
    assert owner(top, MATRIX) == ("grouped_gemm_cuda", None)
    apex = "/env/lib/python3.11/site-packages/apex_C.cpython-311-x86_64-linux-gnu.so"
    assert owner(apex, MATRIX) == ("apex_C", "apex")
    fused = (
        "/env/lib/python3.11/site-packages/fused_layer_norm_cuda.cpython-311-x86_64-linux-gnu.so"
    )
    assert owner(fused, MATRIX) == ("fused_layer_norm_cuda", "apex")
    # a package directory whose distribution is named otherwise (the wheel's top_level.txt)
    flashinfer = (
        "/env/lib/python3.11/site-packages/flashinfer/_kernels.cpython-311-x86_64-linux-gnu.so"
    )
    assert owner(flashinfer, MATRIX) == ("flashinfer", "flashinfer-python")
    assert owner("/env/lib/python3.11/site-packages/mmcv/_ext.abi3.so", MATRIX) == ("mmcv", "mmcv")
    # a module file named plainly is its own distribution's (ujson's wheel ships ujson.*.so)
    ujson = "/env/lib/python3.11/site-packages/ujson.cpython-311-x86_64-linux-gnu.so"
    assert owner(ujson, MATRIX) == ("ujson", "ujson")
    assert owner("/opt/app/lib/libfoo.so", MATRIX) is None


# --- triage: the families end to end ------------------------------------------------------------


def test_any_missing_cuda_library_names_the_wheel_for_torchs_cuda(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "OSError: libcurand.so.10: cannot open shared object file: No such file or directory",
    )
    spec = _spec(tmp_path, '[packages]\ntorch = "2.5.1+cu124"\n')
    sys150 = _causes(cli, log, "--spec", str(spec))["SYS150"]
    assert sys150["verdict"] == "confirmed"
    text = _fix(sys150)
    assert "pip install nvidia-curand-cu12" in text
    assert "nvidia-curand-cu11" not in text  # torch's CUDA major picks the entry


def test_an_unknown_library_still_gets_commands_to_find_its_package(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "./sim: error while loading shared libraries: libfoo_render.so.7: cannot open shared "
        "object file: No such file or directory",
    )
    sys150 = _causes(cli, log)["SYS150"]
    assert "libfoo_render.so.7" in sys150["findings"][0]["message"]
    assert "apt-file search libfoo_render.so.7" in _fix(sys150)


def test_tensorflow_probe_line_is_a_warning_not_an_error(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic "
        "library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object "
        "file: No such file or directory",
    )
    (finding,) = _causes(cli, log)["SYS150"]["findings"]
    assert finding["severity"] == "warning"


def test_glibcxx_from_the_system_copy_on_a_known_os(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: /lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.32' not found "
        "(required by /home/u/.venv/lib/python3.10/site-packages/pyarrow/libarrow.so.1700)",
    )
    spec = _spec(tmp_path, '[system]\nos = "Ubuntu 22.04"\n')
    sys151 = _causes(cli, log, "--spec", str(spec))["SYS151"]
    message = sys151["findings"][0]["message"]
    assert "the system's copy" in message and "GCC 13.2.0" in message
    assert "ubuntu 22.04's system libstdc++ lacks it" in message
    assert "libstdcxx-ng>=13.2" in _fix(sys151)


def test_undefined_symbol_in_any_package_names_owner_symbol_and_rebuild(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: /opt/venv/lib/python3.11/site-packages/torch_scatter/_scatter_cuda.so: "
        "undefined symbol: _ZNK3c1010TensorImpl36is_contiguous_nondefault_policy_implENS_12"
        "MemoryFormatE",
    )
    spec = _spec(tmp_path, '[packages]\ntorch = "2.4.0"\ntorch-scatter = "2.1.2"\n')
    found = _causes(cli, log, "--spec", str(spec))
    tor150 = found["TOR150"]
    assert tor150["verdict"] == "confirmed"
    message = tor150["findings"][0]["message"]
    assert "package torch-scatter" in message and "torch 2.4.0" in message
    assert "--no-build-isolation --no-cache-dir" in _fix(tor150)
    assert "torch-scatter==2.1.2" in _fix(tor150)


def test_undefined_symbol_in_a_torch_companion_confirms_the_companion_rule(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: /usr/local/lib/python3.10/dist-packages/torchaudio/lib/libtorchaudio.so: "
        "undefined symbol: _ZN5torch3jit17parseSchemaOrNameERKSsb",
    )
    found = _causes(cli, log)
    assert "TOR150" not in found
    tor104 = found["TOR104"]
    assert tor104["verdict"] == "confirmed"
    assert "torchaudio's compiled ops" in tor104["findings"][0]["message"]
    assert "pip install --force-reinstall --no-cache-dir torchaudio" in _fix(tor104)


def test_undefined_symbol_in_a_companion_names_the_release_paired_with_torch(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: /opt/conda/lib/python3.11/site-packages/torchvision/_C.so: undefined "
        "symbol: _ZN3c1017RegisterOperatorsD1Ev",
    )
    spec = _spec(tmp_path, '[packages]\ntorch = "2.4.0"\ntorchvision = "0.15.2"\n')
    tor104 = _causes(cli, log, "--spec", str(spec))["TOR104"]
    assert tor104["verdict"] == "confirmed"
    assert "pip install torchvision==0.19" in _fix(tor104)


def test_undefined_symbol_in_an_extension_built_in_place_says_rebuild(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: /work/detector/ops/_ext.cpython-39-x86_64-linux-gnu.so: undefined "
        "symbol: _ZN2at4_ops5empty4callEN3c108ArrayRefIlEE",
    )
    tor150 = _causes(cli, log)["TOR150"]
    assert tor150["verdict"] == "confirmed"
    assert "built in place" in tor150["findings"][0]["message"]
    assert "pip install --no-build-isolation" in _fix(tor150)


def test_glibcxx_from_a_conda_copy_found_through_bin_dotdot_lib(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: /home/u/miniforge3/envs/sim/bin/../lib/libstdc++.so.6: version "
        "`GLIBCXX_3.4.29' not found (required by /home/u/miniforge3/envs/sim/lib/python3.10/"
        "site-packages/open3d/cpu/pybind.cpython-310-x86_64-linux-gnu.so)",
    )
    sys151 = _causes(cli, log)["SYS151"]
    assert "the conda environment's copy" in sys151["findings"][0]["message"]
    text = _fix(sys151)
    assert "conda install -c conda-forge libstdcxx-ng" in text
    assert "conda install -c conda-forge gcc" in text
    assert (
        "ln -sf /usr/lib/x86_64-linux-gnu/libstdc++.so.6 /home/u/miniforge3/envs/sim/lib/" in text
    )


def test_cannot_import_name_uses_the_requirement_the_node_states(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """A report (pip's freeze or a dump) that knows peft requires transformers>=4.38 turns the
    skew into the concrete pin."""
    log = log_file(
        tmp_path,
        "ImportError: cannot import name 'Cache' from 'transformers' "
        "(/usr/local/lib/python3.10/dist-packages/transformers/__init__.py)",
    )
    from envcheck.ingest.spec import load_spec
    from envcheck.model.report import Distribution, PackagesInfo
    from envcheck.model.section import Section

    spec = _spec(tmp_path, '[packages]\ntransformers = "4.30.2"\n')
    report = load_spec(str(spec))
    packages = PackagesInfo(
        distributions=(
            Distribution(name="transformers", version="4.30.2"),
            Distribution(name="peft", version="0.10.0", requires=("transformers>=4.38",)),
        )
    )
    saved = tmp_path / "node.json"
    import json

    report = report.with_sections(packages=Section.ok(packages, source="test"))
    saved.write_text(json.dumps(report.to_dict()))
    py150 = _causes(cli, log, "--report", str(saved))["PY150"]
    assert "transformers 4.30.2 has no 'Cache'" in py150["findings"][0]["message"]
    assert "pip install 'transformers>=4.38'" in _fix(py150)


def test_build_lines_word_the_gcc_ceiling_and_cuda_home(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "/usr/local/cuda-11.8/include/crt/host_config.h:132:2: error: #error -- unsupported GNU "
        "version! gcc versions later than 11 are not supported! The nvcc flag "
        "'-allow-unsupported-compiler' can be used to override this version check",
        "    raise OSError('CUDA_HOME environment variable is not set. '",
        "OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install "
        "root.",
    )
    spec = _spec(tmp_path, '[packages]\ntorch = "2.3.1+cu118"\n')
    found = _causes(cli, log, "--spec", str(spec))
    assert "apt install gcc-11 g++-11" in _fix(found["SYS131"])
    assert "CUDA_HOME=/usr/local/cuda-11.8" in _fix(found["SYS152"])


def test_package_names_read_each_alternative_and_skip_bundled_copies() -> None:
    from envcheck.matrix.model import package_names

    field = "nvidia-cudnn-cu12 (9.x, torch 2.4-2.10) / nvidia-cudnn-cu13 (torch 2.11+)"
    assert package_names(field) == ["nvidia-cudnn-cu12", "nvidia-cudnn-cu13"]
    assert package_names(field, 13)[0] == "nvidia-cudnn-cu13"
    assert package_names("bundled inside torch wheels (torch/lib/libgomp.so.1)") == []
    # CUD104 reads the wheels of a library from the same table
    assert MATRIX.soname_wheels("libnvJitLink") == ("nvidia-nvjitlink-cu12", "nvidia-nvjitlink")
    # a soname names its CUDA major: only that major's wheel ships it (a kernel's segfault line
    # names the loaded file, libcublasLt.so.12, sometimes with its full version)
    assert MATRIX.soname_wheels("libcublasLt.so.12") == ("nvidia-cublas-cu12",)
    assert MATRIX.soname_wheels("libcublasLt.so.12.1.3.1") == ("nvidia-cublas-cu12",)
    assert MATRIX.soname_wheels("libcublasLt.so.11") == ("nvidia-cublas-cu11",)
    # a major the table does not hold: every major's wheels, as for the bare name
    assert MATRIX.soname_wheels("libcublasLt.so.99") == MATRIX.soname_wheels("libcublasLt")


def test_glibc_line_with_straight_quotes_states_the_floor(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "OSError: /lib64/libc.so.6: version 'GLIBC_2.28' not found (required by "
        "/usr/local/lib/python3.9/site-packages/pyarrow/libarrow.so.1500)",
    )
    sys132 = _causes(cli, log)["SYS132"]
    assert sys132["verdict"] == "confirmed"
    assert "glibc >= 2.28" in _fix(sys132)


def test_driver_library_points_at_the_driver_and_the_container_runtime(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path, "OSError: libcuda.so.1: cannot open shared object file: No such file or directory"
    )
    text = _fix(_causes(cli, log)["SYS150"])
    assert "the NVIDIA driver on the host" in text and "docker run --gpus all" in text
    assert "pip install" not in text


def test_torchs_own_library_is_left_to_the_cuda_library_rules(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "OSError: /home/u/.venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so: "
        "undefined symbol: ncclCommRegister",
    )
    found = _causes(cli, log)
    # the CUDA-library family's own signature names it (torch-lib-lacks-cuda-symbol): another
    # NCCL than torch's wheel is loaded; no extension is blamed
    assert "TOR150" not in found
    assert found["CUD104"]["verdict"] == "confirmed"


def test_missing_cuda_library_pins_the_wheel_to_the_soname_release(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory",
    )
    assert "pip install nvidia-cudnn-cu12==9.*" in _fix(_causes(cli, log)["SYS150"])
    tools = log_file(
        tmp_path,
        "OSError: libnvToolsExt.so.1: cannot open shared object file: No such file or directory",
    )
    assert "==1.*" not in _fix(_causes(cli, tools)["SYS150"])  # nvtx 12.x ships the .so.1


def test_missing_torch_library_says_import_torch_first_or_rebuild(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: libc10.so: cannot open shared object file: No such file or directory",
    )
    text = _fix(_causes(cli, log)["SYS150"])
    assert "import torch before the extension" in text
    assert "--no-build-isolation --no-cache-dir --force-reinstall" in text
    assert "torch.__file__" in text


def test_a_sub_library_finds_its_family_and_an_unversioned_name_its_sonames(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    sub = log_file(
        tmp_path,
        "Could not load library libcudnn_cnn_infer.so.8. Error: libcudnn_cnn_infer.so.8: "
        "cannot open shared object file: No such file or directory",
    )
    # cuDNN 8 opening its own sub-library by name: the cuDNN family's signature (CUD154, in
    # signatures/cuda_libs.toml, before the loader's) names it, with the cuDNN 8 wheel
    found = _causes(cli, sub)["CUD154"]
    assert "libcudnn_cnn_infer.so.8" in found["findings"][0]["message"]
    assert "nvidia-cudnn-cu" in _fix(found)
    dev = log_file(
        tmp_path,
        "OSError: libcudart.so: cannot open shared object file: No such file or directory",
    )
    found = _causes(cli, dev)["SYS150"]
    assert "unversioned development name" in found["findings"][0]["message"]
    assert "nvidia-cuda-runtime-cu12" in _fix(found)
    unknown = log_file(
        tmp_path,
        "ImportError: libfoo_bar.so.1: cannot open shared object file: No such file or directory",
    )
    assert "apt-file search libfoo_bar.so.1" in _fix(_causes(cli, unknown)["SYS150"])


def test_flash_attn_undefined_symbol_prints_the_readme_install_form(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: /home/u/.venv/lib/python3.10/site-packages/flash_attn_2_cuda.cpython-310-"
        "x86_64-linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi",
    )
    assert "pip install flash-attn --no-build-isolation" in _fix(_causes(cli, log)["TOR103"])


def test_a_label_pasted_without_its_quotes_still_names_the_cause(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """Markdown eats the backtick: "version GLIBCXX_3.4.20 not found"."""
    log = log_file(
        tmp_path,
        "ImportError: /usr/lib64/libstdc++.so.6: version GLIBCXX_3.4.21 not found (required by "
        "/srv/mambaforge/envs/seq/lib/python3.9/site-packages/pysam/libchtslib.so)",
    )
    sys151 = _causes(cli, log)["SYS151"]
    assert "GLIBCXX_3.4.21 is needed" in sys151["findings"][0]["message"]
    assert "export LD_LIBRARY_PATH=/srv/mambaforge/envs/seq/lib:$LD_LIBRARY_PATH" in _fix(sys151)
    glibc = log_file(
        tmp_path,
        "ImportError: /lib64/libc.so.6: version GLIBC_2.28' not found (required by "
        "/opt/venv/lib/python3.10/site-packages/tokenizers/tokenizers.so)",
    )
    assert _causes(cli, glibc)["SYS132"]["verdict"] == "confirmed"


def test_macos_and_windows_wordings_of_an_undefined_symbol_name_the_rebuild(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    mac = log_file(
        tmp_path,
        "OSError: dlopen(/Users/a/envs/r/lib/python3.8/site-packages/torch_sparse/_version_cpu"
        ".so, 6): Symbol not found: __ZN3c106detail23torchInternalAssertFailEPKcS2_jS2_S2_",
    )
    tor150 = _causes(cli, mac)["TOR150"]
    assert tor150["verdict"] == "confirmed"
    assert "package torch-sparse" in tor150["findings"][0]["message"]
    assert "torch (libtorch / libc10)" in tor150["findings"][0]["message"]
    windows = log_file(
        tmp_path,
        "ImportError: DLL load failed while importing _C: The specified procedure could not be "
        "found.",
    )
    tor150 = _causes(cli, windows)["TOR150"]
    assert tor150["verdict"] == "confirmed"
    assert "--no-build-isolation --no-cache-dir --force-reinstall" in _fix(tor150)


def test_torchs_own_library_missing_a_cudart_symbol_names_the_mixed_copies(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "OSError: /usr/local/lib/python3.10/dist-packages/torch/lib/libtorch_cuda.so: undefined "
        "symbol: cudaGraphInstantiateWithFlags, version libcudart.so.11.0",
    )
    tor150 = _causes(cli, log)["TOR150"]
    assert tor150["verdict"] == "confirmed"
    assert "libcudart.so.11.0" in tor150["findings"][0]["message"]
    assert "LD_LIBRARY_PATH" in _fix(tor150)


def test_missing_cuda_library_names_the_version_the_nodes_torch_pins(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory",
    )
    spec = _spec(tmp_path, '[packages]\ntorch = "2.5.1"\n')
    assert "pip install nvidia-cudnn-cu12==9.1.0.70" in _fix(
        _causes(cli, log, "--spec", str(spec))["SYS150"]
    )


def test_nvjitlink_symbol_names_the_wheel_release_it_needs(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: /srv/env/lib/python3.11/site-packages/nvidia/cusolver/lib/libcusolver.so.11: "
        "undefined symbol: __nvJitLinkGetErrorLog_12_4, version libnvJitLink.so.12",
    )
    text = _fix(_causes(cli, log)["CUD104"])
    assert "pip install --upgrade nvidia-nvjitlink-cu12 (>= 12.4)" in text
    assert (
        "export LD_LIBRARY_PATH=/srv/env/lib/python3.11/site-packages/nvidia/nvjitlink/lib" in text
    )
