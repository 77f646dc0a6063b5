"""PKG110: a release paired with a dependency version it breaks on, although its metadata
allows it (the matrix's ``[[bound]]`` entries)."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.rules.base import Hit, rule
from envcheck.rules.fixes import fix, pip_install


@rule("PKG110", "dependency-beyond-real-bound", Severity.ERROR)
def dependency_beyond_bound(facts: Facts) -> Iterable[Hit]:
    """A release is paired with a dependency version it breaks on (beyond its metadata)

    ## What it checks
    The matrix's `[[bound]]` entries: what releases of a package really need of a dependency
    when their own metadata does not enforce it (vLLM 0.11.0 and older declare
    `transformers>=4.x` with no upper bound, and break on transformers 5; LLaMA-Factory, verl and
    trl state their vLLM range only in a `[vllm]` extra, which pip does not apply to a vLLM
    installed on its own). Each installed package whose release has such a bound is checked
    against the installed dependency; on a partial package list, the bounds it cannot decide
    are left open and the others still run.

    ## Why it matters
    pip and uv follow the metadata, so a fresh install or a lock made today picks the newest
    dependency, and the job crashes at start-up although every requirement is met (`pip check`
    and PKG101 pass). vLLM 0.8.5.post1 with transformers 5.x dies in its tokenizer cache with
    `AttributeError: Qwen2Tokenizer has no attribute all_special_tokens_extended`.

    ## Example
    vllm 0.8.5.post1 with transformers 5.1.0.

    ## Fix
    Install the dependency inside the bound the finding names (transformers<5 for vLLM 0.11.0
    and older, transformers<4.39 for trl older than 0.8.1; the bound's own pin where it names
    one, such as vllm==0.7.2 for trl 0.15.2), or move to a release of the
    package that supports the newer dependency, or use the bound's workaround where a thread
    established one (`VLLM_USE_V1=0`, LLaMA-Factory's `DISABLE_VERSION_CHECK=1`); `envcheck
    lock` adds the bound to what it resolves.

    ## References
    - https://github.com/vllm-project/vllm/pull/29686
    - https://github.com/VsonicV/es-at-scale/issues/41
    - https://github.com/QwenLM/Qwen3-VL/issues/2058
    - https://github.com/huggingface/trl/issues/3115
    - https://github.com/hiyouga/LlamaFactory/issues/7428
    """
    hits = []
    undecided: Skip | None = None  # a bound whose package or dependency is not known
    for bound in facts.matrix.bounds:
        try:
            version = facts.version(bound.package)
            if version is None or not bound.versions.contains(version, prereleases=True):
                continue
            dep = facts.version(bound.dependency)
        except Skip as skip:  # a partial list: this bound cannot be decided, the others can
            undecided = undecided or skip
            continue
        if dep is None or bound.allowed.contains(dep, prereleases=True):
            continue
        wanted = f"{bound.dependency}{bound.allowed}"
        install = (bound.install or wanted).replace("{version}", str(version))
        workaround = f"; or, keeping both: {bound.workaround}" if bound.workaround else ""
        hits.append(
            Hit(
                f"{bound.package} {version} with {bound.dependency} {dep}: {bound.package} "
                f"{bound.versions} needs {wanted}, which its metadata does not enforce. "
                f"{bound.reason.split('. ')[0]}"
                + (f"; it fails with: {bound.symptom}" if bound.symptom else ""),
                evidence={
                    bound.package: str(version),
                    bound.dependency: str(dep),
                    "bound": wanted,
                    "verified": bound.verified,
                },
                fix=fix(
                    f"Install {install} (what {bound.package} {version} works with), or a "
                    f"{bound.package} release that supports {bound.dependency} {dep}{workaround}",
                    "safe",
                    pip_install(install),
                ),
            )
        )
    if not hits and undecided is not None:
        raise undecided
    return hits
