"""Records whose fields are filled in on first use: the merged matrix read back from its kept
entry (:mod:`envcheck.matrix.merged`) decodes a table only when a rule asks for it.

:func:`allow_lazy` takes the class-level defaults off a frozen dataclass (its generated
``__init__`` keeps its own) and gives it a ``__getattr__``, which Python calls only for a field
missing from the instance: an instance made by ``__init__`` has every field and never gets
there. An instance made by :func:`lazy_instance` holds some fields already and a
:class:`Pending` for the rest, which fills each one in (once, under a lock: the rules may be
selected on one thread and run on another) and stores it where ``__init__`` would have.
Everything else (equality, ``dataclasses.replace``, ``fields``, the codec) reads the fields by
name and so fills them in first: the same values either way.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

T = TypeVar("T")

_PENDING = "_pending"  # the instance attribute holding what is still to be filled in


class Pending:
    """The fields not yet filled in, each with the function that makes its value."""

    def __init__(self, makers: Mapping[str, Callable[[], Any]]) -> None:
        self._makers = dict(makers)
        self._made: dict[str, Any] = {}  # the same value for every copy of the instance
        self._lock = threading.RLock()

    def fill(self, instance: object, name: str) -> Any:
        with self._lock:
            values = instance.__dict__
            if name in values:  # filled in by another thread meanwhile
                return values[name]
            if name not in self._made:
                maker = self._makers.get(name)
                if maker is None:
                    raise AttributeError(
                        f"{type(instance).__name__!r} object has no attribute {name!r}"
                    )
                self._made[name] = maker()
            value = self._made[name]
            values[name] = value
            return value


def _getattr(self: object, name: str) -> Any:
    pending = self.__dict__.get(_PENDING)
    if pending is None or name.startswith("__"):
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
    return pending.fill(self, name)


def allow_lazy(cls: type[T]) -> type[T]:
    """Let ``cls`` (a dataclass) have instances whose fields fill in on first use."""
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if f.name in cls.__dict__:
            delattr(cls, f.name)  # the class default would answer before __getattr__
    setattr(cls, "__getattr__", _getattr)  # noqa: B010 - hidden from the type checker
    return cls


def lazy_instance(
    cls: type[T], ready: Mapping[str, Any], makers: Mapping[str, Callable[[], Any]]
) -> T:
    """An instance of ``cls`` (made lazy by :func:`allow_lazy`) with the fields ``ready`` and
    the others made by ``makers`` on first use; together they name every field."""
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    if set(ready) | set(makers) != names or set(ready) & set(makers):
        raise ValueError(f"{cls.__name__}: every field, once: {sorted(names)}")
    instance: Any = object.__new__(cls)
    instance.__dict__.update(ready)
    instance.__dict__[_PENDING] = Pending(makers)
    return instance  # type: ignore[no-any-return]
