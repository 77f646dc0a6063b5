"""A virtual X display that did not start: SIM172, xvfb-run (or Xvfb, xvfbwrapper,
PyVirtualDisplay) failing before the program it wraps runs (the signature in
matrices/signatures/nccl_transports.toml)."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual

# xvfb-run's first display when -a is not given (Debian's xvfb-run: SERVERNUM=99)
_DEFAULT_DISPLAY = "99"


@rule("SIM172", "xvfb-failed-to-start", Severity.ERROR)
def xvfb_failed_to_start(facts: Facts) -> Iterable[Hit]:
    """xvfb-run could not start its virtual X server

    ## What it checks
    Only a log says it: xvfb-run's `xvfb-run: error: Xvfb failed to start`, the X server's own
    `Server is already active for display 99`, xvfbwrapper's `Can not find Xvfb. Please install
    it and try again.`, PyVirtualDisplay's `XStartTimeoutError`, or a shell's `xvfb-run: not
    found`.

    ## Why it matters
    Headless rendering through GLX (MuJoCo's GLFW backend, pyglet, Isaac Gym viewers, browser
    tests) is often wrapped in `xvfb-run`. Without `-a`, xvfb-run always asks for display :99;
    when another Xvfb holds it (a second job on the node, a VNC server) or a killed one left
    `/tmp/.X99-lock` behind, the server exits and the program never runs. Without the xvfb
    package there is no server at all.

    ## Example
    `xvfb-run -s "-screen 0 1400x900x24" python train.py` in a container where a previous run's
    Xvfb still holds :99: `xvfb-run: error: Xvfb failed to start`.

    ## Fix
    Let xvfb-run pick a free display: `xvfb-run -a <command>` (`--auto-servernum`); add
    `-e /dev/stdout` to see the server's own error. If no Xvfb runs, remove the stale lock
    (`rm -f /tmp/.X99-lock /tmp/.X11-unix/X99`). Without Xvfb: `apt-get install -y xvfb`.
    Rendering headless through EGL (`MUJOCO_GL=egl`) needs no X server at all.

    ## References
    - https://salsa.debian.org/xorg-team/xserver/xorg-server/-/blob/debian-unstable/debian/local/xvfb-run
    - https://github.com/ryankennedyio/ib-docker/issues/3
    - https://github.com/JanitorTechnology/janitor/issues/35
    - https://github.com/cgoldberg/xvfbwrapper/issues/48
    """
    raise Skip("only a log line states that xvfb-run's X server did not start", "log.graphics")


@from_log("SIM172")
def xvfb_failed_in_log(facts: Facts, line: LogLine) -> Hit:
    """The server's own words decide the fix: a display already taken (its number), Xvfb not
    installed, or xvfb-run's bare error (the display taken is the usual reason: -a first)."""
    missing = line.stated.get("xvfb_missing")
    if missing:
        return Hit(
            f"Xvfb is not installed (line {line.line}: {missing})",
            evidence={"line": line.line},
            fix=fix(
                "Install the virtual X server: apt-get install -y xvfb (RHEL/Fedora: "
                "dnf install xorg-x11-server-Xvfb), then run the command under xvfb-run -a",
                "manual",
                manual("apt-get install -y xvfb"),
                manual("xvfb-run -a <command>"),
            ),
        )
    display = line.stated.get("x_display") or _DEFAULT_DISPLAY
    return Hit(
        f"the virtual X server did not start (line {line.line}): display :{display} is held by "
        "another X server or by a stale lock file, so xvfb-run (which asks for :99 unless "
        "given -a) gives up",
        evidence={"line": line.line, "display": display},
        fix=fix(
            "Let xvfb-run pick a free display: xvfb-run -a <command> (add -e /dev/stdout to "
            f"see the server's error); with no Xvfb running, remove /tmp/.X{display}-lock",
            "manual",
            manual("xvfb-run -a <command>"),
            manual("xvfb-run -a -e /dev/stdout -s '-screen 0 1280x1024x24' <command>"),
            manual(f"rm -f /tmp/.X{display}-lock /tmp/.X11-unix/X{display}   # no Xvfb running"),
        ),
    )
