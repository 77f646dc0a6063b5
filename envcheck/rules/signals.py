"""The signal a process died of, read from what a launcher, shell or runtime states
(matrices/signatures/signals.toml), and the failure family each signal belongs to. One reading
for every wording: a launcher's number (`exitcode : -11`), a shell's 128 + N exit status
(`exited with code 139`) or the signal's name or strsignal text (`SIGSEGV`, `Segmentation
fault`). Numbers: Linux's include/uapi/asm-generic/signal.h; texts: glibc's strsignal."""

from __future__ import annotations

from collections.abc import Mapping

# the signatures whose line states a signal, routed by this module
SIGNAL_SIGNATURES = frozenset({"process-died-by-signal", "native-crash"})

# a signal's name (without SIG) or glibc's strsignal text (also zh_CN's for SIGSEGV) -> number
_NAMES: dict[str, int] = {
    "ILL": 4,
    "illegal instruction": 4,
    "ABRT": 6,
    "aborted": 6,
    "BUS": 7,
    "bus error": 7,
    "FPE": 8,
    "floating point exception": 8,
    "KILL": 9,
    "killed": 9,
    "SEGV": 11,
    "segmentation fault": 11,
    "段错误": 11,
    "speicherzugriffsfehler": 11,
    "已放弃": 6,
    # Windows' NTSTATUS of the same crashes: an access violation, a stack buffer overrun
    # (__fastfail, what abort() and the CRT's checks end in)
    "0xC0000005": 11,
    "0xc0000005": 11,
    "0xC0000409": 6,
    "0xc0000409": 6,
}

# a signal -> the rule code of its family: SIGKILL is the kernel's OOM killer's trace (SYS190),
# SIGBUS a full /dev/shm (SYS101), SIGILL an instruction the CPU lacks (SYS243), SIGFPE
# cuBLAS 12.1.3.1's heuristics (CUD102), SIGSEGV and SIGABRT a crash in native code (SYS250)
FAMILY: dict[int, str] = {
    9: "SYS190",
    7: "SYS101",
    4: "SYS243",
    8: "CUD102",
    11: "SYS250",
    6: "SYS250",
}

# the causes of a native crash the log's facts decide beside SYS250 (native_crash.py)
NATIVE_CAUSES = frozenset({"SYS250", "TOR150", "SYS203"})


def signal_number(stated: Mapping[str, str]) -> int | None:
    """The signal the line states: its number, 128 + N as an exit status, or its name."""
    number = stated.get("signal")
    if number is not None and number.isdigit():
        return int(number)
    status = stated.get("exit_status")
    if status is not None and status.isdigit() and 128 < int(status) < 160:
        return int(status) - 128
    name = stated.get("signal_name", "").strip()
    if name.upper().startswith("SIG"):
        name = name[3:]
    return _NAMES.get(name) or _NAMES.get(name.lower())


def routes_elsewhere(signature: str, stated: Mapping[str, str], code: str) -> bool:
    """Whether a signal line belongs to another family than ``code``'s: a SIGKILL line is no
    native crash, a SIGSEGV line no OOM kill. A line that states no signal routes nowhere."""
    if signature not in SIGNAL_SIGNATURES:
        return False
    number = signal_number(stated)
    if number is None:
        return False
    family = FAMILY.get(number)
    if code in NATIVE_CAUSES:
        return family != "SYS250"
    return family != code
