"""The generated table of Python names and modules by release (generated/python_names.toml).

scripts/gen_python_names.py reads libraries' own source history (git tags or wheels) and
writes, per library, the names of its public modules and its module paths whose presence
changed over the releases scanned, as spans of releases. The file is large and only a failed
import needs it, so it is read lazily, the first time PY150/PY151 ask (:meth:`Matrix.python_name`),
never when the matrix loads.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from packaging.version import InvalidVersion, Version

from envcheck.errors import MatrixError
from envcheck.matrix.schema import NameHistory, NameSpan

FILE = "python_names.toml"  # in a matrix directory's generated/ folder


@dataclass(frozen=True)
class Library:
    """One library's rows: its releases scanned, module paths and names by module."""

    distribution: str
    packages: tuple[str, ...]
    source: str
    releases: tuple[Version, ...]
    modules: Mapping[str, str] = field(default_factory=dict)  # module path -> spans text
    names: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # module -> name -> spans

    def owns(self, module: str) -> bool:
        return any(module == p or module.startswith(p + ".") for p in self.packages)

    def history(self, module: str, name: str | None, spans: str, where: str) -> NameHistory:
        return NameHistory(
            distribution=self.distribution,
            module=module,
            name=name,
            spans=parse_spans(spans, self.releases, where),
            oldest=self.releases[0],
            newest=self.releases[-1],
            source=self.source,
        )


@dataclass(frozen=True)
class PythonNames:
    """The libraries of every python_names.toml read (a later file's library wins)."""

    libraries: tuple[Library, ...] = ()
    files: tuple[str, ...] = ()

    def library(self, module: str) -> Library | None:
        """The library whose packages hold ``module`` (the most specific package first)."""
        owners = [lib for lib in self.libraries if lib.owns(module)]
        return max(owners, key=lambda lib: max(len(p) for p in lib.packages), default=None)

    def name(self, module: str, name: str) -> NameHistory | None:
        """The releases that have ``name`` in ``module``; None when its presence never changed
        over the releases scanned, or the module is not scanned."""
        lib = self.library(module)
        if lib is None:
            return None
        spans = lib.names.get(module, {}).get(name)
        if spans is None:
            return None
        return lib.history(module, name, spans, f"{lib.distribution}: {module}.{name}")

    def module(self, path: str) -> NameHistory | None:
        """The releases that have the module ``path``, or the deepest of its parents whose
        presence changed (``a.b.c`` missing because ``a.b`` is); None when none changed."""
        lib = self.library(path)
        if lib is None:
            return None
        parts = path.split(".")
        for n in range(len(parts), 1, -1):
            dotted = ".".join(parts[:n])
            spans = lib.modules.get(dotted)
            if spans is not None:
                return lib.history(dotted, None, spans, f"{lib.distribution}: {dotted}")
        return None

    def scanned(self, module: str) -> bool:
        """Whether the library that holds ``module`` was scanned."""
        return self.library(module) is not None


def parse_spans(text: str, releases: tuple[Version, ...], where: str) -> tuple[NameSpan, ...]:
    """``"A.., C..D"`` -> spans; each "A..L" span's ``gone`` is the release after L."""
    out = []
    for part in text.split(","):
        first_text, sep, last_text = part.strip().partition("..")
        try:
            first = Version(first_text)
            last = Version(last_text) if last_text else None
        except InvalidVersion:
            raise MatrixError(f"invalid span {part.strip()!r}", where=where) from None
        if not sep:
            raise MatrixError(f"invalid span {part.strip()!r} (A.. or A..L)", where=where)
        gone = next((r for r in releases if last is not None and r > last), None)
        out.append(NameSpan(first=first, last=last, gone=gone))
    return tuple(out)


def parse(text: str, where: str) -> tuple[Library, ...]:
    """One python_names.toml; a wrong shape is a MatrixError naming the file and the key."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise MatrixError(f"invalid TOML: {exc}", where=where) from None
    rows = data.get("library", [])
    if not isinstance(rows, list):
        raise MatrixError("library must be an array of tables ([[library]])", where=where)
    out = []
    for index, row in enumerate(rows):
        key = f"library[{index}]"
        if not isinstance(row, dict):
            raise MatrixError("not a table", where=where, key=key)
        try:
            releases = tuple(Version(v) for v in row["releases"])
            lib = Library(
                distribution=str(row["distribution"]),
                packages=tuple(str(p) for p in row["packages"]),
                source=str(row["source"]),
                releases=releases,
                modules={str(k): str(v) for k, v in row.get("modules", {}).items()},
                names={
                    str(m): {str(k): str(v) for k, v in names.items()}
                    for m, names in row.get("names", {}).items()
                },
            )
        except KeyError as exc:
            raise MatrixError(f"missing key {exc.args[0]}", where=where, key=key) from None
        except (InvalidVersion, TypeError, AttributeError) as exc:
            raise MatrixError(f"invalid entry: {exc}", where=where, key=key) from None
        if not releases or list(releases) != sorted(releases):
            raise MatrixError("releases must be non-empty and ascending", where=where, key=key)
        out.append(lib)
    return tuple(out)


@functools.lru_cache(maxsize=4)
def read(files: tuple[str, ...]) -> PythonNames:
    """The tables of ``files`` (read once per set of files)."""
    from envcheck.inputs import read_text

    libraries: dict[str, Library] = {}
    for path in files:
        text = read_text(path, error=MatrixError, too_big="for a matrix file")
        for lib in parse(text, path):
            libraries[lib.distribution] = lib
    return PythonNames(libraries=tuple(libraries.values()), files=files)


def files_in(directory: Path) -> list[Path]:
    """The python_names table of a matrix directory (its generated/ folder), if any."""
    path = directory / "generated" / FILE
    return [path] if path.is_file() else []
