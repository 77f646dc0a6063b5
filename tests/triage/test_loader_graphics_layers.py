"""The loader's and the renderers' lines seen through other layers, and fixes naming the thing
that really changes: a package's own missing library (reinstall the package), a library of the
other ELF class, a broken library file, glibc 2.41's executable-stack refusal, the link-time
symbol-version wording, Anaconda's old `libgcc`, the wheel whose extension needs a newer
libstdc++, mujoco-py's GLEW, pyrender's EGL device list. Lines other than the corpus's."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult
from tests.triage.from_log import causes as _causes
from tests.triage.from_log import fix_text as _fix


def _log(tmp_path: Path, *lines: str) -> Path:
    log = tmp_path / "job.log"
    log.write_text("\n".join(lines) + "\n")
    return log


def _confirmed(cli: Callable[..., CliResult], log: Path, code: str) -> str:
    cause = _causes(cli, log)[code]
    assert cause["verdict"] == "confirmed", cause
    return _fix(cause)


def test_a_packages_own_missing_library_reinstalls_that_package(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _log(
        tmp_path,
        "OSError: /home/u/venv/lib/python3.10/site-packages/somepkg/libsomepkg_cuda121.so: "
        "cannot open shared object file: No such file or directory",
    )
    text = _confirmed(cli, log, "SYS150")
    assert "pip install --force-reinstall --no-cache-dir somepkg" in text
    assert "LD_LIBRARY_PATH" not in text  # the file is absent: no search path finds it


def test_a_missing_dependency_soname_still_gets_the_package_that_ships_it(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _log(
        tmp_path,
        "ImportError: libGL.so.1: cannot open shared object file: No such file or directory",
    )
    text = _confirmed(cli, log, "SYS133")
    assert "libgl1" in text and "ffmpeg libsm6 libxext6" in text


def test_the_other_elf_class_takes_its_folder_off_the_path(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _log(tmp_path, "ImportError: /opt/vendor/lib/libfoo.so.3: wrong ELF class: ELFCLASS32")
    text = _confirmed(cli, log, "SYS220")
    assert "/opt/vendor/lib" in text and "64-bit" in text


def test_a_truncated_wheel_library_reinstalls_its_wheel(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _log(
        tmp_path,
        "OSError: /venv/lib/python3.11/site-packages/tokenizers/tokenizers.abi3.so: file too short",
    )
    text = _confirmed(cli, log, "SYS221")
    assert "pip install --force-reinstall --no-cache-dir tokenizers" in text


def test_glibc_241_executable_stack_prints_patchelf_and_the_tunable(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _log(
        tmp_path,
        "ImportError: /venv/lib/python3.12/site-packages/somepkg.libs/libsome-1a2b.so.1: cannot "
        "enable executable stack as shared object requires: Invalid argument",
    )
    text = _confirmed(cli, log, "SYS222")
    assert "patchelf --clear-execstack /venv/lib/python3.12/site-packages/somepkg.libs" in text
    assert "GLIBC_TUNABLES=glibc.rtld.execstack=2" in text
    assert "pip install --upgrade somepkg" in text


def test_link_time_symbol_version_wording_is_the_libstdcxx_cause(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _log(
        tmp_path,
        "./trainer: relocation error: ./trainer: symbol _ZSt28__throw_bad_array_new_lengthv "
        "version GLIBCXX_3.4.29 not defined in file libstdc++.so.6 with link time reference",
    )
    text = _confirmed(cli, log, "SYS151")
    assert "libstdcxx-ng" in text


def test_an_anaconda_copy_prints_the_old_libgcc_swap_and_the_needing_wheel(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _log(
        tmp_path,
        "ImportError: /home/u/miniconda3/envs/x/lib/libstdc++.so.6: version `GLIBCXX_3.4.26' not "
        "found (required by /home/u/miniconda3/envs/x/lib/python3.9/site-packages/pyarrow/"
        "lib.cpython-39-x86_64-linux-gnu.so)",
    )
    text = _confirmed(cli, log, "SYS151")
    assert "conda remove libgcc; conda install libgcc-ng" in text
    assert "conda install -c conda-forge pyarrow" in text


def test_glew_without_gl_version_preloads_libglew(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _log(tmp_path, "ERROR: GLEW initialization error: Missing GL version")
    text = _confirmed(cli, log, "SIM170")
    assert "export LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libGLEW.so" in text
    assert "libglew-dev" in text


def test_pyrender_egl_without_devices_renders_in_software(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _log(
        tmp_path,
        '  File "/venv/lib/python3.9/site-packages/pyrender/platforms/egl.py", line 84, in '
        "get_device_by_index",
        "ValueError: Invalid device ID (1)",
    )
    text = _confirmed(cli, log, "SIM120")
    assert "PYOPENGL_PLATFORM=osmesa" in text


def test_a_gpu_runtimes_old_cuda_build_is_upgraded_not_fed_old_libraries(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _log(
        tmp_path,
        "[E:onnxruntime:Default, provider_bridge_ort.cc:1209] FAIL : Failed to load library "
        "libonnxruntime_providers_cuda.so with error: libcufft.so.10: cannot open shared object "
        "file: No such file or directory",
    )
    text = _confirmed(cli, log, "SYS150")
    assert "pip install --upgrade onnxruntime-gpu" in text
    assert "import torch before onnxruntime" in text


def test_pyopengls_short_library_names_map_to_their_packages(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _log(
        tmp_path,
        "OpenGL.error.NullFunctionError: Attempt to call an undefined function glutInit, check "
        "for bool(glutInit) before calling",
    )
    text = _confirmed(cli, log, "SYS150")
    assert "freeglut3-dev" in text
    log = _log(
        tmp_path,
        "ImportError: ('Unable to load OpenGL library', 'OSMesa: cannot open shared object file: "
        "No such file or directory', 'OSMesa', None)",
    )
    assert "libosmesa6" in _confirmed(cli, log, "SYS150")


WHEEL_CUDNN = "/home/u/.local/lib/python3.8/site-packages/nvidia/cudnn/lib"


def test_a_listed_cudnn_library_puts_its_directory_first(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """locate's output beside cuDNN 8's own line (faster-whisper#297): the wheel is installed
    where the loader does not look; its directory leads the fix, not another install."""
    log = _log(
        tmp_path,
        "Could not load library libcudnn_ops_infer.so.8. Error: libcudnn_ops_infer.so.8: cannot "
        "open shared object file: No such file or directory",
        "$ locate libcudnn_ops_infer.so.8",
        f"{WHEEL_CUDNN}/libcudnn_ops_infer.so.8",
    )
    fix = _confirmed(cli, log, "CUD154")
    assert fix.startswith(f"libcudnn_ops_infer.so.8 is installed in {WHEEL_CUDNN}")
    assert f"export LD_LIBRARY_PATH={WHEEL_CUDNN}:$LD_LIBRARY_PATH" in fix


def test_a_listed_library_of_another_name_leaves_the_fix_alone(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _log(
        tmp_path,
        "ImportError: libfoo.so.1: cannot open shared object file: No such file or directory",
        "/opt/bar/lib/libbar.so.1",
    )
    assert "/opt/bar/lib" not in _confirmed(cli, log, "SYS150")
    log = _log(
        tmp_path,
        "ImportError: libfoo.so.1: cannot open shared object file: No such file or directory",
        "/opt/foo/lib/libfoo.so.1.2.3",
    )
    assert "export LD_LIBRARY_PATH=/opt/foo/lib:$LD_LIBRARY_PATH" in _confirmed(cli, log, "SYS150")
