"""Records as the lists of their field values, the JSON form the caches keep (the compiled
matrix files, the merged matrix's segments, the binary scan's answer), and the decoder planned
once per record type that turns that JSON back into the same records: no per-value type
dispatch, each distinct version or specifier string parsed once. A value that is not exactly
what :func:`_data` writes for the type raises ``_Miss`` (the caller's entry is a miss).

Types: dataclasses (plain frozen records: no ``__post_init__``, no slots, every field in
``__init__``), optionals, tuples, string-keyed dicts, literals, enums, scalars, versions and
specifiers. No code from data: the decoders build only these types from JSON values."""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from envcheck.model.codec import to_dict, type_hints


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
