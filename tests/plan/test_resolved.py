"""`envcheck fix` with plans resolved by uv against the node's installed packages, on two
indexes served on loopback (one plays the PyTorch index): the rules run on the resolution, a
real conflict names both sides, an unreachable index is exit 4 with nothing written, and
issue 13's H100 + vLLM 0.6.3 + torch 2.5.1 + cuBLAS 12.4.5.8 node reaches a clean fixed point."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from envcheck.engine import evaluate
from envcheck.ingest.spec import parse_spec, spec_to_report
from envcheck.matrix.model import Matrix
from envcheck.matrix_validate import load
from envcheck.model.report import NodeReport
from envcheck.plan.planner import build_plan
from envcheck.plan.resolve import IndexConfig, find_uv
from envcheck.plan.resolved import PlanResolver, explanation
from envcheck.rules import all_rules
from envcheck.rules.base import Rule
from tests.conftest import cli_env, run_cli
from tests.index.wheels import WheelIndexes
from tests.wheelfactory import CUDA_MARK, WheelSpec

# the default index: torch's PyPI wheels pin their cuBLAS, vLLM 0.6.3 pins torch 2.4.0 and asks
# for transformers>=4.45.0 without a cap (as its metadata does), transformers 5 is the newest
DEFAULT = (
    WheelSpec(
        "torch", "2.4.0", (f"nvidia-cublas-cu12==12.1.3.1; {CUDA_MARK}", "numpy", "filelock")
    ),
    WheelSpec(
        "torch", "2.5.1", (f"nvidia-cublas-cu12==12.4.5.8; {CUDA_MARK}", "numpy", "filelock")
    ),
    WheelSpec("torchvision", "0.19.0", ("torch==2.4.0", "numpy")),
    WheelSpec("torchvision", "0.20.1", ("torch==2.5.1", "numpy")),
    WheelSpec("vllm", "0.6.3", ("torch==2.4.0", "numpy<2.0.0", "ray>=2.9", "transformers>=4.45.0")),
    WheelSpec("transformers", "4.57.6", ("numpy>=1.17",)),
    WheelSpec("transformers", "5.1.0", ("numpy>=1.17",)),
    # a user's extension compiled against torch 2.5.1, pinning it
    WheelSpec("my-kernels", "1.0.0", ("torch==2.5.1",)),
    WheelSpec("nvidia-cublas-cu12", "12.1.3.1"),
    WheelSpec("nvidia-cublas-cu12", "12.3.4.1"),
    WheelSpec("nvidia-cublas-cu12", "12.4.5.8"),
    WheelSpec("numpy", "1.26.4"),
    WheelSpec("numpy", "2.1.3"),
    WheelSpec("filelock", "3.16.1"),
    WheelSpec("ray", "2.40.0", ("filelock",)),
)
# the PyTorch index serves only torch builds (a cu121 build of 2.5.1 here)
VARIANT = {
    "whl/cu121": (
        WheelSpec(
            "torch",
            "2.5.1+cu121",
            (f"nvidia-cublas-cu12==12.1.3.1; {CUDA_MARK}", "numpy", "filelock"),
        ),
    )
}
H100 = "NVIDIA H100 80GB HBM3"


@dataclass(frozen=True)
class Indexes:
    url: str  # the default index
    overlay: Path  # matrix overlay: the torch variant index on the loopback server
    server: WheelIndexes

    def matrix(self) -> Matrix:
        return load([str(self.overlay)])


@pytest.fixture(scope="module")
def indexes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Indexes]:
    root = tmp_path_factory.mktemp("resolved")
    server = WheelIndexes(root / "served")
    server.add("pypi", DEFAULT)
    for name, specs in VARIANT.items():
        server.add(name, specs)
    server.start()
    overlay = root / "overlay"
    overlay.mkdir()
    (overlay / "torch_index.toml").write_text(
        f'[[torch_index]]\nurl_template = "{server.base}/whl/{{variant}}"\n'
        'source = "envcheck tests: a local copy"\n',
        encoding="utf-8",
    )
    yield Indexes(server.url("pypi"), overlay, server)
    server.stop()


@pytest.fixture(scope="module")
def local(indexes: Indexes) -> tuple[Matrix, Sequence[Rule]]:
    matrix = indexes.matrix()
    return matrix, all_rules(matrix)


def _spec(packages: dict[str, str], gpu: str = H100, driver: str = "550.54.15") -> str:
    lines = "\n".join(f'"{k}" = "{v}"' for k, v in packages.items())
    return (
        f'[gpu]\ndriver = "{driver}"\nmodels = ["{gpu}"]\n[python]\nversion = "3.10.12"\n'
        f"[packages]\n{lines}\n"
    )


def _report(packages: dict[str, str]) -> NodeReport:
    return spec_to_report(parse_spec(_spec(packages), "node.toml"), "node.toml")


def _resolver(indexes: Indexes, matrix: Matrix) -> PlanResolver:
    return PlanResolver(find_uv(), IndexConfig(index_url=indexes.url), matrix, timeout=120)


def _probed(report: NodeReport, requires: dict[str, tuple[str, ...]]) -> NodeReport:
    """The declared node as a probe sees it: each distribution with its Requires-Dist."""
    packages = report.packages.data
    assert packages is not None
    dists = tuple(replace(d, requires=requires.get(d.key, ())) for d in packages.distributions)
    return report.with_sections(
        packages=replace(report.packages, data=replace(packages, distributions=dists))
    )


def _installs(plan: object) -> list[tuple[str, ...]]:
    return [s.action.packages for s in plan.steps if s.action.kind == "pip_install"]  # type: ignore[attr-defined]


def test_the_resolved_version_is_rechecked(
    indexes: Indexes, local: tuple[Matrix, Sequence[Rule]]
) -> None:
    """vLLM 0.6.3 misses transformers (PKG101: `transformers>=4.45.0`). The simulator takes a
    version inside the range and sees nothing more; uv picks transformers 5.1.0, which vLLM
    0.6.3 breaks on (PKG110): the plan adds `transformers<5`, and the next resolution (4.57.6)
    is clean."""
    matrix, rules = local
    declared = _report(
        {
            "vllm": "0.6.3",
            "torch": "2.4.0",
            "nvidia-cublas-cu12": "12.3.4.1",
            "numpy": "1.26.4",
            "filelock": "3.16.1",
            "ray": "2.40.0",
            "my-local-tool": "0.1",  # installed from a local build: no index serves it
        }
    )
    report = _probed(
        declared,
        {
            "vllm": ("torch==2.4.0", "numpy<2.0.0", "ray>=2.9", "transformers>=4.45.0"),
            "torch": ("nvidia-cublas-cu12==12.1.3.1", "numpy", "filelock"),
            "ray": ("filelock",),
        },
    )
    simulated, _ = build_plan(report, matrix, rules)
    assert _installs(simulated) == [("transformers>=4.45.0",)]
    assert simulated.resolved is False
    resolver = _resolver(indexes, matrix)
    plan, after = build_plan(report, matrix, rules, resolve=resolver)
    assert plan.resolved is True and plan.converged and not plan.conflicts
    assert _installs(plan) == [("transformers<5,>=4.45.0",)]
    assert {c for s in plan.steps for c in s.codes} == {"PKG101", "PKG110"}
    packages = after.packages.data
    assert packages is not None and packages.get("transformers") is not None
    assert packages.get("transformers").version == "4.57.6"  # type: ignore[union-attr]
    assert "resolved: transformers<5,>=4.45.0: uv picks transformers 4.57.6" in plan.notes
    assert not {f.code for f in evaluate(after, matrix, rules).findings} & {"PKG101", "PKG110"}
    assert plan.remaining == ()
    # two rounds (transformers 5.1.0, then 4.57.6); the first learns that my-local-tool is not on
    # the index and that the installed cuBLAS override of torch's pin is left alone (pip does not
    # touch it for transformers); the second starts from that
    assert 2 <= resolver.runs <= 5
    assert "resolved: kept as installed, not on the index: my-local-tool 0.1" in plan.notes
    assert after.packages.data.get("nvidia-cublas-cu12").version == "12.3.4.1"  # type: ignore[union-attr]


def test_a_moved_dependency_is_rechecked_with_its_moved_version(
    indexes: Indexes, local: tuple[Matrix, Sequence[Rule]]
) -> None:
    """The plan's torch 2.4.0 pins cuBLAS 12.1.3.1: the installed 12.4.5.8 (a dependency, held
    at its version until the resolution needs it moved) moves, and the moved version is what
    the rules see on the H100 (CUD102), answered by the accepted override."""
    matrix, rules = local
    report = _probed(
        _report({"vllm": "0.6.3", "torch": "2.5.1", "nvidia-cublas-cu12": "12.4.5.8"}),
        {"vllm": ("torch==2.4.0",), "torch": ("nvidia-cublas-cu12==12.4.5.8",)},
    )
    calls: list[dict[str, str]] = []
    resolver = _resolver(indexes, matrix)

    def spy(node: NodeReport, steps: Sequence[object]) -> object:
        got = resolver(node, steps)  # type: ignore[arg-type]
        calls.append(got.pins)
        return got

    plan, after = build_plan(report, matrix, rules, resolve=spy)  # type: ignore[arg-type]
    assert plan.resolved is True and not plan.conflicts and plan.converged
    assert calls[0]["nvidia-cublas-cu12"] == "12.1.3.1"  # moved by torch 2.4.0's pin ...
    assert calls[-1]["nvidia-cublas-cu12"] == "12.3.4.1"  # ... then the override holds
    assert "CUD102" in {c for s in plan.steps for c in s.codes}
    assert after.packages.data.get("nvidia-cublas-cu12").version == "12.3.4.1"  # type: ignore[union-attr]


def test_a_real_conflict_names_both_sides(
    indexes: Indexes, local: tuple[Matrix, Sequence[Rule]], tmp_path: Path
) -> None:
    """vLLM 0.6.3 needs torch 2.4.0 (VLM101), but the node's own extension is built against
    torch 2.5.1 and pins it: no resolution. The conflict names the plan's torch==2.4.0 and the
    installed my-kernels==1.0.0, with uv's explanation; no pip step is offered."""
    matrix, rules = local
    report = _report({"vllm": "0.6.3", "torch": "2.5.1", "my-kernels": "1.0.0"})
    plan, _ = build_plan(report, matrix, rules, resolve=_resolver(indexes, matrix))
    assert len(plan.conflicts) == 1
    conflict = plan.conflicts[0]
    assert conflict.subject == "resolution" and "VLM101" in conflict.codes
    assert any(w.startswith("plan: torch==2.4.0") for w in conflict.wanted)
    assert "installed: my-kernels==1.0.0" in conflict.wanted
    assert "my-kernels" in conflict.message and "torch==2.5.1" in conflict.message
    assert not [s for s in plan.steps if s.action.kind == "pip_install"]
    assert plan.resolved is False and "no resolution" in plan.resolver
    # the same as a user runs it: exit 1, the conflict printed with both sides
    spec = tmp_path / "node.toml"
    spec.write_text(_spec({"vllm": "0.6.3", "torch": "2.5.1", "my-kernels": "1.0.0"}))
    result = run_cli(
        "fix", "--spec", str(spec), "--index-url", indexes.url, "--matrix", str(indexes.overlay)
    )
    assert result.returncode == 1, result.stderr
    text = " ".join(result.stdout.split())
    assert "CONFLICT VLM101 the plan's torch==2.4.0" in text
    assert "cannot be installed with the installed my-kernels==1.0.0" in text
    assert "$ pip install torch" not in result.stdout


def test_unreachable_index_exits_4_and_writes_nothing(tmp_path: Path) -> None:
    closed = WheelIndexes(tmp_path / "closed").start()
    dead = closed.url("pypi")
    closed.stop()  # the port now refuses connections
    spec = tmp_path / "node.toml"
    spec.write_text(_spec({"vllm": "0.6.3", "torch": "2.5.1"}))
    env = cli_env(UV_HTTP_RETRIES="0")
    out = tmp_path / "fix.sh"
    result = run_cli(
        "fix", "--spec", str(spec), "--index-url", dead, "--format", "sh", "-o", str(out), env=env
    )
    assert result.returncode == 4, result.stderr
    assert f"could not reach {dead.rsplit('/', 2)[0]}" in result.stderr
    assert "nothing was written; exit 4" in result.stderr
    assert not out.exists() and result.stdout == ""
    data = run_cli("fix", "--spec", str(spec), "--index-url", dead, "--json", env=env).json()
    assert (data["status"], data["exit_code"]) == ("unreachable", 4)
    assert data["data"]["message"].startswith("could not reach")
    assert data["data"]["plan"]["steps"] == []


def test_h100_vllm_063_torch_251_cublas_reaches_a_clean_fixed_point(
    indexes: Indexes, tmp_path: Path
) -> None:
    """Issue 13's node, resolved: torch 2.4.0 (with torchvision 0.19) first, its cuBLAS override
    after it; uv resolves the whole node with the override, and nothing is left."""
    spec = tmp_path / "node.toml"
    spec.write_text(
        _spec({"vllm": "0.6.3", "torch": "2.5.1", "nvidia-cublas-cu12": "12.4.5.8"}),
        encoding="utf-8",
    )
    args = (
        "fix",
        "--spec",
        str(spec),
        "--index-url",
        indexes.url,
        "--matrix",
        str(indexes.overlay),
    )
    data = run_cli(*args, "--json").json()
    plan = data["data"]["plan"]
    assert (data["status"], data["exit_code"]) == ("findings", 1)
    assert plan["resolved"] is True and plan["converged"] is True
    assert plan["resolver"].startswith(
        f"uv lock for Python 3.10.12 on linux x86_64, against {indexes.url}"
    )
    assert plan["conflicts"] == [] and plan["remaining"] == []
    installs = [
        s["action"]["packages"] for s in plan["steps"] if s["action"]["kind"] == "pip_install"
    ]
    assert installs == [["torch==2.4.0", "torchvision==0.19"], ["nvidia-cublas-cu12==12.3.4.1"]]
    text = run_cli(*args).stdout
    assert "verified: uv lock for Python 3.10.12" in " ".join(text.split())
    script = tmp_path / "fix.sh"
    assert run_cli(*args, "--format", "sh", "-o", str(script)).returncode == 1
    assert "# Verified: uv lock for Python 3.10.12" in script.read_text(encoding="utf-8")


def test_no_resolve_says_the_plan_was_not_verified(tmp_path: Path) -> None:
    spec = tmp_path / "node.toml"
    spec.write_text(_spec({"vllm": "0.6.3", "torch": "2.5.1"}))
    data = run_cli("fix", "--spec", str(spec), "--no-resolve", "--json").json()
    assert data["data"]["plan"]["resolved"] is False
    assert "--no-resolve" in data["data"]["plan"]["resolver"]
    text = run_cli("fix", "--spec", str(spec), "--no-resolve").stdout
    assert "NOT verified by the resolver (--no-resolve)" in text
    reqs = run_cli("fix", "--spec", str(spec), "--no-resolve", "--format", "requirements").stdout
    assert "# NOT verified by the resolver (--no-resolve)" in reqs
    clash = run_cli(
        "fix", "--spec", str(spec), "--no-resolve", "--index-url", "http://127.0.0.1:9/"
    )
    assert clash.returncode == 2 and "contradict" in clash.stderr


def test_without_uv_the_plan_says_it_was_not_verified(tmp_path: Path) -> None:
    spec = tmp_path / "node.toml"
    spec.write_text(_spec({"vllm": "0.6.3", "torch": "2.5.1"}))
    missing = tmp_path / "no-uv"
    result = run_cli("fix", "--spec", str(spec), "--json", env=cli_env(ENVCHECK_UV=str(missing)))
    plan = result.json()["data"]["plan"]
    assert result.returncode == 1
    assert plan["resolved"] is False and plan["resolver"].startswith("not verified by the resolver")
    assert "uv" in plan["resolver"] and plan["steps"]


@pytest.mark.parametrize(
    ("detail", "expected"),
    [
        (
            "error: No solution found when resolving dependencies for split (markers: x):\n"
            "  cause: Because my-kernels==1.0.0 depends on torch==2.5.1 and your project depends"
            " on torch==2.4.0, we can conclude that your project and my-kernels==1.0.0 are\n"
            "         incompatible.\n\nhint: While the active Python version is 3.11, ...",
            "Because my-kernels==1.0.0 depends on torch==2.5.1 and the node after the plan "
            "depends on torch==2.4.0, we can conclude that the node after the plan and "
            "my-kernels==1.0.0 are incompatible.",
        ),
        (
            "  × No solution found when resolving dependencies:\n"
            "  ╰─▶ Because there is no version of torch==9.9 and you require torch==9.9, we can"
            " conclude that your requirements are unsatisfiable.",
            "Because there is no version of torch==9.9 and you require torch==9.9, we can "
            "conclude that your requirements are unsatisfiable.",
        ),
    ],
)
def test_uvs_explanation_is_trimmed_to_its_cause(detail: str, expected: str) -> None:
    got = explanation(detail)
    assert got.endswith(expected) and "hint" not in got
