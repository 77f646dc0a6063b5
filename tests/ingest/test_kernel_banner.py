"""The kernel release as other pastes state it: ``cat /proc/version`` (the kernel's banner) and
``uname -a`` under nvidia-bug-report.sh's ``uname:`` label, read instead of refused; and the
shells that say nvidia-smi is missing in words of their own."""

from __future__ import annotations

from envcheck.ingest.common import Source
from envcheck.ingest.detect import parse

PROC_VERSION = (
    "Linux version 5.15.0-91-generic (buildd@lcy02-amd64-045) (gcc (Ubuntu "
    "11.4.0-1ubuntu1~22.04) 11.4.0, GNU ld (GNU Binutils for Ubuntu) 2.38) #101-Ubuntu SMP Tue "
    "Nov 14 13:30:08 UTC 2023\n"
)

BUG_REPORT = """\
____________________________________________

Start of NVIDIA bug report log file.  Date: Mon Jan  8 10:12:01 UTC 2024
nvidia-bug-report.sh Version: 33519256
uname: Linux gpu01 6.8.0-31-generic #31-Ubuntu SMP PREEMPT_DYNAMIC Sat Apr 20 00:40:06 UTC 2024 x86_64 x86_64 x86_64 GNU/Linux
"""


def test_proc_version_states_the_kernel_release() -> None:
    report = parse(Source(name="paste.txt", text=PROC_VERSION))
    assert report.system.data is not None
    assert report.system.data.kernel == "5.15.0-91-generic"


def test_bug_report_uname_line_states_the_kernel_and_machine() -> None:
    report = parse(Source(name="paste.txt", text=BUG_REPORT))
    assert report.system.data is not None
    assert (report.system.data.kernel, report.system.data.arch) == ("6.8.0-31-generic", "x86_64")


def test_other_shells_saying_nvidia_smi_is_missing_state_no_driver() -> None:
    # zsh, dash and PowerShell in their own words (bash's and cmd.exe's were read before)
    for line in (
        "zsh: command not found: nvidia-smi",
        "sh: 1: nvidia-smi: not found",
        "nvidia-smi : The term 'nvidia-smi' is not recognized as the name of a cmdlet, function, "
        "script file, or operable program.",
    ):
        report = parse(Source(name="paste.txt", text=line + "\n"))
        assert "driver not loaded" in (report.origin.detail or ""), line
        assert report.gpu.data is None, report.gpu.data
        assert any("nvidia-smi" in n for n in report.gpu.notes), report.gpu.notes
