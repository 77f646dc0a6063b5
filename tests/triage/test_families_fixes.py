"""The fixes the python, ABI and loader families print (issue 22): the concrete command threads
establish, derived from the line's own facts (the importer a traceback names, NumPy's own
removal message, the C library a Python was built without, the package a soname ships in, the
GCC release a libstdc++ label needs, vLLM's torch pin), for packages and libraries other than
the corpus cases'."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from packaging.version import Version

from envcheck.rules.node.import_releases import short
from envcheck.triage.run import read_before
from tests.builtin_matrix import builtin_matrix
from tests.conftest import CliResult
from tests.triage.from_log import causes as _causes
from tests.triage.from_log import fix_text as _fix
from tests.triage.from_log import log_file, saved_node

MATRIX = builtin_matrix()


# --- the importer a traceback names (signature context_before) --------------------------------


def test_read_before_returns_the_lines_above_each_wanted_line(tmp_path: Path) -> None:
    log = log_file(tmp_path, *(f"line {n}" for n in range(1, 11)))
    got = read_before(str(log), {4: 2, 9: 3, 1: 5})
    assert got[4] == [(2, "line 2"), (3, "line 3")]
    assert got[9] == [(6, "line 6"), (7, "line 7"), (8, "line 8")]
    assert got[1] == []


def test_cannot_import_name_names_the_importer_from_the_innermost_frame(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """accelerate's frame is the innermost above the line (diffusers' is further up): the fix
    upgrades accelerate or moves huggingface_hub, not diffusers."""
    log = log_file(
        tmp_path,
        "Traceback (most recent call last):",
        '  File "/srv/job/run.py", line 2, in <module>',
        "    import diffusers",
        '  File "/opt/venv/lib/python3.11/site-packages/diffusers/__init__.py", line 5, in <module>',
        "    from accelerate import init_empty_weights",
        '  File "/opt/venv/lib/python3.11/site-packages/accelerate/utils/hub.py", line 9, in <module>',
        "    from huggingface_hub import split_torch_state_dict_into_shards",
        "    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        "ImportError: cannot import name 'split_torch_state_dict_into_shards' from "
        "'huggingface_hub' (/opt/venv/lib/python3.11/site-packages/huggingface_hub/__init__.py)",
    )
    py150 = _causes(cli, log)["PY150"]
    assert py150["verdict"] == "confirmed"
    text = _fix(py150)
    # huggingface_hub's own tags say which release added the name (generated/python_names.toml)
    history = MATRIX.python_name("huggingface_hub", "split_torch_state_dict_into_shards")
    assert history is not None
    added = history.added()
    assert added is not None
    assert f'pip install "huggingface_hub>={short(added.first)}"' in text
    assert "accelerate imports it from huggingface-hub" in text
    assert "a release of accelerate made for the installed huggingface-hub" in text
    assert "diffusers" not in text


def test_importer_with_a_known_version_gets_the_release_that_added_the_name(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """transformers 4.41.2 predates EncoderDecoderCache (its wheels: added in 4.43): the
    release to install, with the importer named as the other side."""
    log = log_file(
        tmp_path,
        '  File "/usr/lib/python3/dist-packages/peft/peft_model.py", line 37, in <module>',
        "    from transformers import EncoderDecoderCache",
        "ImportError: cannot import name 'EncoderDecoderCache' from 'transformers' "
        "(/usr/lib/python3/dist-packages/transformers/__init__.py)",
    )
    saved = saved_node(tmp_path, transformers="4.41.2", peft="0.14.0")
    text = _fix(_causes(cli, log, "--report", str(saved))["PY150"])
    history = MATRIX.python_name("transformers", "EncoderDecoderCache")
    assert history is not None
    added = history.next_added(Version("4.41.2"))
    assert added is not None
    assert f'pip install "transformers>={short(added.first)}"' in text
    assert "peft 0.14.0 imports it from transformers" in text


def test_a_frame_of_the_imported_package_itself_names_no_importer(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        '  File "/opt/venv/lib/python3.10/site-packages/transformers/__init__.py", line 26',
        "ImportError: cannot import name 'Cache' from 'transformers' "
        "(/opt/venv/lib/python3.10/site-packages/transformers/__init__.py)",
    )
    text = _fix(_causes(cli, log)["PY150"])
    assert "pip install -U transformers" in text
    assert "imports 'Cache' from" not in text


# --- NumPy 2's own line, bare Python 2 lines ------------------------------------------------


def test_numpy2_removed_alias_pins_numpy_below_2(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "AttributeError: `np.unicode_` was removed in the NumPy 2.0 release. Use `np.str_` "
        "instead.",
    )
    saved = saved_node(tmp_path, numpy="2.1.3")
    py150 = _causes(cli, log, "--report", str(saved))["PY150"]
    assert (
        "NumPy 2.0 removed np.unicode_; numpy 2.1.3 does not have it"
        in (py150["findings"][0]["message"])
    )
    assert 'pip install "numpy<2"' in _fix(py150)


@pytest.mark.parametrize(
    ("line", "code", "fragment"),
    [
        ("ImportError: No module named yaml", "PY151", "pip install pyyaml"),
        ("ImportError: cannot import name Mapping", "PY150", "pip check"),
    ],
)
def test_python2_bare_lines_are_read_like_the_quoted_ones(
    tmp_path: Path, cli: Callable[..., CliResult], line: str, code: str, fragment: str
) -> None:
    cause = _causes(cli, log_file(tmp_path, line))[code]
    assert cause["verdict"] == "confirmed"
    assert fragment in _fix(cause)


# --- standard-library C modules a Python was built without ---------------------------------


@pytest.mark.parametrize(
    ("module", "apt", "dnf"),
    [("_ctypes", "libffi-dev", "libffi-devel"), ("_sqlite3", "libsqlite3-dev", "sqlite-devel")],
)
def test_stdlib_c_module_names_the_dev_package_and_the_rebuild(
    tmp_path: Path, cli: Callable[..., CliResult], module: str, apt: str, dnf: str
) -> None:
    log = log_file(
        tmp_path,
        '  File "/home/u/.pyenv/versions/3.11.9/lib/python3.11/x.py", line 8, in <module>',
        f"ModuleNotFoundError: No module named '{module}'",
    )
    text = _fix(_causes(cli, log)["PY151"])
    assert f"sudo apt-get install {apt}" in text
    assert f"dnf install {dnf}" in text
    assert "pyenv install --force" in text
    assert f"pip install {module.lstrip('_')}" not in text  # never a pip package
    assert f"pip install -{module.lstrip('_')}" not in text


# --- ABI: rebuild spelling, a distribution named in a note, vLLM's torch pin -----------------


def test_rebuild_is_spelled_as_threads_type_it(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: /opt/conda/lib/python3.10/site-packages/torch_cluster/_grid_cuda.so: "
        "undefined symbol: _ZN3c1017RegisterOperatorsD1Ev",
    )
    text = _fix(_causes(cli, log)["TOR150"])
    assert "pip install torch-cluster --no-build-isolation --no-cache-dir" in text
    assert "pip install --no-build-isolation --no-cache-dir --force-reinstall" in text


def test_mmcv_extension_names_mmcv_full_from_the_import_name_note(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: /opt/conda/lib/python3.9/site-packages/mmcv/_ext.cpython-39-x86_64-linux-"
        "gnu.so: undefined symbol: _ZNK2at6Tensor7is_cudaEv",
    )
    text = _fix(_causes(cli, log)["TOR150"])
    assert "mmcv-full" in text and "download.openmmlab.com/mmcv/dist" in text


def test_undefined_symbol_without_a_space_after_the_colon_is_read(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "/usr/lib/python3.8/site-packages/detectron2/_C.cpython-38-x86_64-linux-gnu.so:undefined "
        "symbol: _ZN2at4_ops5zeros4callEN3c108ArrayRefIlEE",
    )
    tor150 = _causes(cli, log)["TOR150"]
    assert tor150["verdict"] == "confirmed"
    assert "detectron2" in _fix(tor150)


def test_vllm_torch_symbol_confirms_the_pin_and_names_the_torch_to_install(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = (
        "ImportError: /usr/local/lib/python3.10/dist-packages/vllm/_C.abi3.so: undefined "
        "symbol: _ZN5torch7LibraryC1ENS0_4KindESsSt8optionalIN3c1011DispatchKeyEEPKcj"
    )
    alone = _causes(cli, log_file(tmp_path, line))["VLM101"]
    assert alone["verdict"] == "confirmed"
    assert "pip install --force-reinstall vllm" in _fix(alone)
    release = next(
        r
        for r in MATRIX.vllm_releases
        if r.torch is not None and str(r.torch).startswith("==") and r.torchvision is not None
    )
    (tmp_path / "v").mkdir()
    saved = saved_node(tmp_path / "v", vllm=str(release.version), torch="2.0.1")
    pinned = _causes(cli, log_file(tmp_path, line), "--report", str(saved))["VLM101"]
    assert pinned["verdict"] == "confirmed"
    assert f"torch{release.torch}" in json.dumps(pinned)


def test_vllm_line_with_a_cuda_symbol_is_left_to_the_node(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: /usr/local/lib/python3.10/dist-packages/vllm/_C.abi3.so: undefined "
        "symbol: cudaGetDriverEntryPointByVersion",
    )
    assert _causes(cli, log)["VLM101"]["verdict"] != "confirmed"


# --- loader: non-CUDA sonames, libGL's other names, libstdc++ fixes --------------------------


@pytest.mark.parametrize(
    ("soname", "apt"),
    [
        ("libglib-2.0.so.0", "libglib2.0-0"),
        ("libsndfile.so.1", "libsndfile1"),
        ("libgfortran.so.5", "libgfortran5"),
        ("libtcmalloc.so.4", "libgoogle-perftools4"),
    ],
)
def test_non_cuda_sonames_name_the_os_package(
    tmp_path: Path, cli: Callable[..., CliResult], soname: str, apt: str
) -> None:
    log = log_file(tmp_path, f"OSError: {soname}: cannot open shared object file: No such file")
    text = _fix(_causes(cli, log)["SYS150"])
    assert f"apt-get install {apt}" in text
    assert f"sudo apt-get install -y {apt}" in text


def test_libgl_fix_names_the_older_package_and_the_headless_wheel(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path, "ImportError: libGL.so.1: cannot open shared object file: No such file"
    )
    text = _fix(_causes(cli, log)["SYS133"])
    assert "sudo apt-get install libgl1" in text
    assert "libgl1-mesa-glx" in text and "opencv-python-headless" in text


def test_conda_libstdcxx_fix_names_the_gcc_release_and_the_system_directory(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: /home/u/miniforge3/envs/a/lib/libstdc++.so.6: version `GLIBCXX_3.4.32' "
        "not found (required by /home/u/miniforge3/envs/a/lib/python3.12/site-packages/x.so)",
    )
    text = _fix(_causes(cli, log)["SYS151"])
    gcc = MATRIX.libstdcxx_label("GLIBCXX_3.4.32")
    assert gcc is not None
    assert f"conda install -c conda-forge gcc={gcc.gcc}" in text
    assert "export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH" in text


def test_system_libstdcxx_fix_offers_conda_forge_gcc(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: /lib64/libstdc++.so.6: version `GLIBCXX_3.4.26' not found (required by "
        "/opt/envs/b/lib/python3.9/site-packages/y.so)",
    )
    assert "conda install -c conda-forge gcc" in _fix(_causes(cli, log)["SYS151"])


# --- more lines: torchvision's own checks, the name users type, packages built against torch --


@pytest.mark.parametrize(
    "line",
    [
        "RuntimeError: Couldn't load custom C++ ops. This can happen if your PyTorch and "
        "torchvision versions are incompatible, or if you had errors while compiling torchvision "
        "from source.",
        "RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA "
        "major versions. PyTorch has CUDA Version=12.1 and torchvision has CUDA Version=11.8. "
        "Please reinstall the torchvision that matches your PyTorch install.",
    ],
)
def test_torchvision_own_checks_confirm_the_pairing(
    tmp_path: Path, cli: Callable[..., CliResult], line: str
) -> None:
    tor104 = _causes(cli, log_file(tmp_path, line))["TOR104"]
    assert tor104["verdict"] == "confirmed"
    assert line[:40] in tor104["findings"][0]["message"]
    assert "torchvision" in _fix(tor104)


def test_fix_spells_the_distribution_as_the_import_name_when_they_match(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: cannot import name 'TypeIs' from 'typing_extensions' "
        "(/usr/lib/python3/dist-packages/typing_extensions.py)",
    )
    text = _fix(_causes(cli, log)["PY150"])
    assert "pip install -U typing_extensions" in text  # as users type it
    assert 'pip install "typing_extensions>=' in text  # the release that added TypeIs


def test_no_module_named_a_torch_extension_package_names_its_build_flag(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(tmp_path, "ModuleNotFoundError: No module named 'mamba_ssm'")
    text = _fix(_causes(cli, log)["PY151"])
    assert "pip install mamba-ssm --no-build-isolation" in text


def test_a_symbol_a_library_release_removed_pins_the_last_release_with_it(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """torch's own library missing MKL's iJIT_NotifyEvent (the `[[removed_symbol]]` table): the
    cause is MKL 2024.1, not torch; the fix pins mkl 2024.0."""
    entry = MATRIX.removed_symbol("iJIT_NotifyEvent")
    assert entry is not None and str(entry.removed_in) == "2024.1"
    assert MATRIX.removed_symbol("not_a_symbol") is None
    log = log_file(
        tmp_path,
        "ImportError: /srv/conda/envs/x/lib/python3.12/site-packages/torch/lib/libtorch_cpu.so: "
        "undefined symbol: iJIT_NotifyEvent",
    )
    saved = saved_node(tmp_path, mkl="2024.2.0")
    tor150 = _causes(cli, log, "--report", str(saved))["TOR150"]
    assert tor150["verdict"] == "confirmed"
    assert "mkl 2024.2.0 is installed" in tor150["findings"][0]["message"]
    text = _fix(tor150)
    assert "conda install mkl==2024.0" in text
    assert "pip install 'mkl<2024.1'" in text


def test_toolkit_library_fix_names_the_toolkit_and_conda_directories_and_nvidias_apt(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(tmp_path, "OSError: libcudnn.so.8: cannot open shared object file: No such file")
    text = _fix(_causes(cli, log)["SYS150"])
    assert "export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH" in text
    assert "export LD_LIBRARY_PATH=$CONDA_PREFIX/lib:$LD_LIBRARY_PATH" in text
    assert "sudo apt-get install -y libcudnn8" in text  # NVIDIA's repository
    # an OS library is not a toolkit one
    other = log_file(tmp_path, "OSError: libsndfile.so.1: cannot open shared object file: No such")
    assert "/usr/local/cuda/lib64" not in _fix(_causes(cli, other)["SYS150"])


def test_the_soname_tables_advice_is_part_of_the_fix(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(tmp_path, "OSError: libcuda.so.1: cannot open shared object file: No such file")
    sys150 = _causes(cli, log)["SYS150"]
    assert "export LD_LIBRARY_PATH=/usr/lib/wsl/lib:$LD_LIBRARY_PATH" in _fix(sys150)
    assert "/usr/lib/wsl/lib" not in sys150["findings"][0]["message"]


def test_a_log_that_says_wsl_gets_the_windows_drivers_libcuda_first(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """Where another line of the log states WSL 2, libcuda.so.1 is the Windows driver's copy in
    /usr/lib/wsl/lib: that step first, before a Linux driver package."""
    log = log_file(
        tmp_path,
        "Linux version 5.15.153.1-microsoft-standard-WSL2 (root@1234) #1 SMP",
        "OSError: libcuda.so.1: cannot open shared object file: No such file or directory",
    )
    (finding,) = _causes(cli, log)["SYS150"]["findings"]
    commands = finding["fix"]["commands"]
    assert commands[0].startswith("# WSL 2: export LD_LIBRARY_PATH=/usr/lib/wsl/lib")
    assert finding["fix"]["summary"].index("/usr/lib/wsl/lib") < finding["fix"]["summary"].index(
        "apt-get install libcuda1"
    )


def test_glibc_fix_names_the_distribution_releases_that_have_the_version(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: /lib64/libc.so.6: version `GLIBC_2.34' not found (required by "
        "/opt/venv/lib/python3.11/site-packages/pkg/_core.so)",
    )
    text = _fix(_causes(cli, log)["SYS132"])
    for os_release in MATRIX.os_releases:
        if os_release.os == "ubuntu" and os_release.version == "22.04":
            assert f"Ubuntu 22.04 has {os_release.glibc}" in text
    assert "RHEL 9 has 2.34" in text
    assert "Ubuntu 20.04" not in text  # 2.31
    assert "--no-binary" in text


def test_numpy_structure_size_line_pins_numpy_1(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ValueError: numpy.ndarray size changed, may indicate binary incompatibility. Expected "
        "16 from C header, got 96 from PyObject",
    )
    pkg104 = _causes(cli, log)["PKG104"]
    assert pkg104["verdict"] == "confirmed"
    text = _fix(pkg104)
    assert 'pip install "numpy<2"' in text and "numpy==1.26.4" in text
