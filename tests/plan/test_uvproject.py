"""Locks on uv's project resolver, against two indexes served on loopback (one plays the
PyTorch index): explicit per-package index pinning, multi-target locks, --exclude-newer,
kept pins, local paths refused, an unreachable index told apart from "no resolution"."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from envcheck.matrix.model import Matrix
from envcheck.model.plan import Target
from envcheck.plan.resolve import IndexConfig, ResolveFailed, find_uv, pip_index_config
from envcheck.plan.stack import add_overrides, choose_stack
from envcheck.plan.uvproject import (
    IndexUnreachable,
    LocalIndexRefused,
    LockRequest,
    LockTargets,
    lock_project,
    pins_per_target,
    project_text,
)
from envcheck.rules.base import Rule
from tests.index.wheels import WheelIndexes
from tests.plan.conftest import LocalIndex
from tests.wheelfactory import CUDA_MARK, WheelSpec

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PY311 = LockTargets(("3.11",))


def _request(stack: object, index: IndexConfig, **kw: object) -> LockRequest:
    return LockRequest(stack, index, kw.pop("targets", PY311), **kw)  # type: ignore[arg-type]


def test_resolves_vllm_063_with_the_cublas_override(
    local_index: LocalIndex, matrix: Matrix, rules: Sequence[Rule]
) -> None:
    target = Target(python="3.11", glibc="2.35", driver="535.104.05", gpus=("NVIDIA H20",))
    stack = add_overrides(choose_stack(matrix, target, ["vllm==0.6.3"]), matrix, rules)
    request = _request(stack, IndexConfig(index_url=local_index.url))
    got = lock_project(request, uv=find_uv(), timeout=120)
    assert got.pins == {
        "filelock": "3.16.1",
        "numpy": "1.26.4",
        "nvidia-cublas-cu12": "12.3.4.1",
        "ray": "2.40.0",
        "torch": "2.4.0",
        "vllm": "0.6.3",
    }
    assert "--hash=sha256:" in got.text
    assert "envcheck-lock-" not in got.text  # no temp paths leak into the lock
    # deterministic: the same inputs give the same lock
    assert lock_project(request, uv=find_uv(), timeout=120).text == got.text


def test_the_pytorch_index_is_explicit_and_pinned_per_package(
    local_index: LocalIndex, tmp_path: Path
) -> None:
    """The variant index also serves a numpy 9.9 (a dependency-confusion bait): only torch,
    triton and nvidia-* may come from there, everything else from the default index."""
    served = WheelIndexes(tmp_path)
    served.add("pypi", [WheelSpec("numpy", "1.26.4"), WheelSpec("filelock", "3.16.1")])
    served.add(
        "whl/cu128",
        [
            WheelSpec("torch", "2.7.0+cu128", (f"nvidia-cublas-cu12; {CUDA_MARK}", "numpy")),
            WheelSpec("nvidia-cublas-cu12", "12.8.4.1"),
            WheelSpec("numpy", "9.9"),
            WheelSpec("filelock", "99.0"),
        ],
    )
    served.start()
    try:
        from envcheck.model.plan import Stack

        stack = Stack(
            Target(python="3.11"),
            ("torch==2.7.0", "filelock"),
            overrides=("nvidia-cublas-cu12==12.8.4.1",),
            torch_index_url=served.url("whl/cu128"),
        )
        text = project_text(_request(stack, IndexConfig(index_url=served.url("pypi"))))
        data = tomllib.loads(text)
        pytorch = next(i for i in data["tool"]["uv"]["index"] if i["name"] == "pytorch")
        assert pytorch["explicit"] is True
        assert data["tool"]["uv"]["sources"] == {
            "torch": {"index": "pytorch"},
            "nvidia-cublas-cu12": {"index": "pytorch"},
        }
        got = lock_project(
            _request(stack, IndexConfig(index_url=served.url("pypi")), fmt="pylock"),
            uv=find_uv(),
            timeout=120,
        )
        packages = {p["name"]: p for p in tomllib.loads(got.text)["packages"]}
        assert got.pins["torch"] == "2.7.0+cu128"
        assert got.pins["numpy"] == "1.26.4" and got.pins["filelock"] == "3.16.1"
        assert packages["numpy"]["index"] == served.url("pypi")
        assert packages["torch"]["index"] == served.url("whl/cu128")
        assert packages["nvidia-cublas-cu12"]["index"] == served.url("whl/cu128")
        # nothing but torch's own wheels was asked of the variant index
        asked = {h.split("/")[-2] for h in served.hits if "/whl/cu128/" in h and "files" not in h}
        assert asked <= {"torch", "nvidia-cublas-cu12"}, asked
    finally:
        served.stop()


def test_one_lock_for_several_targets(local_index: LocalIndex, tmp_path: Path) -> None:
    served = WheelIndexes(tmp_path)
    served.add(
        "pypi",
        [
            WheelSpec("torch", "2.5.1", ("numpy",)),
            WheelSpec("numpy", "1.26.4", requires_python="<3.12"),
            WheelSpec("numpy", "2.1.3", requires_python=">=3.10"),
        ],
    )
    served.start()
    try:
        from envcheck.model.plan import Stack

        stack = Stack(Target(python="3.10"), ("torch==2.5.1", "numpy<2; python_version < '3.11'"))
        targets = LockTargets(("3.10", "3.12"), ("x86_64", "aarch64"))
        got = lock_project(
            _request(
                stack, IndexConfig(index_url=served.url("pypi")), targets=targets, fmt="pylock"
            ),
            uv=find_uv(),
            timeout=120,
        )
        data = tomllib.loads(got.text)
        assert len(data["environments"]) == 4
        assert any("aarch64" in e for e in data["environments"])
        per = pins_per_target(got, targets)
        assert [p["numpy"] for p in per] == ["1.26.4", "1.26.4", "2.1.3", "2.1.3"]
    finally:
        served.stop()


def test_exclude_newer_and_kept_pins(local_index: LocalIndex, tmp_path: Path) -> None:
    served = WheelIndexes(tmp_path)
    served.add("pypi", [WheelSpec("numpy", "1.26.4"), WheelSpec("filelock", "3.16.1")])
    served.add(
        "pypi",
        [WheelSpec("numpy", "2.1.3"), WheelSpec("filelock", "3.18.0")],
        uploaded="2025-06-01T00:00:00Z",
    )
    served.start()
    try:
        from envcheck.model.plan import Stack

        index = IndexConfig(index_url=served.url("pypi"))
        stack = Stack(Target(python="3.11"), ("numpy", "filelock"))
        uv = find_uv()
        old = lock_project(_request(stack, index, exclude_newer="2025-01-01"), uv=uv, timeout=60)
        assert old.pins == {"numpy": "1.26.4", "filelock": "3.16.1"}
        new = lock_project(_request(stack, index), uv=uv, timeout=60)
        assert new.pins == {"numpy": "2.1.3", "filelock": "3.18.0"}
        moved = lock_project(
            _request(stack, index, keep_pins=old.pins, upgrade=("numpy",)), uv=uv, timeout=60
        )
        assert moved.pins == {"numpy": "2.1.3", "filelock": "3.16.1"}
    finally:
        served.stop()


def test_local_paths_never_reach_a_lock_meant_to_travel(
    local_index: LocalIndex, matrix: Matrix
) -> None:
    stack = choose_stack(matrix, Target(python="3.11"), ["vllm==0.6.4"])
    for index in (
        IndexConfig(index_url=local_index.file_url),
        IndexConfig(index_url=local_index.url, find_links=(str(local_index.wheels),)),
        IndexConfig(extra_index_urls=(local_index.file_url,), no_index=True),
    ):
        with pytest.raises(LocalIndexRefused, match="names no local path"):
            lock_project(_request(stack, index), uv=find_uv(), timeout=60)
    kept = lock_project(
        _request(stack, IndexConfig(index_url=local_index.file_url), allow_local=True),
        uv=find_uv(),
        timeout=120,
    )
    assert kept.pins["vllm"] == "0.6.4"
    served = lock_project(
        _request(stack, IndexConfig(index_url=local_index.url)), uv=find_uv(), timeout=120
    )
    assert "file://" not in served.text and str(local_index.root) not in served.text


def test_no_resolution_and_an_unreachable_index_are_different(
    local_index: LocalIndex, matrix: Matrix
) -> None:
    index = IndexConfig(index_url=local_index.url)
    bad = choose_stack(matrix, Target(python="3.11"), ["vllm==0.6.4", "numpy>=2"])
    with pytest.raises(ResolveFailed) as info:
        lock_project(_request(bad, index), uv=find_uv(), timeout=120)
    assert "numpy" in info.value.detail
    good = choose_stack(matrix, Target(python="3.11"), ["vllm==0.6.4"])
    closed = WheelIndexes(local_index.root / "closed").start()
    dead = closed.url("pypi")
    closed.stop()  # the port now refuses connections
    with pytest.raises(IndexUnreachable) as down:
        lock_project(
            _request(good, IndexConfig(index_url=dead)),
            uv=find_uv(),
            timeout=120,
            env={"UV_HTTP_RETRIES": "0", "PATH": "/usr/bin:/bin"},
        )
    assert down.value.index.startswith(dead.rsplit("/", 2)[0])
    variant = replace(good, torch_index_url=dead.replace("/pypi/simple", "/whl/cu124"))
    variant = replace(variant, requirements=(*variant.requirements, "torch==2.5.1"))
    with pytest.raises(IndexUnreachable):
        lock_project(
            _request(variant, index),
            uv=find_uv(),
            timeout=120,
            env={"UV_HTTP_RETRIES": "0", "PATH": "/usr/bin"},
        )


@pytest.mark.online
def test_online_vllm_063_for_linux_x86_64_py311_applies_the_cublas_override(
    matrix: Matrix, rules: Sequence[Rule]
) -> None:
    """The real index: vLLM 0.6.3 for an H20 node resolves torch 2.4.0 with cuBLAS 12.3.4.1."""
    target = Target(python="3.11", glibc="2.35", driver="535.104.05", gpus=("NVIDIA H20",) * 8)
    stack = add_overrides(choose_stack(matrix, target, ["vllm==0.6.3"]), matrix, rules)
    index = replace(pip_index_config({"PIP_CONFIG_FILE": "/dev/null"}))
    got = lock_project(_request(stack, index), uv=find_uv(), timeout=600)
    assert got.pins["vllm"] == "0.6.3"
    assert got.pins["torch"] == "2.4.0"
    assert got.pins["nvidia-cublas-cu12"] == "12.3.4.1"


def test_the_stacks_upper_bounds_reach_uv_as_constraints(tmp_path: Path) -> None:
    """A matrix [[bound]] (Stack.constraints) narrows uv's choice without adding a requirement;
    kept pins of a re-lock sit beside it in constraint-dependencies."""
    from envcheck.model.plan import Stack

    served = WheelIndexes(tmp_path)
    served.add(
        "pypi",
        [
            WheelSpec("app", "1.0", ("transformers",)),
            WheelSpec("transformers", "4.57.1"),
            WheelSpec("transformers", "5.0.0"),
            WheelSpec("filelock", "3.16.1"),
            WheelSpec("filelock", "3.18.0"),
        ],
    )
    served.start()
    try:
        stack = Stack(Target(python="3.11"), ("app", "filelock"), constraints=("transformers<5",))
        index = IndexConfig(index_url=served.url("pypi"))
        free = lock_project(
            _request(replace(stack, constraints=()), index), uv=find_uv(), timeout=120
        )
        assert free.pins["transformers"] == "5.0.0"
        request = _request(stack, index, keep_pins={"filelock": "3.16.1"})
        data = tomllib.loads(project_text(request))
        assert data["tool"]["uv"]["constraint-dependencies"] == [
            "transformers<5",
            "filelock==3.16.1",
        ]
        assert "transformers" not in " ".join(data["project"]["dependencies"])
        got = lock_project(request, uv=find_uv(), timeout=120)
        assert got.pins["transformers"] == "4.57.1"
        assert got.pins["filelock"] == "3.16.1"
        # a bound that the requirements do not pull in adds nothing
        unused = replace(stack, requirements=("filelock",))
        assert (
            "transformers"
            not in lock_project(_request(unused, index), uv=find_uv(), timeout=120).pins
        )
    finally:
        served.stop()
