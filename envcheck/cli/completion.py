"""``envcheck completion bash|zsh|fish``: a completion script for the shell, generated from the
parser itself (every command, subcommand and option, with choices where an option has them).

    eval "$(envcheck completion bash)"          # ~/.bashrc
    eval "$(envcheck completion zsh)"           # ~/.zshrc (after compinit)
    envcheck completion fish > ~/.config/fish/completions/envcheck.fish
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from typing import Any

SHELLS = ("bash", "zsh", "fish")


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "completion",
        help="print a shell completion script (bash, zsh or fish)",
        description="Print a completion script for SHELL on standard output. bash: "
        'eval "$(envcheck completion bash)" in ~/.bashrc; zsh: eval "$(envcheck completion '
        'zsh)" in ~/.zshrc after compinit; fish: envcheck completion fish > '
        "~/.config/fish/completions/envcheck.fish.",
    )
    p.add_argument("shell", choices=SHELLS, metavar="SHELL", help="bash, zsh or fish")
    p.set_defaults(run=run)


@dataclass
class Command:
    path: tuple[str, ...]  # () for envcheck itself, ("matrix", "show") for a subcommand
    help: str = ""
    options: list[tuple[str, str, tuple[str, ...], bool]] = field(default_factory=list)
    # (option, help, choices, takes a value)
    subcommands: list[str] = field(default_factory=list)
    positional_choices: tuple[str, ...] = ()


def _walk(parser: argparse.ArgumentParser, path: tuple[str, ...], out: list[Command]) -> None:
    command = Command(path)
    out.append(command)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, child in action.choices.items():
                command.subcommands.append(name)
                before = len(out)
                _walk(child, (*path, name), out)
                out[before].help = helps.get(name, "")
        elif action.option_strings:
            choices = tuple(str(c) for c in action.choices or ())
            takes = action.nargs != 0
            for option in action.option_strings:
                command.options.append((option, action.help or "", choices, takes))
        elif action.choices:
            command.positional_choices = tuple(str(c) for c in action.choices)


def _values() -> dict[str, tuple[str, ...]]:
    """Values of options whose argparse ``type`` checks them (so argparse has no ``choices``):
    completed as words instead of file names. ``--profile`` also takes a file."""
    from envcheck.ingest.detect import FORMATS
    from envcheck.plan.profiles import load_profiles

    return {
        "--severity": ("error", "warning", "info"),
        "--from-format": tuple(FORMATS),
        "--profile": tuple(load_profiles()),
        "--deep": ("torch",),
    }


# options that take a file as well as the words above
TAKES_FILES = ("--profile",)


def _rule_codes() -> tuple[str, ...]:
    from envcheck.matrix_validate import load
    from envcheck.rules import all_rules

    return tuple(sorted(r.code for r in all_rules(load([]))))


def commands() -> list[Command]:
    from envcheck.cli import build_parser

    out: list[Command] = []
    _walk(build_parser(), (), out)
    values = _values()
    for command in out:
        command.options = [
            (o, h, choices or values.get(o, ()), takes) for o, h, choices, takes in command.options
        ]
        if command.path == ("explain",):
            command.positional_choices = _rule_codes()
    return out


def _clean(text: str) -> str:
    """Help text for a fish single-quoted string: one line, apostrophes and backslashes escaped
    (fish reads \\' and \\\\ inside single quotes)."""
    text = " ".join(text.replace("%%", "%").split())[:70]
    return text.replace("\\", "\\\\").replace("'", "\\'")


def bash(cmds: list[Command]) -> str:
    cases = []
    for c in cmds:
        words = [o for o, *_ in c.options] + c.subcommands + list(c.positional_choices)
        valued = [(o, ch) for o, _, ch, takes in c.options if takes]
        prev = "".join(
            f"            {o}) COMPREPLY=($(compgen -W '{' '.join(ch)}' -- \"$cur\") "
            f'$(compgen -f -- "$cur")); return;;\n'
            if ch and o in TAKES_FILES
            else f"            {o}) COMPREPLY=($(compgen -W '{' '.join(ch)}' -- \"$cur\")); return;;\n"
            if ch
            else f'            {o}) COMPREPLY=($(compgen -f -- "$cur")); return;;\n'
            for o, ch in valued
        )
        cases.append(
            f"        '{' '.join(c.path)}')\n"
            f'            case "$prev" in\n{prev}            esac\n'
            f"            words='{' '.join(words)}';;\n"
        )
    return (
        "# bash completion for envcheck (envcheck completion bash)\n"
        "_envcheck() {\n"
        '    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"\n'
        "    local path='' words='' i w\n"
        "    for ((i = 1; i < COMP_CWORD; i++)); do\n"
        '        w="${COMP_WORDS[i]}"\n'
        '        case "$w" in -*) continue;; esac\n'
        f'        case " {" ".join(" ".join(c.path) for c in cmds if c.path)} " in\n'
        '            *" ${path:+$path }$w "*) path="${path:+$path }$w";;\n'
        "        esac\n"
        "    done\n"
        '    case "$path" in\n' + "".join(cases) + "    esac\n"
        '    if [[ "$cur" == -* || -n "$words" ]]; then\n'
        '        COMPREPLY=($(compgen -W "$words" -- "$cur"))\n'
        "    fi\n"
        '    [[ ${#COMPREPLY[@]} -eq 0 ]] && COMPREPLY=($(compgen -f -- "$cur"))\n'
        "}\n"
        "complete -o filenames -F _envcheck envcheck\n"
    )


def zsh(cmds: list[Command]) -> str:
    # zsh runs the bash script through bashcompinit: one implementation, tested in bash; compinit
    # runs only when it has not run yet (a second compinit in ~/.zshrc is slow and resets state)
    return (
        "# zsh completion for envcheck (envcheck completion zsh)\n"
        "(( $+functions[compdef] )) || { autoload -U +X compinit && compinit; }\n"
        "autoload -U +X bashcompinit && bashcompinit\n" + bash(cmds)
    )


def fish(cmds: list[Command]) -> str:
    lines = ["# fish completion for envcheck (envcheck completion fish)"]
    top = next(c for c in cmds if not c.path)
    lines.append("complete -c envcheck -f")
    for c in cmds:
        if not c.path:
            condition = "__fish_use_subcommand"
        elif len(c.path) == 1:
            condition = f"__fish_seen_subcommand_from {c.path[0]}"
        else:
            condition = (
                f"__fish_seen_subcommand_from {c.path[0]}; and __fish_seen_subcommand_from "
                f"{c.path[-1]}"
            )
        if c.path:
            parent = (
                "__fish_use_subcommand"
                if len(c.path) == 1
                else (
                    f"__fish_seen_subcommand_from {c.path[0]}; and not __fish_seen_subcommand_from "
                    + " ".join(next(p for p in cmds if p.path == c.path[:-1]).subcommands)
                )
            )
            lines.append(
                f"complete -c envcheck -n '{parent}' -a {c.path[-1]} -d '{_clean(c.help)}'"
            )
        for option, text, choices, takes in c.options:
            flag = f"-l {option[2:]}" if option.startswith("--") else f"-s {option[1:]}"
            extra = f" -x -a '{' '.join(choices)}'" if choices else (" -r -F" if takes else "")
            if choices and option in TAKES_FILES:
                extra = f" -r -F -a '{' '.join(choices)}'"
            lines.append(f"complete -c envcheck -n '{condition}' {flag}{extra} -d '{_clean(text)}'")
        if c.positional_choices:
            lines.append(
                f"complete -c envcheck -n '{condition}' -a '{' '.join(c.positional_choices)}'"
            )
    del top
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> int:
    cmds = commands()
    sys.stdout.write({"bash": bash, "zsh": zsh, "fish": fish}[args.shell](cmds))
    return 0
