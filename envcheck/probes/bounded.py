"""In-process calls that may never return (NVML's ``nvmlInit`` on a wedged driver), bounded.

The call runs in a daemon thread; the caller waits at most ``timeout`` seconds and goes on
without it. A thread still stuck when the command ends must not keep the process alive (nor
let interpreter shutdown wait on it): ``envcheck.cli.entry`` ends such a process with
``os._exit`` after flushing its output (``abandoned()`` says whether it must).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")

_abandoned: list[threading.Thread] = []


class Outcome(Generic[T]):
    """What a bounded call gave: its value, the exception it raised, or neither (timed out)."""

    def __init__(self) -> None:
        self.value: T | None = None
        self.error: BaseException | None = None
        self.done = False


def call(fn: Callable[[], T], timeout: float, name: str) -> Outcome[T]:
    """Run ``fn()`` in a daemon thread and wait at most ``timeout`` seconds for it."""
    outcome: Outcome[T] = Outcome()

    def work() -> None:
        try:
            outcome.value = fn()
        except BaseException as exc:  # handed to the caller, never lost in the thread
            outcome.error = exc
        finally:
            outcome.done = True

    thread = threading.Thread(target=work, name=f"envcheck-{name}", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        _abandoned.append(thread)
    return outcome


def abandoned() -> bool:
    """Whether a bounded call is still running (then the process ends with ``os._exit``)."""
    return any(t.is_alive() for t in _abandoned)
