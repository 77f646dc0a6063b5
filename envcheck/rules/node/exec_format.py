"""SYS223: the kernel refused to run a file, ENOEXEC ('Exec format error'; macOS's EBADARCH,
'Bad CPU type in executable'), as any layer prints it: Python's ``OSError: [Errno 8] Exec format
error: 'PATH'``, bash's ``cannot execute binary file``, systemd's ``Failed to execute PATH``,
runc's ``exec user process caused "exec format error"`` and ``exec /bin/bash: exec format
error``, zsh's ``exec format error: PATH``. In threads the file is almost always a binary or a
container image for another CPU (an x86-64 build on an aarch64 host: a Graviton, Grace or Jetson
node, a Raspberry Pi, an Apple-silicon Mac's Linux VM; an arm64 image built on a Mac and run on
an amd64 node), less often a script without its ``#!`` line. The CPUs come from what the log
states beside it: file(1)'s ``ELF 64-bit LSB executable, ARM aarch64`` for the file, uname -a's
``aarch64 GNU/Linux`` or an ``Architecture:`` line for the host, Docker's platform warning for
both. The fix is the build for the host's CPU: the image pulled or built for its platform
(``--platform linux/arm64``), the release's binary for that CPU or a source build here; QEMU's
binfmt handlers run a foreign image emulated (slowly)."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Action, Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual

# runc: 'exec user process caused "exec format error"' (libcontainer/standard_init_linux.go
# before 1.1), 'exec /docker-entrypoint.sh: exec format error' (1.1 on)
_CONTAINER = lazy(r"exec user process caused|^\s*exec /[^\s:]+: exec format error")
_PATH = lazy(
    r"Exec format error: '(?P<py>[^']+)'"
    r"|(?P<sh>[^\s:]+): cannot execute binary file"
    r"|Failed to execute (?P<sd>/[^\s:]+)"
    r"|exec format error: (?P<zsh>\S+)"
    r"|exec (?P<runc>/[^\s:]+): exec format error"
)
# the words each layer uses for a CPU -> the machine name uname -m prints
_ARCH = {
    "x86_64": "x86_64",
    "x86-64": "x86_64",
    "amd64": "x86_64",
    "aarch64": "aarch64",
    "arm64": "aarch64",
    "arm aarch64": "aarch64",
    "armv7": "armv7l",
    "armv7l": "armv7l",
    "armhf": "armv7l",
    "arm": "armv7l",
    "intel 80386": "i686",
    "risc-v": "riscv64",
}
# Docker's platform for each machine name
_PLATFORM = {"x86_64": "linux/amd64", "aarch64": "linux/arm64", "armv7l": "linux/arm/v7"}
# the other CPU a node that refuses a build of one is most often (threads: x86-64 and aarch64)
_OTHER = {"aarch64": "x86_64", "x86_64": "aarch64", "armv7l": "x86_64"}


def _machine(word: str | None) -> str | None:
    if not word:
        return None
    word = word.strip().lower().removeprefix("linux/")
    return _ARCH.get(word, _ARCH.get(word.split("/")[0]))


def _host(facts: Facts, line: LogLine) -> str | None:
    stated = _machine(line.stated.get("exec_host_arch"))
    if stated is not None:
        return stated
    try:
        return _machine(facts.system().arch)
    except Skip:
        return None


@rule("SYS223", "exec-format-error", Severity.ERROR)
def exec_format_error(facts: Facts) -> Iterable[Hit]:
    """A binary or container image built for another CPU architecture (exec format error)

    ## What it checks
    The kernel's refusal to run a file, `Exec format error` (ENOEXEC) in Python's, bash's,
    systemd's, runc's and zsh's words, and macOS's `Bad CPU type in executable`, with the CPUs
    the log states beside it: file(1)'s line for the binary, `uname -a`, lscpu's
    `Architecture:` or Docker's platform warning for the host. Only a log states it.

    ## Why it matters
    Nothing built for another CPU runs here; reinstalling the same download or pulling the same
    single-platform image fails the same way on every node of this architecture.

    ## Example
    `standard_init_linux.go:178: exec user process caused "exec format error"` on a host whose
    `uname -a` ends `aarch64 GNU/Linux`: the image is an amd64 one.

    ## Fix
    Use the build for the host's CPU: `docker pull --platform linux/arm64 IMAGE` (or `docker
    buildx build --platform linux/arm64,linux/amd64` for an image of your own), the release's
    binary for `uname -m`'s machine or a source build on the node. `file PATH` names the CPU a
    binary is for; a script without its `#!` line fails the same way. QEMU's binfmt handlers
    (`docker run --privileged --rm tonistiigi/binfmt --install all`) run a foreign image
    emulated, slowly.

    ## References
    - https://docs.docker.com/build/building/multi-platform/
    - https://man7.org/linux/man-pages/man2/execve.2.html (ENOEXEC)
    """
    raise Skip("only a log line states the kernel's refusal", "log.exec_format")


@from_log("SYS223")
def exec_format_in_log(facts: Facts, line: LogLine) -> Hit:
    host = _host(facts, line)
    built = _machine(line.stated.get("exec_file_arch"))
    container = _CONTAINER.search(line.text) is not None or (
        line.stated.get("exec_file_arch", "").startswith("linux/")
    )
    found = _PATH.search(line.text)
    path = next((g for g in found.groups() if g), None) if found else None
    if host is None and built is not None:
        host = _OTHER.get(built)
        guessed = True
    else:
        guessed = False
    what = "the container's entrypoint" if container else (path or "the file")
    if built is not None and host is not None and built != host:
        said = f"{what} is built for {built}" + (
            f" and this node is {'most likely ' if guessed else ''}{host}"
        )
    elif host is not None:
        said = f"this node is {host} and {what} is built for another CPU"
    elif built is not None:
        said = f"{what} is built for {built}, which this node is not"
    else:
        said = f"{what} is built for another CPU, or is no executable for this system"
    target = host or "this node's CPU (uname -m)"
    actions: list[Action] = []
    if container:
        platform = _PLATFORM.get(host or "", "linux/<this node's platform>")
        summary = (
            f"Use the image built for {target}: docker pull --platform {platform} IMAGE (an "
            f"image of your own: docker buildx build --platform {platform} .); to run it "
            "emulated instead, slowly, register QEMU: docker run --privileged --rm "
            "tonistiigi/binfmt --install all"
        )
        actions += [
            manual(f"docker pull --platform {platform} IMAGE"),
            manual(f"docker buildx build --platform {platform} ."),
        ]
    else:
        summary = (
            f"Install the release's binary or wheel for {target}, or build it from source on "
            "this node"
        )
        if path:
            summary += (
                f"; file {path} names the CPU it is for (a script fails the same way without "
                "its #! line)"
            )
            actions.append(manual(f"file {path}"))
        actions.append(manual("uname -m"))
    return Hit(
        f"The kernel refused to run a file (line {line.line}, exec format error): {said}",
        evidence={
            "line": line.line,
            "host": host,
            "built_for": built,
            "path": path,
            "container": container,
        },
        fix=fix(summary, "unsafe", *actions),
    )
