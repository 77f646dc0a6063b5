"""torch's own wording of a CUDA library it could not find (SYS150): `ValueError:
libcublas.so.*[0-9] not found in the system path [...]`.

torch 1.13 to 2.x, when loading libtorch_global_deps fails, looks for each CUDA library its
wheels depend on in `<sys.path entry>/nvidia/<lib>/lib/` by a glob (`_preload_cuda_deps`:
`raise ValueError(f"{lib_name} not found in the system path {sys.path}")`, pytorch/pytorch
torch/__init__.py). The line names the library by its file-name stem, not a SONAME: the
nvidia-* wheel that ships it is not installed next to torch. Threads end it by installing torch
again with its dependencies (finic-ai/rag-stack#44: `pip install torch torchvision torchaudio`),
or, where an installer dropped the dependencies, by avoiding the release whose PyPI metadata
lacked them (pytorch/pytorch#100974: torch 2.0.1's wheel listed no nvidia-* requirement to
poetry; kennethleungty/Llama-2-Open-Source-LLM-CPU-Inference#8 and rag-stack#44: `torch =
">=2.0.0, !=2.0.1"`, `!=2.1.0`), or by installing the wheel itself.
"""

from __future__ import annotations

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.model import package_names
from envcheck.model.finding import Action
from envcheck.rules.base import Hit, LogLine
from envcheck.rules.fixes import fix, manual, pip_install

# the versions of torch whose PyPI metadata poetry read without the nvidia-* requirements
# (pytorch/pytorch#100974 for 2.0.1; rag-stack#44 excluded 2.1.0 as well)
_POETRY_PIN = 'torch = ">=2.0.0, !=2.0.1, !=2.1.0"'


def _torch_major(facts: Facts) -> int | None:
    try:
        cuda = facts.torch_cuda()
    except Skip:
        return None
    return cuda.major if cuda is not None else None


def _torch_index(facts: Facts) -> str | None:
    """The index URL of the node's torch variant (cu121 ...), when the node states it."""
    try:
        variant = facts.torch_variant()
    except Skip:
        return None
    if not variant.startswith("cu"):
        return None
    return facts.matrix.torch_index_url(variant)


def _wheels(facts: Facts, stem: str, major: int | None) -> list[str]:
    """The nvidia-*-cuNN wheels the table says ship ``stem`` (libcublas -> nvidia-cublas-cu12),
    for torch's CUDA major when it is known, else every CUDA major whose wheels carry the -cuNN
    suffix torch 2.x pins (the newest first)."""
    found: dict[str, int] = {}
    for entry in facts.matrix.sonames:
        if entry.name.split(".so", maxsplit=1)[0] != stem or entry.cuda_major is None:
            continue
        if major is not None and entry.cuda_major != major:
            continue
        for wheel in package_names(entry.pip, entry.cuda_major):
            if wheel.startswith("nvidia-") and wheel.endswith(f"-cu{entry.cuda_major}"):
                found.setdefault(wheel, entry.cuda_major)
    return sorted(found, key=lambda w: -found[w])


def _wheels_major(wheel: str) -> str:
    return wheel.rsplit("-cu", 1)[-1]


def torch_preload_missing(facts: Facts, line: LogLine, stem: str) -> Hit:
    """The Hit for torch's `<lib>.so.*[0-9] not found in the system path`: reinstall torch with
    its dependencies first (from the node's variant index where known), then the wheel, then
    the pin that avoids the releases poetry installed without them."""
    major = _torch_major(facts)
    wheels = _wheels(facts, stem, major)
    url = _torch_index(facts)
    reinstall = "pip install --force-reinstall torch torchvision torchaudio" + (
        f" --index-url {url}" if url else ""
    )
    words = [
        f"install torch again with its dependencies: {reinstall} (pip install torch "
        "torchvision torchaudio; torch's CUDA wheels depend on the nvidia-* wheels)"
    ]
    actions: list[Action] = [manual(reinstall)]
    for wheel in wheels:
        cuda = "" if major is not None else f" (a CUDA {_wheels_major(wheel)} torch)"
        words.append(f"pip install {wheel}{cuda}")
        actions.append(pip_install(wheel))
    words.append(
        f"with poetry, a torch whose PyPI metadata lists them: {_POETRY_PIN} in pyproject.toml, "
        "then poetry lock (torch 2.0.1's wheel did not, pytorch#100974)"
    )
    actions.append(manual(f"{_POETRY_PIN}  (pyproject.toml), then poetry lock && poetry install"))
    return Hit(
        f"torch found no {stem} in an nvidia/*/lib directory of sys.path (line {line.line}): "
        "the nvidia-* wheel its CUDA build depends on is not installed beside it (an installer "
        "that skipped torch's dependencies, pip --no-deps, or a torch from another environment)",
        evidence={"line": line.line, "library": stem, "wheels": wheels},
        fix=fix("Give torch its CUDA wheels: " + "; or ".join(words), "manual", *actions),
    )
