"""CUD104 from torch's cuDNN version check: `cuDNN version incompatibility: PyTorch was compiled
against (8, 9, 2) but found runtime version (8, 5, 0)` (torch/backends/cudnn/__init__.py; before
torch 1.12: `cuDNN version mismatch: PyTorch was compiled against 7102 but linked against 7600`).
torch loaded another libcudnn than the one it was built with: a cuDNN that a CUDA toolkit, a
conda package or another framework put first on LD_LIBRARY_PATH (torch's own message says so),
or an nvidia-cudnn wheel of another version than torch pins. The line states both versions, so
the fix names the cuDNN to drop and the one to install.

TensorFlow's and JAX's (XLA's) check reads the same way (`Loaded runtime CuDNN library: 8.6.0 but
source was compiled with: 8.9.4`, before TF 2.3 `... 7301 (compatibility version 7300) but
source was compiled with 7003 ...`; JAX: `Found cuDNN version 8600, but JAX was built against
version 8800`): they need the same major and an equal or newer minor (TF 1.x: the same minor)."""

from __future__ import annotations

import re

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine
from envcheck.rules.fixes import fix, manual, pip_install, set_env
from envcheck.rules.node.cuda_libs import _TOOLKIT_DIR

# torch >= 1.12: "(8, 9, 2)"; before: "7102" (major*1000 + minor*100 + patch)
_TUPLE = r"\((?P<{0}>[0-9]+, *[0-9]+, *[0-9]+)\)"
_NUMBER = r"(?P<{0}>[0-9]{{4,5}})\b"
MISMATCH = lazy(
    r"cuDNN version (?:incompatibility|mismatch): PyTorch was compiled +against "
    rf"(?:{_TUPLE.format('built')}|{_NUMBER.format('built_n')}) but "
    rf"(?:found runtime version|linked against) "
    rf"(?:{_TUPLE.format('found')}|{_NUMBER.format('found_n')})"
)
# TensorFlow / XLA (JAX) and JAX's own check: the version loaded, then the one built against
FRAMEWORK = lazy(
    r"Loaded runtime CuDNN library: (?:(?P<found>[0-9]+\.[0-9]+\.[0-9]+)|(?P<found_n>[0-9]{4,6}))"
    r"(?: \(compatibility version [0-9]+\))? but source was compiled with:? "
    r"(?:(?P<built>[0-9]+\.[0-9]+\.[0-9]+)|(?P<built_n>[0-9]{4,6}))"
    r"|Found cuDNN version (?P<jfound_n>[0-9]{4,6}), but (?P<who>[A-Za-z]+) was built against "
    r"version (?P<jbuilt_n>[0-9]{4,6})"
)
# a directory that holds a cuDNN or a CUDA toolkit's libraries (a conda env's lib/ too)
_CUDNN_DIR = lazy(r"cudnn|/cuda[^/]*/|/conda[^:]*/lib/?$", re.IGNORECASE)


def _version(group: str | None, number: str | None) -> str | None:
    if group:
        return ".".join(p.strip() for p in group.split(","))
    if number:
        n = int(number)
        if n >= 10000:  # cuDNN 9 on: major * 10000 + minor * 100 + patch
            return f"{n // 10000}.{n % 10000 // 100}.{n % 100}"
        return f"{n // 1000}.{n % 1000 // 100}.{n % 100}"
    return None


def _wheel(facts: Facts, built: str) -> tuple[str | None, bool]:
    """The nvidia-cudnn wheel for torch's CUDA major (cu12 for torch built with CUDA 12), and
    whether the node said which. None before cuDNN 8.5: no wheel (torch 1.13 was the first to
    pin one, nvidia-cudnn-cu11==8.5.0.96; the cu12 wheels start at 8.9 with torch 2.1)."""
    release = tuple(int(p) for p in built.split(".")[:2])
    if release < (8, 5):
        return None, True
    try:
        build = facts.torch()
    except Skip:
        build = None
    cuda = build.cuda if build is not None else None
    if cuda:
        return f"nvidia-cudnn-cu{cuda.split('.')[0]}", True
    return ("nvidia-cudnn-cu12" if release >= (8, 9) else "nvidia-cudnn-cu11"), False


def _release(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


def _framework_hit(facts: Facts, line: LogLine) -> Hit | None:
    """TensorFlow's / JAX's cuDNN check: the same major and an equal or newer minor are needed;
    the loaded cuDNN is usually an older one found first (a system or conda cuDNN)."""
    found = FRAMEWORK.search(line.text)
    if found is None:
        return None
    jax = found.group("jbuilt_n") is not None
    built = _version(found.group("built"), found.group("built_n") or found.group("jbuilt_n"))
    loaded = _version(found.group("found"), found.group("found_n") or found.group("jfound_n"))
    assert built is not None and loaded is not None
    who = found.group("who") or ("JAX" if "xla" in line.text.lower() else "TensorFlow / JAX")
    major, minor = _release(built)
    # the loaded one is older: anything of the same major at least as new works; newer but the
    # check still failed (TF 1.x wants the same minor): the release it was built with
    older = _release(loaded) < (major, minor)
    spec = f">={major}.{minor},<{major + 1}" if older else f"=={major}.{minor}.*"
    wheel, _known = _wheel(facts, built)
    try:
        variables = facts.env()
    except Skip:
        variables = {}
    paths = [p for p in variables.get("LD_LIBRARY_PATH", "").split(":") if p]
    culprits = [p for p in paths if _TOOLKIT_DIR.search(p) or _CUDNN_DIR.search(p)]
    actions = []
    if wheel is not None:
        actions.append(pip_install(f"{wheel}{spec}", flags=("--upgrade",)))
    if culprits:
        actions.append(set_env(LD_LIBRARY_PATH=":".join(p for p in paths if p not in culprits)))
    else:
        actions.append(
            manual(
                "unset LD_LIBRARY_PATH (or drop from it every directory that holds an older "
                "libcudnn.so: a CUDA toolkit's lib64, a cuDNN tarball, a conda env's lib)"
            )
        )
    actions.append(manual(f"conda env: conda install -c conda-forge 'cudnn{spec}'"))
    if jax:
        actions.append(
            manual(
                "or let pip bring the CUDA libraries JAX was built with: pip install -U "
                '"jax[cuda12]" (and unset LD_LIBRARY_PATH)'
            )
        )
    want = f"cuDNN {major}.{minor} or a newer {major}.x" if older else f"cuDNN {major}.{minor}"
    return Hit(
        f"{who} was built with cuDNN {built} but loaded cuDNN {loaded} (line {line.line}): "
        + (
            "an older cuDNN was found first (a system, conda or toolkit cuDNN on the loader's "
            "path, or an nvidia-cudnn wheel older than it needs)"
            if older
            else "it needs the cuDNN minor release it was built with"
        ),
        evidence={"line": line.line, "built": built, "loaded": loaded, "dirs": culprits},
        fix=fix(
            f"Load {want}: "
            + (f"pip install --upgrade '{wheel}{spec}'" if wheel else f"install cuDNN {spec}")
            + ", and drop the older cuDNN from LD_LIBRARY_PATH",
            "manual",
            *actions,
        ),
    )


def cudnn_mismatch_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """The Hit for torch's cuDNN version check (or TensorFlow's / JAX's), None when ``line`` is
    not such a check."""
    found = MISMATCH.search(line.text)
    if found is None:
        return _framework_hit(facts, line)
    built = _version(found.group("built"), found.group("built_n"))
    loaded = _version(found.group("found"), found.group("found_n"))
    assert built is not None and loaded is not None
    try:
        variables = facts.env()
    except Skip:
        variables = {}
    paths = [p for p in variables.get("LD_LIBRARY_PATH", "").split(":") if p]
    culprits = [p for p in paths if _TOOLKIT_DIR.search(p) or _CUDNN_DIR.search(p)]
    wheel, known = _wheel(facts, built)
    actions = []
    if culprits:
        actions.append(set_env(LD_LIBRARY_PATH=":".join(p for p in paths if p not in culprits)))
    else:
        actions.append(
            manual(
                "unset LD_LIBRARY_PATH (or drop from it every directory that holds a "
                "libcudnn.so: a CUDA toolkit's lib64, a cuDNN tarball, another env's lib)"
            )
        )
    if wheel is not None:
        actions.append(pip_install(f"{wheel}=={built}.*"))
    actions.append(
        manual(
            f"conda env: conda install cudnn={built}  (or reinstall torch so it brings the "
            f"cuDNN {built} it was built with)"
        )
    )
    where = (
        f"LD_LIBRARY_PATH puts {':'.join(culprits)} first"
        if culprits
        else "a cuDNN found first on LD_LIBRARY_PATH, or an nvidia-cudnn wheel of another "
        "version than torch pins"
    )
    return Hit(
        f"torch was built with cuDNN {built} but loaded cuDNN {loaded} (line {line.line}): "
        f"another cuDNN than torch's own is loaded ({where})",
        evidence={"line": line.line, "built": built, "loaded": loaded, "dirs": culprits},
        fix=fix(
            f"Let torch load the cuDNN {built} it was built with: drop the other cuDNN from "
            "LD_LIBRARY_PATH, or "
            + (
                f"install cuDNN {built} (conda install cudnn={built})"
                if wheel is None
                else f"install {wheel}=={built}.*"
                + ("" if known else " (the cu11 / cu12 wheel for torch's CUDA major)")
            ),
            "manual",
            *actions,
        ),
    )
