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
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from envcheck.errors import MatrixError
from envcheck.matrix.schema import NameHistory, NameSpan

FILE = "python_names.toml"  # in a matrix directory's generated/ folder
IMPORTERS_FILE = "importers.toml"  # what each release of an importing package requires
LAZY = frozenset({FILE, IMPORTERS_FILE})  # read on first use, never when the matrix loads


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
class Importer:
    """One importing package's rows (generated/importers.toml): per release, its declared
    bounds on the libraries it imports and the names and modules it imports from them."""

    distribution: str
    packages: tuple[str, ...]
    source: str
    releases: tuple[Version, ...]
    requires: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # lib -> bound -> spans
    names: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # module -> name -> spans
    modules: Mapping[str, str] = field(default_factory=dict)  # module path -> spans

    def imports(self, module: str, name: str | None) -> tuple[NameSpan, ...] | None:
        """The spans of this package's releases that import ``name`` from ``module`` (``name``
        None: the module itself); None when the table does not record it."""
        spans = self.modules.get(module) if name is None else self.names.get(module, {}).get(name)
        if spans is None:
            return None
        return parse_spans(spans, self.releases, f"{self.distribution}: imports {module}")

    def bound(self, library: str, version: Version) -> SpecifierSet | None:
        """The bound release ``version`` declares on ``library`` (an empty set: no bound);
        None when that release is not scanned or declares nothing on it."""
        for bound, spans in self.requires.get(library, {}).items():
            for span in parse_spans(spans, self.releases, f"{self.distribution}: {library}"):
                if span.first <= version and (span.gone is None or version < span.gone):
                    return SpecifierSet(bound)
        return None

    def accepting(self, library: str, installed: Version) -> list[Version]:
        """The releases whose declared bound on ``library`` admits ``installed`` (no bound
        counts as admitting it)."""
        out = []
        for release in self.releases:
            bound = self.bound(library, release)
            if bound is None or bound.contains(installed, prereleases=True):
                out.append(release)
        return out


@dataclass(frozen=True)
class PythonNames:
    """The libraries of every python_names.toml read (a later file's library wins), and the
    importing packages of every importers.toml."""

    libraries: tuple[Library, ...] = ()
    files: tuple[str, ...] = ()
    importers: tuple[Importer, ...] = ()

    def importing(self, module: str, name: str | None) -> tuple[Importer, ...]:
        """The importing packages some release of which imports ``name`` from ``module``."""
        return tuple(i for i in self.importers if i.imports(module, name))

    def importer(self, distribution: str) -> Importer | None:
        """The importing package's rows, by its distribution name."""
        key = canonicalize_name(distribution)
        return next((i for i in self.importers if canonicalize_name(i.distribution) == key), None)

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
    return parse_tables(text, where)[0]


def _table(row: object, key: str, where: str) -> dict[str, Any]:
    if not isinstance(row, dict):
        raise MatrixError("not a table", where=where, key=key)
    return row


def _importer(row: dict[str, Any], key: str, where: str) -> Importer:
    try:
        releases = tuple(Version(str(v)) for v in row["releases"])
        found = Importer(
            distribution=str(row["distribution"]),
            packages=tuple(str(p) for p in row["packages"]),
            source=str(row["source"]),
            releases=releases,
            requires={
                str(lib): {str(b): str(t) for b, t in bounds.items()}
                for lib, bounds in _table(row.get("requires", {}), key, where).items()
            },
            names={
                str(m): {str(k): str(v) for k, v in names.items()}
                for m, names in _table(row.get("names", {}), key, where).items()
            },
            modules={str(k): str(v) for k, v in _table(row.get("modules", {}), key, where).items()},
        )
        for bounds in found.requires.values():
            for bound in bounds:
                SpecifierSet(bound)
    except KeyError as exc:
        raise MatrixError(f"missing key {exc.args[0]}", where=where, key=key) from None
    except (InvalidVersion, InvalidSpecifier, TypeError, AttributeError) as exc:
        raise MatrixError(f"invalid entry: {exc}", where=where, key=key) from None
    if not releases or list(releases) != sorted(releases):
        raise MatrixError("releases must be non-empty and ascending", where=where, key=key)
    for module, spans in [*found.modules.items()] + [
        (f"{m}.{n}", t) for m, names in found.names.items() for n, t in names.items()
    ]:
        parse_spans(spans, releases, f"{where}: {key} {module}")
    for lib, bounds in found.requires.items():
        for spans in bounds.values():
            parse_spans(spans, releases, f"{where}: {key} requires {lib}")
    return found


def parse_tables(text: str, where: str) -> tuple[tuple[Library, ...], tuple[Importer, ...]]:
    """A python_names.toml or importers.toml: its ``[[library]]`` and ``[[importer]]`` rows."""
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
    rows = data.get("importer", [])
    if not isinstance(rows, list):
        raise MatrixError("importer must be an array of tables ([[importer]])", where=where)
    importers = tuple(
        _importer(_table(row, f"importer[{i}]", where), f"importer[{i}]", where)
        for i, row in enumerate(rows)
    )
    return tuple(out), importers


@functools.lru_cache(maxsize=4)
def read(files: tuple[str, ...]) -> PythonNames:
    """The tables of ``files`` (read once per set of files)."""
    from envcheck.inputs import read_text

    libraries: dict[str, Library] = {}
    importers: dict[str, Importer] = {}
    for path in files:
        text = read_text(path, error=MatrixError, too_big="for a matrix file")
        libs, imps = parse_tables(text, path)
        for lib in libs:
            libraries[lib.distribution] = lib
        for imp in imps:
            importers[imp.distribution] = imp
    return PythonNames(
        libraries=tuple(libraries.values()), files=files, importers=tuple(importers.values())
    )


def files_in(directory: Path) -> list[Path]:
    """The lazily read tables of a matrix directory (its generated/ folder): python_names and
    importers, those present."""
    return [p for name in (FILE, IMPORTERS_FILE) if (p := directory / "generated" / name).is_file()]
