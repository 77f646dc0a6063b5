"""A command's signals: SIGINT raises KeyboardInterrupt and SIGTERM and SIGHUP raise
``Terminated`` in the main thread, so ``finally`` blocks run and the CLI ends the children;
SIGXFSZ (``ulimit -f``) is ignored, so a write past the limit fails with EFBIG, which is
reported, instead of killing the process.

Python runs a signal's handler between two bytecodes of the main thread, wherever it is. Two
places there must not receive the exception, or the stop is lost and the command waits out
its children's timeouts (docs/security.md, "Signals"):

- the import system (``<frozen importlib._bootstrap>``): an exception between its lock's
  acquire and release leaves the global import lock held, and the next import in any thread
  waits for ever (the rules load on a thread of their own while the node is probed). A signal
  that arrives there is sent to the main thread again a moment later, until it lands outside
  the import (at most ``DEFER_S``, then it is raised wherever it lands);
- a finalizer (``__del__``, a weakref callback): Python prints the exception as "Exception
  ignored in ..." and drops it. ``sys.unraisablehook`` sees such a stop and sends the signal
  again, printing nothing.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

AGAIN_S = 0.01  # after a stop was deferred or dropped, before the signal is sent again
DEFER_S = 5.0  # a stop is deferred at most this long (an import that never ends)
_IMPORT_SYSTEM = ("<frozen importlib.", "<frozen zipimport>")


class _State:
    """The signals handled now: whether a command is running, and since when a stop waits."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.active = False
        self.deferred_since: dict[int, float] = {}


_STATE = _State()


def _in_import(frame: FrameType | None) -> bool:
    while frame is not None:
        if frame.f_code.co_filename.startswith(_IMPORT_SYSTEM):
            return True
        frame = frame.f_back
    return False


def _send_again(signum: int) -> None:
    """The signal to the main thread after ``AGAIN_S`` (from a thread: a blocking wait of the
    main thread is interrupted by it), unless the command has ended meanwhile."""
    main = threading.main_thread().ident

    def send() -> None:
        with _STATE.lock:
            if _STATE.active and main is not None:
                with contextlib.suppress(OSError, ValueError):
                    signal.pthread_kill(main, signum)

    timer = threading.Timer(AGAIN_S, send)
    timer.daemon = True
    with contextlib.suppress(RuntimeError):  # the interpreter is shutting down
        timer.start()


def _stop(signum: int) -> BaseException:
    # here, not at the top: the probes' package is imported by the commands that probe
    from envcheck.probes.run import Terminated

    return KeyboardInterrupt() if signum == signal.SIGINT else Terminated(signum)


def _handler(signum: int, frame: FrameType | None) -> None:
    if _in_import(frame):
        first = _STATE.deferred_since.setdefault(signum, time.monotonic())
        if time.monotonic() - first < DEFER_S:
            _send_again(signum)
            return
    _STATE.deferred_since.pop(signum, None)
    raise _stop(signum)


def _unraisable_hook(previous: Callable[[Any], object]) -> Callable[[Any], None]:
    def hook(unraisable: Any) -> None:
        exc = unraisable.exc_value
        if _STATE.active and isinstance(exc, KeyboardInterrupt):
            _send_again(signal.SIGINT)
            return
        run = sys.modules.get("envcheck.probes.run")  # Terminated exists once it is loaded
        if _STATE.active and run is not None and isinstance(exc, run.Terminated):
            _send_again(exc.signum)
            return
        previous(unraisable)

    return hook


@contextlib.contextmanager
def handled() -> Iterator[None]:
    """For the command (the main thread only; elsewhere nothing changes): the handlers above,
    the previous ones restored afterwards. SIGINT is taken over only where Python's own
    handler is installed (a SIGINT ignored by the parent stays ignored)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    wanted: dict[int, Any] = {
        signal.SIGTERM: _handler,
        signal.SIGHUP: _handler,
        signal.SIGXFSZ: signal.SIG_IGN,
    }
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        wanted[signal.SIGINT] = _handler
    previous: dict[int, Any] = {}
    for signum, handler in wanted.items():
        with contextlib.suppress(OSError, ValueError):
            previous[signum] = signal.signal(signum, handler)
    previous_hook = sys.unraisablehook
    sys.unraisablehook = _unraisable_hook(previous_hook)
    with _STATE.lock:
        _STATE.active = True
        _STATE.deferred_since.clear()
    try:
        yield
    finally:
        with _STATE.lock:
            _STATE.active = False
        sys.unraisablehook = previous_hook
        for signum, handler in previous.items():
            with contextlib.suppress(OSError, ValueError, TypeError):
                signal.signal(signum, handler)
