"""Builders for declarative fixes. Nothing here runs anything."""

from __future__ import annotations

from envcheck.matrix.schema import FixSpec
from envcheck.model.finding import Action, Applicability, Fix


def pip_install(
    *requirements: str, index_url: str | None = None, flags: tuple[str, ...] = ()
) -> Action:
    return Action(
        kind="pip_install", packages=tuple(requirements), index_url=index_url, flags=flags
    )


def pip_uninstall(*names: str) -> Action:
    return Action(kind="pip_uninstall", packages=tuple(names))


def set_env(**variables: str) -> Action:
    return Action(kind="env", env=dict(variables))


def manual(text: str) -> Action:
    return Action(kind="manual", text=text)


def fix(summary: str, applicability: Applicability, *actions: Action) -> Fix:
    """A fix of these steps, each printed once (two builders of one rule may both add the
    same command: a rebuild that two readings of the line call for)."""
    unique: list[Action] = []
    for action in actions:
        if action not in unique:
            unique.append(action)
    return Fix(summary=summary, applicability=applicability, actions=tuple(unique))


def from_spec(spec: FixSpec) -> Fix:
    actions: list[Action] = []
    if spec.pip_uninstall:
        actions.append(pip_uninstall(*spec.pip_uninstall))
    if spec.pip:
        actions.append(pip_install(*spec.pip, flags=spec.pip_flags))
    if spec.env:
        actions.append(set_env(**spec.env))
    actions.extend(manual(text) for text in spec.manual)
    return Fix(summary=spec.summary, applicability=spec.applicability, actions=tuple(actions))


def apt_words(packages: str) -> str:
    """An apt install in both spellings threads use (`apt-get install X`, `apt install X`)."""
    return f"sudo apt-get install {packages} (or: sudo apt install {packages})"


def apt_command(packages: str) -> Action:
    """The apt install to run, non-interactive (as in a Dockerfile)."""
    return manual(f"sudo apt-get update && sudo apt-get install -y {packages}")


def conda_words(packages: str) -> str:
    """A conda-forge install in both spellings threads use (with and without the channel)."""
    return f"conda install -c conda-forge {packages} (or: conda install {packages})"
