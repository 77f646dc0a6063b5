"""CUD157: a build's architecture list names an architecture no GPU here has, or none at all.

Two tools refuse an architecture before any kernel is compiled, and both name the value they
were given:

- torch's cpp_extension (`_get_cuda_arch_flags`): `ValueError: Unknown CUDA arch (12.5) or GPU
  not supported`. It builds for TORCH_CUDA_ARCH_LIST when that is set, else for the visible
  GPUs (since torch 2.x clamped to the newest architecture its build has). So a value that no
  GPU of the node has, or that no NVIDIA GPU has at all, came from the list: the list is the
  fix, not torch. Only where the value is a GPU's of the node (or the node's GPUs are unknown,
  the value is a real GPU's and no list of several architectures is stated) is it torch that
  predates the GPU (TOR101).
- nvcc and ptxas (`Unsupported gpu architecture 'sm_200'`, `Value 'sm_99' is not defined for
  option 'gpu-name'`): the ``[[sm]]`` table (matrices/cuda/drivers.toml) knows every
  architecture from sm_35 on, so a target it does not know is no GPU's and no toolkit is too
  old for it (CUD150 is ruled out): the flags are wrong, a typo, `-arch=sm_200`, torch's
  `80+PTX` spelling given to nvcc or CMake, a dotted `sm_8.6`, or an empty number
  (`compute_`, a variable that expanded to nothing).

Architectures older than the table (sm_1x to sm_32: Tesla, Fermi, the first Kepler) are real
and left to CUD150. The fix is always the GPUs' own architectures, from the node or the log,
in the spelling of the tool that refused the value.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

from packaging.version import Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.model import Matrix
from envcheck.model.finding import Fix, Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.choose import sm, torch_choices
from envcheck.rules.fixes import fix, manual
from envcheck.rules.node.ptx_instructions import list_for_other_gpu

_READ_CC = (
    "X.Y: each GPU's compute capability, nvidia-smi --query-gpu=compute_cap "
    "--format=csv,noheader (8.6 for an RTX 3090, 9.0 for an H100)"
)
# torch's spelling of one entry: 8.6, 9.0a, 12.0f, 8.6+PTX
_TORCH_ENTRY = lazy(r"([0-9]+)\.([0-9])([af]?)(\+PTX)?")
# nvcc's and ptxas' spelling of a target: sm_90, compute_90a, lto_90
_TARGET = lazy(r"(?:sm|compute|lto)_([0-9]+)([af]?)")


@dataclass(frozen=True)
class GpuArchs:
    """The node's (or the log's) GPUs as compute capabilities, None where unknown."""

    ccs: tuple[Version, ...] | None

    @property
    def torch(self) -> str:
        return ";".join(f"{c.major}.{c.minor}" for c in self.ccs or ())

    @property
    def digits(self) -> str:
        return ";".join(f"{c.major}{c.minor}" for c in self.ccs or ())


def node_gpu_archs(facts: Facts) -> GpuArchs:
    with contextlib.suppress(Skip):
        ccs = tuple(sorted({facts.compute_capability(g) for g in facts.gpus()}))
        if ccs:
            return GpuArchs(ccs)
    return GpuArchs(None)


def _oldest_in_table(matrix: Matrix) -> Version | None:
    ccs = [c for s in matrix.sm_support if (c := _digits_cc(s.arch)) is not None]
    return min(ccs) if ccs else None


def _digits_cc(target: str) -> Version | None:
    found = _TARGET.fullmatch(target.strip().lower())
    if found is None or len(found.group(1)) < 2:
        return None
    digits = found.group(1)
    return Version(f"{int(digits[:-1])}.{digits[-1]}")


def no_gpu_has(matrix: Matrix, cc: Version) -> bool:
    """Whether no NVIDIA GPU has compute capability ``cc``: neither the ``[[sm]]`` table nor
    the GPU table knows it, and it is not older than the table's oldest entry (those are
    real: Tesla, Fermi, the first Kepler, which CUDA dropped before the table begins)."""
    if matrix.sm(sm(cc)) is not None:
        return False
    if any(g.compute_capability == cc for g in matrix.gpus):
        return False
    oldest = _oldest_in_table(matrix)
    return oldest is not None and cc >= oldest


def older_than_table(matrix: Matrix, cc: Version) -> bool:
    """Whether ``cc`` is a real architecture older than the ``[[sm]]`` table's oldest entry
    (sm_30, sm_20: Kepler's first, Fermi), which the toolkits the table knows have dropped."""
    oldest = _oldest_in_table(matrix)
    return oldest is not None and cc < oldest and matrix.sm(sm(cc)) is None


def _list_stated(line: LogLine) -> list[str]:
    """The TORCH_CUDA_ARCH_LIST the log states (set or echoed), as entries."""
    text = line.stated.get("build_arch_list") or ""
    return [e for e in re.split(r"[;\s]+", text.strip()) if e]


def list_reading(facts: Facts, line: LogLine) -> str | None:
    """Whose value torch's 'Unknown CUDA arch (X)' is: 'list' (CUD157: it came from
    TORCH_CUDA_ARCH_LIST), 'gpu' (TOR101: a GPU's own, torch predates it), or None (the facts
    cannot tell)."""
    entry = line.stated.get("build_arch")
    if entry is None:
        return None
    parsed = _TORCH_ENTRY.fullmatch(entry.strip())
    if parsed is None:
        return "list"  # not an architecture in torch's spelling: only a list holds that
    cc = Version(f"{parsed.group(1)}.{parsed.group(2)}")
    if no_gpu_has(facts.matrix, cc):
        return "list"
    gpus = node_gpu_archs(facts)
    if gpus.ccs is not None:
        return "gpu" if cc in gpus.ccs else "list"
    return "list" if len(_list_stated(line)) > 1 else None


def _set_list(gpus: GpuArchs, why: str) -> Fix:
    value = gpus.torch or "<X.Y>"
    how = "" if gpus.ccs else f" ({_READ_CC})"
    return fix(
        f'Set TORCH_CUDA_ARCH_LIST to the GPUs\' own architectures: TORCH_CUDA_ARCH_LIST="{value}"'
        f"{how}, or unset it (torch then builds for the visible GPUs); {why}",
        "manual",
        manual(
            f'TORCH_CUDA_ARCH_LIST="{value}" pip install --no-build-isolation --no-cache-dir '
            "<the package>"
        ),
    )


def _first_torch_with(facts: Facts, cc: Version) -> str | None:
    releases = [c.release.version for c in torch_choices(facts.matrix, ccs=[cc])]
    return str(min(releases)) if releases else None


def _torch_entry_hit(facts: Facts, line: LogLine) -> Hit | None:
    entry = (line.stated.get("build_arch") or "").strip()
    reading = list_reading(facts, line)
    gpus = node_gpu_archs(facts)
    evidence: dict[str, object] = {"line": line.line, "value": entry, "gpu_archs": gpus.torch}
    if reading != "list":
        return None  # a GPU's own (TOR101's), or the facts cannot tell
    parsed = _TORCH_ENTRY.fullmatch(entry)
    if parsed is None:
        what = (
            "an empty entry (a doubled or trailing ';')"
            if not entry
            else f"'{entry}', which is not an architecture in torch's spelling (X.Y, X.Y+PTX, "
            "9.0a; entries separated by ';' or spaces)"
        )
        if re.search(r"[;\uff1b\uff0c,]", entry):  # torch splits on ";": one left is full-width
            what += ": a comma or an input method's full-width semicolon stands between entries"
        return Hit(
            f"torch's extension builder refused {what} (line {line.line}): the value came "
            "from TORCH_CUDA_ARCH_LIST",
            evidence=evidence,
            fix=_set_list(gpus, "names such as Ampere or Hopper and X.Y numbers both work"),
        )
    cc = Version(f"{parsed.group(1)}.{parsed.group(2)}")
    if no_gpu_has(facts.matrix, cc):
        return Hit(
            f"TORCH_CUDA_ARCH_LIST names {cc.major}.{cc.minor} (line {line.line}), and no "
            f"NVIDIA GPU has compute capability {cc.major}.{cc.minor} ({sm(cc)}): torch builds "
            "for the visible GPUs only when the list is unset, so the value is the list's "
            "(a typo, or a value for another tool), not a GPU torch is too old for",
            evidence=evidence,
            fix=_set_list(gpus, "no torch release knows an architecture no GPU has"),
        )
    newer = _first_torch_with(facts, cc)
    keep = (
        f"; to keep {cc.major}.{cc.minor} in the list, a torch that knows it (torch {newer} or "
        "newer)"
        if newer
        else f"; to keep {cc.major}.{cc.minor}, a torch release that knows it"
    )
    if gpus.ccs is not None:
        return Hit(
            f"TORCH_CUDA_ARCH_LIST names {cc.major}.{cc.minor} ({sm(cc)}, line {line.line}), "
            f"which this torch's extension builder does not know, and no GPU here is "
            f"{sm(cc)} (the GPUs are {', '.join(sm(c) for c in gpus.ccs)})",
            evidence=evidence,
            fix=_set_list(gpus, f"or drop {cc.major}.{cc.minor} from it{keep}"),
        )
    rest = [e for e in _list_stated(line) if not e.startswith(f"{cc.major}.{cc.minor}")]
    kept = " ".join(rest)
    if rest and not any(e.endswith("+PTX") for e in rest):
        kept = kept + "+PTX"  # the newest kept entry carries the PTX the dropped one had
    return Hit(
        f"TORCH_CUDA_ARCH_LIST names several architectures, {cc.major}.{cc.minor} ({sm(cc)}) "
        f"among them (line {line.line}), and this torch's extension builder does not know "
        f"{cc.major}.{cc.minor}: the list is for more GPUs than this torch can build for",
        evidence=evidence,
        fix=fix(
            f'Drop {cc.major}.{cc.minor} from the list: TORCH_CUDA_ARCH_LIST="{kept}" (without '
            f"{cc.major}.{cc.minor}; keep the GPUs you run on){keep}",
            "manual",
            manual(
                f'TORCH_CUDA_ARCH_LIST="{kept}" pip install --no-build-isolation '
                "--no-cache-dir <the package>"
            ),
        ),
    )


def _target_problem(target: str) -> str:
    """What is wrong with a compiler target no GPU has, in the words of its spelling."""
    value = target.strip()
    if re.fullmatch(r"(?:sm|compute|lto)_", value.lower()):
        return (
            f"'{value}' has no architecture number: a variable that should hold it expanded to "
            "nothing, or CMake before 3.24 kept only the digits of a keyword (native, all) in "
            "CMAKE_CUDA_ARCHITECTURES"
        )
    if "+ptx" in value.lower():
        return (
            f"'{value}' is torch's TORCH_CUDA_ARCH_LIST spelling (+PTX), which nvcc and CMake "
            "do not take (CMake: 80-virtual for PTX; nvcc: -gencode arch=compute_80,"
            "code=compute_80)"
        )
    if "." in value:
        return f"'{value}' has a dot: nvcc and CMake take the digits, sm_86 and 86, not 8.6"
    return (
        f"no NVIDIA GPU has {value} (the [[sm]] table knows every architecture from sm_35 "
        "on): the toolkit is not too old for it, the flag is wrong (a typo, a value meant "
        "for another option)"
    )


def _compiler_flags_fix(gpus: GpuArchs) -> Fix:
    if gpus.ccs:
        nums = [f"{c.major}{c.minor}" for c in gpus.ccs]
        arch = f"-arch=sm_{nums[0]}"
        gencode = " ".join(f"-gencode arch=compute_{n},code=sm_{n}" for n in nums)
        cmake = f'-DCMAKE_CUDA_ARCHITECTURES="{gpus.digits}"'
        torch = f'TORCH_CUDA_ARCH_LIST="{gpus.torch}"'
        how = ""
    else:
        arch, gencode = "-arch=sm_NN", "-gencode arch=compute_NN,code=sm_NN"
        cmake, torch = '-DCMAKE_CUDA_ARCHITECTURES="NN"', 'TORCH_CUDA_ARCH_LIST="N.N"'
        how = (
            " (NN: the GPU's compute capability without the dot, nvidia-smi "
            "--query-gpu=compute_cap --format=csv,noheader prints 9.0 for 90)"
        )
    return fix(
        f"Compile for the GPUs' own architectures{how}: nvcc/ptxas {arch} (or {gencode}); "
        f"CMake {cmake}; torch extensions {torch}; in a clean build directory",
        "manual",
        manual(f"nvcc {arch} ..."),
        manual(f"cmake .. {cmake}"),
    )


def _compiler_target_hit(facts: Facts, line: LogLine) -> Hit | None:
    target = line.stated.get("ptx_target")
    if target is None:
        raise NotStated(f"line {line.line} does not name the refused target", "log.ptx_target")
    cc = _digits_cc(target)
    gpus = node_gpu_archs(facts)
    if cc is not None and older_than_table(facts.matrix, cc) and gpus.ccs and cc not in gpus.ccs:
        compiler = "ptxas" if "ptxas" in line.text.lower() else "nvcc"
        return Hit(
            f"{compiler} refused {target} (line {line.line}), an architecture older than any "
            "the [[sm]] table knows (toolkits of the last years dropped it), and no GPU here "
            f"is {sm(cc)} (the GPUs are {', '.join(sm(c) for c in gpus.ccs)}): the build's "
            "flags name an old GPU's architecture, not this node's",
            evidence={"line": line.line, "target": target, "gpu_archs": gpus.digits},
            fix=_compiler_flags_fix(gpus),
        )
    if cc is not None and not no_gpu_has(facts.matrix, cc):
        return None  # a real architecture: whether the toolkit knows it is CUD150's
    compiler = "ptxas" if "ptxas" in line.text.lower() else "nvcc"
    return Hit(
        f"{compiler} refused {target} (line {line.line}): {_target_problem(target)}",
        evidence={"line": line.line, "target": target, "gpu_archs": gpus.digits or None},
        fix=_compiler_flags_fix(gpus),
    )


@rule("CUD157", "arch-list-names-no-gpu-here", Severity.ERROR)
def arch_list_names_no_gpu_here(facts: Facts) -> Iterable[Hit]:
    """A build's architecture list names an architecture no GPU here has, or no GPU at all

    ## What it checks
    On a node, TORCH_CUDA_ARCH_LIST in the environment naming an entry no NVIDIA GPU has or
    not spelled as an architecture (torch's names, Ampere, Hopper, are fine). In `triage`,
    torch's extension builder refusing a TORCH_CUDA_ARCH_LIST entry
    (`ValueError: Unknown CUDA arch (12.5) or GPU not supported`) that no NVIDIA GPU has, that
    is not spelled as an architecture, or that no GPU of the node has; nvcc or ptxas refusing
    a target no NVIDIA GPU has (`Unsupported gpu architecture 'sm_200'`, `Value 'sm_99' is
    not defined for option 'gpu-name'`, `compute_80+PTX`, an empty `compute_`), read against
    the `[[sm]]` table and the GPU table, with the node's or the log's GPUs. ptxas refusing
    an instruction only another architecture has (`Instruction 'wgmma.fence' not supported on
    .target 'sm_120'`, Hopper's wgmma: `cuda/ptx_instructions.toml`) where the log's
    TORCH_CUDA_ARCH_LIST names that architecture and no GPU here has it.

    ## Why it matters
    torch builds an extension for TORCH_CUDA_ARCH_LIST when it is set and for the visible GPUs
    only when it is not; nvcc compiles for the targets it is given. A value no GPU has is the
    list's or the flags', not a torch or toolkit too old: installing another torch or CUDA
    does not help, and the build stops before any kernel is compiled.

    ## Example
    `TORCH_CUDA_ARCH_LIST=12.5` on an H200 node: `ValueError: Unknown CUDA arch (12.5) or GPU
    not supported` (no GPU has 12.5; the H200 is 9.0). `nvcc -arch=sm_200`: `nvcc fatal :
    Unsupported gpu architecture 'sm_200'`.

    ## Fix
    Build for the GPUs' own architectures: `TORCH_CUDA_ARCH_LIST="9.0"` (or unset it), nvcc
    `-arch=sm_90` / `-gencode arch=compute_90,code=sm_90`, CMake
    `-DCMAKE_CUDA_ARCHITECTURES=90`; for an architecture only a newer torch knows, drop it or
    install that torch.

    ## References
    - https://github.com/pytorch/pytorch/blob/main/torch/utils/cpp_extension.py
    - https://docs.nvidia.com/cuda/cuda-compiler-driver-nvcc/index.html#gpu-feature-list
    - https://github.com/OpenBMB/BMTrain/issues/83
    - https://github.com/thu-ml/SageAttention/issues/291
    """
    value = facts.env().get("TORCH_CUDA_ARCH_LIST")
    if value is None or not value.strip():
        return []
    bad = _entries_no_gpu_has(facts.matrix, value)
    if not bad:
        return []
    gpus = node_gpu_archs(facts)
    return [
        Hit(
            f"TORCH_CUDA_ARCH_LIST={value} names {', '.join(repr(b) for b in bad)}: no NVIDIA GPU "
            "has it (or it is not an architecture in torch's spelling), so every torch "
            "extension built here stops with 'Unknown CUDA arch (...) or GPU not supported'",
            evidence={"TORCH_CUDA_ARCH_LIST": value, "entries": bad, "gpu_archs": gpus.torch},
            fix=_set_list(gpus, "names such as Ampere or Hopper and X.Y numbers both work"),
            # only an extension build reads it: on a node it is a warning
            severity=Severity.WARNING,
        )
    ]


# torch's cpp_extension expands these names before it checks each entry (named_arches)
_NAMED = (
    "Kepler+Tesla",
    "Kepler",
    "Maxwell+Tegra",
    "Maxwell",
    "Pascal",
    "Volta+Tegra",
    "Volta",
    "Turing",
    "Ampere+Tegra",
    "Ampere",
    "Ada",
    "Hopper",
    "Blackwell+Tegra",
    "Blackwell",
)


def _entries_no_gpu_has(matrix: Matrix, value: str) -> list[str]:
    """The entries of a TORCH_CUDA_ARCH_LIST value that no NVIDIA GPU has or that are not
    spelled as an architecture (names torch expands, and 'native', are fine)."""
    if value.strip() == "native":
        return []
    text = value.replace(" ", ";")
    for name in _NAMED:
        text = text.replace(name, "")
    bad = []
    for entry in text.split(";"):
        if not entry.strip():
            continue
        parsed = _TORCH_ENTRY.fullmatch(entry.strip())
        cc = Version(f"{parsed.group(1)}.{parsed.group(2)}") if parsed else None
        if cc is None or no_gpu_has(matrix, cc):
            bad.append(entry.strip())
    return bad


@from_log("CUD157")
def arch_list_names_no_gpu_here_in_log(facts: Facts, line: LogLine) -> Hit | None:
    if line.signature == "cpp-extension-unknown-arch":
        hit = _torch_entry_hit(facts, line)
        if hit is None and list_reading(facts, line) is None:
            gpus = node_gpu_archs(facts)
            raise NotStated(
                "the GPUs are unknown and the value is a real GPU's: whether one of them is "
                "it (TOR101) or the list names more than they need is not stated",
                "gpu.gpus",
                fix=_set_list(gpus, "or drop the value from the list").summary,
            )
        return hit
    if line.signature == "ptxas-arch-specific-on-plain-target":
        return _other_gpu_kernels_hit(facts, line)
    return _compiler_target_hit(facts, line)


def _other_gpu_kernels_hit(facts: Facts, line: LogLine) -> Hit | None:
    """ptxas refusing an instruction only another architecture has (Hopper's wgmma on sm_120),
    where the log's TORCH_CUDA_ARCH_LIST names that architecture and no GPU here has it: the
    build compiles that architecture's kernels under the target's settings because the list
    asks for a GPU the node does not have (thu-ml/SageAttention#291: 'You don't need to add
    9.0 ... otherwise it will try to build sm90 binary using sm120 settings'). None for every
    other refusal (TOR191 reads those)."""
    other = list_for_other_gpu(facts, line)
    if other is None:
        return None
    found, arch = other
    gpus = node_gpu_archs(facts)
    here = ", ".join(sm(c) for c in gpus.ccs or ())
    stated = line.stated.get("build_arch_list") or ""
    return Hit(
        f'the log builds with TORCH_CUDA_ARCH_LIST="{stated}", which names '
        f"{arch.major}.{arch.minor}, and no GPU here is {sm(arch)} (the GPUs are {here}): the "
        f"build compiles the {sm(arch)} kernels ('{found.what}', which only {sm(arch)}a has) "
        f"under {found.target}'s settings and ptxas refuses them (line {line.line})",
        evidence={
            "line": line.line,
            "build_arch_list": stated,
            "kernel_arch": sm(arch),
            "gpu_archs": gpus.torch,
        },
        fix=_set_list(gpus, f"drop {arch.major}.{arch.minor}: no GPU here runs those kernels"),
    )
