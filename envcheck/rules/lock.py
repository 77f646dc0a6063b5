"""PKG170-PKG173: the lock gate's findings (`check --lock`, `lock --verify`, `check --lock
--verify`), registered in the catalogue so `envcheck explain` and docs/rules.md know them.

They are not node rules: what they check is a lock file against a node (its files on the
index, its installation into a scratch venv), which a NodeReport does not hold, so the engine
never runs them (scope ``"lock"``, as cluster rules have scope ``"cluster"``).
``plan/lockfile.py`` (PKG170, PKG171, PKG173) and ``commands/lock_verify.py`` (PKG170, PKG172)
emit them through ``lock_finding``, which takes the title and severity from here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from envcheck.model.finding import Action, Finding, Fix, Severity
from envcheck.rules.base import _REGISTRY, Rule, register_not_per_node

LockFn = Callable[[], None]


def lock_rule(code: str, name: str, severity: Severity) -> Callable[[LockFn], LockFn]:
    """Register a finding of the lock gate; its docstring supplies the title and docs."""

    def register(fn: LockFn) -> LockFn:
        register_not_per_node(code, name, severity, fn.__doc__, "lock")
        return fn

    return register


@lock_rule("PKG170", "lock-cannot-install", Severity.ERROR)
def lock_cannot_install() -> None:
    """The lock cannot install on this node

    ## What it checks
    What pip and uv read before they install a lock, for the node's whole environment
    (`check --lock LOCK --spec node.toml`, or this node): each line's marker evaluated as pip
    evaluates it (Python version to the patch, `platform_machine`, `implementation_name`,
    `sys_platform`); each pinned release's files on the index (PEP 691 JSON or PEP 503 HTML: the
    files whose sha256 the lock names) against the node's Python (Requires-Python) and its wheel
    tags (`packaging.tags` for its Python, CPU and glibc); a pylock's own `requires-python`,
    `environments`, packages' `requires-python` and `wheels`. A lock none of whose lines applies
    to the node (an x86-64 lock on an aarch64 GH200, a Python 3.9 lock on 3.10) is this finding
    too. With `--verify`, uv's refusal to install the lock into a scratch venv is reported
    under this code with uv's message.

    ## Why it matters
    uv drops a lock's lower Python bound from its markers, so a Python 3.11 lock's lines all
    apply on 3.10 and every rule passes on the pins; pip then stops with `requires a different
    Python` or `no matching distribution` halfway through a node's set-up. A
    `manylinux_2_28` wheel needs glibc 2.28; a `cp311` wheel does not install on 3.10.

    ## Example
    `verl.lock: cannot install: pyarrow==26.0.1 requires Python >=3.11 (Requires-Python of its
    files); this node runs 3.10.12` - a verl lock made for Python 3.11, gated on a 3.10 node.

    ## Fix
    Lock for this node's Python and CPU (`envcheck lock --python X.Y --arch ARCH`, or
    `--spec node.toml`), or gate the lock on the node it was made for. Where uv refused the
    install under `--verify`, read its message: it names the pin to change.

    ## References
    - https://packaging.python.org/en/latest/specifications/dependency-specifiers/
    - https://packaging.python.org/en/latest/specifications/platform-compatibility-tags/
    - https://packaging.python.org/en/latest/specifications/core-metadata/#requires-python
    - https://peps.python.org/pep-0751/
    """


@lock_rule("PKG171", "lock-pins-yanked-release", Severity.ERROR)
def lock_pins_yanked() -> None:
    """The lock pins a yanked release

    ## What it checks
    Every pinned release of the lock whose files on the index are all yanked (PEP 592: the
    `yanked` key of PEP 691 JSON, `data-yanked` of PEP 503 HTML), unless the lock holds a line
    `# envcheck: allow-yanked NAME==VERSION <reason>` for it (a comment in every lock format; the
    line without a reason is bad input, exit 2).

    ## Why it matters
    A release is yanked when it is broken (transformers 4.57.0: `Error in the setup`); pip and
    uv still install an exact pin of it, with a warning no one reads on a cluster, so the lock
    carries the breakage to every node.

    ## Example
    `requirements.lock: transformers==4.57.0 is yanked (the index says: Error in the setup ...)`.

    ## Fix
    Lock another release (`envcheck lock` resolves with uv, which skips yanked files unless
    pinned), or keep this one on purpose with a line
    `# envcheck: allow-yanked transformers==4.57.0 <reason>` in the lock.

    ## References
    - https://peps.python.org/pep-0592/
    - https://packaging.python.org/en/latest/specifications/simple-repository-api/
    """


@lock_rule("PKG172", "lock-import-fails", Severity.ERROR)
def lock_import_fails() -> None:
    """An import fails in the installed lock

    ## What it checks
    `lock --verify` and `check --lock LOCK --verify`: the lock installed with uv into a scratch
    venv for the node's Python, then, each in its own bounded subprocess on CPU, an import of
    every top-level distribution of the lock and of the runtime a GPU training job loads even as
    a dependency (torch, triton, transformers, vLLM, flash-attn, xformers, Ray, pyarrow, numpy,
    datasets, deepspeed), and, when Ray is in the lock, one Ray task that imports them in a
    worker. Each failure names the import, its last error line and the versions of the
    distributions involved (the imported one, those in the traceback, those the error names, a
    missing module the lock does not hold).

    ## Why it matters
    A lock that installs is not yet a lock that runs: pip check, uv pip check and every rule
    passed the verl lock for Python 3.11 whose Ray tasks all died of `pyarrow requires NumPy 2.0
    or newer, found 1.26.4` (pyarrow 26 with the profile's `numpy<2`; pyarrow's metadata
    declares no numpy), and triton 3.0-3.2 `import setuptools` without declaring it, so
    `import vllm` fails in a `uv venv`.

    ## Example
    `import vllm fails in the installed lock: ModuleNotFoundError: No module named 'setuptools'
    (vllm 0.6.3, triton 3.0.0; setuptools is not in the lock)`.

    ## Fix
    Add the missing module to the lock (a dependency its metadata does not declare), or move
    one of the packages named to a release that works with the others; record the pair as a
    `[[bound]]` in the matrix (`matrices/packages/bounds.toml`, with its source) so the next
    `envcheck lock` resolves it away, as `pyarrow<26` under `numpy<2` and `setuptools` for
    triton 3.0-3.2 are.

    ## References
    - pyarrow-26.0.0.tar.gz: pyarrow/lib.pyx lines 40-44 (sha256 in packages/bounds.toml)
    - triton-3.0.0 to 3.2.0 wheels: triton/runtime/build.py line 8 (packages/bounds.toml)
    """


@lock_rule("PKG173", "lock-index-unread", Severity.WARNING)
def lock_index_unread() -> None:
    """The lock's packages could not be checked against the index

    ## What it checks
    Each index the gate reads for a lock (the one pip is configured with plus the lock's
    `--extra-index-url` lines, or only the lock's `--index-url`; a pylock's per-package
    `index`): a request that fails (each bounded to 15 s, one retry; the first failure stops
    asking that index) is this finding, naming the index and why.

    ## Why it matters
    Requires-Python, wheel tags and yanked flags of the packages served there were not checked
    (PKG170 and PKG171 cannot be ruled out for them): a clean verdict would claim more than the
    gate saw.

    ## Example
    `requirements.lock: could not read the index http://127.0.0.1:9/simple (connection
    refused): Requires-Python, wheel tags and yanked releases of its packages were not checked`.

    ## Fix
    Run the gate where the index can be reached (or with the index configured that the node
    installs from); `--lock-offline` checks only what the lock itself states, on purpose.

    ## References
    - https://packaging.python.org/en/latest/specifications/simple-repository-api/
    """


def lock_finding(
    code: str, message: str, node: str, evidence: Mapping[str, str], fix_text: str
) -> Finding:
    """A finding of the lock gate: the catalogue's title, severity and references for
    ``code``, the message and the manual fix of this occurrence."""
    rule = next(r for r in _REGISTRY if r.code == code and r.scope == "lock")
    return Finding(
        code=code,
        severity=rule.severity,
        title=rule.title,
        message=message,
        node=node,
        evidence=dict(evidence),
        fix=Fix(fix_text, "manual", (Action("manual", text=fix_text),)),
        references=rule.doc.references,
    )


LOCK_CODES: tuple[str, ...] = ("PKG170", "PKG171", "PKG172", "PKG173")


def lock_rules() -> list[Rule]:
    """The lock gate's rules, in code order."""
    return sorted((r for r in _REGISTRY if r.scope == "lock"), key=lambda r: r.code)
