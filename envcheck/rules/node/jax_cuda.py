"""CUD104 worded for JAX's CUDA plugin (matrices/signatures/cuda_libs_layers.toml): `Unable to
load cuSPARSE. Is it installed?` / `The cuSPARSE library was not found.` JAX's plugin loads the
CUDA libraries of the nvidia-* wheels `jax[cudaNN]` installed; a system CUDA on LD_LIBRARY_PATH
is found first and its older libraries lack the wheels' symbols (cuSPARSE's nvJitLink ones), so
the threads' fix is to start JAX without it (jax#29843, jax#28929), else to reinstall the
wheels."""

from __future__ import annotations

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Action
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine
from envcheck.rules.fixes import fix, manual, set_env
from envcheck.rules.node.cuda_libs import _TOOLKIT_DIR

JAX_SIGNATURE = "jax-cuda-library-not-loadable"
_LIBRARY = lazy(r"Unable to load (?P<a>[A-Za-z]+)\.|The (?P<b>[A-Za-z]+) library was not found")
# the plugin's CUDA major when the line names it (jax_plugins/xla_cuda13); CUDA 12 otherwise
_MAJOR = lazy(r"xla_cuda(?P<a>1[0-9])")


def jax_library_hit(facts: Facts, line: LogLine) -> Hit:
    """The library JAX could not load, the LD_LIBRARY_PATH to start it without (the node's
    value minus the CUDA toolkit's directories when the node's environment is known)."""
    named = _LIBRARY.search(line.text)
    library = (named.group("a") or named.group("b")) if named else "a CUDA library"
    major_match = _MAJOR.search(line.text)
    major = major_match.group("a") if major_match else "12"
    try:
        variables = facts.env()
    except Skip:
        variables = {}
    paths = [p for p in variables.get("LD_LIBRARY_PATH", "").split(":") if p]
    toolkit = [p for p in paths if _TOOLKIT_DIR.search(p)]
    first: Action = (
        set_env(LD_LIBRARY_PATH=":".join(p for p in paths if p not in toolkit))
        if toolkit
        else manual("unset LD_LIBRARY_PATH  (before starting the JAX process)")
    )
    where = (
        f"LD_LIBRARY_PATH puts the CUDA toolkit's {':'.join(toolkit)} first"
        if toolkit
        else "a system CUDA on LD_LIBRARY_PATH is found before the wheels"
    )
    return Hit(
        f"JAX's CUDA plugin could not load {library} from the nvidia-* wheels of "
        f"jax[cuda{major}] (line {line.line}): {where} (its older libraries lack the wheels' "
        "symbols), or the wheels are missing; JAX falls back to the CPU",
        evidence={"line": line.line, "library": library, "toolkit_dirs": toolkit},
        fix=fix(
            "Start JAX without the system CUDA libraries: unset LD_LIBRARY_PATH (or drop the "
            f'toolkit directories from it); if the wheels are missing: pip install --upgrade "jax[cuda{major}]"',
            "manual",
            first,
            manual(
                f'pip install --upgrade "jax[cuda{major}]"  (installs the nvidia-* wheels JAX loads)'
            ),
            manual(
                "check: env -u LD_LIBRARY_PATH python -c 'import jax; print(jax.devices())' "
                "lists the GPUs"
            ),
        ),
    )
