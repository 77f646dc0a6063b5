"""CUD110 from a build's own line: nvcc's CUDA against torch's (torch.utils.cpp_extension's `The
detected CUDA version (12.1) mismatches the version that was used to compile PyTorch (11.8)`,
DeepSpeed's `Installed CUDA version ... does not match`, apex's `Cuda extensions are being
compiled with a version of Cuda that does not match`, nvcc's `Value 'c++17' is not defined for
option 'std'` and `Unknown option '-generate-dependencies-with-compile'`). The rule itself is a
matrix data rule (matrices/cuda/known_bad.toml); this words the fix from the versions the log (or
the node) states: the toolkit of torch's CUDA under CUDA_HOME first, then, where the matrix knows
a torch build for nvcc's CUDA, that build's `pip install` line."""

from __future__ import annotations

import contextlib

from packaging.utils import canonicalize_name
from packaging.version import Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.model import public
from envcheck.model.finding import Fix
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NodeDecides, from_log
from envcheck.rules.choose import torch_build_for_cuda
from envcheck.rules.fixes import fix, manual, pip_install, set_env
from envcheck.rules.node import toolkit_headers
from envcheck.rules.node.device_functions import newer_than_toolkit
from envcheck.rules.node.stated_toolkits import stated_toolkit, stated_torch_cuda

# flash-attn's setup.py: the oldest nvcc it builds with
_FLOOR = lazy(r"is only supported on CUDA ([0-9]+\.[0-9]+) and above")
# nvcc's options newer than some toolkits: the option as nvcc names it -> the release that added it
_NEWER_OPTION = lazy(r"Unknown option '-?-(?P<threads>threads)'|Value 'c\+\+(?P<std>20)'")
_OPTION_SINCE = {"threads": ("--threads", Version("11.2")), "std": ("-std=c++20", Version("12.0"))}
_ONLY_ON_CUDA = lazy(r"([A-Za-z][A-Za-z0-9_-]*) is only supported on CUDA [0-9]+\.[0-9]+ and above")


# the wrappers' lines of a failed extension build (build.toml): the compiler's own error is above
# them, or nowhere in what was pasted
_BUILD_WRAPPERS = frozenset(
    {"extension-build-failed", "nvcc-command-failed", "pip-wheel-build-failed"}
)


# a bfloat16 name of the toolkit undeclared (build.toml): cuda_bf16.h and CUDA_R_16BF are CUDA 11.0's
_BF16_NAMES = "bf16-name-before-cuda11"
_BF16_CUDA = Version("11.0")


def _bf16_before_cuda11(facts: Facts, line: LogLine) -> Hit | None:
    """A bfloat16 name the toolkit does not declare: the toolkit is older than CUDA 11.0 when
    nvcc's release (the log's banner, the node) says so; an nvcc of 11.0 or newer clears the
    toolkit (the source's own include is at fault); no release stated leaves it open."""
    nvcc = stated_toolkit(facts, line)
    if nvcc is None:
        raise NodeDecides(
            f"line {line.line}: a bfloat16 name is undefined, and no nvcc release is stated "
            "(CUDA 11.0 added the bfloat16 types)"
        )
    if nvcc >= _BF16_CUDA:
        return None
    torch_cuda = stated_torch_cuda(facts, line)
    known = torch_cuda is not None and torch_cuda >= _BF16_CUDA
    release = str(torch_cuda) if known else "<X.Y: 11.0 or newer, torch's CUDA>"
    home = f"/usr/local/cuda-{release}" if known else "/usr/local/cuda-<X.Y>"
    return Hit(
        f"nvcc is CUDA {nvcc}, which has no bfloat16 types (cuda_bf16.h's __nv_bfloat16 and "
        f"CUDA_R_16BF arrived in CUDA 11.0), and the build uses them (line {line.line})",
        evidence={"line": line.line, "nvcc": str(nvcc), "needs": str(_BF16_CUDA)},
        fix=fix(
            f"Build with a CUDA toolkit of 11.0 or newer (CUDA {release}): install it, export CUDA_HOME={home} and put $CUDA_HOME/bin "
            "first on PATH (conda: conda install -c nvidia cuda-toolkit and export "
            "CUDA_HOME=$CONDA_PREFIX), then rebuild the extension",
            "manual",
            set_env(CUDA_HOME=home),
            manual(f"export PATH={home}/bin:$PATH"),
        ),
    )


def _torch_for_cuda(facts: Facts, cuda: Version) -> tuple[Version, str] | None:
    current = None
    with contextlib.suppress(Skip):
        installed = facts.version("torch")
        current = public(installed) if installed is not None else None
    return torch_build_for_cuda(facts.matrix, cuda, current)


def _below_build_floor(facts: Facts, line: LogLine) -> Hit:
    """A package's build failed with only its wrappers' lines, and the toolkit is older than the
    package's own setup.py accepts (`build.nvcc_min.<package>`, matrices/packages/
    build_floors.toml; flash-attn, mamba-ssm, causal-conv1d: 11.6): the toolkit is the cause,
    whatever the compiler printed above. Anything else leaves CUD110 as open as before."""
    package = line.stated.get("pip_build") or line.stated.get("extension")
    name = canonicalize_name(package) if package else None
    floor = facts.matrix.constant(f"build.nvcc_min.{name}") if name else None
    nvcc = stated_toolkit(facts, line)
    if name is None or floor is None or nvcc is None:
        raise NodeDecides(
            f"line {line.line} is the build's wrapper: the package, the oldest toolkit it "
            "builds with or nvcc's release is not stated"
        )
    needed = Version(f"{floor:.1f}")
    if nvcc >= needed:
        raise NodeDecides(
            f"nvcc is CUDA {nvcc}, which {name} builds with (CUDA {needed} and above): the "
            "compiler's own error above this line says more"
        )
    return Hit(
        f"building {name} failed (line {line.line}) with nvcc of CUDA {nvcc}: {name}'s setup.py "
        f"builds only with CUDA {needed} and above (its nvcc -V check), so the CUDA toolkit "
        "the build runs is too old",
        evidence={"line": line.line, "nvcc": str(nvcc), "package": name, "needs": str(needed)},
        fix=_fix(facts, nvcc, stated_torch_cuda(facts, line)),
    )


def _fix(facts: Facts, nvcc: Version | None, torch_cuda: Version | None) -> Fix:
    release = str(torch_cuda) if torch_cuda else "<torch.version.cuda>"
    home = f"/usr/local/cuda-{release}"
    toolkit = (
        f"Build with the CUDA toolkit of torch's CUDA ({release}): export CUDA_HOME={home} "
        f"PATH={home}/bin:$PATH (install it first if it is not there: the CUDA {release} "
        f"toolkit, or in a conda env conda install -c nvidia cuda-toolkit={release} and export "
        "CUDA_HOME=$CONDA_PREFIX)"
    )
    actions = [
        set_env(CUDA_HOME=home),
        manual(f"export PATH={home}/bin:$PATH"),
        manual(
            f"conda install -c nvidia cuda-toolkit={release}  (conda env; then export CUDA_HOME=$CONDA_PREFIX)"
        ),
    ]
    build = _torch_for_cuda(facts, nvcc) if nvcc is not None else None
    if build is not None:
        version, url = build
        toolkit += (
            f"; or install the torch build of nvcc's CUDA ({nvcc}): pip install "
            f"torch=={version} --index-url {url} (then reinstall torchvision/torchaudio from "
            f"the same index)"
        )
        actions.append(pip_install(f"torch=={version}", index_url=url))
    elif nvcc is not None:
        toolkit += (
            f"; PyTorch publishes no build for CUDA {nvcc} that the matrix knows, so the "
            "toolkit is what has to change"
        )
    return fix(toolkit + "; then rebuild the extension", "manual", *actions)


@from_log("CUD110")
def nvcc_vs_torch_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """The line establishes the mismatch (the build refused to go on); the versions come from
    the line, nvcc's banner elsewhere in the log, or the node."""
    if line.signature in _BUILD_WRAPPERS:
        return _below_build_floor(facts, line)
    if line.signature == _BF16_NAMES:
        return _bf16_before_cuda11(facts, line)
    if line.signature == "device-function-undefined":
        return newer_than_toolkit(facts, line)
    if line.signature == toolkit_headers.SIGNATURE:
        return toolkit_headers.older_toolkit(facts, line)
    nvcc, torch_cuda = stated_toolkit(facts, line), stated_torch_cuda(facts, line)
    if (
        "mismatches the version" in line.text
        and nvcc is not None
        and torch_cuda is not None
        and nvcc.major == torch_cuda.major
    ):
        return None  # the versions the line states are of one major: torch only warns then
    floor = _FLOOR.search(line.text)
    if floor is not None and nvcc is not None and nvcc >= Version(floor.group(1)):
        return None  # the toolkit the node has is one the build accepts
    if (newer := _NEWER_OPTION.search(line.text)) is not None:
        option, since = _OPTION_SINCE["threads" if newer.group("threads") else "std"]
        if nvcc is not None and nvcc >= since:
            return None  # the toolkit the node has knows the option
        have = f" (nvcc is CUDA {nvcc})" if nvcc else ""
        what = (
            f"nvcc does not know {option}, which CUDA {since} added{have}: the CUDA toolkit the "
            "build runs is older than the build"
        )
    elif "c++17" in line.text:
        what = (
            "nvcc does not know -std=c++17: the CUDA toolkit the build uses is older than CUDA "
            "11.0, and torch's headers need C++17"
        )
    elif (only := _ONLY_ON_CUDA.search(line.text)) is not None:
        have = f" (nvcc is CUDA {nvcc})" if nvcc else ""
        package = only.group(1)
        what = (
            f"{package}'s setup.py refuses the nvcc it found{have}: the CUDA toolkit the build "
            f"runs (CUDA_HOME's nvcc -V) is older than {package} supports and than torch's CUDA"
        )
    elif "generate-dependencies-with-compile" in line.text:
        what = (
            "nvcc does not know --generate-dependencies-with-compile, which torch's extension "
            "builder passes (nvcc has it from CUDA 10.2): the CUDA toolkit the build runs is "
            "older than torch's CUDA"
        )
    else:
        have = f"nvcc is CUDA {nvcc}" if nvcc else "the CUDA toolkit (nvcc) is another release"
        of = f"torch was built with CUDA {torch_cuda}" if torch_cuda else "than torch's CUDA"
        what = (
            f"{have}, {of}: the extension build refuses to compile with a toolkit of another CUDA"
        )
    return Hit(
        f"{what} (line {line.line})",
        evidence={
            "line": line.line,
            "nvcc": str(nvcc) if nvcc else None,
            "torch_cuda": str(torch_cuda) if torch_cuda else None,
        },
        fix=_fix(facts, nvcc, torch_cuda),
    )
