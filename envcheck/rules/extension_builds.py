"""How to get a compiled-ops package (detectron2, mmcv, torch-scatter, apex: the matrix's
``[[extension]]`` table) built for the installed torch and CUDA: its wheel index with torch's
release and CUDA filled in, its installer (OpenMMLab's mim), its documented source build with
the CUDA ops forced on. The words and commands TOR180, TOR150, PKG101 and CUD153 print."""

from __future__ import annotations

import contextlib
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.schema import Extension
from envcheck.model.finding import Action
from envcheck.rules.fixes import manual


@dataclass(frozen=True)
class TorchTags:
    """The installed torch as wheel indexes spell it: ``2.1.0`` (a release's patch level is
    0: PyG and OpenMMLab publish one index per torch minor), ``2.1`` and ``cu121``; None
    where the node does not state it."""

    torch: str | None
    torch_mm: str | None
    cuda_tag: str | None


def torch_tags(facts: Facts, cuda_stated: str | None = None) -> TorchTags:
    """``cuda_stated``: torch's CUDA as a log line states it ('PyTorch has CUDA version 11.8'),
    used where the node does not state it."""
    version = cuda = None
    with contextlib.suppress(Skip):
        version = facts.known_version("torch")
    with contextlib.suppress(Skip):
        cuda = facts.torch_cuda() if version is not None else None
    tag = f"cu{cuda.major}{cuda.minor}" if cuda is not None else None
    if tag is None and cuda_stated is not None:
        parts = cuda_stated.strip().split(".")
        if len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit():
            tag = f"cu{parts[0]}{parts[1]}"
    if version is None:
        return TorchTags(None, None, tag)
    major, minor = version.release[0], (*version.release, 0)[1]
    return TorchTags(f"{major}.{minor}.0", f"{major}.{minor}", tag)


def wheel_index(
    entry: Extension,
    tags: TorchTags,
    python: Version | None = None,
    torch_exact: Version | None = None,
) -> str | None:
    """The package's find-links URL for the installed torch and CUDA, with `${TORCH}`-style
    placeholders for what the node does not state; None when the package has no index.
    ``python`` and ``torch_exact`` fill PyTorch3D's folder names (``py310``, ``pyt210``: the
    Python and the exact torch release its wheels are built for)."""
    if entry.wheel_index is None:
        return None
    return entry.wheel_index.format(
        torch=tags.torch or "${TORCH}",
        torch_mm=tags.torch_mm or "${TORCH_MINOR}",
        cuda_tag=tags.cuda_tag or "${CUDA}",
        py_tag=f"py{python.major}{python.minor}" if python is not None else "${PY}",
        torch_nodot=(
            torch_exact.public.replace(".", "") if torch_exact is not None else "${TORCH_NODOT}"
        ),
    )


def _placeholders(tags: TorchTags, index: str) -> str:
    if "${" not in index:
        return ""
    example = (
        index.replace("${TORCH_MINOR}", "2.1")
        .replace("${TORCH_NODOT}", "210")
        .replace("${TORCH}", "2.1.0")
        .replace("${CUDA}", "cu121")
        .replace("${PY}", "py310")
    )
    python = ", and PY from python --version (3.10: py310)" if "${PY}" in index else ""
    return (
        " (fill in torch's release and CUDA: python -c 'import torch; "
        "print(torch.__version__, torch.version.cuda)', e.g. TORCH=2.1.0 CUDA=cu121"
        f"{python}: {example})"
    )


@dataclass(frozen=True)
class WheelPick:
    """The release of a range to install from the package's wheel table: ``requirement``
    (``mmcv==2.1.0``), the torch / CUDA whose wheel serves it when that is not the installed
    one (``tags``), and why (prose, "" when the installed torch has it)."""

    requirement: str
    tags: TorchTags | None
    why: str


def _version_key(text: str) -> Version:
    try:
        return Version(text)
    except InvalidVersion:
        return Version("0")


def pick_wheel(entry: Extension, requirement: str | None, tags: TorchTags) -> WheelPick | None:
    """The newest release inside ``requirement`` the package's wheel table serves for the
    installed torch minor and CUDA; else the newest inside it for any torch (and that torch,
    to install with it); None without a table or a range."""
    if not entry.wheels or requirement is None:
        return None
    try:
        spec = Requirement(requirement).specifier
    except InvalidRequirement:
        return None
    cuda = (
        f"{tags.cuda_tag[2:-1]}.{tags.cuda_tag[-1]}"
        if tags.cuda_tag and tags.cuda_tag.startswith("cu")
        else None
    )

    def inside(versions: Sequence[str]) -> list[str]:
        found = [v for v in versions if spec.contains(_version_key(v), prereleases=True)]
        return sorted(found, key=_version_key, reverse=True)

    here = [
        w for w in entry.wheels if w.torch == tags.torch_mm and (cuda is None or w.cuda == cuda)
    ]
    for row in here:
        best = inside(row.versions)
        if best:
            return WheelPick(f"{entry.package}=={best[0]}", None, "")
    rows = [(w, inside(w.versions)) for w in entry.wheels if w.cuda != "cpu"]
    rows = [(w, found) for w, found in rows if found]
    if not rows:
        return None
    newest = max((found[0] for _, found in rows), key=_version_key)
    serving = [w for w, found in rows if newest in found]
    same_cuda = [w for w in serving if w.cuda == cuda] or serving
    row = max(same_cuda, key=lambda w: (_version_key(w.torch), _version_key(w.cuda)))
    torches = sorted({w.torch for w in serving}, key=_version_key)
    span = torches[0] if len(torches) == 1 else f"{torches[0]} to {torches[-1]}"
    pin_torch = (
        f"`pip install torch=={row.torch}.* --index-url "
        f"https://download.pytorch.org/whl/cu{row.cuda.replace('.', '')}`"
    )
    if tags.torch_mm:
        have = f"torch {tags.torch_mm}" + (f" with CUDA {cuda}" if cuda else "")
        why = (
            f"OpenMMLab's index has no {entry.package} wheel inside "
            f"{requirement_text(requirement)} for {have}: {entry.package} {newest}, the newest "
            f"inside it, has wheels for torch {span}; install torch {row.torch} ({pin_torch}) "
            f"and {entry.package}=={newest}, or build {entry.package}=={newest} from source "
            "against the installed torch"
        )
    else:
        why = (
            f"{entry.package} {newest} is the newest release inside the range; OpenMMLab's "
            f"index has its wheels for torch {span} (with a newer torch: install torch "
            f"{row.torch}, {pin_torch}, or build it from source)"
        )
    picked = TorchTags(f"{row.torch}.0", row.torch, f"cu{row.cuda.replace('.', '')}")
    return WheelPick(f"{entry.package}=={newest}", picked, why)


def install_text(
    facts: Facts, entry: Extension, requirement: str | None = None, cuda_stated: str | None = None
) -> tuple[str, list[Action]]:
    """The command that installs a build of ``entry`` for the installed torch and CUDA (the
    prebuilt wheel where the package has an index, else its source build with the CUDA ops
    forced on), as prose quoting it and as actions. ``requirement``: a range to install
    (``mmcv>=2.0.0rc4,<2.2.0``), else the package itself."""
    tags = torch_tags(facts, cuda_stated)
    pick = pick_wheel(entry, requirement, tags)
    wanted = pick.requirement if pick is not None else requirement or entry.package
    if pick is not None and pick.tags is not None:
        tags = pick.tags
    python = torch_exact = None
    with contextlib.suppress(Skip):
        python = facts.python_version()
    if pick is None or pick.tags is None:  # the installed torch, not a release the table picked
        with contextlib.suppress(Skip):
            torch_exact = facts.known_version("torch")
    index = wheel_index(entry, tags, python, torch_exact)
    quoted = shlex.quote(wanted)
    parts: list[str] = []
    actions: list[Action] = []
    if entry.installer == "mim":
        mim = f'pip install -U openmim && mim install "{wanted}"'
        parts.append(
            f"`{mim}` (mim picks the {entry.package} wheel built for the installed torch and CUDA)"
        )
        actions.append(manual(mim))
    if index is not None:
        command = f"pip install {quoted} -f {index}"
        who = (
            f"torch {tags.torch_mm} and {tags.cuda_tag}"
            if tags.torch_mm and tags.cuda_tag
            else f"the installed torch and {tags.cuda_tag or 'CUDA'}"
        )
        parts.append(
            f"`{command}` (the {entry.package} wheels built for {who}){_placeholders(tags, index)}"
        )
        actions.append(manual(command))
    if entry.build is not None:
        build = entry.build.replace("{requirement}", quoted)
        lead = (
            "or build it here against the installed torch"
            if parts
            else "Rebuild it against the installed torch, with its CUDA ops"
        )
        parts.append(
            f"{lead}: `{build}` (nvcc of torch's CUDA on PATH, CUDA_HOME set; FORCE_CUDA=1 "
            "builds the CUDA ops even where no GPU is visible, as in a docker build)"
        )
        actions.append(manual(build))
    if not parts:
        parts.append(
            f"`pip install --no-build-isolation --no-cache-dir --force-reinstall {quoted}`"
        )
    if pick is not None and pick.why:
        parts.insert(0, pick.why)
    text = "; ".join(parts)
    if entry.note:
        text += f". {entry.note}"
    return text, actions


def requirement_text(requirement: str) -> str:
    """A requirement as people type it, the lower bound first (``mmcv>=2.0.0rc4,<2.2.0``)."""
    try:
        req = Requirement(requirement)
    except InvalidRequirement:
        return requirement
    clauses = sorted(req.specifier, key=lambda s: (not s.operator.startswith(">"), str(s)))
    return req.name + ",".join(str(c) for c in clauses)


def extension_installs(facts: Facts, wanted: Sequence[str]) -> tuple[str, list[Action], list[str]]:
    """For the requirements among ``wanted`` that name a compiled-ops package with its own
    wheel index or installer (mmcv: mim, OpenMMLab's index), how to install them for the
    installed torch and CUDA: prose to append to a fix ("" when none), its actions, and the
    requirements left for a plain pip install."""
    texts: list[str] = []
    actions: list[Action] = []
    rest: list[str] = []
    for requirement in wanted:
        try:
            name = Requirement(requirement).name
        except InvalidRequirement:
            rest.append(requirement)
            continue
        entry = facts.matrix.extension(name)
        if entry is None or (entry.wheel_index is None and entry.installer is None):
            rest.append(requirement)
            continue
        text, more = install_text(facts, entry, requirement_text(requirement))
        texts.append(f"; {entry.package} is a compiled-ops package: {text}")
        actions += more
    return "".join(texts), actions, rest
