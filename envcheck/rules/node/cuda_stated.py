"""CUD104, CUD107 and CUD121 from a log line that establishes the cause by itself.

- CUD104: `libcusparse.so.12: undefined symbol: __nvJitLinkAddData_12_1, version
  libnvJitLink.so.12` on a library under `site-packages/nvidia/`: a pip wheel's CUDA library
  resolved libnvJitLink.so.12 to an older copy outside the nvidia-nvjitlink wheel (a system
  CUDA on LD_LIBRARY_PATH or in the loader's cache); any other CUDA library lacking a sibling's
  symbol, and cuDNN 9's sub-library mismatch (cuda_copies.py); torch's, TensorFlow's and JAX's
  cuDNN version checks (cudnn_stated.py); JAX's CUDA plugin that cannot load a wheel's library
  (`Unable to load cuSPARSE. Is it installed?`, jax_cuda.py).
- CUD107: vLLM's `'PyNcclCommunicator' object has no attribute 'device'`: vLLM's PyNccl
  communicator sets `device` only after `NCCLLibrary()` loaded an NCCL library; when that
  fails it disables itself, and a later forced all_reduce reads the missing attribute.
- CUD121: NCCL's `Invalid config blocking attribute value`: torch handed its communicator
  config to an NCCL older than the one it was built against (the error line names the NCCL
  loaded).
"""

from __future__ import annotations

import re

from packaging.utils import canonicalize_name

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, from_log
from envcheck.rules.fixes import fix, manual, pip_install, set_env
from envcheck.rules.node.cuda_copies import (
    sublibrary_mismatch_hit,
    torch_lib_symbol_hit,
    two_copies_hit,
)
from envcheck.rules.node.cuda_libs import _TOOLKIT_DIR
from envcheck.rules.node.cudnn_stated import cudnn_mismatch_in_log
from envcheck.rules.node.jax_cuda import JAX_SIGNATURE, jax_library_hit

# a CUDA library of a pip wheel: .../site-packages/[torch/lib/../../]nvidia/<wheel>/lib/lib*.so.N
_WHEEL_LIB = lazy(
    r"(?P<site>[~/][^\s:'\"]*?/(?:site|dist)-packages)/(?:torch/lib/\.\./\.\./)?"
    r"nvidia/(?P<wheel>[a-z_]+)/lib/(?P<lib>lib[A-Za-z_]+\.so[.0-9]*)"
)
_SYMBOL = lazy(r"undefined symbol: (?P<symbol>[A-Za-z0-9_]+)")


# nvJitLink's versioned entry points, `__nvJitLinkCreate_12_8, version libnvJitLink.so.12`: the
# caller was built against CUDA 12.8's nvJitLink and the copy that loaded is older
_NVJITLINK_VERSIONED = lazy(
    r"undefined symbol: (?P<symbol>__nvJitLink[A-Za-z]+_(?P<major>1[0-9])_(?P<minor>[0-9]+))"
    r", version libnvJitLink\.so\.1[0-9]"
)
# a library's path on the line (a toolkit's own libcusparse lacking the symbol is two toolkits
# mixed, not torch's wheels shadowed: that stays open)
_LIB_PATH = lazy(r"/[^\s:]*lib[A-Za-z_]+\.so")
# the nvidia-nvjitlink wheel's directory, whatever the environment's site-packages is (the
# form the threads run: nvidia.cudnn.lib's directory for cuDNN)
_WHEEL_DIR_CMD = (
    "python -c 'import os, nvidia.nvjitlink.lib as m; print(os.path.dirname(m.__file__))'"
)


def _loader_path(facts: Facts) -> tuple[list[str], list[str]]:
    """The node's LD_LIBRARY_PATH entries (none when the environment is unknown), and those of
    them that are a CUDA toolkit's library directories."""
    try:
        variables = facts.env()
    except Skip:
        variables = {}
    paths = [p for p in variables.get("LD_LIBRARY_PATH", "").split(":") if p]
    return paths, [p for p in paths if _TOOLKIT_DIR.search(p)]


def _nvjitlink_older_hit(facts: Facts, line: LogLine) -> Hit:
    """An nvJitLink entry point versioned for CUDA 12.X missing from the libnvJitLink.so.12
    that loaded, no library's path on the line (a title line, a rich traceback's cut line):
    the symbol alone says an older nvJitLink came first on the loader's path (pytorch#152783:
    /usr/local/cuda-12.4 on LD_LIBRARY_PATH under torch's CUDA 12.8 wheels)."""
    found = _NVJITLINK_VERSIONED.search(line.text)
    assert found is not None
    floor = f"{found.group('major')}.{found.group('minor')}"
    wheel = f"nvidia-nvjitlink-cu{found.group('major')}"
    paths, toolkit = _loader_path(facts)
    actions = []
    if toolkit:
        actions.append(set_env(LD_LIBRARY_PATH=":".join(p for p in paths if p not in toolkit)))
    else:
        actions.append(
            manual(
                "drop the CUDA toolkit's directories (/usr/local/cuda*/lib64) from "
                "LD_LIBRARY_PATH; where it holds nothing else: unset LD_LIBRARY_PATH"
            )
        )
    actions.append(manual(f'export LD_LIBRARY_PATH="$({_WHEEL_DIR_CMD})":$LD_LIBRARY_PATH'))
    actions.append(pip_install(f"{wheel}>={floor}", flags=("--upgrade",)))
    return Hit(
        f"line {line.line}: the libnvJitLink.so.12 that loaded lacks {found.group('symbol')}, "
        f"an entry point of CUDA {floor}'s nvJitLink: an older copy (a CUDA toolkit's on "
        "LD_LIBRARY_PATH or in the loader's cache) came before the one the CUDA libraries "
        "were built with",
        evidence={"line": line.line, "symbol": found.group("symbol"), "toolkit_dirs": toolkit},
        fix=fix(
            "Drop the CUDA toolkit directories from LD_LIBRARY_PATH for the job (pip's CUDA "
            f"wheels need none), or put the {wheel} wheel's directory first; if that wheel "
            f"itself is older than {floor}: pip install --upgrade {wheel} (>= {floor})",
            "safe",
            *actions,
        ),
    )


@from_log("CUD104")
def nvjitlink_shadowed_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """A wheel's library (the path on the line is under site-packages/nvidia/) could not find
    an nvJitLink symbol of its own CUDA release: the libnvJitLink.so.12 that loaded is not the
    nvidia-nvjitlink wheel's. The fix puts the wheel's directory first (pytorch#111469) or
    drops the toolkit directories the node's LD_LIBRARY_PATH holds (ragflow#4466). torch's
    cuDNN version check is the same cause for cuDNN (cudnn_stated.py)."""
    symbol_stated = line.stated.get("undefined_symbol")
    if line.signature == "undefined-symbol" and symbol_stated is not None:
        from envcheck.rules.node.abi import cuda_owned

        if not cuda_owned(symbol_stated):  # torch's, Python's or another library's symbol
            return None
    cudnn = cudnn_mismatch_in_log(facts, line)
    if cudnn is not None:
        return cudnn
    if line.signature == "cudnn-sublibrary-mismatch":
        return sublibrary_mismatch_hit(facts, line)
    if line.signature == "cuda-lib-symbol-from-other-copy":
        return two_copies_hit(facts, line)
    if line.signature == "torch-lib-lacks-cuda-symbol":
        return torch_lib_symbol_hit(facts, line)
    if line.signature == JAX_SIGNATURE:
        return jax_library_hit(facts, line)
    found = _WHEEL_LIB.search(line.text)
    if found is None and _NVJITLINK_VERSIONED.search(line.text) and not _LIB_PATH.search(line.text):
        return _nvjitlink_older_hit(facts, line)
    if found is None:
        raise NotStated(
            f"line {line.line} does not show the failing library is a pip wheel's "
            "(site-packages/nvidia/...)"
        )
    symbol = _SYMBOL.search(line.text)
    site, lib = found.group("site"), found.group("lib")
    wheel_dir = f"{site}/nvidia/nvjitlink/lib"
    prepend = f"export LD_LIBRARY_PATH={wheel_dir}:$LD_LIBRARY_PATH"
    paths, toolkit = _loader_path(facts)
    missing = f" ({symbol.group('symbol')})" if symbol else ""
    where = (
        f"the CUDA toolkit's, from LD_LIBRARY_PATH={':'.join(toolkit)}"
        if toolkit
        else "a system CUDA's, found first on LD_LIBRARY_PATH or in the loader's cache"
    )
    actions = []
    if toolkit:
        kept = ":".join(p for p in paths if p not in toolkit)
        actions.append(set_env(LD_LIBRARY_PATH=kept))
    actions.append(manual(prepend))
    actions.append(
        manual(
            f"check: ldd {site}/nvidia/{found.group('wheel')}/lib/{lib} | grep nvJitLink "
            f"must show {wheel_dir}"
        )
    )
    summary = (
        "Drop the CUDA toolkit directories from LD_LIBRARY_PATH for the job (or put the "
        "nvidia-nvjitlink wheel's directory first)"
        if toolkit
        else "Put the nvidia-nvjitlink wheel's directory first on LD_LIBRARY_PATH"
    )
    # __nvJitLinkAddData_12_4: the symbol names the CUDA release of nvJitLink it needs
    release = re.search(r"_(1[0-9])_([0-9]+)$", symbol.group("symbol")) if symbol else None
    if release is not None:
        wheel = f"nvidia-nvjitlink-cu{release.group(1)}"
        floor = f"{release.group(1)}.{release.group(2)}"
        summary += (
            f"; if the nvidia-nvjitlink wheel itself is older than {floor} (pip installed "
            f"mismatched wheels): pip install --upgrade {wheel} (>= {floor})"
        )
        actions.append(pip_install(f"{wheel}>={floor}", flags=("--upgrade",)))
    return Hit(
        f"{lib} of the pip wheel (line {line.line}) loaded a libnvJitLink.so.12 that lacks a "
        f"symbol of its own CUDA release{missing}: not the nvidia-nvjitlink wheel's but {where}",
        evidence={
            "line": line.line,
            "library": f"{site}/nvidia/{found.group('wheel')}/lib/{lib}",
            "symbol": symbol.group("symbol") if symbol else None,
            "toolkit_dirs": toolkit,
        },
        fix=fix(summary, "safe", *actions),
    )


@from_log("CUD107")
def pynccl_without_nccl_in_log(facts: Facts, line: LogLine) -> Hit:
    """vLLM's PyNcclCommunicator leaves `device` unset only when NCCLLibrary() could not load
    an NCCL library (vllm/distributed/device_communicators/pynccl.py: 'disable because of
    missing NCCL library'): with torch from conda, whose NCCL is linked statically, there is no
    libnccl.so.2 to load (vllm#8420, vllm#8446). A node whose torch is known to come from pip
    with its NCCL wheel is not this cause."""
    torch = nccl = None
    try:
        torch = facts.dist("torch")
        nccl = next(
            (
                d
                for n in ("nvidia-nccl-cu12", "nvidia-nccl-cu13", "nvidia-nccl-cu11")
                if (d := facts.dist(n)) is not None
            ),
            None,
        )
    except Skip:
        pass
    if torch is not None and torch.installer not in (None, "conda") and nccl is not None:
        raise NotStated(
            f"torch comes from {torch.installer} with {nccl.name} {nccl.version}: vLLM found "
            "no NCCL library for another reason (VLLM_NCCL_SO_PATH?)"
        )
    try:
        vllm = facts.version("vllm")
    except Skip:
        vllm = None
    pin = f"vllm=={vllm}" if vllm is not None else "vllm==<the vLLM release>"
    return Hit(
        f"vLLM's PyNccl communicator found no NCCL library to load (line {line.line}: it "
        "disabled itself before setting its device, then tensor-parallel all_reduce used it); "
        "torch from conda links NCCL statically and ships no libnccl.so.2 for vLLM",
        evidence={"line": line.line, "torch_installer": torch.installer if torch else None},
        fix=fix(
            "Install torch (and vLLM) with pip, so the nvidia-nccl-cu12 wheel brings the "
            "libnccl.so.2 vLLM loads (or point VLLM_NCCL_SO_PATH at a libnccl.so.2)",
            "manual",
            manual(f"conda remove pytorch, then pip install {pin} (it pulls the torch it pins)"),
        ),
    )


@from_log("CUD121")
def old_nccl_loaded_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """NCCL rejects torch's communicator config when it is older than the NCCL torch was built
    against: a second NCCL wheel in the environment (vllm#1726: nvidia-nccl-cu11 2.14.3, torch
    2.0's pin, under torch 2.1). A node whose package list shows one NCCL wheel only is not
    this cause (the old library comes from elsewhere)."""
    try:
        wheels = [
            d
            for n in ("nvidia-nccl-cu11", "nvidia-nccl-cu12", "nvidia-nccl-cu13")
            if (d := facts.dist(n)) is not None
        ]
    except Skip:
        wheels = None
    if wheels is not None and len(wheels) < 2:
        return None
    version = line.stated.get("nccl_version")
    pinned: dict[str, list[str]] = {}
    for release in facts.matrix.torch_releases:
        for name, spec in release.pins.items():
            exact = any(s.operator == "==" for s in spec)
            if version and exact and "nccl" in canonicalize_name(name) and spec.contains(version):
                pinned.setdefault(name, []).append(str(release.version))
    owners = [f"{n} {version} (the pin of torch {', '.join(v)})" for n, v in pinned.items()][:1]
    loaded = f"NCCL {version}" if version else "an older NCCL"
    owner = f": {owners[0]}" if owners else ""
    stale = owners[0].split(" ", 1)[0] if owners else "<the NCCL wheel torch does not pin>"
    return Hit(
        f"torch handed its communicator config to {loaded}{owner}, older than the NCCL torch "
        f"was built against (line {line.line}): a second NCCL in the environment loads first",
        evidence={
            "line": line.line,
            "nccl_loaded": version,
            "wheels": [w.name for w in wheels or []],
        },
        fix=fix(
            "Remove the extra NCCL (`pip list | grep -i nccl`) and reinstall the nvidia-nccl "
            "wheel torch pins (with one NCCL wheel listed, the old libnccl.so.2 comes from "
            "LD_LIBRARY_PATH or LD_PRELOAD: drop it there)",
            "manual",
            manual("pip list | grep -i nccl"),
            manual(f"pip uninstall -y {stale}"),
            manual(
                "pip install --force-reinstall --no-deps nvidia-nccl-cu12==<the version torch "
                "requires> (`pip show torch` lists it)"
            ),
        ),
    )
