"""The Python interpreter and its installed distributions, read from metadata, never imported."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envcheck.errors import InputError
from envcheck.inputs import read_regular
from envcheck.model.report import BrokenDistribution, Distribution, PackagesInfo, PythonInfo
from envcheck.model.section import Section
from envcheck.patterns import lazy
from envcheck.probes import pyfacts
from envcheck.probes.context import ProbeContext
from envcheck.probes.run import run

if TYPE_CHECKING:
    from importlib.metadata import Distribution as MetadataDistribution


def interpreter_facts(ctx: ProbeContext) -> dict[str, Any] | str:
    """Facts of this interpreter, or of ``ctx.python``: pyfacts run in it isolated (``-I -S``:
    no site, so no .pth file or sitecustomize runs; no PYTHON* variable, user site or working
    directory) with a minimal environment (no secrets), only to learn its version, prefix and
    paths; its distributions are then read from those paths as data."""
    if ctx.python is None:
        return pyfacts.facts()
    source = Path(pyfacts.__file__).read_text(encoding="utf-8")
    result = run(
        [ctx.python, "-I", "-S", "-c", source], timeout=ctx.timeout, env=target_env(ctx.env)
    )
    if not result.ok:
        return f"could not run {ctx.python}: {result.describe_failure()}"
    try:
        data = json.loads(result.stdout)
    except ValueError:
        return f"{ctx.python} printed no facts (is it a Python 3 interpreter?)"
    if not isinstance(data, dict):
        return f"{ctx.python} printed no facts (is it a Python 3 interpreter?)"
    return data


_PASSED = ("CONDA_DEFAULT_ENV", "CONDA_PREFIX")  # named in the facts; never secrets


def target_env(env: Mapping[str, str]) -> dict[str, str]:
    """What an inspected interpreter is started with (always with ``-I -S``): a fixed PATH and
    the conda names the facts report, nothing else of envcheck's environment."""
    minimal = {"PATH": os.defpath, "LC_ALL": "C.UTF-8"}
    minimal.update({k: env[k] for k in _PASSED if env.get(k)})
    return minimal


def _env_kind(facts: dict[str, Any]) -> tuple[str, str | None]:
    prefix = Path(str(facts.get("prefix") or ""))
    if (prefix / "conda-meta").is_dir():
        same_env = facts.get("conda_prefix") and Path(str(facts["conda_prefix"])) == prefix
        name = facts.get("conda_env") if same_env else None
        return "conda", str(name) if name else prefix.name or "base"
    if facts.get("prefix") != facts.get("base_prefix") or (prefix / "pyvenv.cfg").is_file():
        return "venv", prefix.name or None
    if facts.get("prefix"):
        return "system", None
    return "unknown", None


def probe_python(facts: dict[str, Any] | str) -> Section[PythonInfo]:
    if isinstance(facts, str):
        return Section.error(facts)
    kind, name = _env_kind(facts)
    info = PythonInfo(
        version=str(facts.get("version", "")),
        implementation=str(facts.get("implementation", "")),
        executable=facts.get("executable"),
        prefix=facts.get("prefix"),
        base_prefix=facts.get("base_prefix"),
        env_kind=kind,  # type: ignore[arg-type]
        env_name=name,
        markers={str(k): str(v) for k, v in dict(facts.get("markers") or {}).items()},
        sys_path=tuple(str(p) for p in facts.get("sys_path") or ()),
        headers=facts["headers"] if isinstance(facts.get("headers"), bool) else None,
    )
    return Section.ok(info, source="interpreter" if facts else None)


MAX_METADATA = 16 * 1024**2  # the largest real METADATA (long descriptions) is ~1 MiB
MAX_REQUIRES = 2000  # the most Requires-Dist lines a real distribution has is a few hundred
_WANTED = ("name", "version", "requires-dist")


def parse_headers(text: str) -> dict[str, list[str]]:
    """Name, Version and Requires-Dist of a METADATA text (core metadata is RFC 822 headers
    up to the first blank line; a folded line continues the header before it). Linear, and
    at most MAX_REQUIRES Requires-Dist values are kept."""
    head = text.split("\n\n", 1)[0]
    if "\r" in head:
        head = text.replace("\r\n", "\n").split("\n\n", 1)[0]
    found: dict[str, list[str]] = {}
    last: list[str] | None = None
    for line in head.split("\n"):
        if line[:1] in (" ", "\t"):
            if last:
                last[-1] = f"{last[-1]} {line.strip()}"
            continue
        name, sep, value = line.partition(":")
        if not sep:
            break  # not a header: the body starts here
        key = name.strip().lower()
        if key not in _WANTED:
            last = None
            continue
        values = found.setdefault(key, [])
        if key == "requires-dist" and len(values) >= MAX_REQUIRES:
            last = None
            continue
        values.append(value.strip())
        last = values
    return found


class UnreadablePath(Exception):
    """A directory on the inspected path that cannot be listed (permissions)."""

    def __init__(self, path: str, why: str) -> None:
        super().__init__(f"site-packages unreadable: {path}: {why}")
        self.path = path


def find_distributions(search_path: Sequence[str]) -> list[Path] | None:
    """The metadata directories on ``search_path``, found and ordered exactly as
    ``importlib.metadata.distributions(path=...)`` finds them (its path finder, unchanged from
    Python 3.10 to 3.13): per entry, the ``*.dist-info`` and ``*.egg-info`` children of the
    directory in listing order, grouped by normalised project name in order of first
    appearance, then an egg's ``EGG-INFO`` when the entry is a ``*.egg`` directory. Found from
    the names alone, without importing importlib.metadata (and the email parser under it).
    None when an entry is a file (a zip archive): importlib.metadata reads those. A directory
    that exists but cannot be listed raises ``UnreadablePath``: what it holds is unknown, so the
    packages section is an error and the rules that need it skip (not "X is not installed")."""
    found: list[Path] = []
    for root in search_path:
        try:
            children = os.listdir(root or ".")
        except PermissionError as exc:
            # importlib.metadata would see nothing here; "not installed" would be a lie
            raise UnreadablePath(root, exc.strerror or "permission denied") from None
        except Exception:  # as importlib.metadata: a missing entry holds nothing
            if os.path.isfile(root):
                return None
            continue
        base = os.path.basename(root).lower()
        base_is_egg = base.endswith(".egg")
        infos: dict[str, list[Path]] = {}
        eggs: list[Path] = []
        for child in children:
            low = child.lower()
            if low.endswith((".dist-info", ".egg-info")):
                name = low.rpartition(".")[0].partition("-")[0]
                key = _SEPARATORS.sub("-", name).lower().replace("-", "_")
                infos.setdefault(key, []).append(Path(root, child))
            elif base_is_egg and low == "egg-info":
                eggs.append(Path(root, child))
        for group in infos.values():
            found.extend(group)
        found.extend(eggs)
    return found


_SEPARATORS = lazy(r"[-_.]+")


def _metadata_text(dist: Path | MetadataDistribution) -> str | None:
    """METADATA (or PKG-INFO) of a distribution. A dist-info directory is read through
    ``inputs.read_regular``: a FIFO or device in place of the file never blocks, and a huge
    one is refused. Other kinds (eggs in zips) go through importlib.metadata."""
    base = dist if isinstance(dist, Path) else getattr(dist, "_path", None)
    if not isinstance(base, Path):
        return dist.read_text("METADATA") or dist.read_text("PKG-INFO")
    folder = str(base)
    for name in ("METADATA", "PKG-INFO"):
        candidate = os.path.join(folder, name)  # base / name, without a path object
        if not os.path.lexists(candidate):
            continue
        try:
            data = read_regular(candidate, limit=MAX_METADATA)
        except InputError as exc:
            raise OSError(exc.message) from None
        return data.decode("utf-8", errors="replace")
    return None


def _egg_requires(dist: Path | MetadataDistribution) -> list[str] | None:
    """An egg-info's requirements (``requires.txt``, sections turned into markers), as
    importlib.metadata reads them."""
    if isinstance(dist, Path):
        from importlib.metadata import PathDistribution

        return PathDistribution(dist).requires
    return dist.requires


def _read_distribution(dist: Path | MetadataDistribution) -> Distribution | BrokenDistribution:
    if isinstance(dist, Path):
        path = str(dist)
    else:
        path = str(getattr(dist, "_path", "") or dist.locate_file(""))
    try:
        text = _metadata_text(dist)
    except (OSError, UnicodeDecodeError) as exc:
        return BrokenDistribution(path=path, reason=f"unreadable metadata ({exc})")
    if not text:
        return BrokenDistribution(path=path, reason="no METADATA file")
    headers = parse_headers(text)
    name = next(iter(headers.get("name") or ()), None)
    version = next(iter(headers.get("version") or ()), None)
    if not name:
        return BrokenDistribution(path=path, reason="METADATA has no Name")
    if not version:
        return BrokenDistribution(path=path, reason=f"METADATA of {name} has no Version")
    requires: list[str] | None = headers.get("requires-dist")
    if requires is None and path.endswith(".egg-info"):
        requires = _egg_requires(dist)
    installer = None
    try:
        installer_path = os.path.join(path, "INSTALLER")  # path: a path object's text
        if os.path.lexists(installer_path):
            raw = read_regular(installer_path, limit=4096)
            installer = raw.decode("utf-8", errors="replace").strip() or None
    except InputError:
        pass
    return Distribution(
        name=str(name).strip(),
        version=str(version).strip(),
        location=str(Path(path).parent) if path else None,
        installer=installer,
        requires=tuple(str(r).strip() for r in requires or ()),
    )


def probe_packages(facts: dict[str, Any] | str) -> Section[PackagesInfo]:
    if isinstance(facts, str):
        return Section.error(facts)
    search_path = tuple(str(p) for p in facts.get("sys_path") or ())
    dists: list[Distribution] = []
    broken: list[BrokenDistribution] = []
    try:
        found: Iterable[Path | MetadataDistribution] | None = find_distributions(search_path)
    except UnreadablePath as exc:
        return Section.error(str(exc))
    if found is None:
        from importlib import metadata

        found = metadata.distributions(path=list(search_path))
    for dist in found:
        record = _read_distribution(dist)
        (broken if isinstance(record, BrokenDistribution) else dists).append(record)  # type: ignore[arg-type]
    info = PackagesInfo(distributions=tuple(dists), broken=tuple(broken), search_path=search_path)
    return Section.ok(info, source="importlib.metadata")
