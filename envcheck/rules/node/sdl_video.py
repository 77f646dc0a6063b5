"""SIM173: SDL (pygame, the Gym/Gymnasium renderers built on it, ViZDoom) found no video driver
to open a window with, ``No available video device``, or not the one ``SDL_VIDEODRIVER`` names
(``x11 not available``): the node has no display (a headless server, a container, a dev
container, an SSH session without forwarding). A program that only renders off screen (frames for
a video, ``render_mode="rgb_array"``) runs with SDL's dummy driver; one that needs a window runs
under a virtual X server."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual

# SDL_VideoInit's error when SDL_VIDEODRIVER names a driver it cannot start ('%s not available')
_NAMED = lazy(r"\b(?P<driver>[a-z0-9_]+) not available")


@rule("SIM173", "sdl-no-video-device", Severity.WARNING)
def sdl_no_video_device(facts: Facts) -> Iterable[Hit]:
    """SDL (pygame) found no video device: the node has no display

    ## What it checks
    Only a log states it: SDL's `No available video device` as pygame raises it
    (`pygame.error: No available video device`), and `x11 not available` where
    `SDL_VIDEODRIVER` names a driver SDL cannot start.

    ## Why it matters
    SDL opens a window through the node's display server; a headless server, a container or a
    dev container, and an SSH session without X forwarding have none, so `pygame.display.
    set_mode` (and every Gym/Gymnasium environment that renders with pygame) fails before the
    first frame.

    ## Example
    A script that only writes its frames to a video, run in a VS Code dev container:
    `pygame.error: No available video device`.

    ## Fix
    Off-screen rendering (frames saved or returned, `render_mode="rgb_array"`): `export
    SDL_VIDEODRIVER=dummy` before pygame starts (`os.environ["SDL_VIDEODRIVER"] = "dummy"` at
    the top of the script). A window: run under a virtual display, `xvfb-run -a <command>`, or
    forward a display (`ssh -X`, `DISPLAY` in the container). pygame's OpenGL windows need a real
    or virtual X display; the dummy driver has no OpenGL.

    ## References
    - libsdl-org/SDL src/video/SDL_video.c (SDL_VideoInit: 'No available video device', '%s not
      available')
    - https://github.com/Grzetan/ImageToFourierSeries/issues/2
    - https://github.com/pygame/pygame/issues/2377 (SDL_VIDEODRIVER=dummy, headless pygame)
    """
    raise Skip("only a log line states SDL found no video device", "log.sdl_video")


@from_log("SIM173")
def sdl_no_video_device_in_log(facts: Facts, line: LogLine) -> Hit:
    """Off-screen first (the dummy driver), a virtual display second."""
    named = _NAMED.search(line.text)
    driver = named.group("driver") if named else None
    said = (
        f"SDL_VIDEODRIVER names {driver}, which SDL could not start"
        if driver
        else "SDL found no video driver it could start"
    )
    return Hit(
        f"{said} (line {line.line}): the node has no display for pygame's window (a headless "
        "server, a container, an SSH session without forwarding)",
        evidence={"line": line.line, "driver": driver},
        fix=fix(
            "Render off screen with SDL's dummy driver: export SDL_VIDEODRIVER=dummy (before "
            "pygame starts); for a window, run under a virtual display: xvfb-run -a <command>",
            "manual",
            manual("export SDL_VIDEODRIVER=dummy  (or os.environ['SDL_VIDEODRIVER'] = 'dummy')"),
            manual("xvfb-run -a <command>  (apt install xvfb; pygame's OpenGL windows need it)"),
        ),
    )
