"""Per-file results kept between runs, keyed by (path, size, mtime, inode), as JSON: data
only, read through cachefiles' checks (a directory of this user's that no one else can write
to, a regular file this user owns); a damaged or foreign file reads as empty."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from envcheck.cachefiles import cache_root, read_own, safe_dir

FORMAT = 3  # 2: ptx_isa holds one ISA per PTX architecture; 3: fatbins in .ldata/.lrodata too
FILE_NAME = f"binaries-v{FORMAT}.json"
MAX_ENTRIES = 20_000


def file_key(stat: os.stat_result) -> list[int]:
    return [stat.st_size, stat.st_mtime_ns, stat.st_ino]


class FileCache:
    def __init__(self, env: Mapping[str, str]) -> None:
        root = cache_root(env)
        self.directory = root
        self.entries: dict[str, Any] = {}
        self.changed = False
        self.seen: set[str] = set()
        if root is None or not safe_dir(root):
            return
        raw = read_own(root / FILE_NAME)
        if raw is None:
            return
        try:
            data = json.loads(raw)
        except ValueError:
            return
        if isinstance(data, dict) and data.get("format") == FORMAT:
            entries = data.get("files")
            if isinstance(entries, dict):
                self.entries = entries

    def get(self, path: str, key: list[int]) -> dict[str, Any] | None:
        self.seen.add(path)
        entry = self.entries.get(path)
        if isinstance(entry, dict) and entry.get("key") == key:
            return entry
        return None

    def put(self, path: str, key: list[int], value: dict[str, Any]) -> None:
        self.seen.add(path)
        self.entries[path] = {**value, "key": key}
        self.changed = True

    def save(self) -> None:
        if not self.changed or self.directory is None:
            return
        directory: Path = self.directory
        try:
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            if not safe_dir(directory):
                return
            keep = {p: e for p, e in self.entries.items() if p in self.seen}
            for path, entry in self.entries.items():
                if len(keep) >= MAX_ENTRIES:
                    break
                keep.setdefault(path, entry)
            import tempfile

            fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=directory)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    json.dump({"format": FORMAT, "files": keep}, handle, separators=(",", ":"))
                os.replace(tmp, directory / FILE_NAME)
            except OSError:
                Path(tmp).unlink(missing_ok=True)
        except OSError:
            return
