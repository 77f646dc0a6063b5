"""Shared objects of editable installs, whose RECORD does not list them (they stay in the
source tree): where each install's source is, read from the files the installers write, never
by running them.

- PEP 660 (``pip install -e`` with a modern backend): ``<dist>.dist-info/direct_url.json``
  with ``"dir_info": {"editable": true}`` and a ``file://`` URL (the project directory), and
  setuptools' strict-mode finder ``__editable___<dist>_<version>_finder.py``, whose
  ``MAPPING`` (a literal dict, read with ``ast``) names each package's directory.
- ``setup.py develop`` (and ``pip install -e`` of old setuptools): ``<dist>.egg-link``, whose
  first line is the project directory.

Under each directory the extension modules and libraries an in-place build left
(``*.so``, ``*.so.N``) are found with a bounded walk: hidden directories, ``build/``,
``node_modules`` and caches are passed over, at most ``MAX_DEPTH`` levels and ``MAX_ENTRIES``
directory entries per install.
"""

from __future__ import annotations

import ast
import json
import os
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urlsplit

from envcheck.patterns import lazy

MAX_DEPTH = 6
MAX_ENTRIES = 20_000
MAX_META = 256 * 1024  # direct_url.json, an .egg-link, a finder: a few lines each
_SKIP = {"build", "dist", "node_modules", "__pycache__", "site-packages", "tests", "docs"}
_SHARED = lazy(r"\.so(?:\.\d+)*$")
FINDER = lazy(r"^__editable___(?P<dist>.+?)_\d[\w.+!]*_finder\.py$")  # version: 0_1


def _text(path: Path) -> str | None:
    try:
        with path.open("rb") as handle:
            return handle.read(MAX_META).decode("utf-8", errors="replace")
    except OSError:
        return None


def _direct_url_dir(info: Path) -> Path | None:
    text = _text(info / "direct_url.json")
    if text is None:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("dir_info"), dict):
        return None
    url = data.get("url")
    if data["dir_info"].get("editable") is not True or not isinstance(url, str):
        return None
    parts = urlsplit(url)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
        return None
    path = unquote(parts.path)
    return Path(path) if os.path.isabs(path) else None


def _finder_dirs(path: Path) -> list[Path]:
    """The package directories a setuptools finder's ``MAPPING = {...}`` names."""
    text = _text(path)
    if text is None:
        return []
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return []
    for node in tree.body:
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        target = node.targets[0]
        if isinstance(target, ast.Name) and target.id == "MAPPING":
            try:
                mapping = ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError, RecursionError):
                return []
            if isinstance(mapping, dict):
                return [
                    Path(v) for v in mapping.values() if isinstance(v, str) and os.path.isabs(v)
                ]
    return []


def editable_sources(site: Path) -> Iterator[tuple[Path, str]]:
    """(source directory, distribution) of every editable install in ``site``."""
    try:
        names = sorted(os.listdir(site))
    except OSError:
        return
    for name in names:
        if name.endswith(".dist-info"):
            found = _direct_url_dir(site / name)
            if found is not None:
                yield found, name.split("-")[0]
        elif name.endswith(".egg-link"):
            text = _text(site / name) or ""
            first = text.splitlines()[0].strip() if text.strip() else ""
            if os.path.isabs(first):
                yield Path(first), name[: -len(".egg-link")]
        else:
            match = FINDER.match(name)
            if match:
                for folder in _finder_dirs(site / name):
                    yield folder, match.group("dist")


def shared_objects(root: Path) -> Iterator[Path]:
    """The shared objects under ``root`` (a bounded walk; see the module's docstring)."""
    budget = MAX_ENTRIES
    todo: list[tuple[Path, int]] = [(root, 0)]
    while todo and budget > 0:
        folder, depth = todo.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            budget -= 1
            if budget <= 0:
                return
            try:
                if entry.is_dir(follow_symlinks=False):
                    if (
                        depth < MAX_DEPTH
                        and not entry.name.startswith(".")
                        and (entry.name not in _SKIP and not entry.name.endswith(".egg-info"))
                    ):
                        todo.append((Path(entry.path), depth + 1))
                elif _SHARED.search(entry.name) and entry.is_file(follow_symlinks=False):
                    yield Path(entry.path)
            except OSError:
                continue


def editable_objects(site: Path) -> Iterator[tuple[Path, str]]:
    """(shared object, distribution) for the editable installs of ``site``."""
    seen: set[Path] = set()
    for root, dist in editable_sources(site):
        for path in shared_objects(root):
            if path not in seen:
                seen.add(path)
                yield path, dist
