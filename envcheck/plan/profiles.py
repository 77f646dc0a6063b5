"""Profiles: the stacks users run (TinyZero, verl, OpenRLHF, RLinf BEHAVIOR, OmniGibson), each
from its project's own docs, in ``matrices/profiles/*.toml``.

A profile is one TOML file with its own strict schema; an unknown key or a bad requirement is
an error naming the file, line and key. The matrix loader reads only top-level ``*.toml``, so
profiles never reach it.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

from envcheck.errors import CodecError, InputError, UsageError
from envcheck.matrix.locate import line_of
from envcheck.model.codec import from_dict

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


class ProfileError(InputError):
    """A profile file is invalid."""


@dataclass(frozen=True)
class Profile:
    name: str
    title: str
    source: str
    requirements: tuple[str, ...]
    python: str | None = None  # the Python the project documents; the target may override it
    env: dict[str, str] = field(default_factory=dict)  # variables its docs say to set
    after: tuple[str, ...] = ()  # steps outside the lock (source builds, simulators)
    notes: tuple[str, ...] = ()
    verified: bool = True
    unverified: tuple[str, ...] = ()  # what in it is UNVERIFIED, in words
    path: str | None = None


def builtin_profiles_dir() -> Path:
    from envcheck.matrix.load import builtin_dir

    return builtin_dir() / "profiles"


def _fail(text: str, where: str, key: str, message: str) -> ProfileError:
    line = line_of(text, key) if key else None
    if line is None and key and "[" in key:
        line = line_of(text, key.split("[", 1)[0])
    return ProfileError(message, where=f"{where}:{line}" if line else where, key=key or None)


def parse_profile(text: str, where: str) -> Profile:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = getattr(exc, "lineno", None)
        raise ProfileError(
            f"invalid TOML: {exc}", where=f"{where}:{line}" if line else where
        ) from None
    if "path" in data:
        raise _fail(text, where, "path", "unknown key")
    try:
        profile = from_dict(Profile, data, strict=True)
    except CodecError as exc:
        raise _fail(text, where, exc.path, exc.message) from None
    for i, line in enumerate(profile.requirements):
        try:
            Requirement(line)
        except InvalidRequirement as exc:
            raise _fail(
                text,
                where,
                f"requirements[{i}]",
                f"invalid requirement {line!r}: {str(exc).splitlines()[0]}",
            ) from None
    if profile.python is not None:
        try:
            Version(profile.python)
        except InvalidVersion:
            raise _fail(text, where, "python", f"invalid version {profile.python!r}") from None
    if not profile.name.replace("-", "").isalnum():
        raise _fail(text, where, "name", f"invalid profile name {profile.name!r}")
    return replace(profile, path=where)


def load_profiles(directory: Path | None = None) -> dict[str, Profile]:
    folder = directory or builtin_profiles_dir()
    profiles: dict[str, Profile] = {}
    for path in sorted(folder.glob("*.toml")):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ProfileError(f"cannot read: {exc}", where=str(path)) from None
        profile = parse_profile(text, str(path))
        if profile.name in profiles:
            raise _fail(text, str(path), "name", f"profile {profile.name!r} is defined twice")
        profiles[profile.name] = profile
    return profiles


def get_profile(name: str, directory: Path | None = None) -> Profile:
    """A built-in profile by name, or a profile file given by path."""
    if name.endswith(".toml") or "/" in name:
        from envcheck.inputs import read_text

        # the one capped, non-blocking reader: /dev/zero or a FIFO is not read forever
        text = read_text(name, error=ProfileError)
        return parse_profile(text, name)
    profiles = load_profiles(directory)
    if name not in profiles:
        raise UsageError(f"no profile {name!r}; known: {', '.join(sorted(profiles))}")
    return profiles[name]
