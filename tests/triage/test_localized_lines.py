"""OS errors on a node whose locale is not English: CPython formats an OSError as
``[Errno N] `` + strerror(N), and glibc's strerror follows LC_MESSAGES, so the text after the
number is the node's language (glibc's zh_CN translations below) while the number is the fact.
The memory, disk and name-resolution lines are read by their numbers (Linux
include/uapi/asm-generic/errno-base.h; getaddrinfo's EAI_NONAME -2 and EAI_AGAIN -3)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from tests.triage.from_log import causes as _causes


@pytest.mark.parametrize(
    ("line", "code"),
    [
        ("OSError: [Errno 12] 无法分配内存", "SYS190"),  # ENOMEM
        ("OSError: [Errno 12] Cannot allocate memory", "SYS190"),
        ("OSError: [Errno 24] 打开的文件过多", "SYS184"),  # EMFILE
        ("OSError: [Errno 28] 设备上没有空间", "SYS101"),  # ENOSPC
        ("OSError: [Errno 28] No space left on device", "SYS101"),
        ("socket.gaierror: [Errno -2] 未知的名称或服务", "NET103"),  # EAI_NONAME
        ("socket.gaierror: [Errno -3] 域名解析暂时失败", "NET103"),  # EAI_AGAIN
    ],
)
def test_an_os_error_is_read_by_its_number_in_any_language(
    tmp_path: Path, cli: Callable[..., CliResult], line: str, code: str
) -> None:
    log = tmp_path / "job.log"
    log.write_text(f"Traceback (most recent call last):\n{line}\n", encoding="utf-8")
    causes = _causes(cli, log)
    assert code in causes, sorted(causes)
    assert causes[code]["verdict"] in ("confirmed", "unchecked"), causes[code]


@pytest.mark.parametrize(
    "line",
    [
        "OSError: [Errno 2] 没有那个文件或目录: 'config.yaml'",  # ENOENT: no memory cause
        "PermissionError: [Errno 13] 权限不够: '/data'",
    ],
)
def test_other_numbers_are_not_read_as_memory(
    tmp_path: Path, cli: Callable[..., CliResult], line: str
) -> None:
    log = tmp_path / "job.log"
    log.write_text(line + "\n", encoding="utf-8")
    result = cli("triage", str(log), "--json", "--no-probe")
    assert result.returncode in (0, 1), result.stderr
    named = {c["code"] for m in result.json()["data"]["matches"] for c in m["causes"]}
    assert not {"SYS190", "SYS184", "SYS101"} & named, sorted(named)


# glibc's strsignal() texts from its po files (bminor/glibc po/<lang>.po, msgids in
# sysdeps/generic/siglist.h): bash's job report and torch's DataLoader print them localized.
@pytest.mark.parametrize(
    ("line", "code"),
    [
        ("train.sh: line 12:  8156 已杀死                  python3 train.py", "SYS190"),  # zh_CN
        ("[1]+  強制終了              python train.py", "SYS190"),  # ja
        ("/var/spool/slurmd/job42/slurm_script: 行 28:  8156 強制結束  python main.py", "SYS190"),
        ("已杀死", "SYS190"),
        ("[>>>>>>>>>> ] 1022/5000, 1.5 task/s, elapsed: 673s, ETA: 2621s已杀死", "SYS190"),
        ("  1%|█▏ | 21/1423 [00:02<02:09, 10.81it/s]已杀死", "SYS190"),
        ("Убито", "SYS190"),  # ru
        (" 31%|███       | 331/1063 [01:06<03:59,  3.06it/s]Getötet", "SYS190"),  # de
        ("RuntimeError: DataLoader worker (pid 4242) is killed by signal: 죽었음. ", "SYS190"),
        ("Terminado (killed)", "SYS190"),  # es
        ("总线错误 (核心已转储)", "SYS101"),  # zh_CN
        ("RuntimeError: DataLoader worker (pid 77) is killed by signal: 总线错误. ", "SYS101"),
        ("run.sh: line 3:  901 Erreur du bus           (core dumped) python train.py", "SYS101"),
        ("浮点异常 (核心已转储)", "CUD102"),  # zh_CN SIGFPE
        ("Gleitkomma-Ausnahme (Speicherabzug geschrieben)", "CUD102"),  # de
    ],
)
def test_a_signal_is_read_in_the_nodes_language(
    tmp_path: Path, cli: Callable[..., CliResult], line: str, code: str
) -> None:
    log = tmp_path / "job.log"
    log.write_text(f"epoch 1 step 10 loss 0.53\n{line}\n", encoding="utf-8")
    causes = _causes(cli, log)
    assert code in causes, sorted(causes)


@pytest.mark.parametrize(
    "line",
    [
        "Morto de cansaço depois do treino",  # a Portuguese sentence, not a shell report
        "INFO 已杀死的进程数: 0",
        "Abortado pelo usuário: nenhuma falha",
    ],
)
def test_prose_with_the_words_is_not_a_signal(
    tmp_path: Path, cli: Callable[..., CliResult], line: str
) -> None:
    log = tmp_path / "job.log"
    log.write_text(line + "\n", encoding="utf-8")
    result = cli("triage", str(log), "--json", "--no-probe")
    assert result.returncode in (0, 1), result.stderr
    named = {c["code"] for m in result.json()["data"]["matches"] for c in m["causes"]}
    assert not {"SYS190", "SYS101", "CUD102"} & named, sorted(named)


@pytest.mark.parametrize(
    "line",
    [
        "ImportError: DLL load failed while importing _C: 找不到指定的程序。",
        "ImportError: DLL load failed while importing onnxruntime_pybind11_state: 找不到 指定的程序。",
    ],
)
def test_a_windows_dll_error_is_read_in_chinese(
    tmp_path: Path, cli: Callable[..., CliResult], line: str
) -> None:
    """CPython's prefix is English; FormatMessage's text (ERROR_PROC_NOT_FOUND, 127) is the
    system's language."""
    log = tmp_path / "job.log"
    log.write_text(f"Traceback (most recent call last):\n{line}\n", encoding="utf-8")
    assert "TOR150" in _causes(cli, log)


def test_a_missing_module_is_not_read_as_a_missing_procedure(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = tmp_path / "job.log"  # ERROR_MOD_NOT_FOUND (126): another cause
    log.write_text(
        "ImportError: DLL load failed while importing _ext: 找不到指定的模块。\n", "utf-8"
    )
    result = cli("triage", str(log), "--json", "--no-probe")
    assert result.returncode in (0, 1), result.stderr
    named = {c["code"] for m in result.json()["data"]["matches"] for c in m["causes"]}
    assert "TOR150" not in named, sorted(named)
