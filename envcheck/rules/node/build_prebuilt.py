"""A prebuilt wheel in place of a failed source build, from the matrix's tables: the flash-attn
release with wheels for the installed torch (its setup.py downloads the wheel instead of
compiling), the vLLM release whose wheel pins the installed torch, or a compiled-ops package's
wheel index for torch and its CUDA (``[[extension]]``).
The words SYS153 and SYS160 print before the source build they already name."""

from __future__ import annotations

import contextlib

from packaging.version import Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Action
from envcheck.rules.extension_builds import install_text
from envcheck.rules.fixes import pip_install
from envcheck.rules.node.flash_attn_pick import newest_loading, torch_old_abi


def prebuilt_install(facts: Facts, package: str) -> tuple[str, list[Action]] | None:
    """How to install ``package`` without compiling it for the installed torch, as prose and
    actions; None when torch is unknown or no table names a prebuilt build of it."""
    torch: Version | None = None
    with contextlib.suppress(Skip):
        torch = facts.known_version("torch")
    if package == "flash-attn":
        if torch is None:
            return None
        mm = f"{torch.major}.{torch.minor}"
        release = newest_loading(facts, mm, old_abi=torch_old_abi(facts, torch))
        if release is None:
            return None
        command = f"pip install flash-attn=={release.version} --no-build-isolation"
        return (
            f"flash-attn {release.version} publishes prebuilt wheels for torch {mm}, which its "
            f"setup downloads instead of compiling: {command}",
            [pip_install(f"flash-attn=={release.version}", flags=("--no-build-isolation",))],
        )
    if package == "vllm":
        if torch is None:
            return None
        public = Version(torch.public)
        paired = [
            r
            for r in facts.matrix.vllm_releases
            if r.torch is not None and r.torch.contains(public, prereleases=True)
        ]
        if not paired:
            return None
        newest = max(paired, key=lambda r: r.version)
        return (
            f"vllm {newest.version}'s wheel is built against torch {public} (its pin): pip "
            f"install vllm=={newest.version}",
            [pip_install(f"vllm=={newest.version}")],
        )
    entry = facts.matrix.extension(package)
    if entry is None or (entry.wheel_index is None and entry.installer is None):
        return None
    text, actions = install_text(facts, entry)
    return f"{package} publishes builds per torch and CUDA: {text}", actions
