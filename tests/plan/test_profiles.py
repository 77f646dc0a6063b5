"""Profiles: strict schema, errors with file:line:key, every built-in one sourced and usable."""

from __future__ import annotations

from pathlib import Path

import pytest

from envcheck.errors import UsageError
from envcheck.matrix.model import Matrix
from envcheck.model.plan import Target
from envcheck.plan.profiles import ProfileError, get_profile, load_profiles, parse_profile
from envcheck.plan.stack import choose_stack

EXPECTED = {"tinyzero", "verl", "openrlhf", "rlinf-behavior", "omnigibson"}


def test_builtin_profiles_load_and_cite_sources() -> None:
    profiles = load_profiles()
    assert set(profiles) >= EXPECTED
    for profile in profiles.values():
        assert profile.source and profile.requirements and profile.title


# a node each profile's own docs describe, and the torch it must get there
NODES = {
    "tinyzero": (
        Target(python="3.9", driver="550.54.15", gpus=("NVIDIA H100 80GB HBM3",)),
        "2.4.0",
    ),
    "verl": (Target(python="3.11", driver="550.54.15", gpus=("NVIDIA H100 80GB HBM3",)), "2.6.0"),
    "openrlhf": (
        Target(python="3.12", driver="580.65.06", gpus=("NVIDIA H100 80GB HBM3",)),
        "2.13.0",
    ),
    "rlinf-behavior": (
        Target(python="3.10", driver="535.183.06", gpus=("NVIDIA GeForce RTX 4090",)),
        "2.5.1",
    ),
    "omnigibson": (
        Target(python="3.11", driver="580.65.06", gpus=("NVIDIA GeForce RTX 4090",)),
        "2.7.0",
    ),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_profile_chooses_a_stack_on_its_documented_node(matrix: Matrix, name: str) -> None:
    profile = get_profile(name)
    target, torch = NODES[name]
    stack = choose_stack(matrix, target, profile.requirements)
    assert stack.ok, stack.conflicts
    assert stack.torch == torch


def test_openrlhf_on_a_cuda12_driver_is_a_conflict(matrix: Matrix) -> None:
    """vLLM 0.27.1 is a CUDA 13.0 build: a 550 driver cannot run it."""
    target = Target(python="3.12", driver="550.54.15", gpus=("NVIDIA H100 80GB HBM3",))
    stack = choose_stack(matrix, target, get_profile("openrlhf").requirements)
    assert not stack.ok and "CUDA 13.0" in stack.conflicts[0].message


@pytest.mark.parametrize(
    ("text", "where", "key"),
    [
        (
            'name = "x"\ntitle = "t"\nsource = "s"\nrequirements = ["torch"]\nbogus = 1\n',
            ":5",
            "bogus",
        ),
        (
            'name = "x"\ntitle = "t"\nsource = "s"\nrequirements = ["torch>>2"]\n',
            ":4",
            "requirements[0]",
        ),
        ('name = "x"\ntitle = "t"\nrequirements = ["torch"]\n', "", "source"),
        (
            'name = "x"\ntitle = "t"\nsource = "s"\nrequirements = ["a"]\npython = "three"\n',
            ":5",
            "python",
        ),
        ('name = "x"\ntitle = 1\nsource = "s"\nrequirements = ["a"]\n', ":2", "title"),
    ],
)
def test_bad_profiles_name_file_line_and_key(text: str, where: str, key: str) -> None:
    with pytest.raises(ProfileError) as info:
        parse_profile(text, "p.toml")
    message = str(info.value)
    assert message.startswith(f"p.toml{where}: key '{key}'") or (
        where == "" and f"'{key}'" in message
    )


def test_profile_by_path_and_unknown_name(tmp_path: Path) -> None:
    path = tmp_path / "mine.toml"
    path.write_text(
        'name = "mine"\ntitle = "t"\nsource = "s"\nrequirements = ["torch"]\n', encoding="utf-8"
    )
    assert get_profile(str(path)).name == "mine"
    with pytest.raises(UsageError, match="known: "):
        get_profile("nope")
