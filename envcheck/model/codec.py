"""Typed conversion between frozen dataclasses and JSON-shaped data.

One mechanism for every record in the model: ``to_dict`` writes plain JSON types, ``from_dict``
rebuilds the dataclass from them, validating types and naming the dotted key of any bad value.
The two round-trip exactly: ``from_dict(T, to_dict(x)) == x``.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import sys
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar, Union, get_args, get_origin

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from envcheck.errors import CodecError
from envcheck.numeric import NumberError, check

T = TypeVar("T")

_NONE_TYPE = type(None)


_PLAIN = frozenset({str, int, float, bool, _NONE_TYPE})
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}  # a dataclass's fields, looked up once


def to_dict(obj: Any) -> Any:
    """Convert a dataclass tree to JSON-shaped data (dicts, lists, str, int, float, bool, None)."""
    kind = type(obj)
    if kind in _PLAIN:
        return obj
    names = _FIELD_NAMES.get(kind)
    if names is not None:
        return {name: to_dict(getattr(obj, name)) for name in names}
    if kind is tuple or kind is list:
        return [to_dict(v) for v in obj]
    if kind is dict:
        return {str(k): to_dict(v) for k, v in obj.items()}
    return _to_dict(obj)


def _to_dict(obj: Any) -> Any:
    """``to_dict`` for anything but the common exact types it answers first."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        names = tuple(f.name for f in dataclasses.fields(obj))
        _FIELD_NAMES[type(obj)] = names
        return {name: to_dict(getattr(obj, name)) for name in names}
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, (Version, SpecifierSet)):
        return str(obj)
    if isinstance(obj, (tuple, list)):
        return [to_dict(v) for v in obj]
    if isinstance(obj, Mapping):
        return {str(k): to_dict(v) for k, v in obj.items()}
    return obj


def from_dict(tp: type[T], data: Any, *, path: str = "", strict: bool = True) -> T:
    """Build ``tp`` from JSON-shaped ``data``.

    ``strict`` rejects keys a dataclass does not define; non-strict ignores them, so a report
    written by a newer envcheck of the same schema still loads.
    """
    return typing.cast(T, _convert(tp, data, path, strict))


@functools.cache
def type_hints(cls: type) -> dict[str, Any]:
    """``typing.get_type_hints(cls)``, once per class. A module whose annotations name types it
    imports only when needed defines ``_import_deferred()``, which puts them in its namespace
    (model/report.py: the --deep records, which a plain probe never builds)."""
    deferred = getattr(sys.modules.get(cls.__module__), "_import_deferred", None)
    if deferred is not None:
        deferred()
    return typing.get_type_hints(cls)


_hints = type_hints


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    name = {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}.get(
        type(value)
    )
    if name:
        return f"{name} ({value!r})" if not isinstance(value, str) else f"a string ({value!r})"
    if isinstance(value, Mapping):
        return "a table"
    if isinstance(value, (list, tuple)):
        return "a list"
    return type(value).__name__


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _convert(tp: Any, data: Any, path: str, strict: bool) -> Any:
    if tp is Any:
        return data
    if tp is _NONE_TYPE:
        if data is not None:
            raise CodecError(path, f"expected null, got {_describe(data)}")
        return None
    origin = get_origin(tp)
    if origin is Union or origin is types.UnionType:
        args = get_args(tp)
        if data is None:
            if _NONE_TYPE in args:
                return None
            raise CodecError(path, "must not be null")
        options = [a for a in args if a is not _NONE_TYPE]
        if len(options) == 1:
            return _convert(options[0], data, path, strict)
        errors = []
        for option in options:
            try:
                return _convert(option, data, path, strict)
            except CodecError as exc:
                errors.append(exc.message)
        raise CodecError(path, "; ".join(errors))
    if origin is typing.Literal:
        allowed = get_args(tp)
        if data not in allowed or type(data) is bool:
            choices = ", ".join(repr(a) for a in allowed)
            raise CodecError(path, f"expected one of {choices}, got {_describe(data)}")
        return data
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        try:
            return tp(data)
        except ValueError:
            choices = ", ".join(repr(m.value) for m in tp)
            raise CodecError(path, f"expected one of {choices}, got {_describe(data)}") from None
    if tp is bool:
        if not isinstance(data, bool):
            raise CodecError(path, f"expected a boolean, got {_describe(data)}")
        return data
    if tp is int:
        if not isinstance(data, int) or isinstance(data, bool):
            raise CodecError(path, f"expected an integer, got {_describe(data)}")
        return data
    if tp is float:
        if not isinstance(data, (int, float)) or isinstance(data, bool):
            raise CodecError(path, f"expected a number, got {_describe(data)}")
        try:
            return float(check(data))
        except (NumberError, OverflowError) as exc:
            raise CodecError(path, str(exc)) from None
    if tp is str:
        if not isinstance(data, str):
            raise CodecError(path, f"expected a string, got {_describe(data)}")
        return data
    if isinstance(tp, type) and issubclass(tp, Version):
        if not isinstance(data, str):
            raise CodecError(path, f"expected a version string, got {_describe(data)}")
        try:
            return tp(data)
        except InvalidVersion:
            raise CodecError(path, f"invalid version {data!r}") from None
    if tp is SpecifierSet:
        if not isinstance(data, str):
            raise CodecError(path, f"expected a version specifier string, got {_describe(data)}")
        try:
            return SpecifierSet(data)
        except InvalidSpecifier:
            raise CodecError(path, f"invalid version specifier {data!r}") from None
    if origin is tuple:
        args = get_args(tp)
        if not isinstance(data, (list, tuple)):
            raise CodecError(path, f"expected a list, got {_describe(data)}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_convert(args[0], v, f"{path}[{i}]", strict) for i, v in enumerate(data))
        if len(args) != len(data):
            raise CodecError(path, f"expected {len(args)} items, got {len(data)}")
        return tuple(
            _convert(a, v, f"{path}[{i}]", strict)
            for i, (a, v) in enumerate(zip(args, data, strict=True))
        )
    if origin in (dict, Mapping) or tp in (dict, Mapping):
        args = get_args(tp) or (str, Any)
        if not isinstance(data, Mapping):
            raise CodecError(path, f"expected a table, got {_describe(data)}")
        out = {}
        for k, v in data.items():
            if not isinstance(k, str):
                raise CodecError(path, f"keys must be strings, got {_describe(k)}")
            out[k] = _convert(args[1], v, _join(path, k), strict)
        return out
    cls = origin if origin is not None else tp
    if isinstance(cls, type) and dataclasses.is_dataclass(cls):
        return _convert_dataclass(cls, get_args(tp), data, path, strict)
    raise CodecError(path, f"unsupported type {tp!r}")  # a programming error, not user input


def _convert_dataclass(
    cls: type, type_args: tuple[Any, ...], data: Any, path: str, strict: bool
) -> Any:
    if not isinstance(data, Mapping):
        raise CodecError(path, f"expected a table, got {_describe(data)}")
    hints = _hints(cls)
    params = getattr(cls, "__parameters__", ())
    subst = dict(zip(params, type_args, strict=False))
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    if strict:
        for key in data:
            if key not in fields:
                allowed = ", ".join(sorted(fields))
                raise CodecError(_join(path, str(key)), f"unknown key (allowed: {allowed})")
    kwargs = {}
    for name, f in fields.items():
        key_path = _join(path, name)
        if name not in data:
            no_default = (
                f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            )
            if no_default:
                raise CodecError(key_path, "missing required key")
            continue
        kwargs[name] = _convert(_substitute(hints[name], subst), data[name], key_path, strict)
    return cls(**kwargs)


def _substitute(tp: Any, subst: dict[Any, Any]) -> Any:
    if not subst:
        return tp
    if isinstance(tp, TypeVar):
        return subst.get(tp, Any)
    args = get_args(tp)
    if not args:
        return tp
    new_args = tuple(_substitute(a, subst) for a in args)
    origin = get_origin(tp)
    if origin is Union or origin is types.UnionType:
        return Union[new_args]  # noqa: UP007
    if origin is typing.Literal:
        return tp
    return tp.copy_with(new_args) if hasattr(tp, "copy_with") else origin[new_args]
