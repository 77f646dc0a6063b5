"""TOR190: a kernel library's own check refused a GPU NEWER than its build knows (xformers'
ops: 'requires device with capability <= (9, 0) but your GPU has capability (12, 0) (too
new)'), read against the ``[[arch_floor]]`` entries marked ``ceiling`` (found by the line's
text). The GPU's compute capability and the bound come from the line (or the entry, or the
node); the fix names the wheel index of the CUDA that first compiles the GPU's architecture
(the ``[[sm]]`` table), or the installed torch's own, where the library's builds for the GPU
are."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable

from packaging.version import Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.model import variant_cuda
from envcheck.model.finding import Severity
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.choose import sm
from envcheck.rules.fixes import fix, manual
from envcheck.rules.node.arch import _cc, _line_gpu


@rule("TOR190", "library-arch-ceiling", Severity.ERROR)
def library_arch_ceiling(facts: Facts) -> Iterable[Hit]:
    """A kernel library refused a GPU newer than its build: the installed release has no kernels it runs there

    ## What it checks
    In `triage`, a library's own check that refuses a GPU above the newest compute capability
    its kernels or dispatch know (xformers' `requires device with capability <= (9, 0) but your
    GPU has capability (12, 0) (too new)` under `No operator found for
    memory_efficient_attention_forward`), found in the `[[arch_floor]]` table (entries marked
    `ceiling`) by the text it prints, against the GPU's compute capability from the line or the
    node. Which of a library's ops a job calls only its log states.

    ## Why it matters
    A library release built before an architecture existed (xformers wheels before Blackwell)
    imports fine and then refuses every op on the new GPU; the job fails at its first attention
    call, often after the model has loaded.

    ## Example
    ComfyUI on an RTX 5060 Ti (sm_120) with an xformers built for sm_90 and older:
    `cutlassF-pt is not supported because: requires device with capability <= (9, 0) but your
    GPU has capability (12, 0) (too new)`.

    ## Fix
    Install a release of the library built for the GPU, from the wheel index of a CUDA that
    compiles its architecture (for sm_120: `pip install -U xformers --index-url
    https://download.pytorch.org/whl/cu128`), matching the installed torch; or turn the library
    off so the framework falls back to PyTorch SDPA (`pip uninstall -y xformers`).

    ## References
    - https://github.com/facebookresearch/xformers/blob/main/xformers/ops/fmha/common.py
    - https://github.com/Comfy-Org/ComfyUI/issues/11602
    - https://github.com/facebookresearch/xformers/issues/1357
    """
    raise Skip("only a log line states which library refused the GPU", "log.arch")


def _variant(facts: Facts, cc: Version | None) -> str | None:
    """The CUDA variant (cu128) whose builds have the GPU's kernels: the installed torch's when
    its CUDA compiles the architecture, else the first CUDA that does (the ``[[sm]]`` table)."""
    support = facts.matrix.sm(sm(cc)) if cc is not None else None
    with contextlib.suppress(Skip):
        variant = facts.torch_variant()
        cuda = variant_cuda(variant)
        if cuda is not None and (support is None or cuda >= support.first_cuda):
            return variant
    if support is None:
        return None
    first = support.first_cuda
    return f"cu{first.major}{first.minor}"


@from_log("TOR190")
def arch_ceiling_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """The library check the line's text belongs to, its bound (the entry's, else the line's),
    and the GPU's compute capability (the line's, else the node's): above the bound confirms;
    at or below it the line says something else (None)."""
    entry = facts.matrix.arch_floor(line.text)
    if entry is None or not entry.ceiling:
        raise NotStated(
            f"line {line.line} is no library ceiling the [[arch_floor]] table knows",
            "log.arch_floor",
        )
    bound = entry.max_compute_capability or _cc(line.stated.get("max_cc"))
    name, cc = _line_gpu(facts, line)
    if bound is not None and cc is not None and cc <= bound:
        return None
    gpu = (name or "the GPU") + (f" ({sm(cc)}, compute capability {cc})" if cc else "")
    newest = f" (newest: {bound}, {sm(bound)})" if bound is not None else ""
    variant = _variant(facts, cc)
    summary = entry.fix
    if variant is not None:
        summary = summary.replace("<torch's cuXYZ>", variant)
    url = facts.matrix.torch_index_url(variant) if variant is not None else None
    install = f"pip install -U {entry.package}" + (f" --index-url {url}" if url else "")
    return Hit(
        f"{entry.package} refused {gpu} (line {line.line}) as too new: "
        f"{entry.feature.split(' (', 1)[0]} of the installed release stop below it{newest}; "
        "that release was built before this architecture",
        evidence={
            "line": line.line,
            "package": entry.package,
            "max_compute_capability": str(bound) if bound else None,
            "gpu": name,
            "compute_capability": str(cc) if cc else None,
            "variant": variant,
        },
        fix=fix(
            summary,
            "manual",
            manual(install),
            manual(f"pip uninstall -y {entry.package}  (the framework falls back to PyTorch SDPA)"),
        ),
    )
