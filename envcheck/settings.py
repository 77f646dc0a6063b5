"""Project settings from ``envcheck.toml`` or ``[tool.envcheck]`` in pyproject.toml.

The nearest file from the working directory upwards wins, searched no higher than the
repository root (a directory holding ``.git``) or ``$HOME``; command-line options override it
(a passed ``--select`` or ``--ignore`` replaces both of the file's lists). A file is only read
when it is a regular file owned by this user (or root) in a directory that others cannot write
to: another user's ``/tmp/envcheck.toml`` is passed over. ``--isolated``
(:func:`isolate`) ignores every settings file and the ``ENVCHECK_MATRIX`` overlays; every output
names what was applied (:func:`applied`). Relative matrix directories are relative to the file
that names them. See docs/security.md.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from envcheck.errors import CodecError, InputError
from envcheck.matrix.locate import line_of
from envcheck.model.codec import from_dict

SETTINGS_CAP = 1024 * 1024  # a settings file is a few lines; a bigger one is refused, not read
_ISOLATED: list[bool] = []  # set by --isolated for the rest of this process


@dataclass(frozen=True)
class Settings:
    """The settings file's choices (envcheck.toml or [tool.envcheck]), and where it is."""

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    severity: Literal["error", "warning", "info"] | None = None
    matrix: tuple[str, ...] = ()
    # what the node must have ("8x H100, driver>=550", "no-gpu"); --expect overrides it
    expect: str | None = None
    source: str | None = None


def isolate() -> None:
    """``--isolated``: no settings file and no ``ENVCHECK_MATRIX`` overlay for this process."""
    if not _ISOLATED:
        _ISOLATED.append(True)


def isolated() -> bool:
    return bool(_ISOLATED)


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
    """The file's text through the one capped reader (``envcheck.inputs``)."""
    from envcheck.inputs import read_text

    return read_text(str(path), limit=SETTINGS_CAP, too_big="for a settings file")


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


def trusted_file(path: Path) -> bool:
    """A file settings may come from: a regular file (not through a link) owned by this user or
    root, in a directory owned by this user or root that no one else may write to (a sticky
    world-writable /tmp included)."""
    uid = os.getuid()
    try:
        info = os.lstat(path)
        folder = os.stat(path.parent)
    except OSError:
        return False
    return (
        stat.S_ISREG(info.st_mode)
        and info.st_uid in (uid, 0)
        and folder.st_uid in (uid, 0)
        and not folder.st_mode & stat.S_IWOTH
    )


def search_dirs(start: Path, env: Mapping[str, str]) -> list[Path]:
    """``start`` and its parents, up to and including the repository root (a directory holding
    ``.git``) or ``$HOME`` (when it is an absolute path), whichever comes first."""
    home = env.get("HOME", "")
    stop = Path(home).resolve() if os.path.isabs(home) else None
    found: list[Path] = []
    for folder in (start, *start.parents):
        found.append(folder)
        if folder == stop or os.path.lexists(folder / ".git"):
            break
    return found


def find_settings(start: Path | None = None, env: Mapping[str, str] | None = None) -> Settings:
    if isolated():
        return Settings()
    directory = (start or Path.cwd()).resolve()
    for folder in search_dirs(directory, os.environ if env is None else env):
        own = folder / "envcheck.toml"
        if own.exists() and trusted_file(own):
            data, text = _read(own)
            return _parse(own, data, text, "")
        pyproject = folder / "pyproject.toml"
        if pyproject.exists() and trusted_file(pyproject):
            text = _text(pyproject)
            if not _may_configure(text):
                continue
            data, text = _read(pyproject, text)
            tool = data.get("tool", {})
            if isinstance(tool, dict) and "envcheck" in tool:
                return _parse(pyproject, tool["envcheck"], text, "tool.envcheck.")
    return Settings()


def choose(
    settings: Settings, select: Sequence[str], ignore: Sequence[str]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The rule prefixes a run uses: the command line's ``--select`` / ``--ignore`` when either
    was given (both of the file's lists are then replaced), else the file's."""
    if select or ignore:
        return tuple(select), tuple(ignore)
    return settings.select, settings.ignore


def applied(
    cli_dirs: Sequence[str] = (),
    *,
    with_settings: bool = True,
    env: Mapping[str, str] | None = None,
) -> list[dict[str, str]]:
    """What a run applies besides the built-in matrix, in order: the settings file, then each
    overlay with where it was named (``ENVCHECK_MATRIX``, the settings file, ``--matrix``)."""
    env = os.environ if env is None else env
    found: list[dict[str, str]] = []
    settings = find_settings(env=env) if with_settings else Settings()
    if settings.source is not None:
        found.append({"kind": "settings", "path": settings.source})
    if not isolated():
        from envcheck.matrix import ENV_VAR

        for directory in env.get(ENV_VAR, "").split(os.pathsep):
            if directory:
                found.append({"kind": "overlay", "path": directory, "from": ENV_VAR})
    for directory in settings.matrix:
        found.append({"kind": "overlay", "path": directory, "from": str(settings.source)})
    for directory in cli_dirs:
        found.append({"kind": "overlay", "path": directory, "from": "--matrix"})
    return found


def describe(entries: Sequence[Mapping[str, str]]) -> str:
    """One line naming what :func:`applied` found ('' when nothing)."""
    if not entries:
        return ""
    parts = [
        f"settings {e['path']}" if e["kind"] == "settings" else f"overlay {e['path']} ({e['from']})"
        for e in entries
    ]
    return (
        "applied: " + "; ".join(parts) + " (--isolated ignores settings files and $ENVCHECK_MATRIX)"
    )
