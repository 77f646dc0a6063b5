"""A library the loader could not find that the log itself shows installed: a listing pasted
beside the failure (``locate``, ``find / -name``, ``ls``, ``type -P``) prints the file's path.
The package is then installed where the loader does not look, and the fix is that directory
on LD_LIBRARY_PATH (faster-whisper#297: the nvidia-cudnn wheel's lib directory under
~/.local), not another install. Read by SYS150 and CUD154."""

from __future__ import annotations

import dataclasses
import posixpath

from envcheck.rules.base import Hit, LogLine
from envcheck.rules.fixes import fix, manual


def located_directory(line: LogLine, soname: str) -> str | None:
    """The directory a listing in the log shows ``soname`` in (its basename is the SONAME or a
    longer version of it: libcudnn_ops_infer.so.8.9.2 for libcudnn_ops_infer.so.8)."""
    path = line.stated.get("library_found")
    if not path or not soname:
        return None
    name = posixpath.basename(path)
    if name != soname and not name.startswith(soname + "."):
        return None
    return posixpath.dirname(path) or None


def lead_with_located(hit: Hit, line: LogLine, soname: str) -> Hit:
    """``hit`` with the located directory first in its fix, where the log lists the file."""
    where = located_directory(line, soname)
    if where is None or hit.fix is None:
        return hit
    export = f"export LD_LIBRARY_PATH={where}:$LD_LIBRARY_PATH"
    led = fix(
        f"{soname} is installed in {where} (the log lists it), where the loader does not "
        f"look: {export}; otherwise: {hit.fix.summary}",
        hit.fix.applicability,
        manual(export),
        *hit.fix.actions,
    )
    return dataclasses.replace(
        hit,
        message=f"{hit.message}; the log lists {soname} in {where}",
        evidence={**hit.evidence, "located": where},
        fix=led,
    )
