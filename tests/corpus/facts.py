"""The facts a parsed dump states, in the terms of a corpus case's ``[expect_facts]``, and the
comparison of the two (used by tests/corpus/test_dumps.py and scripts/corpus_dumps.py).

Each expected fact is compared with what the parser recorded, as written in the text, except
where the report deliberately normalises: ``nvcc`` is kept as major.minor (collect_env and
``nvcc -V`` print 12.2.140, the toolkit is 12.2), and a conda name (``pytorch``) is found under
its pip name (``torch``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from packaging.utils import canonicalize_name

from envcheck.ingest.common import major_minor, read_source
from envcheck.ingest.conda import CONDA_TO_PIP
from envcheck.ingest.detect import parse
from envcheck.model.report import NodeReport

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

CORPUS = Path(__file__).parent


def cases_with_dumps() -> list[Path]:
    return sorted(p.parent for p in CORPUS.glob("*/dump.txt"))


def expected_facts(case: Path) -> dict[str, Any]:
    data = tomllib.loads((case / "case.toml").read_text(encoding="utf-8"))
    facts: dict[str, Any] = data.get("expect_facts", {})
    return facts


def parse_dump(case: Path) -> NodeReport:
    return parse(read_source(str(case / "dump.txt")))


def _data(report: NodeReport, name: str) -> Any:
    section = getattr(report, name)
    return section.data if section.is_ok else None


def actual(report: NodeReport, key: str, expected: Any) -> Any:
    """The report's value for one ``[expect_facts]`` key, shaped like ``expected``."""
    gpu, system, python = _data(report, "gpu"), _data(report, "system"), _data(report, "python")
    packages, torch = _data(report, "packages"), _data(report, "torch")
    if key == "python":
        return python.version if python else None
    if key == "torch":
        if torch is not None:
            return torch.version
        return packages.version("torch") if packages else None
    if key == "driver":
        return gpu.driver_version if gpu else None
    if key == "cuda_driver":
        return gpu.cuda_driver_version if gpu else None
    if key == "gpus":
        return [g.name for g in gpu.gpus] if gpu and gpu.gpus else None
    if key == "glibc":
        return system.glibc if system else None
    if key == "os":
        return system.os_pretty if system else None
    if key == "nvcc":
        return system.nvcc.version if system and system.nvcc else None
    if key == "packages":
        found = {}
        for name in expected:
            dist = None
            if packages is not None:
                dist = packages.get(name) or packages.get(CONDA_TO_PIP.get(name, name))
            found[name] = dist.version if dist else None
        return found
    raise KeyError(f"unknown expect_facts key {key!r}")


def compare(report: NodeReport, expected: dict[str, Any]) -> list[str]:
    """One line per expected fact the report does not state as expected."""
    problems = []
    for key, stated in expected.items():
        got = actual(report, key, stated)
        want = major_minor(stated) if key == "nvcc" else stated
        if key == "packages":
            for name, version in want.items():
                if got.get(name) != version:
                    problems.append(
                        f"packages.{canonicalize_name(name)}: {got.get(name)!r} != {version!r}"
                    )
        elif got != want:
            problems.append(f"{key}: {got!r} != {want!r}")
    return problems
