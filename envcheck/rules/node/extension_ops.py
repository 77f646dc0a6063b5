"""TOR180: a package's compiled CUDA ops are missing: it was built or installed without them
(detectron2 / pytorch3d / mmcv's `Not compiled with GPU support`, `No module named
'mmcv._ext'`, apex's `No module named 'amp_C'`). The package comes from the line or the
traceback frame above it; the fix is that package's build for the installed torch and CUDA
(matrices/packages/extensions.toml: its wheel index, mim, or its source build with
FORCE_CUDA=1)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.schema import Extension
from envcheck.model.finding import Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.extension_builds import install_text
from envcheck.rules.fixes import fix, manual

_NAMED = lazy(r"([A-Za-z][A-Za-z0-9_.]*) is not compiled with GPU support", re.IGNORECASE)


def _package(facts: Facts, line: LogLine) -> tuple[Extension | None, str | None]:
    """The compiled-ops package the line (or the traceback frame above it) names, and the
    name as the log wrote it."""
    matrix = facts.matrix
    named = line.stated.get("ext_module")
    if named is None and (found := _NAMED.search(line.text)):
        named = found.group(1)
    if named is not None:
        entry = matrix.extension(named) or matrix.extension(named.lower())
        if entry is not None:
            return entry, named
    path = line.stated.get("ext_path")
    if path is not None:
        for part in reversed(re.split(r"[/\\]", path)[:-1]):
            entry = matrix.extension(part)
            if entry is not None:
                return entry, part
    return None, named


@rule("TOR180", "extension-ops-not-built", Severity.ERROR)
def extension_ops_not_built(facts: Facts) -> Iterable[Hit]:
    """A package's compiled CUDA ops are missing: it was built or installed without them

    ## What it checks
    Lines that say a package's CUDA ops are not there: detectron2's, pytorch3d's and mmcv's
    `Not compiled with GPU support` (`nms is not compiled with GPU support`), `No module named
    'mmcv._ext'`, apex's `No module named 'amp_C'` / `fused_layer_norm_cuda`. The package comes
    from the line or the traceback frame above it; its wheel index and build command from the
    matrix's `[[extension]]` table. Only a log states it.

    ## Why it matters
    These packages compile their CUDA ops only when their setup.py sees torch's CUDA and an
    nvcc (`torch.cuda.is_available()` and `CUDA_HOME`) or `FORCE_CUDA=1`: built in a docker
    build without GPUs, with a CPU torch in pip's isolated build environment, or installed as
    the ops-less distribution (mmcv-lite, apex from the package index), they import and fail
    at the first op.

    ## Example
    `RuntimeError: Not compiled with GPU support` from detectron2's ROIAlign, after `pip
    install` in a Dockerfile `RUN` step (no GPU visible at build time).

    ## Fix
    Install the package's build for the installed torch and CUDA (`pip install torch-scatter
    -f https://data.pyg.org/whl/torch-2.1.0+cu121.html`, `mim install mmcv`), or rebuild it
    with the CUDA ops forced on: `FORCE_CUDA=1 pip install --no-build-isolation <package>`
    with torch's CUDA toolkit on PATH and CUDA_HOME set.

    ## References
    - facebookresearch/detectron2 INSTALL.md ("Not compiled with GPU support": CUDA is not found when building detectron2)
    - facebookresearch/detectron2 docker/Dockerfile (FORCE_CUDA because during `docker build` cuda is not accessible)
    - open-mmlab/mmcv docs/en/faq.md ("No module named 'mmcv._ext'"; "nms is not compiled with GPU support")
    - NVIDIA/apex README.md (--cpp_ext --cuda_ext)
    """
    raise Skip("only a log line states an op built without CUDA", "log.extension_ops")


@from_log("TOR180")
def extension_ops_not_built_in_log(facts: Facts, line: LogLine) -> Hit:
    entry, named = _package(facts, line)
    if entry is None:
        what = f"{named!r}" if named else "a compiled-ops package (the traceback names it)"
        summary = (
            f"Rebuild {what} with its CUDA ops against the installed torch: `FORCE_CUDA=1 pip "
            "install --no-build-isolation --no-cache-dir --force-reinstall <package>` (or "
            "`FORCE_CUDA=1 pip install --no-build-isolation -e .` in its source tree, after "
            "deleting its build/ folder), with torch's CUDA toolkit on PATH and CUDA_HOME set; "
            "or install its prebuilt wheel for the installed torch and CUDA"
        )
        return Hit(
            f"{what} was built without its CUDA ops (line {line.line}): its setup.py saw no "
            "CUDA (no nvcc / CUDA_HOME, no GPU visible at build time, or a CPU torch in pip's "
            "isolated build) and compiled the CPU ops only",
            evidence={"line": line.line, "package": named},
            fix=fix(
                summary,
                "manual",
                manual(
                    "FORCE_CUDA=1 pip install --no-build-isolation --no-cache-dir "
                    "--force-reinstall <package>"
                ),
            ),
        )
    text, actions = install_text(facts, entry)
    version = facts.known_version(entry.package)
    have = f"{entry.package} {version}" if version is not None else entry.package
    return Hit(
        f"{have} has no CUDA ops here (line {line.line}): it was built without them (its "
        "setup.py saw no CUDA toolkit or GPU, or pip built it against a CPU torch) or the "
        "ops-less distribution is installed",
        evidence={"line": line.line, "package": entry.package, "named": named},
        fix=fix(
            f"Install {entry.package} with its CUDA ops for the installed torch: {text}"
            + (
                ". A build in a source tree (pip install -e ., setup.py develop) keeps its "
                "CPU-only objects: delete its build/ folder and the *.so it left, then rebuild "
                "with FORCE_CUDA=1"
                if entry.build
                else ""
            ),
            "manual",
            *actions,
        ),
    )
