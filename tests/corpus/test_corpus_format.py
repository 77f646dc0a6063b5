"""Shape of the corpus cases under tests/corpus/<id>/ (see README.md)."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

CORPUS = Path(__file__).parent
FRESH = CORPUS.parent / "heldout_fresh"  # the blind fresh set has the same shape
CASES = sorted(
    p
    for root in (CORPUS, FRESH)
    if root.is_dir()
    for p in root.iterdir()
    if p.is_dir() and (p / "case.toml").is_file()
)
INPUTS = ("log.txt", "dump.txt", "spec.toml")
KINDS = {"failure", "clean"}
CATEGORIES = {
    "driver",
    "cuda-libs",
    "torch-build",
    "packages",
    "vllm",
    "ray",
    "network",
    "system",
    "simulator",
    "python",
    "clean",
}
STRINGS = ("url", "project", "kind", "category", "title", "cause", "fix")
ID = re.compile(r"^[a-z0-9][a-z0-9._-]*-[0-9]+(-[a-z0-9._-]+)?$")
URL = re.compile(r"^https://github\.com/[^/\s]+/[^/\s]+/(issues|pull|discussions)/[0-9]+")


def _load(case: Path) -> dict[str, Any]:
    with (case / "case.toml").open("rb") as f:
        data: dict[str, Any] = tomllib.load(f)
    return data


def test_there_are_cases() -> None:
    assert CASES, "no corpus cases found"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case_shape(case: Path) -> None:
    data = _load(case)
    assert ID.match(case.name), f"{case.name}: id must be <project>-<number>[-suffix], lowercase"
    for key in STRINGS:
        assert isinstance(data.get(key), str), f"{case.name}: {key} must be a string"
        assert data[key].strip() or key == "fix", f"{case.name}: {key} is empty"
    assert URL.match(data["url"]), f"{case.name}: url must be a github.com issue/pull/discussion"
    assert data["kind"] in KINDS, f"{case.name}: kind {data['kind']!r}"
    assert data["category"] in CATEGORIES, f"{case.name}: category {data['category']!r}"
    codes = data.get("expect_codes")
    assert isinstance(codes, list) and all(isinstance(c, str) for c in codes)
    assert all(re.fullmatch(r"[A-Z]{2,4}[0-9]{3}", c) for c in codes), f"{case.name}: {codes}"
    fixes = data.get("expect_fix", [])
    assert isinstance(fixes, list) and all(isinstance(x, str) and x for x in fixes)
    assert isinstance(data.get("expect_new", ""), str)
    assert isinstance(data.get("notes", ""), str)
    if data["kind"] == "clean":
        assert data["category"] == "clean", f"{case.name}: clean cases use category 'clean'"
        assert codes == [], f"{case.name}: clean cases expect no codes"
    elif not codes:
        assert data.get("expect_new", "").strip(), (
            f"{case.name}: no code fits, so expect_new says why"
        )
    facts = data.get("expect_facts", {})
    assert isinstance(facts, dict)
    if "gpus" in facts:
        assert isinstance(facts["gpus"], list)
    if "packages" in facts:
        assert isinstance(facts["packages"], dict)
        assert all(isinstance(v, str) for v in facts["packages"].values())


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case_inputs(case: Path) -> None:
    present = [name for name in INPUTS if (case / name).is_file()]
    assert present, f"{case.name}: needs at least one of {INPUTS}"
    for name in present:
        text = (case / name).read_text(encoding="utf-8")
        assert text.strip(), f"{case.name}/{name} is empty"
        assert len(text.encode()) < 64 * 1024, f"{case.name}/{name} is too big"
    if (case / "spec.toml").is_file():
        with (case / "spec.toml").open("rb") as f:
            tomllib.load(f)
    extra = {p.name for p in case.iterdir()} - {"case.toml", *INPUTS}
    assert not extra, f"{case.name}: unexpected files {sorted(extra)}"
