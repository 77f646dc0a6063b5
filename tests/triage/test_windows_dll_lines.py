"""Windows' loader family (signatures/windows.toml, SYS200-SYS205): lines as Windows machines
print them, in several locales and with CRLF line ends; the cause is read from the error number,
CPython's and torch's own strings and the DLL's name, and the fix from what the DLL is."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from tests.triage.from_log import causes as _causes
from tests.triage.from_log import fix_text as _fix


def _log(tmp_path: Path, *lines: str) -> Path:
    """A log written as Windows writes it: UTF-8 with CRLF line ends."""
    path = tmp_path / "job.log"
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode("utf-8"))
    return path


def _confirmed(cli: Callable[..., CliResult], tmp_path: Path, code: str, *lines: str) -> str:
    cause = _causes(cli, _log(tmp_path, *lines))[code]
    assert cause["verdict"] == "confirmed", cause
    return _fix(cause)


TORCH_LIB = "C:\\Users\\a\\miniconda3\\envs\\x\\lib\\site-packages\\torch\\lib"


@pytest.mark.parametrize(
    "text",
    [
        "The specified module could not be found.",
        "找不到指定的模块。",
        "지정된 모듈을 찾을 수 없습니다.",
        "Das angegebene Modul wurde nicht gefunden.",
        "Не найден указанный модуль.",  # a locale the family has no text for: the number decides
    ],
)
def test_torch_dll_not_found_in_any_locale_asks_for_the_vc_runtime(
    tmp_path: Path, cli: Callable[..., CliResult], text: str
) -> None:
    line = f'OSError: [WinError 126] {text} Error loading "{TORCH_LIB}\\caffe2_nvrtc.dll" or one of its dependencies.'
    fix = _confirmed(cli, tmp_path, "SYS200", line)
    assert "vc_redist.x64.exe" in fix
    assert "torch==" in fix  # then torch reinstalled


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("找不到指定的模块。", "SYS200"),
        ("지정된 모듈을 찾을 수 없습니다.", "SYS200"),
        ("Le module spécifié est introuvable.", "SYS200"),
        ("A dynamic link library (DLL) initialization routine failed.", "SYS201"),
        ("动态链接库(DLL)初始化例程失败。", "SYS201"),
        ("%1 is not a valid Win32 application.", "SYS205"),
        ("%1 不是有效的 Win32 应用程序。", "SYS205"),
    ],
)
def test_cpythons_dll_load_failed_is_told_apart_by_the_systems_text(
    tmp_path: Path, cli: Callable[..., CliResult], text: str, code: str
) -> None:
    line = f"ImportError: DLL load failed while importing cv2: {text}"
    found = _causes(cli, _log(tmp_path, line))
    assert found[code]["verdict"] == "confirmed", found[code]
    others = {"SYS200", "SYS201", "SYS205"} - {code}
    # named by the generic line or by the number's own signature: the others never confirmed
    assert all(found.get(o, {"verdict": "ruled_out"})["verdict"] == "ruled_out" for o in others)
    assert "opencv-python" in _fix(found[code]) or code == "SYS201"


def test_torch_c_import_names_torch_from_the_frame_above(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    fix = _confirmed(
        cli,
        tmp_path,
        "SYS200",
        "Traceback (most recent call last):",
        '  File "C:\\Python38\\lib\\site-packages\\torch\\__init__.py", line 190, in <module>',
        "    from torch._C import *",
        "ImportError: DLL load failed while importing _C: 找不到指定的模块。",
    )
    assert "vc_redist.x64.exe" in fix and "reinstall torch" in fix


def test_a_cuda_dll_names_its_wheel_and_folder(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = (
        "FileNotFoundError: Could not find module 'C:\\app\\cublas64_12.dll' (or one of its "
        "dependencies). Try using the full path with constructor syntax."
    )
    fix = _confirmed(cli, tmp_path, "SYS200", line)
    assert "pip install nvidia-cublas-cu12" in fix
    assert "site-packages\\nvidia\\cublas\\bin" in fix


def test_a_cuda_dll_the_table_does_not_know_names_its_cuda_release(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = 'OSError: [WinError 126] 找不到指定的模块。 Error loading "C:\\app\\cudart64_101.dll".'
    fix = _confirmed(cli, tmp_path, "SYS200", line)
    assert "CUDA 10" in fix and "CUDA\\v10.x\\bin" in fix


def test_cudnn_dll_not_found_is_cudnns_path(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    line = (
        f'OSError: [WinError 126] 지정된 모듈을 찾을 수 없습니다. Error loading "{TORCH_LIB}'
        '\\cudnn_cnn_infer64_8.dll" or one of its dependencies.'
    )
    assert "nvidia-cudnn-cu12==8.*" in _confirmed(cli, tmp_path, "CUD154", line)


def test_paging_file_stays_sys183(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    line = (
        "OSError: [WinError 1455] 页面文件太小，无法完成操作。 Error loading "
        f'"{TORCH_LIB}\\cublas64_11.dll" or one of its dependencies.'
    )
    found = _causes(cli, _log(tmp_path, line))
    assert found["SYS183"]["verdict"] == "confirmed"
    assert "SYS200" not in found


def test_init_failed_on_c10(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    line = (
        "OSError: [WinError 1114] 动态链接库(DLL)初始化例程失败。 Error loading "
        '"C:\\Program Files\\Python311\\Lib\\site-packages\\torch\\lib\\c10.dll" or one of its '
        "dependencies."
    )
    fix = _confirmed(cli, tmp_path, "SYS201", line)
    assert fix.startswith("Install the latest Microsoft Visual C++ Redistributable")
    assert "import torch first" in fix


def test_procedure_not_found_reinstalls_the_owner_cleanly(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = (
        "OSError: [WinError 127] 找不到指定的程序。 Error loading "
        '"D:\\venv\\Lib\\site-packages\\torch\\lib\\shm.dll" or one of its dependencies.'
    )
    fix = _confirmed(cli, tmp_path, "SYS204", line)
    assert "pip uninstall torch -y" in fix and "--force-reinstall" in fix


def test_extension_procedure_not_found_stays_tor150(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = "ImportError: DLL load failed while importing _C: The specified procedure could not be found."
    found = _causes(cli, _log(tmp_path, line))
    assert "TOR150" in found and "SYS204" not in found


@pytest.mark.parametrize(
    ("line", "wanted"),
    [
        (
            "Could not locate zlibwapi.dll. Please make sure it is in your library path!",
            "NVIDIA GPU Computing Toolkit\\CUDA\\v11.x\\bin",
        ),
        (
            "Could not load library zlibwapi.dll. Error code 193. Please verify that the library "
            "is built correctly for your processor architecture (32-bit, 64-bit)",
            "Replace the 32-bit zlibwapi.dll with the 64-bit one",
        ),
    ],
)
def test_zlibwapi_for_cudnn8(
    tmp_path: Path, cli: Callable[..., CliResult], line: str, wanted: str
) -> None:
    assert wanted in _confirmed(cli, tmp_path, "SYS202", line)


def test_two_openmp_runtimes(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    fix = _confirmed(
        cli,
        tmp_path,
        "SYS203",
        "OMP: Error #15: Initializing libiomp5md.dll, but found libiomp5md.dll already initialized.",
        "OMP: Hint This means that multiple copies of the OpenMP runtime have been linked into the program.",
    )
    assert "conda install nomkl" in fix
    assert "set KMP_DUPLICATE_LIB_OK=TRUE" in fix
    assert 'where /r "%CONDA_PREFIX%" libiomp5md.dll' in fix


def test_wrong_architecture_checks_the_interpreter(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = "OSError: [WinError 193] %1 은(는) 올바른 Win32 응용 프로그램이 아닙니다"
    fix = _confirmed(cli, tmp_path, "SYS205", line)
    assert "struct.calcsize('P')" in fix


def test_tensorflows_missing_cudart_is_a_warning_naming_the_wheel(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = (
        "W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic "
        "library 'cudart64_110.dll'; dlerror: cudart64_110.dll not found"
    )
    cause = _causes(cli, _log(tmp_path, line))["SYS200"]
    assert cause["verdict"] == "confirmed"
    (finding,) = cause["findings"]
    assert finding["severity"] == "warning"
    assert "pip install nvidia-cuda-runtime-cu11" in _fix(cause)


def test_the_vc_runtime_named_in_the_loaders_dialog(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = "由于找不到 VCRUNTIME140_1.dll，无法继续执行代码。重新安装程序可能会解决此问题。"
    fix = _confirmed(cli, tmp_path, "SYS200", line)
    assert fix.startswith("Install the latest Microsoft Visual C++ Redistributable")


def test_antivirus_blocked_file(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    line = (
        "ERROR: Could not install packages due to an OSError: [WinError 225] Operation did not "
        "complete successfully because the file contains a virus or potentially unwanted software"
    )
    assert "Add-MpPreference -ExclusionPath" in _confirmed(cli, tmp_path, "SYS206", line)


def test_ctranslate2s_missing_cublas_names_the_cuda_release(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    fix = _confirmed(
        cli,
        tmp_path,
        "SYS200",
        "RuntimeError: Library cublas64_11.dll is not found or cannot be loaded",
    )
    assert "pip install nvidia-cublas-cu11" in fix
    assert "CUDA 11 toolkit" in fix


def test_ctranslate2s_missing_cudnn_dll_is_cudnns_path(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = "RuntimeError: Library cudnn_ops64_9.dll is not found or cannot be loaded"
    assert "nvidia-cudnn-cu12==9.*" in _confirmed(cli, tmp_path, "CUD154", line)


def test_a_cuda_dll_of_unknown_release_asks_for_the_toolkit(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = 'OSError: [WinError 126] The specified module could not be found. Error loading "C:\\app\\cusparse64_12.dll".'
    fix = _confirmed(cli, tmp_path, "SYS200", line)
    assert fix.startswith("Install the CUDA toolkit that ships cusparse64_12.dll")
    assert "vc_redist" not in fix
