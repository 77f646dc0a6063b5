"""A process that died of a signal (matrices/signatures/signals.toml): the signal, stated in any
launcher's words, routes the line to its family (rules/signals.py); a native crash's cause is
decided by what the log shows (rules/node/native_crash.py) or left open with its steps."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from envcheck.rules.signals import routes_elsewhere, signal_number
from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file

Cli = Callable[..., CliResult]


@pytest.mark.parametrize(
    ("stated", "number"),
    [
        ({"signal": "11"}, 11),
        ({"exit_status": "139"}, 11),
        ({"exit_status": "134"}, 6),
        ({"signal_name": "SEGV"}, 11),
        ({"signal_name": "SIGABRT"}, 6),
        ({"signal_name": "Segmentation fault"}, 11),
        ({"signal_name": "segmentation fault"}, 11),
        ({"signal_name": "段错误"}, 11),
        ({"exit_status": "1"}, None),
        ({}, None),
    ],
)
def test_the_signal_in_each_form(stated: dict[str, str], number: int | None) -> None:
    assert signal_number(stated) == number


def test_each_signal_routes_to_its_family() -> None:
    line = "process-died-by-signal"
    assert not routes_elsewhere(line, {"signal": "9"}, "SYS190")
    assert routes_elsewhere(line, {"signal": "11"}, "SYS190")
    assert not routes_elsewhere(line, {"exit_status": "135"}, "SYS101")
    assert not routes_elsewhere(line, {"signal": "4"}, "SYS243")
    assert not routes_elsewhere(line, {"signal": "6"}, "SYS250")
    assert not routes_elsewhere(line, {"signal": "11"}, "TOR150")
    assert routes_elsewhere(line, {"signal": "9"}, "SYS250")
    assert not routes_elsewhere("another-signature", {"signal": "11"}, "SYS190")


@pytest.mark.parametrize(
    ("text", "code", "others_out"),
    [
        (
            "[launch.py:325:sigkill_handler] ['/usr/bin/python', '-u', 'train.py'] exits with "
            "return code = -9",
            "SYS190",
            ("SYS250", "SYS101"),
        ),
        (
            "subprocess.CalledProcessError: Command 'x' returned non-zero exit status 135.",
            "SYS101",
            ("SYS190", "SYS250"),
        ),
    ],
)
def test_a_numbered_signal_confirms_its_family_only(
    cli: Cli, tmp_path: Path, text: str, code: str, others_out: tuple[str, ...]
) -> None:
    found = causes(cli, log_file(tmp_path, text))
    assert found[code]["verdict"] == "confirmed"
    for other in others_out:
        if other in found:
            assert found[other]["verdict"] == "ruled_out"


def test_a_sigsegv_number_is_no_oom_kill(cli: Cli, tmp_path: Path) -> None:
    found = causes(cli, log_file(tmp_path, "    exitcode  : -11 (pid: 6421)"))
    assert found["SYS190"]["verdict"] == "ruled_out"
    assert found["SYS250"]["verdict"] == "unknown"  # nothing says where it crashed
    assert "faulthandler" in str(found["SYS250"]["fix"])


def test_the_import_order_decides_a_crash_at_import(cli: Cli, tmp_path: Path) -> None:
    log = log_file(tmp_path, '$ python -c "import chainer;import torch"', "Segmentation fault")
    cause = causes(cli, log)["SYS250"]
    assert cause["verdict"] == "confirmed"
    assert "import torch before chainer" in fix_text(cause)


def test_a_torch_extension_beside_torch_is_tor150(cli: Cli, tmp_path: Path) -> None:
    log = log_file(
        tmp_path,
        'python -c "import torchsort, torch; torchsort.soft_rank(torch.randn(10, 10))"',
        "double free or corruption (!prev)",
        "Aborted (core dumped)",
    )
    found = causes(cli, log)
    assert found["TOR150"]["verdict"] == "confirmed"
    assert "--no-cache-dir" in fix_text(found["TOR150"])


def test_two_openmp_runtimes_are_sys203(cli: Cli, tmp_path: Path) -> None:
    log = log_file(
        tmp_path, "torch==1.10.1", "xgboost==1.5.1", "[1]    27331 segmentation fault  run.py"
    )
    cause = causes(cli, log)["SYS203"]
    assert cause["verdict"] == "confirmed"
    assert "xgboost" in cause["findings"][0]["message"]


def test_the_library_the_kernel_names(cli: Cli, tmp_path: Path) -> None:
    log = log_file(
        tmp_path,
        "python[1234]: segfault at 0 ip 00007f3c9a2b1c4d sp 00007ffd1c2e3f40 error 4 in "
        "libcublasLt.so.12[7f3c98000000+1f000000]",
    )
    cause = causes(cli, log)["SYS250"]
    assert cause["verdict"] == "confirmed"
    assert "libcublasLt.so.12" in cause["findings"][0]["message"]
    assert "nvidia-cublas-cu12" in fix_text(cause)


def test_a_compiled_package_imported_before_the_crash(cli: Cli, tmp_path: Path) -> None:
    log = log_file(
        tmp_path,
        "> import rebound",
        "> import reboundx",
        "> rebx = reboundx.Extras(sim)",
        "Process finished with exit code 139 (interrupted by signal 11: SIGSEGV)",
    )
    cause = causes(cli, log)["SYS250"]
    assert cause["verdict"] == "confirmed"
    assert "--no-binary reboundx reboundx" in fix_text(cause)


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("<Process name='Process-1' pid=1234 parent=1 stopped exitcode=-SIGKILL>", "SYS190"),
        ("Error: signal: segmentation fault (core dumped)", "SYS250"),
        ("[node1:12345] Signal: Aborted (6)", "SYS250"),
        ("make: *** [Makefile:12: train] Error 139", "SYS250"),
    ],
)
def test_other_launchers_route_by_the_signal(
    cli: Cli, tmp_path: Path, text: str, code: str
) -> None:
    found = causes(cli, log_file(tmp_path, text))
    assert found[code]["verdict"] in ("confirmed", "unknown")
    for other in ("SYS190", "SYS250"):
        if other != code:
            assert found[other]["verdict"] == "ruled_out"


def test_the_package_faulthandler_shows_the_crashing_thread_in(cli: Cli, tmp_path: Path) -> None:
    log = log_file(
        tmp_path,
        "Fatal Python error: Segmentation fault",
        "",
        "Thread 0x00007f01669f7700 (most recent call first):",
        '  File "/env/lib/python3.10/threading.py", line 320 in wait',
        "",
        "Current thread 0x00007f0175fff740 (most recent call first):",
        '  File "<frozen importlib._bootstrap>", line 228 in _call_with_frames_removed',
        '  File "/env/lib/python3.10/site-packages/decord/video_reader.py", line 54 in __init__',
        '  File "train.py", line 12 in <module>',
    )
    cause = causes(cli, log)["SYS250"]
    assert cause["verdict"] == "confirmed"
    assert "--no-binary decord decord" in fix_text(cause)
