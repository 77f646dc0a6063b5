"""Error families. Every user-facing error renders as one line that says what and where."""

from __future__ import annotations


class EnvcheckError(Exception):
    """Base class for errors the CLI reports as one line with exit code 2."""

    exit_code = 2

    def one_line(self) -> str:
        return elide(str(self).splitlines()[0] if str(self) else type(self).__name__)


MAX_ERROR = 400  # characters of one error line: what and where stay, a quoted megabyte does not


def elide(text: str, limit: int = MAX_ERROR) -> str:
    """``text`` cut in the middle when longer than ``limit`` (the file and line at the start
    and the explanation at the end stay), saying how much was left out."""
    if len(text) <= limit:
        return text
    head, tail = limit * 2 // 3, limit // 4
    return f"{text[:head]}...[{len(text) - head - tail:,} characters]...{text[-tail:]}"


class UsageError(EnvcheckError):
    """Bad command-line usage (conflicting flags, missing arguments)."""


class InputError(EnvcheckError):
    """A file or stream given by the user cannot be used.

    ``where`` is ``file[:line]`` and ``key`` the dotted key inside it, when known.
    """

    def __init__(self, message: str, *, where: str | None = None, key: str | None = None) -> None:
        self.message = message
        self.where = where
        self.key = key
        super().__init__(self._render())

    def _render(self) -> str:
        parts = []
        if self.where:
            parts.append(self.where)
        if self.key:
            parts.append(f"key '{self.key}'")
        prefix = ": ".join(parts)
        return f"{prefix}: {self.message}" if prefix else self.message


class MatrixError(InputError):
    """A compatibility-matrix file is invalid (schema, types, cross references)."""


class SpecError(InputError):
    """A declared stack file (``--spec``) is invalid."""


class ReportError(InputError):
    """A saved report (``--report``) is invalid or of an unsupported schema."""


class CodecError(ValueError):
    """Raised by the model codec; ``path`` is the dotted key of the offending value."""

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        self.message = message
        super().__init__(f"{path or '<root>'}: {message}")
