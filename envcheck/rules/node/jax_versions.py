"""PKG101 from JAX's own checks that its packages come from one release.

JAX is four distributions released in lockstep: ``jax`` (Python), ``jaxlib`` (the XLA runtime),
and, for NVIDIA GPUs, ``jax-cudaNN-plugin`` and ``jax-cudaNN-pjrt`` (the CUDA backend as a PJRT
plugin). ``pip install "jax[cuda12]"`` installs all four from one release; a later pip command
that moves one of them (a project pinning ``jax==0.4.30`` over a newer ``jax[cuda12]``) leaves
the others behind, and JAX says so in one of three ways, each of which states the versions:

- jaxlib/plugin_support.py (check_plugin_version): ``JAX plugin jax_cuda12_plugin version 0.9.2
  is installed, but it is not compatible with the installed jaxlib version 0.9.0.1, so it will
  not be used`` -- the GPU backend is dropped and JAX runs on the CPU (or its FFI handlers are
  missing): the plugin must be jaxlib's release;
- jax/_src/lib/__init__.py (check_jaxlib_version): ``jaxlib version X is newer than and
  incompatible with jax version Y`` and ``jaxlib is version X, but this version of jax requires
  version >= Y``;
- a name of jaxlib's internal modules missing where JAX's own code (a plugin's
  ``initialize()``) calls it, ``AttributeError: module 'jaxlib.xla_client' has no attribute
  'register_custom_type_id_handler'`` -- the plugin of a later release than jaxlib;
- XLA's PJRT loader (xla/pjrt/pjrt_api.cc, InitPjrtPlugin), through jax's backend set-up:
  ``Unable to initialize backend 'cuda': INVALID_ARGUMENT: Mismatched PJRT plugin PJRT API
  version (0.54) and framework PJRT API version 0.51)`` -- a plugin built for another jaxlib (the
  CUDA plugin, jax-metal, Intel's xpu plugin, libtpu under torch_xla).

The fix installs the lagging packages at the release the line names.
"""

from __future__ import annotations

from packaging.version import InvalidVersion, Version

from envcheck.facts.node import Facts
from envcheck.model.finding import Action
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated
from envcheck.rules.fixes import fix, manual, pip_install

_V = r"[0-9]+(?:\.[0-9]+)*(?:(?:a|b|rc|\.post|\.dev)[0-9]+)*"
PLUGIN_CHECK = lazy(
    rf"JAX plugin (?P<plugin>[A-Za-z0-9_]+) version (?P<plugin_version>{_V}) is installed"
    rf"(?:, but it is not compatible with the installed jaxlib version (?P<jaxlib>{_V}))?"
)
JAXLIB_CHECK = lazy(
    rf"jaxlib version (?P<newer>{_V}) is newer than and incompatible with jax version "
    rf"(?P<jax>{_V})|jaxlib is version (?P<older>{_V}), but this version of jax requires "
    rf"version >= (?P<minimum>{_V})"
)
PJRT_MISMATCH = lazy(
    r"(?:backend '(?P<backend>[A-Za-z0-9_]+)': )?(?:INVALID_ARGUMENT: )?Mismatched PJRT plugin "
    r"PJRT API version \((?P<plugin_api>[0-9.]+)\) and framework PJRT API version "
    r"\(?(?P<framework_api>[0-9]+\.[0-9]+)"
)
INTERNAL_NAME = lazy(
    r"(?:AttributeError: module|ImportError: cannot import name '[A-Za-z0-9_]+' from) "
    r"'jax(?:lib|\._src\.lib)(?:\.[A-Za-z0-9_]+)*'"
)
_CUDA_PLUGIN = lazy(
    r"jax[_-](cuda[0-9]+)[_-](?:plugin|pjrt)|jax\[(cuda[0-9]+)\]|jax_plugins\.xla_(cuda[0-9]+)"
)


def is_jax_check(text: str) -> bool:
    """Does the line state one of JAX's release checks?"""
    checks = (PLUGIN_CHECK, JAXLIB_CHECK, PJRT_MISMATCH, INTERNAL_NAME)
    return any(p.search(text) is not None for p in checks)


def _version(text: str | None) -> Version | None:
    try:
        return Version(text) if text else None
    except InvalidVersion:
        return None


def _cuda_extra(facts: Facts, line: LogLine) -> str:
    """The CUDA major of the node's JAX plugin (cuda12, cuda13): from the line or the plugin
    its traceback names, else from the installed plugin; cuda12 when none says."""
    found = _CUDA_PLUGIN.search(line.text)
    if found is not None:
        return next(g for g in found.groups() if g)
    stated = line.stated.get("jax_plugin")
    if stated:
        return stated
    for extra in ("cuda13", "cuda12"):
        if facts.known_version(f"jax-{extra}-plugin") is not None:
            return extra
    return "cuda12"


def _plugin_fix(extra: str, jaxlib: Version) -> tuple[str, list[Action]]:
    """The summary and commands that install the CUDA plugin (and its PJRT package) of
    jaxlib's release, or all of JAX from one release."""
    pins = (f"jax-{extra}-plugin=={jaxlib}", f"jax-{extra}-pjrt=={jaxlib}")
    summary = (
        f"Install the CUDA plugin of jaxlib {jaxlib}'s release: pip install "
        + " ".join(f'"{p}"' for p in pins)
        + f' (or all of JAX from one release: pip install -U "jax[{extra}]")'
    )
    return summary, [pip_install(*pins), pip_install(f"jax[{extra}]", flags=("--upgrade",))]


def jax_check_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """The finding for one of JAX's release checks (``is_jax_check``)."""
    found = PLUGIN_CHECK.search(line.text)
    if found is not None:
        return _plugin_not_jaxlib(
            facts, line, found.group("plugin"), found.group("plugin_version"), found.group("jaxlib")
        )
    found = JAXLIB_CHECK.search(line.text)
    if found is not None:
        if found.group("newer"):
            return _jaxlib_newer(line, found.group("newer"), found.group("jax"))
        return _jaxlib_older(facts, line, found.group("older"), found.group("minimum"))
    if INTERNAL_NAME.search(line.text) is not None:
        return _internal_name(facts, line)
    found = PJRT_MISMATCH.search(line.text)
    if found is None:
        raise NotStated("the line is not one of JAX's release checks", "packages.jax")
    return _pjrt_mismatch(
        facts, line, found.group("backend"), found.group("plugin_api"), found.group("framework_api")
    )


def _plugin_not_jaxlib(
    facts: Facts, line: LogLine, plugin: str, plugin_version: str, jaxlib_text: str | None
) -> Hit:
    jaxlib = _version(jaxlib_text) or facts.known_version("jaxlib")
    if jaxlib is None:
        raise NotStated("the line is cut before the jaxlib release it names", "packages.jaxlib")
    dist = plugin.replace("_", "-")
    extra = _cuda_extra(facts, line)
    actions: list[Action]
    if dist.startswith("jax-cuda"):
        summary, actions = _plugin_fix(extra, jaxlib)
    else:
        summary = (
            f'Install the {dist} release made for jaxlib {jaxlib}: pip install "{dist}=={jaxlib}"'
        )
        actions = [pip_install(f"{dist}=={jaxlib}")]
    return Hit(
        f"JAX's plugin check (line {line.line}): {dist} {plugin_version} is installed with jaxlib "
        f"{jaxlib}; JAX loads a plugin only of jaxlib's own release, so the GPU backend is not "
        "used (JAX falls back to the CPU, or the plugin's kernels are missing)",
        evidence={"line": line.line, "plugin": f"{dist}=={plugin_version}", "jaxlib": str(jaxlib)},
        fix=fix(summary, "unsafe", *actions),
    )


def _jaxlib_newer(line: LogLine, newer: str, jax: str) -> Hit:
    return Hit(
        f"JAX's own check (line {line.line}): jaxlib {newer} is newer than jax {jax}; jax "
        "refuses a jaxlib from a later release",
        evidence={"line": line.line, "jaxlib": newer, "jax": jax},
        fix=fix(
            f'Install jax of jaxlib\'s release: pip install -U "jax=={newer}" (or jaxlib of '
            f'jax\'s: pip install "jaxlib=={jax}", with the plugins of that release)',
            "unsafe",
            pip_install(f"jax=={newer}", flags=("--upgrade",)),
        ),
    )


def _jaxlib_older(facts: Facts, line: LogLine, older: str, minimum: str) -> Hit:
    extra = _cuda_extra(facts, line)
    gpu = any(facts.known_version(f"jax-{e}-plugin") for e in ("cuda12", "cuda13"))
    also = f' (with its GPU plugin: pip install -U "jax[{extra}]")' if gpu else ""
    return Hit(
        f"JAX's own check (line {line.line}): jaxlib {older} is older than the jaxlib {minimum} "
        "this jax requires",
        evidence={"line": line.line, "jaxlib": older, "minimum": minimum},
        fix=fix(
            f'Upgrade jaxlib into jax\'s range: pip install -U "jaxlib>={minimum}"{also}',
            "unsafe",
            pip_install(f"jaxlib>={minimum}", flags=("--upgrade",)),
        ),
    )


def _pjrt_mismatch(
    facts: Facts, line: LogLine, backend: str | None, plugin_api: str, framework_api: str
) -> Hit:
    jaxlib = facts.known_version("jaxlib")
    actions: list[Action]
    if backend is None or backend.lower() in ("cuda", "gpu"):
        extra = _cuda_extra(facts, line)
        if jaxlib is not None:
            summary, actions = _plugin_fix(extra, jaxlib)
        else:
            summary = (
                f"Install jax, jaxlib and the CUDA plugin from one release: pip install -U "
                f'"jax[{extra}]" (a project that pins jax: "jax[{extra}]==<its jax>")'
            )
            actions = [pip_install(f"jax[{extra}]", flags=("--upgrade",))]
    else:
        summary = (
            f"Install the {backend} plugin release made for the installed jaxlib (the plugin's "
            "own compatibility table), or jax and jaxlib of the plugin's release; "
            "ENABLE_PJRT_COMPATIBILITY=1 lets a framework accept a plugin within its "
            "compatibility window"
        )
        actions = [manual(f"install the {backend} plugin release made for the installed jaxlib")]
    where = f"the '{backend}' backend's" if backend else "a"
    return Hit(
        f"{where} PJRT plugin (line {line.line}) speaks PJRT API {plugin_api} and jaxlib "
        f"{framework_api}: the plugin was built for another jaxlib release"
        + (f" (jaxlib {jaxlib} is installed)" if jaxlib is not None else ""),
        evidence={"line": line.line, "plugin_api": plugin_api, "framework_api": framework_api},
        fix=fix(summary, "unsafe", *actions),
    )


def _internal_name(facts: Facts, line: LogLine) -> Hit:
    """JAX's own code (a plugin's initialize(), jax itself) failed on a name of jaxlib's
    internal modules: the packages are from different releases (user code does not import
    jaxlib.xla_client or jax._src.lib)."""
    extra = _cuda_extra(facts, line)
    jax = facts.known_version("jax")
    wanted = f"jax[{extra}]=={jax}" if jax is not None else f"jax[{extra}]"
    have = f" (jax {jax} is installed)" if jax is not None else ""
    plugin = line.stated.get("jax_plugin")
    who = f"JAX's {plugin.upper()} plugin" if plugin else "JAX's own code"
    error = line.text.strip().rstrip(".")
    return Hit(
        f"{who} failed on a name of jaxlib's (line {line.line}): {error[:120]}; jax, jaxlib "
        f"and the plugin are from different releases{have}, so JAX runs without the GPU",
        evidence={"line": line.line, "error": error, "plugin": plugin},
        fix=fix(
            f'Install jax, jaxlib and the plugin from one release: pip install -U "{wanted}"',
            "unsafe",
            pip_install(wanted, flags=("--upgrade",)),
        ),
    )
