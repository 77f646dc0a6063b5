"""The compiled code of the methods ``dataclasses`` generates, kept between runs of the CLI.

``@dataclass`` writes the source of ``__init__``, ``__repr__``, ``__eq__``, ``__hash__`` (and
``__setattr__`` / ``__delattr__`` for a frozen class) as text and compiles it with ``exec`` each
time a class is created: about 0.85 ms per class on Python 3.11, and a command creates 30 to 80
of them at import (a quarter of ``check``'s time, more than the matrix load). The compiled
code depends only on that text and the interpreter, so it can be kept like a ``.pyc``: for the
length of a CLI run (:func:`install`), the ``exec`` that the ``dataclasses`` module calls is
one that compiles each distinct text once, exactly as ``exec`` would (file ``<string>``, no
inherited ``__future__`` flags, the interpreter's optimisation level), and remembers the code
object; :func:`save` writes the code objects of texts first seen in this run to the cache
directory with ``marshal``. Nothing that depends on the node is kept: the key is the source
text itself, and the file is named after the interpreter (bytecode cache tag, version, marshal format,
optimisation level) and holds its full version string (with the build), so another interpreter
never uses it.

Safety, as for the compiled matrix: the file is only read from a directory owned by this user
and not writable by others, when it is a regular file owned by this user; anything else, and
any error while reading, is an empty cache. ``ENVCHECK_NO_CACHE=1`` turns it off;
``ENVCHECK_CACHE_DIR`` moves it. The library (``import envcheck`` in a user's process) never
installs it: only the ``envcheck`` command does, in its own process.
"""

from __future__ import annotations

import builtins
import contextlib
import marshal
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from types import CodeType
from typing import Any

from envcheck.cachefiles import cache_root, read_own, safe_dir

_MAX_ENTRIES = 2048  # distinct texts kept; past it, only this run's are written


def _interpreter_key() -> str:
    """The file's name; the full version string (with the build) is checked inside it."""
    tag = sys.implementation.cache_tag or sys.implementation.name
    return f"{tag}-{sys.hexversion:x}-m{marshal.version}-o{sys.flags.optimize}"


class CodeCache:
    """Code objects by source text; ``exec`` is the drop-in for the builtin."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.codes: dict[str, CodeType] = {}
        self.used: set[str] = set()
        self.added = False

    def load(self) -> None:
        if self.path is None or not safe_dir(self.path.parent):
            return
        data = read_own(self.path)
        if data is None:
            return
        try:
            value = marshal.loads(data)  # our own file, checked above
        except (EOFError, ValueError, TypeError):
            return
        if not (isinstance(value, tuple) and len(value) == 2 and value[0] == sys.version):
            return  # another build of this Python version (or not our format)
        if isinstance(value[1], dict):
            self.codes = {
                k: v for k, v in value[1].items() if isinstance(k, str) and isinstance(v, CodeType)
            }

    def compiled(self, source: str) -> CodeType:
        code = self.codes.get(source)
        if code is None:
            # what exec(source) compiles: the file name "<string>", the calling module's
            # __future__ flags not inherited (dataclasses has none), this interpreter's -O
            code = compile(source, "<string>", "exec", dont_inherit=True)
            self.codes[source] = code
            self.added = True
        self.used.add(source)
        return code

    def exec(self, source: Any, globals: Any = None, locals: Any = None, /) -> None:
        if isinstance(source, str):
            source = self.compiled(source)
        builtins.exec(source, globals, locals)

    def save(self) -> None:
        if not self.added or self.path is None:
            return
        keep = self.codes
        if len(keep) > _MAX_ENTRIES:
            keep = {k: v for k, v in keep.items() if k in self.used}
        with contextlib.suppress(OSError, ValueError):
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            if not safe_dir(self.path.parent):
                return
            temp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(marshal.dumps((sys.version, keep)))
                os.replace(temp, self.path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temp)
                raise
        self.added = False


_ACTIVE: list[CodeCache] = []  # the installed cache, at most one


def install(env: Mapping[str, str] | None = None) -> CodeCache | None:
    """Make ``dataclasses`` compile through the cache (for the rest of this process). Returns
    the cache, or None when caching is off or it is installed already."""
    if _ACTIVE:
        return None
    import dataclasses

    root = cache_root(os.environ if env is None else env)
    if root is None:
        return None
    cache = CodeCache(root / "code" / f"dataclasses-{_interpreter_key()}.marshal")
    cache.load()
    dataclasses.exec = cache.exec  # type: ignore[attr-defined]  # the module's global, not builtins
    _ACTIVE.append(cache)
    return cache


def uninstall() -> None:
    """Back to the builtin ``exec``, writing what this run compiled first."""
    if not _ACTIVE:
        return
    cache = _ACTIVE.pop()
    import dataclasses

    if getattr(dataclasses, "exec", None) == cache.exec:
        del dataclasses.exec  # type: ignore[attr-defined]
    cache.save()
