"""A plan is a resolution (issue 24): the H100 node with vLLM 0.6.3, torch 2.5.1, xformers
0.0.27.post2 and cuBLAS 12.4.5.8 reaches a clean fixed point (torch 2.4.0 as vLLM pins it,
vLLM's own xformers, the cuBLAS override after torch), from a declared spec and from a venv
built from wheels with the real names, versions and Requires-Dist, probed as a node is."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from envcheck.ingest.spec import parse_spec, spec_to_report
from envcheck.matrix.model import Matrix
from envcheck.matrix_validate import load
from envcheck.model.finding import Action
from envcheck.model.plan import Plan, Step
from envcheck.model.report import NodeReport
from envcheck.plan.planner import build_plan
from envcheck.plan.resolve import IndexConfig, find_uv
from envcheck.plan.resolved import PlanResolver
from envcheck.rules import all_rules, select
from envcheck.rules.base import Rule
from tests.conftest import cli_env, new_venv
from tests.index.wheels import WheelIndexes
from tests.wheelfactory import CUDA_MARK, WheelSpec, make_wheels

# Requires-Dist as the real wheels state them (the parts a resolver needs)
WORLD = (
    WheelSpec(
        "torch", "2.4.0", (f"nvidia-cublas-cu12==12.1.3.1; {CUDA_MARK}", "numpy", "filelock")
    ),
    WheelSpec(
        "torch", "2.5.1", (f"nvidia-cublas-cu12==12.4.5.8; {CUDA_MARK}", "numpy", "filelock")
    ),
    WheelSpec(
        "vllm",
        "0.6.3",
        (
            "torch==2.4.0",
            "torchvision==0.19",
            f"xformers==0.0.27.post2; {CUDA_MARK}",
            "numpy<2.0.0",
            "ray>=2.9",
            "transformers>=4.45.0",
        ),
    ),
    WheelSpec("torchvision", "0.19.0", ("torch==2.4.0", "numpy")),
    WheelSpec("torchvision", "0.20.1", ("torch==2.5.1", "numpy")),
    WheelSpec("xformers", "0.0.27.post2", ("numpy", "torch==2.4.0")),
    WheelSpec("xformers", "0.0.28.post3", ("numpy", "torch==2.5.1")),
    WheelSpec("transformers", "4.57.6", ("numpy>=1.17", "filelock")),
    WheelSpec("nvidia-cublas-cu12", "12.1.3.1"),
    WheelSpec("nvidia-cublas-cu12", "12.3.4.1"),
    WheelSpec("nvidia-cublas-cu12", "12.4.5.8"),
    WheelSpec("numpy", "1.26.4"),
    WheelSpec("numpy", "2.1.3"),
    WheelSpec("filelock", "3.16.1"),
    WheelSpec("ray", "2.40.0", ("filelock",)),
)
NODE = {
    "vllm": "0.6.3",
    "torch": "2.5.1",
    "torchvision": "0.20.1",
    "xformers": "0.0.27.post2",
    "nvidia-cublas-cu12": "12.4.5.8",
    "numpy": "1.26.4",
    "transformers": "4.57.6",
    "ray": "2.40.0",
    "filelock": "3.16.1",
}
H100 = "NVIDIA H100 80GB HBM3"
PACKAGE_FAMILIES = ("TOR", "VLM", "CUD", "PKG", "DRV")


@dataclass(frozen=True)
class World:
    url: str
    wheels: Path
    overlay: Path

    def matrix(self) -> Matrix:
        return load([str(self.overlay)])


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    root = tmp_path_factory.mktemp("resolution")
    server = WheelIndexes(root / "served")
    server.add("pypi", WORLD)
    server.start()
    overlay = root / "overlay"
    overlay.mkdir()
    (overlay / "torch_index.toml").write_text(
        f'[[torch_index]]\nurl_template = "{server.base}/whl/{{variant}}"\n'
        'source = "envcheck tests: a local copy"\n',
        encoding="utf-8",
    )
    yield World(server.url("pypi"), make_wheels(root / "wheels", WORLD)[0].parent, overlay)
    server.stop()


def _spec_text(packages: dict[str, str]) -> str:
    lines = "\n".join(f'"{k}" = "{v}"' for k, v in packages.items())
    return (
        f'[gpu]\ndriver = "550.54.15"\nmodels = ["{H100}"]\n[python]\nversion = "3.10.12"\n'
        f"[packages]\n{lines}\n"
    )


def _declared(packages: dict[str, str]) -> NodeReport:
    return spec_to_report(parse_spec(_spec_text(packages), "node.toml"), "node.toml")


def _plan(world: World, report: NodeReport, families: Sequence[str] = ()) -> Plan:
    matrix = world.matrix()
    rules: Sequence[Rule] = select(all_rules(matrix), list(families), [])
    resolver = PlanResolver(find_uv(), IndexConfig(index_url=world.url), matrix, timeout=120)
    plan, _after = build_plan(report, matrix, rules, resolve=resolver)
    return plan


def _installs(plan: Plan) -> list[tuple[str, ...]]:
    return [s.action.packages for s in plan.steps if s.action.kind == "pip_install"]


def _assert_clean(plan: Plan) -> None:
    assert plan.conflicts == (), [c.message for c in plan.conflicts]
    assert plan.resolved is True, plan.resolver
    assert plan.converged is True
    assert [f.code for f in plan.remaining] == []
    installs = _installs(plan)
    flat = [p for step in installs for p in step]
    assert "torch==2.4.0" in flat
    # vLLM's own xformers (never xformers up to the torch vLLM does not run with)
    assert not any(p.startswith("xformers") and "0.0.28" in p for p in flat)
    # the cuBLAS override comes after torch, in a later step
    torch_step = next(i for i, s in enumerate(installs) if "torch==2.4.0" in s)
    cublas = [i for i, s in enumerate(installs) if any(p.startswith("nvidia-cublas") for p in s)]
    assert cublas and cublas[0] > torch_step


def test_h100_vllm_xformers_from_a_spec_reaches_a_clean_fixed_point(world: World) -> None:
    _assert_clean(_plan(world, _declared(NODE)))


def test_h100_vllm_xformers_from_a_probed_venv_reaches_a_clean_fixed_point(
    world: World, tmp_path: Path
) -> None:
    from envcheck.commands.probe import ProbeOptions, probe

    folder = tmp_path / "venv"
    python = new_venv(folder)
    env = cli_env(
        PIP_NO_INDEX="1",
        PIP_FIND_LINKS=str(world.wheels),
        PIP_CONFIG_FILE=os.devnull,
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_NO_CACHE_DIR="1",
    )
    env.pop("PIP_CONSTRAINT", None)
    pins = [f"{k}=={v}" for k, v in NODE.items()]
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-deps", *pins],
        check=True,
        env=env,
        timeout=300,
    )
    probed = probe(ProbeOptions(python=str(python)))
    packages = probed.packages.data
    assert packages is not None and packages.get("vllm") is not None
    assert any("torch==2.4.0" in r for r in packages.get("vllm").requires)  # type: ignore[union-attr]
    # the GPU is declared (no GPU here); the packages and the interpreter are what the probe
    # read from the venv (each distribution with its Requires-Dist, as pip installed it)
    node = probed.with_sections(gpu=_declared({}).gpu)
    # the package families (this host's own network and system are not the node's)
    _assert_clean(_plan(world, node, PACKAGE_FAMILIES))


# --- one node, one fix: check, triage and fix print what the same planner plans ---

RTX5090 = (
    '[gpu]\ndriver = "570.86.10"\nmodels = ["NVIDIA GeForce RTX 5090"]\n'
    '[python]\nversion = "3.11.9"\n'
    '[packages]\ntorch = "2.6.0+cu124"\ntorchvision = "0.21.0+cu124"\n'
)
H100_DRIVER_470 = (
    f'[gpu]\ndriver = "470.82.01"\nmodels = ["{H100}"]\n[python]\nversion = "3.10.12"\n'
    '[packages]\ntorch = "2.5.1"\nvllm = "0.6.4"\n'
)


def _commands(findings: list[dict[str, object]], code: str) -> list[str]:
    return [c for f in findings if f["code"] == code for c in f["fix"]["commands"]]  # type: ignore[index]


def _run_commands(findings: list[dict[str, object]], code: str) -> list[str]:
    return [c for c in _commands(findings, code) if not c.startswith("#")]


def test_check_triage_and_fix_print_one_fix_for_an_rtx5090(tmp_path: Path) -> None:
    """RTX 5090 + torch 2.6.0+cu124: TOR101's closest build, vLLM-free, is torch 2.7.0 from
    cu128 with the torchvision built for it; check, triage and fix print that same command."""
    from tests.conftest import run_cli

    spec = tmp_path / "node.toml"
    spec.write_text(RTX5090, encoding="utf-8")
    plan = run_cli("fix", "--spec", str(spec), "--no-resolve", "--json").json()["data"]["plan"]
    steps = [s["command"] for s in plan["steps"] if s["action"]["kind"] == "pip_install"]
    assert len(steps) == 1 and "torch==2.7.0 torchvision==0.22.0" in steps[0], steps
    assert steps[0].endswith("/whl/cu128")
    found = run_cli("check", "--spec", str(spec), "--json").json()["data"]["findings"]
    # the install command is the plan's; the rest are comments (other CUDA variants, nightly)
    assert _run_commands(found, "TOR101") == steps
    log = tmp_path / "train.log"
    log.write_text(
        "RuntimeError: CUDA error: no kernel image is available for execution on the device\n",
        encoding="utf-8",
    )
    judged = run_cli("triage", str(log), "--spec", str(spec), "--json").json()
    causes = [c for m in judged["data"]["matches"] for c in m["causes"] if c["code"] == "TOR101"]
    assert causes and causes[0]["verdict"] == "confirmed"
    assert _run_commands(causes[0]["findings"], "TOR101") == steps


def test_an_h100_on_driver_470_gets_one_driver_target(tmp_path: Path) -> None:
    """DRV101 (CUDA 12.4 needs >= 550.54.14) and DRV110 (sm_90 needs R520) ask for different
    drivers: the plan, and check beside each finding, ask for the one that meets both."""
    from tests.conftest import run_cli

    spec = tmp_path / "node.toml"
    spec.write_text(H100_DRIVER_470, encoding="utf-8")
    plan = run_cli("fix", "--spec", str(spec), "--no-resolve", "--json").json()["data"]["plan"]
    manual = [s["action"]["text"] for s in plan["steps"] if s["action"]["kind"] == "manual"]
    drivers = [t for t in manual if "driver" in t.lower()]
    # one target, with the package of the lowest branch that meets it (DRV101's alternative)
    assert drivers == [
        "upgrade the NVIDIA driver to 550.54.14 or newer (it meets what DRV101, DRV110 need): "
        "sudo apt install nvidia-driver-550, then reboot"
    ]
    found = run_cli("check", "--spec", str(spec), "--json").json()["data"]["findings"]
    assert _commands(found, "DRV101") == _commands(found, "DRV110") == [f"# {drivers[0]}"]


# --- commands that do what they say ---


def _venv(tmp_path: Path, wheels: Path, *pins: str) -> tuple[Path, dict[str, str]]:
    folder = tmp_path / "venv"
    python = new_venv(folder)
    env = cli_env(
        PIP_NO_INDEX="1",
        PIP_FIND_LINKS=str(wheels),
        PIP_CONFIG_FILE=os.devnull,
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_NO_CACHE_DIR="1",
    )
    env.pop("PIP_CONSTRAINT", None)
    if pins:
        install = [str(python), "-m", "pip", "install", "--quiet", "--no-deps", *pins]
        subprocess.run(install, check=True, env=env, timeout=300)
    return python, env


def _freeze(python: Path, env: dict[str, str]) -> str:
    return subprocess.run(
        [str(python), "-m", "pip", "freeze"], capture_output=True, text=True, env=env, check=True
    ).stdout


def test_commands_name_the_interpreter_checked(world: World, tmp_path: Path) -> None:
    """`--python OTHER`: the printed commands and the sh script run OTHER's pip, not the pip
    on PATH or python3; check prints the same bound command beside the finding."""
    from tests.conftest import run_cli

    python, env = _venv(tmp_path, world.wheels, "vllm==0.6.3", "numpy==2.1.3")
    shown = run_cli("fix", "--python", str(python), "--select", "PKG104", "--no-resolve", env=env)
    assert shown.returncode == 1, shown.stderr
    assert f"$ {python} -m pip install 'numpy<2'" in shown.stdout
    assert "$ pip install" not in shown.stdout
    script = tmp_path / "fix.sh"
    args = ("fix", "--python", str(python), "--select", "PKG104", "--no-resolve")
    run_cli(*args, "--format", "sh", "-o", str(script), env=env)
    text = script.read_text(encoding="utf-8")
    assert f'PYTHON="${{PYTHON:-{python}}}"' in text and "python3" not in text
    checked = run_cli("check", "--python", str(python), "--select", "PKG104", "--json", env=env)
    [finding] = checked.json()["data"]["findings"]
    assert finding["fix"]["commands"] == [f"{python} -m pip install 'numpy<2'"]
    # the script does what it says: numpy moves below 2 in that venv, not in this one
    subprocess.run(["sh", str(script)], check=True, env=env, timeout=300)
    assert "numpy==1.26.4" in _freeze(python, env)


def test_a_locks_after_step_is_held_by_the_whole_resolved_set(tmp_path: Path) -> None:
    """With the overrides alone, pip answers an "after" step by backtracking torch to a
    release that pins no cuBLAS (as PyPI's aarch64 wheels do); with every resolved pin as a
    constraint it stops with a conflict and torch stays."""
    from envcheck.model.plan import Stack, Target
    from envcheck.plan.emit.text import stack_header

    wheels = make_wheels(
        tmp_path / "wheels",
        (
            WheelSpec("torch", "2.3.0", ("filelock",)),  # pins no CUDA wheel
            WheelSpec("torch", "2.5.1", (f"nvidia-cublas-cu12==12.4.5.8; {CUDA_MARK}", "filelock")),
            WheelSpec("nvidia-cublas-cu12", "12.4.5.8"),
            WheelSpec("nvidia-cublas-cu12", "12.6.4.1"),
            WheelSpec("filelock", "3.16.1"),
            WheelSpec("flash-attn", "2.6.3", ("torch",)),
        ),
    )[0].parent
    python, env = _venv(
        tmp_path, wheels, "torch==2.5.1", "nvidia-cublas-cu12==12.6.4.1", "filelock==3.16.1"
    )
    stack = Stack(
        Target(python="3.11"),
        ("torch==2.5.1",),
        overrides=("nvidia-cublas-cu12==12.6.4.1",),
        manual=("pip install flash-attn",),
    )
    resolved = {"torch": "2.5.1", "nvidia-cublas-cu12": "12.6.4.1", "filelock": "3.16.1"}

    def after(**kwargs: object) -> subprocess.CompletedProcess[str]:
        header = stack_header(stack, command="t", **kwargs)  # type: ignore[arg-type]
        line = next(h.removeprefix("#   ") for h in header if "flash-attn" in h)
        command = line.replace("pip install", f"{python} -m pip install", 1)
        return subprocess.run(
            ["bash", "-c", command], env=env, capture_output=True, text=True, check=False
        )

    held = after(resolved=resolved)
    assert held.returncode == 1 and "ResolutionImpossible" in held.stderr
    assert "torch==2.5.1" in _freeze(python, env)
    loose = after()  # the overrides alone: what the header said before
    assert loose.returncode == 0, loose.stderr
    assert "torch==2.3.0" in _freeze(python, env)  # what the whole set prevents


# --- aarch64: wheels per architecture, from the index's file names ---

GH200 = (
    '[gpu]\ndriver = "550.54.15"\nmodels = ["NVIDIA GH200 480GB"]\n'
    '[python]\nversion = "3.10.12"\n[system]\narch = "aarch64"\n'
    '[packages]\ntorch = "2.5.1"\nvllm = "0.6.4"\n'
)


@pytest.mark.parametrize("stated", [True, False], ids=["arch-stated", "arch-from-the-gpu"])
def test_a_gh200_with_pypis_torch_has_a_cpu_build_and_no_implied_nccl(
    tmp_path: Path, stated: bool
) -> None:
    """PyPI's aarch64 torch 2.5.1 pins no CUDA library (the generated [[torch_wheel]] table):
    on a GH200 it is a CPU build (TOR110), no NCCL is implied by it, and the fix is the CUDA
    build from the variant's index (the PyPI wheel is not that build on this CPU). A GH200's
    CPU is Grace (aarch64) whether or not the spec says so."""
    from tests.conftest import run_cli

    spec = tmp_path / "gh200.toml"
    text = GH200 if stated else GH200.replace('[system]\narch = "aarch64"\n', "")
    assert stated or "aarch64" not in text
    spec.write_text(text, encoding="utf-8")
    found = run_cli("check", "--spec", str(spec), "--severity", "info", "--json").json()
    findings = found["data"]["findings"]
    assert "TOR110" in [f["code"] for f in findings]
    assert not any("implied" in json_text(f) and "nccl" in json_text(f) for f in findings)
    [command] = _commands(findings, "TOR110")
    assert "torch==2.5.1+cu124" in command and command.endswith("/whl/cu124")
    plan = run_cli("fix", "--spec", str(spec), "--no-resolve", "--json").json()["data"]["plan"]
    assert [s["command"] for s in plan["steps"] if "torch" in s["command"]] == [command]


def json_text(value: object) -> str:
    import json

    return json.dumps(value).lower()


def test_lock_never_chooses_a_vllm_without_an_aarch64_wheel() -> None:
    """vLLM publishes aarch64 wheels from 0.10.2 on: a lock for a GH200 asking for 0.6.4 is a
    conflict naming the CPU (pip would build the sdist), and an open request gets >= 0.10.2."""
    from packaging.version import Version

    from tests.conftest import run_cli

    target = ("--python", "3.10", "--gpu", "GH200", "--driver", "550.54.15", "--arch", "aarch64")
    pinned = run_cli("lock", "--dry-run", "--json", *target, "vllm==0.6.4")
    assert pinned.returncode == 1
    text = json_text(pinned.json())
    assert "no aarch64 wheel of 0.6.4" in text and "0.10.2" in text
    open_ = run_cli("lock", "--dry-run", "--json", *target, "vllm").json()
    stack = open_["data"]["stack"]
    vllm = next(r for r in stack["requirements"] if r.startswith("vllm=="))
    assert Version(vllm.split("==", 1)[1]) >= Version("0.10.2")
    # on x86_64 the same request keeps its wheel
    x86 = run_cli("lock", "--dry-run", "--json", *target[:-1], "x86_64", "vllm==0.6.4")
    assert "no x86_64 wheel" not in json_text(x86.json())


@pytest.mark.parametrize(
    ("requirement", "expected"),
    [
        ("flash-attn==2.8.3", "flash-attn==2.8.3: no aarch64 wheel of 2.8.3"),
        ("xformers==0.0.35", "xformers==0.0.35: no aarch64 wheel of 0.0.35"),
        ("xformers", "xformers: no release of xformers has a wheel for aarch64"),
        ("flash-attn>=2.6", "flash-attn>=2.6: no release of flash-attn has a wheel for aarch64"),
    ],
)
def test_lock_for_a_gh200_refuses_a_cuda_extension_it_would_compile(
    tmp_path: Path, requirement: str, expected: str
) -> None:
    """No xformers and no flash-attn release has an aarch64 wheel (matrices/packages/
    wheel_platforms.toml, read from their wheel-building workflows): on a GH200 (the spec's
    Grace CPU) pip would compile it from the sdist, so the lock is a conflict naming the CPU;
    the same request on an x86_64 H100 locks, an open xformers narrowed to its wheels."""
    from tests.conftest import run_cli

    spec = tmp_path / "gh200.toml"
    spec.write_text(GH200.replace('vllm = "0.6.4"\n', ""), encoding="utf-8")
    target = ("--python", "3.10", "--driver", "550.54.15")
    on_gh200 = run_cli("lock", "--dry-run", "--json", "--spec", str(spec), "torch", requirement)
    assert on_gh200.returncode == 1
    [conflict] = on_gh200.json()["data"]["stack"]["conflicts"]
    assert conflict["message"].startswith(expected) and "sdist" in conflict["message"]
    x86 = run_cli(
        "lock",
        "--dry-run",
        "--json",
        *target,
        "--gpu",
        "H100",
        "--arch",
        "x86_64",
        "torch",
        requirement,
    )
    assert x86.returncode == 0, x86.stdout
    stack = x86.json()["data"]["stack"]
    assert stack["conflicts"] == []
    if requirement == "xformers":
        assert "xformers>=0.0.13" in stack["requirements"]


@pytest.mark.parametrize(
    "gpu", ["NVIDIA GH200 480GB", "NVIDIA GB200", "NVIDIA GB10"], ids=["GH200", "GB200", "GB10"]
)
def test_lock_for_a_superchip_without_arch_is_for_aarch64_and_says_so(gpu: str) -> None:
    """No --arch and no [system] arch: a superchip's GPU puts the lock on its Grace CPU
    (aarch64, from the matrix's host_arch with its source), as the first choice printed;
    vLLM 0.6.4 is then a conflict naming the CPU, as with --arch aarch64."""
    from tests.conftest import run_cli

    target = ("--python", "3.10", "--gpu", f"{gpu} x4", "--driver", "580.65.06")
    data = run_cli("lock", "--dry-run", "--json", *target, "torch").json()["data"]["stack"]
    assert data["target"]["arch"] == "aarch64"
    first = data["choices"][0]
    assert first["subject"] == "arch" and first["value"] == "aarch64"
    assert "host_arch" in first["reason"] and "source: NVIDIA" in first["reason"]
    text = run_cli("lock", "--dry-run", *target, "torch")
    assert "no --arch and no [system] arch: the CPU of" in " ".join(text.stdout.split())
    pinned = run_cli("lock", "--dry-run", "--json", *target, "vllm==0.6.4")
    assert pinned.returncode == 1 and "no aarch64 wheel of 0.6.4" in json_text(pinned.json())


def test_a_stated_cpu_wins_over_the_gpus(tmp_path: Path) -> None:
    """--arch, or the spec's [system] arch, is the CPU locked for; an H100 implies none."""
    from tests.conftest import run_cli

    gh200 = ("--python", "3.10", "--gpu", "GH200", "--driver", "580.65.06", "torch")
    flag = run_cli("lock", "--dry-run", "--json", "--arch", "x86_64", *gh200).json()["data"]
    assert flag["stack"]["target"]["arch"] == "x86_64"
    assert all(c["subject"] != "arch" for c in flag["stack"]["choices"])
    spec = tmp_path / "node.toml"
    spec.write_text(
        '[gpu]\ndriver = "580.65.06"\nmodels = ["NVIDIA GH200 480GB"]\n'
        '[python]\nversion = "3.10.12"\n[system]\narch = "x86_64"\n',
        encoding="utf-8",
    )
    stated = run_cli("lock", "--dry-run", "--json", "--spec", str(spec), "torch").json()["data"]
    assert stated["stack"]["target"]["arch"] == "x86_64"
    h100 = ("--python", "3.10", "--gpu", H100, "--driver", "580.65.06", "torch")
    plain = run_cli("lock", "--dry-run", "--json", *h100).json()["data"]["stack"]
    assert plain["target"]["arch"] == "x86_64"
    assert all(c["subject"] != "arch" for c in plain["choices"])


def test_the_wheel_platform_table_agrees_with_the_generated_wheels(matrix: Matrix) -> None:
    """Every vLLM release whose wheel the generated table read is inside the x86_64 range, and
    every sdist-only one outside it: the curated range and the index's files say the same."""
    for meta in matrix.generated.vllm_metadata:
        has = matrix.wheel_for("vllm", meta.version, "x86_64") is not None
        assert has == (meta.file is not None and "x86_64" in meta.file), meta.version


# --- a bound that cannot hold with an anchor is a conflict, never a step pip would answer
# by breaking the anchor ---

HUB_WORLD = (
    WheelSpec("vllm", "0.6.3", ("transformers>=4.45.0",)),
    WheelSpec("transformers", "4.57.6", ("huggingface-hub<1.0,>=0.34.0",)),
    WheelSpec("transformers", "5.1.0", ("huggingface-hub<2.0,>=1.0.0",)),
    WheelSpec("huggingface-hub", "0.36.0"),
    WheelSpec("huggingface-hub", "1.1.0"),
    # the job's own package, needing the newer hub (a made-up name: the metadata is the test's)
    WheelSpec("my-data", "1.0.0", ("huggingface-hub>=1.0.0",)),
)


def test_a_bound_against_an_anchor_is_a_conflict_naming_it(tmp_path: Path) -> None:
    """vLLM 0.6.3 breaks on transformers 5 (PKG110: transformers<5), but the job's my-data needs
    huggingface-hub>=1, which transformers 4.x excludes. `pip install 'transformers<5'` would
    move the hub below what my-data needs; the resolution keeps the anchors, lets the bound's
    pin go, finds PKG110 still violated and says so: a conflict naming my-data, no pip step."""
    server = WheelIndexes(tmp_path / "served")
    server.add("pypi", HUB_WORLD)
    server.start()
    try:
        requires = {
            "vllm": ("transformers>=4.45.0",),
            "transformers": ("huggingface-hub<2.0,>=1.0.0",),
            "my-data": ("huggingface-hub>=1.0.0",),
        }
        installed = {
            "vllm": "0.6.3",
            "transformers": "5.1.0",
            "huggingface-hub": "1.1.0",
            "my-data": "1.0.0",
        }
        report = _declared(installed)
        packages = report.packages.data
        assert packages is not None
        dists = tuple(replace(d, requires=requires.get(d.key, ())) for d in packages.distributions)
        node = report.with_sections(
            packages=replace(report.packages, data=replace(packages, distributions=dists))
        )
        matrix = load()
        index = IndexConfig(index_url=server.url("pypi"))
        resolver = PlanResolver(find_uv(), index, matrix, timeout=120)
        rules = select(all_rules(matrix), ["PKG"], [])
        plan, _ = build_plan(node, matrix, rules, resolve=resolver)
    finally:
        server.stop()
    assert not any("transformers" in p for s in _installs(plan) for p in s)
    [conflict] = [c for c in plan.conflicts if "PKG110" in c.codes]
    assert conflict.subject == "transformers"
    assert "my-data" in conflict.message and "transformers<5" in conflict.message
    assert "PKG110" in [f.code for f in plan.remaining]


def test_a_partial_mirror_keeps_what_is_installed_and_not_served(tmp_path: Path) -> None:
    """A local mirror that serves the plan's packages but not filelock (installed, and met by
    what is installed): pip installs torch 2.4.0 from it without a word; the resolution keeps
    filelock as installed instead of reporting a conflict pip does not have."""
    partial = tuple(s for s in WORLD if s.name not in ("filelock", "ray"))
    server = WheelIndexes(tmp_path / "served")
    server.add("pypi", partial)
    server.start()
    try:
        matrix = load()
        index = IndexConfig(index_url=server.url("pypi"))
        resolver = PlanResolver(find_uv(), index, matrix, timeout=120)
        node = _declared(NODE)
        plan, _ = build_plan(
            node, matrix, select(all_rules(matrix), ["VLM", "TOR", "CUD"], []), resolve=resolver
        )
    finally:
        server.stop()
    assert plan.conflicts == (), [c.message for c in plan.conflicts]
    assert plan.resolved is True, plan.resolver
    assert any("torch==2.4.0" in s for s in _installs(plan))
    assert any("filelock" in n and "kept as installed" in n for n in plan.notes), plan.notes


# --- a fix plan's later steps are held by the whole resolved set ---


def test_a_fix_plans_later_steps_hold_the_resolved_set_and_install(
    world: World, tmp_path: Path
) -> None:
    """`fix` on the probed H100 venv: the first install (torch) carries no constraint, every
    later one the whole resolved set (the override in place of torch's own cuBLAS pin); the
    plan, run as `fix --apply --unsafe` runs it, leaves the venv at that set."""
    from envcheck.commands.probe import ProbeOptions, probe
    from envcheck.plan.apply import apply_plan

    python, env = _venv(tmp_path, world.wheels, *(f"{k}=={v}" for k, v in NODE.items()))
    node = probe(ProbeOptions(python=str(python))).with_sections(gpu=_declared({}).gpu)
    matrix = world.matrix()
    rules = select(all_rules(matrix), list(PACKAGE_FAMILIES), [])
    resolver = PlanResolver(find_uv(), IndexConfig(index_url=world.url), matrix, timeout=120)
    plan, _after = build_plan(node, matrix, rules, resolve=resolver, constrain=True)
    _assert_clean(plan)
    installs = [s.action for s in plan.steps if s.action.kind == "pip_install"]
    assert len(installs) >= 2 and installs[0].constraints == ()
    for later in installs[1:]:
        assert {"torch==2.4.0", "vllm==0.6.3", "nvidia-cublas-cu12==12.3.4.1"} <= set(
            later.constraints
        ), later.constraints
        assert later.command().endswith(")") and " -c <(printf '%s\\n' " in later.command()
    outcome = apply_plan(
        plan, str(python), snapshot=tmp_path / "snapshot.txt", include_unsafe=True, env=env
    )
    assert outcome.failed is None, outcome.failed
    frozen = _freeze(python, env)
    for pin in ("torch==2.4.0", "nvidia-cublas-cu12==12.3.4.1", "xformers==0.0.27.post2"):
        assert pin in frozen, frozen


def _backtracking_world(tmp_path: Path) -> tuple[Path, dict[str, str], list[Step]]:
    """torch 2.5.1 with a cuBLAS override installed, and a plan whose later step installs a
    package that needs torch: pip, free, answers it by moving torch or the override."""
    wheels = make_wheels(
        tmp_path / "wheels",
        (
            WheelSpec("torch", "2.3.0", ("filelock",)),  # pins no CUDA wheel
            WheelSpec("torch", "2.5.1", (f"nvidia-cublas-cu12==12.4.5.8; {CUDA_MARK}", "filelock")),
            WheelSpec("nvidia-cublas-cu12", "12.4.5.8"),
            WheelSpec("nvidia-cublas-cu12", "12.6.4.1"),
            WheelSpec("filelock", "3.16.1"),
            WheelSpec("flash-attn", "2.6.3", ("torch",)),
        ),
    )[0].parent
    python, env = _venv(
        tmp_path, wheels, "torch==2.5.1", "nvidia-cublas-cu12==12.6.4.1", "filelock==3.16.1"
    )
    steps = [
        Step(Action("pip_install", ("nvidia-cublas-cu12==12.6.4.1",)), "safe", ("CUD102",), "r"),
        Step(Action("pip_install", ("flash-attn==2.6.3",)), "safe", ("TOR103",), "r"),
    ]
    return python, env, steps


RESOLVED = {
    "torch": "2.5.1",
    "nvidia-cublas-cu12": "12.6.4.1",
    "filelock": "3.16.1",
    "flash-attn": "2.6.3",
}


@pytest.mark.parametrize("resolved", [True, False], ids=["resolved", "no-resolve"])
def test_a_later_fix_step_cannot_backtrack_torch(tmp_path: Path, resolved: bool) -> None:
    """Held (by the resolved set, or without a resolution by the earlier steps' pins and the
    installed torch), the later step stops with a conflict and nothing moves; the sh script
    (`fix --format sh`) and `--apply` run the same constraints."""
    from envcheck.plan.apply import apply_plan
    from envcheck.plan.emit.pip import plan_to_sh
    from envcheck.plan.planner import held

    python, env, steps = _backtracking_world(tmp_path / "held")
    plan = Plan(
        node="n",
        steps=held(steps, RESOLVED if resolved else None, {"torch": "torch==2.5.1"}),
    )
    first, later = plan.steps
    assert first.action.constraints == ()
    assert "torch==2.5.1" in later.action.constraints
    assert "nvidia-cublas-cu12==12.6.4.1" in later.action.constraints
    script = tmp_path / "fix.sh"
    script.write_text(plan_to_sh(plan), encoding="utf-8")
    ran = subprocess.run(
        ["sh", str(script)],
        env={**env, "PYTHON": str(python)},
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert ran.returncode != 0 and "ResolutionImpossible" in ran.stderr, ran.stderr
    outcome = apply_plan(plan, str(python), snapshot=tmp_path / "snap.txt", env=env)
    assert outcome.failed is not None and outcome.failed.step is later
    frozen = _freeze(python, env)
    assert "torch==2.5.1" in frozen and "nvidia-cublas-cu12==12.6.4.1" in frozen, frozen


def test_a_free_later_fix_step_moves_what_the_plan_installed(tmp_path: Path) -> None:
    """What the constraints prevent: the same steps without them, and pip moves torch or
    undoes the override."""
    from envcheck.plan.apply import apply_plan

    python, env, steps = _backtracking_world(tmp_path)
    outcome = apply_plan(
        Plan(node="n", steps=tuple(steps)), str(python), snapshot=tmp_path / "s.txt", env=env
    )
    assert outcome.failed is None, outcome.failed
    frozen = _freeze(python, env)
    assert "torch==2.5.1" not in frozen or "nvidia-cublas-cu12==12.6.4.1" not in frozen, frozen


def test_fix_without_the_resolver_holds_later_steps_to_the_earlier_pins(tmp_path: Path) -> None:
    """`fix --no-resolve` on the declared H100: the cuBLAS override after torch 2.4.0 carries
    torch's step as `-c` (pip cannot move torch for it); `check` prints the step beside its
    finding without the constraint (it is one step of a plan only in `fix`)."""
    from tests.conftest import run_cli

    spec = tmp_path / "node.toml"
    spec.write_text(_spec_text(NODE), encoding="utf-8")
    plan = run_cli("fix", "--spec", str(spec), "--no-resolve", "--json").json()["data"]["plan"]
    installs = [s for s in plan["steps"] if s["action"]["kind"] == "pip_install"]
    assert installs[0]["action"]["constraints"] == []
    assert "torch==2.4.0" in installs[0]["command"]
    [cublas] = [s for s in installs if "nvidia-cublas-cu12==12.3.4.1" in s["command"]]
    assert cublas["action"]["constraints"] == ["torch==2.4.0", "torchvision==0.19"]
    assert cublas["command"].endswith(
        "nvidia-cublas-cu12==12.3.4.1 -c <(printf '%s\\n' torch==2.4.0 torchvision==0.19)"
    )
    found = run_cli("check", "--spec", str(spec), "--json").json()["data"]["findings"]
    assert not any(" -c " in c for f in found for c in (f["fix"] or {}).get("commands", []))
