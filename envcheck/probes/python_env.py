"""The Python interpreter and its installed distributions, read from metadata, never imported."""

from __future__ import annotations

import json
from email.parser import HeaderParser
from importlib import metadata
from pathlib import Path
from typing import Any

from envcheck.model.report import BrokenDistribution, Distribution, PackagesInfo, PythonInfo
from envcheck.model.section import Section
from envcheck.probes import pyfacts
from envcheck.probes.context import ProbeContext
from envcheck.probes.run import run


def interpreter_facts(ctx: ProbeContext) -> dict[str, Any] | str:
    """Facts of this interpreter, or of ``ctx.python`` (by running pyfacts in it)."""
    if ctx.python is None:
        return pyfacts.facts()
    source = Path(pyfacts.__file__).read_text(encoding="utf-8")
    env = {k: v for k, v in ctx.env.items() if k != "PYTHONHOME"}
    result = run([ctx.python, "-c", source], timeout=ctx.timeout, env=env)
    if not result.ok:
        return f"could not run {ctx.python}: {result.describe_failure()}"
    try:
        data = json.loads(result.stdout)
    except ValueError:
        return f"{ctx.python} printed no facts (is it a Python 3 interpreter?)"
    if not isinstance(data, dict):
        return f"{ctx.python} printed no facts (is it a Python 3 interpreter?)"
    return data


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
    )
    return Section.ok(info, source="interpreter" if facts else None)


_HEADERS = HeaderParser()


def _read_distribution(dist: metadata.Distribution) -> Distribution | BrokenDistribution:
    path = str(getattr(dist, "_path", "") or dist.locate_file(""))
    try:
        text = dist.read_text("METADATA") or dist.read_text("PKG-INFO")
    except (OSError, UnicodeDecodeError) as exc:
        return BrokenDistribution(path=path, reason=f"unreadable metadata ({exc})")
    if not text:
        return BrokenDistribution(path=path, reason="no METADATA file")
    headers = _HEADERS.parsestr(text, headersonly=True)
    name, version = headers.get("Name"), headers.get("Version")
    if not name:
        return BrokenDistribution(path=path, reason="METADATA has no Name")
    if not version:
        return BrokenDistribution(path=path, reason=f"METADATA of {name} has no Version")
    requires = headers.get_all("Requires-Dist")
    if requires is None and path.endswith(".egg-info"):
        requires = dist.requires
    installer = None
    try:
        installer_text = dist.read_text("INSTALLER")
        installer = installer_text.strip() or None if installer_text else None
    except OSError:
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
    for dist in metadata.distributions(path=list(search_path)):
        record = _read_distribution(dist)
        (broken if isinstance(record, BrokenDistribution) else dists).append(record)  # type: ignore[arg-type]
    info = PackagesInfo(distributions=tuple(dists), broken=tuple(broken), search_path=search_path)
    return Section.ok(info, source="importlib.metadata")
