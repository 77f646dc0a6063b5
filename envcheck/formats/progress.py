"""Progress on standard error for work that can take more than a second (probing a cluster,
resolving a lock, refreshing the matrix, scanning a big log). Shown only when standard error is
a terminal: a redirected or piped run stays byte-for-byte quiet."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


def enabled() -> bool:
    """A live display only on a terminal, and never when the user asked for none."""
    if os.environ.get("ENVCHECK_NO_PROGRESS") or os.environ.get("TERM") == "dumb":
        return False
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


class NodeProgress:
    """A bar of nodes answered (``envcheck cluster``), with the count that failed."""

    def __init__(self, what: str = "probing") -> None:
        self.what = what
        self.bar: Any = None
        self.task: Any = None
        self.failed = 0

    def start(self, total: int) -> None:
        if not total or not enabled():
            return
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        from envcheck.formats.table import console

        self.bar = Progress(
            TextColumn(f"{self.what} {{task.description}}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[failed]}"),
            TimeElapsedColumn(),
            console=console(sys.stderr),
            transient=True,
        )
        self.task = self.bar.add_task(f"{total} node(s)", total=total, failed="")
        self.bar.start()

    def advance(self, failed: bool) -> None:
        self.failed += failed
        if self.bar is not None:
            note = f"{self.failed} unreachable" if self.failed else ""
            self.bar.update(self.task, advance=1, failed=note)

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


@contextmanager
def status(text: str) -> Iterator[None]:
    """A spinner with ``text`` and the elapsed time while the block runs (terminal only)."""
    if not enabled():
        yield
        return
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from envcheck.formats.table import console

    bar = Progress(
        SpinnerColumn(),
        TextColumn(text),
        TimeElapsedColumn(),
        console=console(sys.stderr),
        transient=True,
    )
    bar.add_task(text, total=None)
    with bar:
        yield
