"""A requirement not met, in each installer's and pkg_resources' own words, read into the same
facts (who requires what, what is installed or asked for) and worded into one fix family:
PKG101 for an installed set, PKG192 for a resolver's refusal
(envcheck/rules/node/resolver_lines.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from envcheck.rules.node.resolver_lines import stated_conflict
from tests.builtin_matrix import builtin_matrix
from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file


@pytest.mark.parametrize(
    ("line", "tool", "by", "requirement", "have", "asked"),
    [
        (
            "vllm 0.6.3 requires torch==2.4.0, but you have torch 2.5.1 which is incompatible.",
            "pip",
            "vllm",
            "torch==2.4.0",
            "2.5.1",
            None,
        ),
        (
            'torch 2.5.1 requires nvidia-cudnn-cu12==9.1.0.70; platform_system == "Linux" and '
            'platform_machine == "x86_64", but you have nvidia-cudnn-cu12 9.5.0.50 which is '
            "incompatible.",
            "pip",
            "torch",
            "nvidia-cudnn-cu12==9.1.0.70",
            "9.5.0.50",
            None,
        ),
        (
            # pip before 20.3 (pypa/pip commands/install.py, _warn_about_conflicts)
            "ERROR: torchvision 0.4.2 has requirement torch==1.3.1, but you'll have torch 1.2.0 "
            "which is incompatible.",
            "pip",
            "torchvision",
            "torch==1.3.1",
            "1.2.0",
            None,
        ),
        (
            "accelerate 0.30.0 requires huggingface-hub, which is not installed.",
            "pip",
            "accelerate",
            "huggingface-hub",
            None,
            None,
        ),
        (
            "pkg_resources.VersionConflict: (numpy 2.0.1 (/srv/env/lib/python3.11/site-packages), "
            "Requirement.parse('numpy<2'))",
            "pkg_resources",
            None,
            "numpy<2",
            "2.0.1",
            None,
        ),
        (
            "The 'accelerate>=0.26.0' distribution was not found and is required by peft",
            "pkg_resources",
            "peft",
            "accelerate>=0.26.0",
            None,
            None,
        ),
        (
            "  ╰─▶ Because xformers==0.0.28.post3 depends on torch==2.5.1 and your project depends "
            "on torch==2.6.0, we can conclude that your project's requirements are unsatisfiable.",
            "uv",
            "xformers",
            "torch==2.5.1",
            None,
            "==2.6.0",
        ),
        (
            "Because peft (0.4.0) depends on accelerate (>=0.21.0,<0.22.0) and my-app depends on "
            "accelerate (0.30.1), version solving failed.",
            "Poetry",
            "peft",
            "accelerate<0.22.0,>=0.21.0",
            None,
            "==0.30.1",
        ),
    ],
)
def test_each_wording_reads_into_the_same_facts(
    line: str, tool: str, by: str | None, requirement: str, have: str | None, asked: str | None
) -> None:
    conflict = stated_conflict(line)
    assert conflict is not None
    assert (conflict.tool, conflict.by, conflict.have, conflict.asked) == (tool, by, have, asked)
    assert conflict.requirement.name + str(conflict.requirement.specifier) == requirement


def test_a_line_that_states_no_conflict_reads_none() -> None:
    for line in (
        "Requirement already satisfied: torch==2.4.0 in ./venv/lib/python3.10/site-packages",
        "Successfully installed torch-2.4.0 vllm-0.6.3",
        "This package depends on torch being installed first.",
    ):
        assert stated_conflict(line) is None, line


def test_pips_check_confirms_the_requirement_with_the_pin_back(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ERROR: pip's dependency resolver does not currently take into account all the packages "
        "that are installed. This behaviour is the source of the following dependency conflicts.",
        "peft 0.10.0 requires accelerate>=0.21.0, but you have accelerate 0.20.3 which is "
        "incompatible.",
    )
    cause = causes(cli, log)["PKG101"]
    assert cause["verdict"] == "confirmed", cause
    text = fix_text(cause)
    assert "pip install 'accelerate>=0.21.0'" in text
    assert "peft" in text.split("accelerate>=0.21.0")[0] or "--upgrade peft" in text


def test_a_version_inside_the_range_is_not_a_conflict(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "pkg_resources.VersionConflict: (numpy 1.26.4 (/srv/env/lib/python3.11/site-packages), "
        "Requirement.parse('numpy<2'))",
    )
    assert causes(cli, log)["PKG101"]["verdict"] == "ruled_out"


def test_a_resolvers_refusal_moves_the_pin_or_unpins_the_requirer(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ERROR: Cannot install -r requirements.txt (line 3) and xformers==0.0.28.post3 because "
        "these package versions have conflicting dependencies.",
        "",
        "The conflict is caused by:",
        "    The user requested torch==2.6.0",
        "    xformers 0.0.28.post3 depends on torch==2.5.1",
    )
    cause = causes(cli, log)["PKG192"]
    assert cause["verdict"] == "confirmed", cause
    text = fix_text(cause)
    # a torch companion: the release the matrix pairs with the pinned torch, or torch moved
    paired = max(
        c.version
        for c in builtin_matrix().companions
        if c.package == "xformers" and str(c.torch) == "2.6.0"
    )
    assert f"pip install xformers=={paired}" in text
    assert "pip install torch==2.5.1" in text
    # any other requirer: the pin moved inside its range, or the requirer unpinned
    log = log_file(
        tmp_path,
        "ERROR: Cannot install peft==0.4.0 and accelerate==0.30.1 because these package "
        "versions have conflicting dependencies.",
        "The conflict is caused by:",
        "    The user requested accelerate==0.30.1",
        "    peft 0.4.0 depends on accelerate<0.22.0,>=0.21.0",
        name="peft.log",
    )
    text = fix_text(causes(cli, log)["PKG192"])
    assert "pip install 'accelerate<0.22.0,>=0.21.0' peft" in text
    assert "pip install peft 'accelerate==0.30.1'" in text


def test_uv_and_poetry_refusals_are_fixed_in_their_own_spelling(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    for name, line, install in (
        (
            "uv.log",
            "  ╰─▶ Because peft==0.4.0 depends on accelerate<0.22.0,>=0.21.0 and your project "
            "depends on accelerate==0.30.1, we can conclude that your project's requirements are "
            "unsatisfiable.",
            "uv add",
        ),
        (
            "poetry.log",
            "Because peft (0.4.0) depends on accelerate (>=0.21.0,<0.22.0) and my-app depends on "
            "accelerate (0.30.1), version solving failed.",
            "poetry add",
        ),
    ):
        cause = causes(cli, log_file(tmp_path, line, name=name))["PKG192"]
        assert cause["verdict"] == "confirmed", cause
        text = fix_text(cause)
        assert f"{install} 'accelerate<0.22.0,>=0.21.0' peft" in text
        assert f"{install} peft 'accelerate==0.30.1'" in text
        assert "pip install 'accelerate<0.22.0,>=0.21.0' peft" in text


def test_a_companion_conflict_below_the_header_pins_the_companion_of_the_torch_installed(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """The conflict line below pip's header decides PKG101; the torch the line says is
    installed (2.3.0), not the one the companion requires (2.2.0+cu121), picks the pair."""
    log = log_file(
        tmp_path,
        "ERROR: pip's dependency resolver does not currently take into account all the packages "
        "that are installed. This behaviour is the source of the following dependency conflicts.",
        "torchaudio 2.2.0+cu121 requires torch==2.2.0+cu121, but you have torch 2.3.0 which is "
        "incompatible.",
    )
    cause = causes(cli, log)["PKG101"]
    assert cause["verdict"] == "confirmed", cause
    assert "pip install torchaudio==2.3.0" in fix_text(cause)


def test_the_legacy_wording_pins_the_companion_of_the_torch_being_installed(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ERROR: torchvision 0.4.2 has requirement torch==1.3.1, but you'll have torch 1.2.0 "
        "which is incompatible.",
    )
    cause = causes(cli, log)["PKG101"]
    assert cause["verdict"] == "confirmed", cause
    assert "pip install torchvision==0.4.0" in fix_text(cause)


def test_a_resolver_refusal_names_the_xformers_built_for_the_pinned_torch(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """xformers' changelog states the torch each release's wheels were built for: the pinned
    torch 2.2.0 selects xformers 0.0.24, not the newest release."""
    log = log_file(
        tmp_path,
        "ERROR: Cannot install torch==2.2.0 and xformers==0.0.26.post1 because these package "
        "versions have conflicting dependencies.",
        "",
        "The conflict is caused by:",
        "    The user requested torch==2.2.0",
        "    xformers 0.0.26.post1 depends on torch==2.3.0",
    )
    cause = causes(cli, log)["PKG192"]
    assert cause["verdict"] == "confirmed", cause
    assert "pip install xformers==0.0.24" in fix_text(cause)
