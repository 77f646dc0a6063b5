"""The methods ``@dataclass`` generates, compiled with the package instead of at every run.

``@dataclass`` writes ``__init__``, ``__repr__``, ``__eq__``, ``__hash__`` (and a frozen class's
``__setattr__`` / ``__delattr__``) as source text and compiles it with ``exec`` every time a class
is created: about 65 µs a method on Python 3.11, a quarter of ``check``'s CPU time. The text
depends only on the class and the interpreter, so ``scripts/gen_dataclass_code.py`` writes the
texts of envcheck's own classes into ``envcheck/dataclass_methods/`` (a module per envcheck
module, imported when that module's first class is created), modules of the package: their code is compiled when the package is installed (or on first import, into the package's own
``__pycache__``), like every other module, and trusted exactly as much. Nothing is read from a
cache or an input: there is no code from data here (docs/security.md).

For the length of a CLI run (:func:`install`), the ``exec`` that the ``dataclasses`` module
calls is one that looks each text up there (by the text itself) and makes the function ``exec``
would have made, from the same code and with the same globals; a text it does not hold (another
Python version, a class changed since the module was generated) is compiled by ``exec`` as
usual. ``tests/model/test_dataclass_code.py`` checks that the module is current and that its
code is what ``exec`` compiles. The library (``import envcheck`` in a user's process) never
installs it.
"""

from __future__ import annotations

import builtins
import functools
import sys
import types
from collections.abc import Callable
from typing import Any

_ACTIVE: list[Callable[..., None]] = []


def table(module: str) -> dict[str, Any]:
    """The generated functions of ``module``'s dataclasses by their text (empty
    for a module without any, or on another interpreter)."""
    from envcheck import dataclass_methods

    name = module.removeprefix("envcheck.").replace(".", "__")
    if (
        sys.implementation.cache_tag != dataclass_methods.CACHE_TAG
        or not module.startswith("envcheck.")
        or name not in dataclass_methods.MODULES
    ):
        return {}
    import importlib

    found: dict[str, Any] = importlib.import_module(f"envcheck.dataclass_methods.{name}").FUNCTIONS
    return found


def install() -> bool:
    """Make ``dataclasses`` use the generated code (for the rest of this process)."""
    if _ACTIVE:
        return False
    import dataclasses

    from envcheck import dataclass_methods

    if sys.implementation.cache_tag != dataclass_methods.CACHE_TAG:
        return False
    tables: dict[str, dict[str, Any]] = {}

    def exec_(source: Any, globals: Any = None, locals: Any = None, /) -> None:
        if type(source) is str and type(locals) is dict and not locals and type(globals) is dict:
            module = str(globals.get("__name__", ""))
            known = tables.get(module)
            if known is None:
                known = tables[module] = table(module)
            found = known.get(source) if known else None
            if found is not None:
                # what `exec` of the text does: bind the function it defines in `locals`,
                # made from the same code with the caller's globals
                locals["__create_fn__"] = types.FunctionType(found.__code__, globals)
                return
        builtins.exec(source, globals, locals)

    dataclasses.exec = exec_  # type: ignore[attr-defined]  # the module's global, not builtins
    _ACTIVE.append(exec_)
    original = getattr(dataclasses, "_is_type", None)
    if original is not None and hasattr(dataclasses, "_MODULE_IDENTIFIER_RE"):
        _ORIGINAL_IS_TYPE[:] = [original]
        dataclasses._is_type = _is_type  # type: ignore[attr-defined]
    return True


_ORIGINAL_IS_TYPE: list[Callable[..., bool]] = []


@functools.lru_cache(maxsize=4096)
def _annotation_names(annotation: str) -> tuple[str | None, str] | None:
    """The module and name a string annotation starts with (``typing.ClassVar[int]``:
    ("typing", "ClassVar"); ``str | None``: (None, "str")), as ``dataclasses`` reads them."""
    import dataclasses

    match = dataclasses._MODULE_IDENTIFIER_RE.match(annotation)  # type: ignore[attr-defined]
    return (match.group(1), match.group(2)) if match else None


def _is_type(
    annotation: str,
    cls: type,
    a_module: Any,
    a_type: Any,
    is_type_predicate: Callable[[Any, Any], bool],
) -> bool:
    """``dataclasses._is_type`` (Python 3.10-3.13), its regular expression's match of each
    annotation kept: every field's string annotation is tested three times (ClassVar, InitVar,
    KW_ONLY), the same few dozen texts across all the classes."""
    names = _annotation_names(annotation)
    if names:
        ns = None
        module_name, name = names
        if not module_name:
            # no module name: the class's module imported the name itself
            ns = sys.modules.get(cls.__module__).__dict__
        else:
            module = sys.modules.get(cls.__module__)
            if module and module.__dict__.get(module_name) is a_module:
                ns = sys.modules.get(a_type.__module__).__dict__
        if ns and is_type_predicate(ns.get(name), a_module):
            return True
    return False


def uninstall() -> None:
    if not _ACTIVE:
        return
    import dataclasses

    if getattr(dataclasses, "exec", None) is _ACTIVE.pop():
        del dataclasses.exec  # type: ignore[attr-defined]
    if _ORIGINAL_IS_TYPE and getattr(dataclasses, "_is_type", None) is _is_type:
        dataclasses._is_type = _ORIGINAL_IS_TYPE.pop()  # type: ignore[attr-defined]
