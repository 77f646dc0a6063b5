"""Load matrix TOML files strictly and merge site overlays over the built-in matrix.

Overlays come from ``--matrix DIR`` (repeatable) and ``ENVCHECK_MATRIX`` (``os.pathsep``
separated). An overlay entry with the same identity as a built-in one (a torch version, a rule
code, a GPU name, ...) replaces it; others are added.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from packaging.utils import canonicalize_name

from envcheck.errors import CodecError, MatrixError
from envcheck.matrix import ENV_VAR
from envcheck.matrix.fill import fill_in
from envcheck.matrix.generated import TABLES as GENERATED_TABLES
from envcheck.matrix.generated import Generated
from envcheck.matrix.locate import line_of
from envcheck.matrix.model import Matrix
from envcheck.matrix.python_names import LAZY as LAZY_TABLES
from envcheck.matrix.python_names import files_in as python_names_files
from envcheck.matrix.schema import MatrixFile
from envcheck.model.codec import from_dict

GENERATED_DIR = "generated"


def builtin_dir() -> Path:
    """The matrices shipped with envcheck: inside the installed package, or the source tree."""
    package = Path(__file__).resolve().parents[1]  # envcheck/, as importlib.resources names it
    packaged = package / "matrices"
    if packaged.is_dir():
        return packaged
    return package.parent / "matrices"


def overlay_dirs(cli_dirs: Sequence[str] = (), env: Mapping[str, str] | None = None) -> list[Path]:
    env = os.environ if env is None else env
    from_env = [Path(d) for d in env.get(ENV_VAR, "").split(os.pathsep) if d]
    dirs = from_env + [Path(d) for d in cli_dirs]
    for directory in dirs:
        if directory.is_dir():
            continue
        problem = (
            "is not a directory (a matrix overlay is a directory of *.toml files)"
            if directory.exists()
            else "matrix overlay directory does not exist"
        )
        given = f" (from {ENV_VAR})" if directory in from_env else ""
        raise MatrixError(problem + given, where=str(directory))
    return dirs


PROFILES_DIR = "profiles"


def matrix_files(directory: Path) -> list[Path]:
    """A matrix directory's curated files: ``*.toml`` in it and in its domain folders
    (``cuda/``, ``signatures/``, ...; matrices/README.md), in path order, without the files
    `envcheck matrix refresh` wrote (``generated/``) or the lock profiles (``profiles/``)."""
    # what ``directory.rglob("*.toml")`` finds (symbolic links to directories not followed),
    # walked with os.walk: pathlib's recursive glob costs ~2% of a whole `check`
    found: list[tuple[tuple[str, ...], Path]] = []
    for top, dirs, names in os.walk(directory):
        parts = Path(top).relative_to(directory).parts
        if not parts:
            dirs[:] = [d for d in dirs if d not in (GENERATED_DIR, PROFILES_DIR)]
        base = Path(top)
        for name in names:
            if name.endswith(".toml"):
                path = base / name
                if path.is_file():
                    found.append(((*parts, name), path))
    return [path for _, path in sorted(found, key=lambda item: item[0])]


def tree_files(directory: Path) -> list[Path]:
    """A matrix directory's files, then those `envcheck matrix refresh` wrote to generated/."""
    generated = directory / GENERATED_DIR
    try:
        names = sorted(os.listdir(generated))
    except OSError:  # none (or not a directory): what ``glob`` finds there
        names = []
    wanted = [generated / n for n in names if n.endswith(".toml") and n not in LAZY_TABLES]
    return matrix_files(directory) + [p for p in wanted if p.is_file()]


def parse_file(path: Path, cache_env: Mapping[str, str] | None = None) -> MatrixFile:
    """One matrix file, strictly decoded (``envcheck.inputs``: capped, never blocking); with
    ``cache_env``, through the compiled-file cache (:mod:`envcheck.matrix.compiled`) whose
    location that environment names."""
    text = read_file(path)
    if cache_env is None:
        return parse_text(text, str(path))
    from envcheck.matrix.compiled import compiled

    return compiled(text, str(path), parse_text, cache_env)


def read_file(path: Path) -> str:
    """A matrix file's text (``envcheck.inputs``: capped, never blocking)."""
    from envcheck.inputs import read_text

    return read_text(str(path), error=MatrixError, too_big="for a matrix file")


def parse_text(text: str, where: str) -> MatrixFile:
    # here, not at the top: a run that reads the compiled matrix parses no TOML
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        line = getattr(exc, "lineno", None)
        if line is None and "line " in message:
            line = int(message.rsplit("line ", 1)[1].split(",", maxsplit=1)[0].rstrip(")"))
        return _raise(
            MatrixError(f"invalid TOML: {message}", where=f"{where}:{line}" if line else where)
        )
    try:
        return from_dict(MatrixFile, data, strict=True)
    except CodecError as exc:
        line = line_of(text, exc.path) if exc.path else None
        raise MatrixError(
            exc.message, where=f"{where}:{line}" if line else where, key=exc.path
        ) from None


def _raise(error: MatrixError) -> MatrixFile:
    raise error


# the same few package names, thousands of times a load (one regular expression each)
_canonical = functools.lru_cache(maxsize=None)(canonicalize_name)

# identity of an entry: overlays replace entries with the same identity
IDENTITY: dict[str, Callable[[Any], object]] = {
    "toolkit": lambda e: e.cuda,
    "driver_branch": lambda e: e.branch,
    "sm": lambda e: e.arch,
    "gpu": lambda e: e.name,
    "torch": lambda e: e.version,
    "torch_index": lambda e: "torch_index",
    "vllm": lambda e: e.version,
    "ray": lambda e: e.version,
    "flash_attn": lambda e: e.version,
    "isaacsim": lambda e: e.version,
    "omnigibson": lambda e: str(e.versions),
    "os_release": lambda e: (e.os, e.version),
    "first_release": lambda e: (_canonical(e.package), e.kind, e.name),
    "ptx_isa": lambda e: e.isa,
    "soname": lambda e: (e.name, e.cuda_major),
    "libstdcxx": lambda e: e.symbol_version,
    "import_name": lambda e: e.module,
    "removed_symbol": lambda e: e.symbol,
    "keyword_change": lambda e: (_canonical(e.package), e.callee, e.keyword),
    "companion": lambda e: (e.package, e.version),
    "legacy_torch": lambda e: e.version,
    "override": lambda e: (e.package, str(e.replaces), str(e.torch)),
    "bound": lambda e: (
        _canonical(e.package),
        str(e.versions),
        _canonical(e.dependency),
    ),
    "wheel_platform": lambda e: (_canonical(e.package), e.arch, str(e.versions)),
    "known_bad": lambda e: e.code,
    "constant": lambda e: e.name,
    "signature": lambda e: e.id,
    "cuda_error": lambda e: (e.api, e.number, e.name, e.message),
    "arch_floor": lambda e: (_canonical(e.package), e.message),
    "extension": lambda e: _canonical(e.package),
    "gpu_build": lambda e: (_canonical(e.package), e.line),
    "xid": lambda e: e.number,
    "torch_wheel": lambda e: (e.version, e.arch),
    "vllm_metadata": lambda e: e.version,
    "ray_wheels": lambda e: e.version,
    "flash_attn_index": lambda e: e.version,
    "isaacsim_index": lambda e: e.version,
    "companion_metadata": lambda e: (_canonical(e.package), e.version),
}


def merge(parsed: Iterable[tuple[str, MatrixFile]]) -> Matrix:
    tables: dict[str, dict[object, Any]] = {name: {} for name in IDENTITY}
    origins: dict[int, tuple[str, str, int]] = {}
    names = []
    for name, mfile in parsed:
        names.append(name)
        for f in fields(MatrixFile):
            if f.name == "meta":
                continue
            key = IDENTITY[f.name]
            for index, entry in enumerate(getattr(mfile, f.name)):
                tables[f.name][key(entry)] = entry
                origins[id(entry)] = (name, f.name, index)
    values = {k: tuple(v.values()) for k, v in tables.items()}
    matrix = Matrix(
        files=tuple(names),
        toolkits=values["toolkit"],
        driver_branches=values["driver_branch"],
        sm_support=values["sm"],
        gpus=values["gpu"],
        torch_releases=values["torch"],
        torch_index=values["torch_index"][-1] if values["torch_index"] else None,
        vllm_releases=values["vllm"],
        ray_releases=values["ray"],
        flash_attn_releases=values["flash_attn"],
        isaacsim_releases=values["isaacsim"],
        omnigibson_releases=values["omnigibson"],
        os_releases=values["os_release"],
        first_releases=values["first_release"],
        ptx_isas=values["ptx_isa"],
        sonames=values["soname"],
        libstdcxx=values["libstdcxx"],
        import_names=values["import_name"],
        removed_symbols=values["removed_symbol"],
        keyword_changes=values["keyword_change"],
        companions=values["companion"],
        legacy_torch=values["legacy_torch"],
        overrides=values["override"],
        bounds=values["bound"],
        wheel_platforms=values["wheel_platform"],
        known_bad=values["known_bad"],
        constants={c.name: c for c in values["constant"]},
        signatures=tuple(sorted(values["signature"], key=lambda s: s.generic)),
        cuda_errors=values["cuda_error"],
        arch_floors=values["arch_floor"],
        extensions=values["extension"],
        gpu_builds=values["gpu_build"],
        xids=values["xid"],
        generated=Generated(**{name: values[name] for name in GENERATED_TABLES}),
        origins=origins,
    )
    return fill_in(matrix)


def load(
    cli_dirs: Sequence[str] = (),
    *,
    env: Mapping[str, str] | None = None,
    include_builtin: bool = True,
) -> Matrix:
    """The built-in matrix with every overlay merged over it, in order.

    Each file is read through the compiled cache, keyed by its content (see
    :mod:`envcheck.matrix.compiled`): an edited file or overlay is parsed again, never served
    stale. The cache's location comes from ``env`` when given, else from the process environment.
    Overlays are not cross-checked here: :func:`envcheck.matrix_validate.load` is this plus
    the checks `envcheck matrix validate` makes, and every command loads through it.
    """
    from envcheck.matrix import merged

    environ = os.environ if env is None else env
    overlays = overlay_dirs(cli_dirs, environ)
    dirs = ([builtin_dir()] if include_builtin else []) + overlays
    files = [tree_files(d) for d in dirs]
    # the generated names-by-release table is read lazily, when a failed import asks for it
    lazy = tuple(str(p) for d in dirs for p in python_names_files(d))
    started = merged.started()
    key = merged.key_of(dirs, files) if merged.cache_dir(environ) is not None else None

    def fresh() -> Matrix:
        return _merged_files([path for listed in files for path in listed], environ)

    kept = merged.load(environ, key, lazy, fresh) if key is not None else None
    if kept is not None:
        return kept
    matrix = fresh()
    if key is not None:
        merged.save(environ, key, matrix, started)
    return replace(matrix, python_names_files=lazy) if lazy else matrix


def _merged_files(paths: Sequence[Path], environ: Mapping[str, str]) -> Matrix:
    """Each file read, decoded through the compiled-file cache, then merged and filled."""
    from envcheck.matrix.compiled import compiled

    texts = [(str(path), read_file(path)) for path in paths]
    return merge((where, compiled(text, where, parse_text, environ)) for where, text in texts)
