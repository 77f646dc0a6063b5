"""Project settings from ``envcheck.toml`` or ``[tool.envcheck]`` in pyproject.toml.

The nearest file from the working directory upwards wins; command-line flags override it.
Relative matrix directories are relative to the file that names them.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from envcheck.errors import CodecError, InputError
from envcheck.matrix.locate import line_of
from envcheck.model.codec import from_dict


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    severity: Literal["error", "warning", "info"] | None = None
    matrix: tuple[str, ...] = ()
    # what the node must have ("8x H100, driver>=550", "no-gpu"); --expect overrides it
    expect: str | None = None
    source: str | None = None


def _parse(path: Path, table: Any, text: str, prefix: str) -> Settings:
    try:
        settings = from_dict(Settings, table, strict=True)
    except CodecError as exc:
        key = f"{prefix}{exc.path}" if exc.path else prefix.rstrip(".")
        line = line_of(text, exc.path) if exc.path else None
        raise InputError(
            exc.message, where=f"{path}:{line}" if line else str(path), key=key
        ) from None
    if settings.source is not None:
        raise InputError(
            "unknown key (allowed: expect, ignore, matrix, select, severity)",
            where=str(path),
            key=f"{prefix}source",
        )
    if settings.expect is not None:
        from envcheck.model.expect import parse_expect

        parse_expect(settings.expect, where=f"{path}:{line_of(text, 'expect') or ''}".rstrip(":"))
    dirs = tuple(str((path.parent / d).resolve()) for d in settings.matrix)
    return replace(settings, matrix=dirs, source=str(path))


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read: {exc}", where=str(path)) from None


def _read(path: Path, text: str | None = None) -> tuple[dict[str, Any], str]:
    # here, not at the top: most runs find no settings file
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib

    text = _text(path) if text is None else text
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as exc:
        line = getattr(exc, "lineno", None)
        raise InputError(
            f"invalid TOML: {exc}", where=f"{path}:{line}" if line else str(path)
        ) from None


def _may_configure(text: str) -> bool:
    """Whether a pyproject.toml can hold a ``tool.envcheck`` table: its key is spelled out
    (bare, quoted or dotted) unless a quoted key escapes a letter (``\\u0065``). A project's
    pyproject.toml that cannot is not parsed at all (most are not envcheck's)."""
    return "envcheck" in text or "\\u" in text or "\\U" in text


def find_settings(start: Path | None = None) -> Settings:
    directory = (start or Path.cwd()).resolve()
    for folder in (directory, *directory.parents):
        own = folder / "envcheck.toml"
        if own.is_file():
            data, text = _read(own)
            return _parse(own, data, text, "")
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            text = _text(pyproject)
            if not _may_configure(text):
                continue
            data, text = _read(pyproject, text)
            tool = data.get("tool", {})
            if isinstance(tool, dict) and "envcheck" in tool:
                return _parse(pyproject, tool["envcheck"], text, "tool.envcheck.")
    return Settings()
