"""The compiled form of the matrix: each parsed file kept as data (JSON), keyed by its content.

Parsing a matrix file (TOML, then the strict typed decode) is most of the matrix's load time and
grows with the knowledge shipped. A parsed file is a tree of frozen dataclasses; the loader
keeps its JSON form (``codec.to_dict``'s, each record as the list of its field values) in the
user's cache directory, keyed by the sha256 of the
file's bytes and of the code that decodes it (the modules of ``envcheck.matrix`` and
``envcheck.model``) plus the envcheck and Python versions. The first run after an install, an
upgrade or any edit of a matrix or an overlay file parses that file again and rewrites its
entry; every other run reads the JSON and rebuilds the records with a decoder planned once per
record type (:func:`_plan`: no TOML, no per-value type dispatch, each distinct version or
specifier string parsed once).

No code from data: an entry is JSON, read with ``json.loads`` and turned into the matrix's own
record types only; a file that is not exactly that shape is a miss. Entries are read only from a
directory owned by this user and not writable by others, from a regular file owned by this user
(``cachefiles``); entries are named ``m-<48 hex digits>.json`` and pruning deletes only names of
that form (never another file in the directory). ``ENVCHECK_CACHE_DIR`` moves the cache;
``ENVCHECK_NO_CACHE=1`` turns it off, as does a relative ``HOME`` or ``XDG_CACHE_HOME``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import json
import os
import sys
import types
import typing
from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from envcheck.cachefiles import cache_root, read_own, safe_dir, sha256, write_own
from envcheck.matrix.schema import MatrixFile
from envcheck.model.codec import to_dict, type_hints
from envcheck.patterns import lazy
from envcheck.version import __version__

_FORMAT = 2  # records as lists of field values
_NAME = lazy(r"m-[0-9a-f]{48}\.json")  # the only names this cache writes (and prunes)
_KEEP = 256  # entries kept; older ones are pruned when a new one is written


def cache_dir(env: Mapping[str, str]) -> Path | None:
    """Where compiled files live, or None when caching is off."""
    root = cache_root(env)
    return None if root is None else root / "matrix"


@lru_cache(maxsize=1)
def code_key() -> str:
    """A digest of the code that turns TOML into records: a change to it invalidates the cache."""
    digest = sha256(f"{__version__}|{sys.version}|json{_FORMAT}".encode())
    root = Path(__file__).resolve().parent.parent
    for package in ("matrix", "model"):
        for source in sorted((root / package).glob("*.py")):
            try:
                digest.update(source.name.encode())
                digest.update(source.read_bytes())
            except OSError:
                digest.update(b"?")
    return digest.hexdigest()


class _Miss(Exception):
    """A cached entry that is not exactly what this code writes."""


Decoder = Callable[[Any], Any]


def _plan(tp: Any, memo: dict[Any, Decoder]) -> Decoder:
    """A decoder for JSON that :func:`_data` wrote for ``tp`` (the matrix's record types:
    dataclasses, optionals, tuples, string-keyed dicts, literals, enums, scalars, versions and
    specifiers). Anything else in the data raises ``_Miss``."""
    if tp in memo:
        return memo[tp]
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    decoder: Decoder
    if tp is Any:
        decoder = _same
    elif origin in (typing.Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        if len(options) != 1:
            raise _Miss(f"unsupported union {tp!r}")
        inner = _plan(options[0], memo)
        decoder = lambda v: None if v is None else inner(v)  # noqa: E731
    elif origin is typing.Literal:
        allowed = frozenset(args)
        decoder = lambda v: v if v in allowed and type(v) is not bool else _miss(v)  # noqa: E731
    elif isinstance(tp, type) and issubclass(tp, enum.Enum):
        decoder = _enum(tp)
    elif tp in (bool, int, str):
        kind = tp
        decoder = lambda v: v if type(v) is kind else _miss(v)  # noqa: E731
    elif tp is float:
        decoder = lambda v: float(v) if type(v) in (int, float) else _miss(v)  # noqa: E731
    elif isinstance(tp, type) and issubclass(tp, Version):
        decoder = lru_cache(maxsize=None)(_typed(tp))
    elif tp is SpecifierSet:
        decoder = lru_cache(maxsize=None)(_typed(SpecifierSet))
    elif origin is tuple and len(args) == 2 and args[1] is Ellipsis and args[0] in _SCALARS:
        decoder = _scalar_tuple(args[0])
    elif origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        item = _plan(args[0], memo)
        decoder = lambda v: tuple(map(item, v)) if type(v) is list else _miss(v)  # noqa: E731
    elif origin in (dict, Mapping) and len(args) == 2 and args[0] is str and args[1] in _SCALARS:
        decoder = _scalar_dict(args[1])
    elif origin in (dict, Mapping) and len(args) == 2 and args[0] is str:
        value = _plan(args[1], memo)
        decoder = (  # noqa: E731
            lambda v: {k: value(x) for k, x in v.items()} if type(v) is dict else _miss(v)
        )
    elif isinstance(tp, type) and dataclasses.is_dataclass(tp):
        decoder = _record(tp, memo)
    else:
        raise _Miss(f"unsupported type {tp!r}")
    memo[tp] = decoder
    return decoder


_SCALARS = (str, int, bool)


def _scalar_tuple(kind: type) -> Decoder:
    """A tuple of strings (integers, booleans): the list json made, checked in one pass."""

    def decode(value: Any) -> Any:
        if type(value) is not list or not all(type(x) is kind for x in value):
            raise _Miss(kind.__name__)
        return tuple(value)

    return decode


def _scalar_dict(kind: type) -> Decoder:
    """A dict of strings (integers, booleans): json's own dict, checked in one pass."""

    def decode(value: Any) -> Any:
        if type(value) is not dict or not all(type(x) is kind for x in value.values()):
            raise _Miss(kind.__name__)
        return value

    return decode


def _same(value: Any) -> Any:
    return value


def _miss(value: Any) -> Any:
    raise _Miss(type(value).__name__)


def _enum(tp: type[enum.Enum]) -> Decoder:
    def decode(value: Any) -> Any:
        try:
            return tp(value)
        except ValueError:
            raise _Miss(repr(value)) from None

    return decode


def _typed(tp: type) -> Decoder:
    def decode(value: Any) -> Any:
        if type(value) is not str:
            raise _Miss(type(value).__name__)
        try:
            return tp(value)
        except ValueError:
            raise _Miss(repr(value)) from None

    return decode


def _record(cls: type, memo: dict[Any, Decoder]) -> Decoder:
    names = [f.name for f in dataclasses.fields(cls) if f.init]
    hints = type_hints(cls)
    decoders: list[Decoder] = []  # filled after ``decode`` is in the memo (recursive types)

    if (
        hasattr(cls, "__post_init__")
        or hasattr(cls, "__slots__")
        or len(names) != len(dataclasses.fields(cls))
    ):
        raise _Miss(f"{cls.__name__} is not a plain record")
    new = object.__new__
    count = len(names)
    # fields whose JSON value is the value itself (a string, an integer, a boolean, or None
    # for an optional one): checked by type where they are, without a decoder's call
    plain: list[tuple[int, tuple[type, ...]]] = []
    other: list[tuple[int, Decoder]] = []  # the others, decoded in place

    def decode(value: Any) -> Any:
        # _data wrote every field, in order: each value decoded to its type gives what the
        # generated __init__ would (a plain frozen record), without its per-field setattr
        if type(value) is not list or len(value) != count:
            raise _Miss(cls.__name__)
        for index, kinds in plain:
            if type(value[index]) not in kinds:
                raise _Miss(cls.__name__)
        for index, decoder in other:  # the list is json's own, made for this record
            value[index] = decoder(value[index])
        record: Any = new(cls)
        record.__dict__.update(zip(names, value, strict=True))  # lengths checked above
        return record

    memo[cls] = decode
    decoders.extend(_plan(hints[name], memo) for name in names)
    for index, name in enumerate(names):
        kinds = _plain_kinds(hints[name])
        if kinds is None:
            other.append((index, decoders[index]))
        elif kinds:
            plain.append((index, kinds))
    return decode


def _plain_kinds(tp: Any) -> tuple[type, ...] | None:
    """The JSON types a field of type ``tp`` takes as they are: () for ``Any`` (anything),
    None when its value needs decoding."""
    if tp is Any:
        return ()
    if tp in _SCALARS:
        return (tp,)
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(options) == 1 and options[0] in _SCALARS:
            return (options[0], type(None))
    return None


def _data(obj: Any) -> Any:
    """The JSON form :func:`_plan`'s decoders read: ``codec.to_dict``'s, with each record as the
    list of its field values in field order (the decoder knows the names)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return [_data(getattr(obj, f.name)) for f in dataclasses.fields(obj)]
    if isinstance(obj, (tuple, list)):
        return [_data(v) for v in obj]
    if isinstance(obj, Mapping):
        return {str(k): _data(v) for k, v in obj.items()}
    return to_dict(obj)


@lru_cache(maxsize=1)
def _decoder() -> Decoder:
    return _plan(MatrixFile, {})


def _read(path: Path) -> MatrixFile | None:
    data = read_own(path)
    if data is None:
        return None
    try:
        value = json.loads(data)
        if not (type(value) is dict and value.get("format") == _FORMAT and "file" in value):
            return None
        record = _decoder()(value["file"])
    except (_Miss, ValueError, TypeError, RecursionError, KeyError):
        return None  # a truncated, stale or foreign entry is a miss, never an error
    return record if isinstance(record, MatrixFile) else None


def _write(directory: Path, path: Path, value: MatrixFile) -> None:
    try:
        text = json.dumps({"format": _FORMAT, "file": _data(value)}, separators=(",", ":"))
        if write_own(directory, path, text):
            _prune(directory)
    except Exception:  # a read-only or full disk only costs the next run a parse
        return


def _prune(directory: Path) -> None:
    """The oldest of this cache's own entries past ``_KEEP``; nothing else is touched."""
    own = [p for p in directory.iterdir() if _NAME.fullmatch(p.name) and p.is_file()]
    own.sort(key=lambda p: p.stat().st_mtime)
    for old in own[:-_KEEP]:
        old.unlink(missing_ok=True)


def compiled(
    text: str, where: str, parse: Callable[[str, str], MatrixFile], env: Mapping[str, str]
) -> MatrixFile:
    """``parse(text, where)``, answered from the cache when this exact text was parsed before.

    The key holds ``where`` too: records carry no file name, but errors and provenance do,
    and a file moved elsewhere is cheap to parse once more.
    """
    directory = cache_dir(env)
    if directory is None:
        return parse(text, where)
    key = sha256(f"{code_key()}|{where}|".encode() + text.encode("utf-8")).hexdigest()
    path = directory / f"m-{key[:48]}.json"
    if safe_dir(directory):
        hit = _read(path)
        if hit is not None:
            with contextlib.suppress(OSError):  # recently used: the last entry pruned
                os.utime(path)
            return hit
    value = parse(text, where)  # raises MatrixError on bad input: nothing is cached then
    _write(directory, path, value)
    return value
