"""TOR193 and CUD110 from nvcc's `identifier "<name>" is undefined` for a CUDA device function
that the toolkit's headers declare only for some targets or from some release (the signature
`device-function-undefined`, matrices/signatures/arch_checks.toml). What each function needs is
data, `matrices/cuda/device_functions.toml`: the oldest compute capability that has it
(`cuda.device_fn_cc.<name>`: atomicExch_block 6.0, __ldg 3.2, any atomic 1.1), the first that
no longer has it (`cuda.device_fn_cc_below.<name>`: the non-sync __shfl_down, 7.0) and the first
toolkit release that ships it (`cuda.device_fn_since.<name>`: __shfl_down_sync 9.0, __hmul2_rn
11.6).

Which of the two causes the line is decides on the facts the log or the node states: nvcc's
release (its banner, a versioned path, a spec's `[system] nvcc`) against the function's release,
and the target the failing pass compiled for (older nvcc's `....compute_52.cpp1.ii`, the first
`-gencode`/`-arch` of a compile command, TORCH_CUDA_ARCH_LIST) against its architecture floor.
A toolkit older than the function is CUD110 (the target is then not the question); a target at
or above the floor rules TOR193 out."""

from __future__ import annotations

import contextlib

from packaging.version import Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.model import Matrix
from envcheck.model.finding import Fix
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NodeDecides, NotStated, StatedOtherwise
from envcheck.rules.fixes import fix, manual, set_env
from envcheck.rules.node.stated_toolkits import stated_toolkit, stated_torch_cuda

_TARGET = lazy(r"(?:compute|sm)_(?P<major>[0-9]+?)(?P<minor>[0-9])[af]?$")
_LISTED = lazy(r"([0-9]+)\.([0-9])")
_NAME = lazy(r'identifier "(?P<name>[A-Za-z_0-9]+)" is undefined')
# float atomicAdd needs 2.0 (CUDA C Programming Guide, atomicAdd()); what an atomic's 1.1 floor
# means in practice for the commonest call
_FLOAT_ATOMIC = "2.0"


def _cc(value: float | None) -> tuple[int, int] | None:
    if value is None:
        return None
    major = int(value)
    return major, round((value - major) * 10)


def arch_floor(matrix: Matrix, name: str) -> tuple[int, int] | None:
    """The oldest compute capability whose headers declare ``name``, if the table knows it."""
    return _cc(matrix.constant(f"cuda.device_fn_cc.{name}"))


def arch_ceiling(matrix: Matrix, name: str) -> tuple[int, int] | None:
    """The first compute capability whose headers no longer declare ``name``."""
    return _cc(matrix.constant(f"cuda.device_fn_cc_below.{name}"))


def toolkit_floor(matrix: Matrix, name: str) -> Version | None:
    """The first CUDA toolkit release that ships ``name``."""
    value = matrix.constant(f"cuda.device_fn_since.{name}")
    return Version(f"{value:.1f}") if value is not None else None


def compile_target(line: LogLine) -> tuple[int, int] | None:
    """The target a failing pass compiled for, or the build's oldest: nvcc's intermediate file or
    a compile command's first -gencode/-arch (`compute_52` -> (5, 2)), else the lowest entry of
    the TORCH_CUDA_ARCH_LIST the log sets."""
    target = _TARGET.search(line.stated.get("compile_target") or "")
    if target is not None:
        return int(target.group("major")), int(target.group("minor"))
    listed = [
        (int(a), int(b)) for a, b in _LISTED.findall(line.stated.get("build_arch_list") or "")
    ]
    return min(listed) if listed else None


def _function(line: LogLine) -> str:
    found = _NAME.search(line.text)
    if found is not None:
        return found.group("name")
    return line.stated.get("device_function") or ""


def _gpu_list(facts: Facts, floor: tuple[int, int], ceiling: tuple[int, int] | None) -> str | None:
    """The node's or log's GPUs as X.Y, those the function exists for, if known."""
    with contextlib.suppress(Skip):
        ccs = sorted({facts.compute_capability(g) for g in facts.gpus()})
        kept = [
            f"{cc.major}.{cc.minor}"
            for cc in ccs
            if (cc.major, cc.minor) >= floor and (ceiling is None or (cc.major, cc.minor) < ceiling)
        ]
        if kept:
            return ";".join(kept)
    return None


def below_target(facts: Facts, line: LogLine) -> Hit | None:
    """TOR193: the build compiles for a target older than the function's floor (or, for the
    non-sync warp shuffles, at or above the architecture that dropped them); ruled out by a
    toolkit older than the function or a stated target that has it."""
    name = _function(line)
    floor, ceiling = arch_floor(facts.matrix, name), arch_ceiling(facts.matrix, name)
    since, nvcc = toolkit_floor(facts.matrix, name), stated_toolkit(facts, line)
    if since is not None and nvcc is not None and nvcc < since:
        raise StatedOtherwise(
            f"nvcc is CUDA {nvcc} and {name} first ships with CUDA {since}: the toolkit lacks "
            "it whatever the target"
        )
    if floor is None and ceiling is None:
        raise NotStated(
            f"line {line.line}: no architecture floor is known for {name}", "log.ptx_target"
        )
    target = compile_target(line)
    if target is not None and target >= (floor or (0, 0)) and (ceiling is None or target < ceiling):
        raise StatedOtherwise(
            f"the build compiles for compute_{target[0]}{target[1]}, which has {name}"
        )
    if ceiling is not None and (target is None or target >= ceiling):
        return _removed_on(facts, line, name, ceiling)
    assert floor is not None
    return _below_floor(facts, line, name, floor, target)


def _below_floor(
    facts: Facts, line: LogLine, name: str, floor: tuple[int, int], target: tuple[int, int] | None
) -> Hit:
    need, sm, guard = (
        f"{floor[0]}.{floor[1]}",
        f"sm_{floor[0]}{floor[1]}",
        floor[0] * 100 + floor[1] * 10,
    )
    built = f" (the failing pass compiled for compute_{target[0]}{target[1]})" if target else ""
    value = _gpu_list(facts, floor, None) or f"<the GPUs' X.Y, {need} or newer: 7.0 V100, 8.0 A100>"
    why = f"CUDA declares {name} only for compute capability {need} ({sm}) and newer"
    if floor < (2, 0):
        why += (
            f", and nvcc before CUDA 6.5 compiles for compute_10 when no -arch is given (float "
            f"atomicAdd needs {_FLOAT_ATOMIC})"
        )
    message = (
        f"nvcc has no {name} for a target the build compiles (line {line.line}){built}: {why}, "
        "so the architecture list still holds an older target"
    )
    evidence: dict[str, object] = {"line": line.line, "intrinsic": name, "floor": need}
    if floor < (2, 0):
        return Hit(message, evidence=evidence, fix=_default_target_fix(facts, name))
    return Hit(
        message,
        evidence=evidence,
        fix=fix(
            f"Build only for architectures {need} and newer: `export "
            f'TORCH_CUDA_ARCH_LIST="{value}"` (the GPUs the build must run on), CMake '
            f"-DCMAKE_CUDA_ARCHITECTURES, nvcc -gencode arch=compute_XY or -arch=sm_XY of the "
            f"GPU, no target below {sm}; for a GPU older than {sm}, guard the call in the "
            f"source (#if __CUDA_ARCH__ >= {guard}) with the project's own fallback",
            "manual",
            manual(f'export TORCH_CUDA_ARCH_LIST="{value}"'),
            manual(f"nvcc -arch=sm_XY ...  (the GPU's own, {sm} or newer)"),
        ),
    )


def _default_target_fix(facts: Facts, name: str) -> Fix:
    """An atomic undefined at all: the compile had no -arch (old nvcc's compute_10)."""
    value = _gpu_list(facts, (2, 0), None)
    arch = f"sm_{value.split(';')[0].replace('.', '')}" if value else "sm_XY"
    return fix(
        f"Pass nvcc the GPU's own architecture: -arch={arch} (the GPU's compute capability; "
        f"{_FLOAT_ATOMIC} or newer for a float atomicAdd), or -gencode arch=compute_XY,code=sm_XY "
        f"per GPU: nvcc before CUDA 6.5 compiles for compute_10 without one, which has no "
        f"{name}",
        "manual",
        manual(f"nvcc -arch={arch} ...  (nvcc's -arch for the GPU, not the default)"),
    )


def _removed_on(facts: Facts, line: LogLine, name: str, ceiling: tuple[int, int]) -> Hit:
    first = f"sm_{ceiling[0]}{ceiling[1]}"
    return Hit(
        f"nvcc has no {name} for a target the build compiles (line {line.line}): CUDA declares "
        f"the warp function without _sync only below {first}, so the code predates CUDA 9's "
        f"{name}_sync and a Volta or newer target cannot compile it",
        evidence={"line": line.line, "intrinsic": name, "ceiling": f"{ceiling[0]}.{ceiling[1]}"},
        fix=fix(
            f"Use a release of the project that calls {name}_sync(0xffffffff, ...) (or change the "
            f"call so); building only for targets below {first} leaves the GPUs of {first} and "
            "newer to the driver's PTX JIT",
            "manual",
            manual(f"grep -rn '{name}(' <the source>  # -> {name}_sync(0xffffffff, ...)"),
        ),
    )


def newer_than_toolkit(facts: Facts, line: LogLine) -> Hit | None:
    """CUD110: the toolkit is older than the function's first release (from nvcc's release as
    stated; with none stated, a target that has the function leaves the toolkit as the cause)."""
    name = _function(line)
    since = toolkit_floor(facts.matrix, name)
    if since is None:
        return None  # not a matter of the toolkit's release
    nvcc = stated_toolkit(facts, line)
    if nvcc is not None and nvcc >= since:
        return None
    if nvcc is None:
        floor, target = arch_floor(facts.matrix, name), compile_target(line)
        if target is None or floor is None or target < floor:
            raise NodeDecides(
                f"line {line.line}: {name} first ships with CUDA {since}, and neither nvcc's "
                "release nor a target that has it is stated"
            )
    have = f"nvcc is CUDA {nvcc}" if nvcc else "the build targets an architecture that has it"
    return toolkit_hit(facts, line, name, since, f"{have}; {name} first ships with CUDA {since}")


def toolkit_hit(facts: Facts, line: LogLine, what: str, since: Version, why: str) -> Hit:
    """CUD110 for a build whose toolkit is older than ``what`` needs: the toolkit of torch's CUDA
    where that is new enough, else the first release that has it."""
    torch_cuda = stated_torch_cuda(facts, line)
    release = str(torch_cuda) if torch_cuda is not None and torch_cuda >= since else f"{since}"
    home = f"/usr/local/cuda-{release}"
    return Hit(
        f"the CUDA toolkit the build runs is older than {what} (line {line.line}): {why}",
        evidence={"line": line.line, "needs": str(since), "missing": what},
        fix=fix(
            f"Build with a CUDA toolkit of {since} or newer (CUDA {release}): install it, "
            f"export CUDA_HOME={home} and put $CUDA_HOME/bin first on PATH (conda: conda install "
            f"-c nvidia cuda-toolkit={release} and export CUDA_HOME=$CONDA_PREFIX), then rebuild; "
            "or a release of the package that builds with the older toolkit",
            "manual",
            set_env(CUDA_HOME=home),
            manual(f"export PATH={home}/bin:$PATH"),
        ),
    )
