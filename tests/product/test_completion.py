"""``envcheck completion bash|zsh|fish``: scripts the shells accept and that complete commands,
subcommands, options and option choices (each shell that is installed runs its script)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.conftest import run_cli


def script(shell: str) -> str:
    result = run_cli("completion", shell)
    assert result.returncode == 0, result.stderr
    return result.stdout


def bash_complete(text: str, words: list[str]) -> list[str]:
    quoted = " ".join(f"'{w}'" for w in words)
    program = (
        f"{text}\nCOMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}; _envcheck; "
        'printf "%s\\n" "${COMPREPLY[@]}"'
    )
    out = subprocess.run(
        ["bash", "--norc", "-c", program], capture_output=True, text=True, timeout=30, check=True
    )
    return out.stdout.split()


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (["envcheck", "ch"], ["check"]),
        (["envcheck", "matrix", "s"], ["show"]),
        (["envcheck", "probe", "--t"], ["--timeout"]),
        (["envcheck", "check", "--fo"], ["--force"]),
        (["envcheck", "triage", "job.log", "--engine", ""], ["auto", "grep", "re2", "re"]),
        (["envcheck", "completion", "f"], ["fish"]),
        (["envcheck", "fix", "--format", ""], None),  # the choices of fix --format
    ],
)
def test_bash_completes_commands_options_and_choices(words, expected) -> None:
    got = bash_complete(script("bash"), words)
    if expected is None:
        assert got and "sh" in got
    else:
        assert got == expected


def test_a_bad_shell_is_a_usage_error() -> None:
    result = run_cli("completion", "tcsh")
    assert result.returncode == 2 and "invalid choice: 'tcsh'" in result.stderr


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_loads_the_script() -> None:
    out = subprocess.run(
        ["zsh", "-f", "-c", f"{script('zsh')}\ncomplete -p envcheck"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert "-F _envcheck envcheck" in out.stdout


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
def test_fish_completes_subcommands_and_choices() -> None:
    def complete(line: str) -> list[str]:
        out = subprocess.run(
            ["fish", "--no-config", "-c", f"{script('fish')}\ncomplete -C'{line}'"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
        return [row.split("\t")[0] for row in out.stdout.splitlines()]

    assert complete("envcheck matrix s") == ["show"]
    assert complete("envcheck triage x.log --engine ") == ["auto", "grep", "re", "re2"]
    assert "--json" in complete("envcheck probe --j")


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (["envcheck", "check", "--severity", ""], ["error", "warning", "info"]),
        (["envcheck", "check", "--deep", ""], ["torch"]),
        (["envcheck", "check", "--from-format", "collect"], ["collect-env"]),
        (["envcheck", "explain", "CUD10"], None),
    ],
)
def test_bash_completes_option_values_and_rule_codes(words, expected) -> None:
    """Values argparse checks with a ``type`` (no ``choices``) complete as words, not as file
    names; `explain` completes rule codes."""
    got = bash_complete(script("bash"), words)
    if expected is None:
        assert "CUD102" in got and all(c.startswith("CUD10") for c in got)
    else:
        assert got == expected


def test_bash_completes_profile_names() -> None:
    got = bash_complete(script("bash"), ["envcheck", "lock", "--profile", "ver"])
    assert "verl" in got


def test_zsh_script_does_not_rerun_compinit() -> None:
    text = script("zsh")
    assert "(( $+functions[compdef] )) ||" in text
    assert "\nautoload -U +X compinit && compinit\n" not in text


def test_fish_keeps_apostrophes_escaped() -> None:
    from envcheck.cli.completion import _clean

    assert _clean("the node's GPUs") == "the node\\'s GPUs"
    text = script("fish")
    assert "\\'" in text  # help texts with apostrophes keep them, escaped for fish
