"""CUD193: a component of nvcc's toolchain crashed while it compiled a kernel: nvcc reports
`nvcc error   : 'ptxas' died due to signal 11 (Invalid memory reference)` (also `'cicc'`, the
NVVM optimiser; `'cudafe++'`, the front end; `'nvlink'`, `'fatbinary'`) and `core dumped`.
Signal 11 (SIGSEGV) and 6 (SIGABRT) are the tool's own fault on this input, a bug of that
toolkit release: the same source builds with another release (threads: an older toolkit, or
the next one that fixes it). Signal 9 (SIGKILL), the out-of-memory killer, is SYS160's. The
toolkit release comes from the log (the component's path, nvcc's banner) or the node."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.fixes import fix, manual, set_env
from envcheck.rules.node.build import line_toolkit

# nvcc's report of a component that crashed: "nvcc error   : 'ptxas' died due to signal 11
# (Invalid memory reference)"; signal 9 (Kill signal) is the OOM killer's, not a crash
_CRASHED = lazy(
    r"'\"?(?:\$[A-Z_]+/)?(?P<tool>ptxas|cicc|cudafe\+\+|nvlink|fatbinary|nvptxcompiler)\"?' "
    r"died due to signal "
    r"(?P<signal>11|6)\b"
)
# what each component does, for the message
_ROLES = {
    "ptxas": "the PTX assembler",
    "cicc": "the NVVM optimiser",
    "cudafe++": "the C++ front end",
    "nvlink": "the device linker",
    "fatbinary": "the fat-binary packager",
    "nvptxcompiler": "the PTX compiler library",
}


@rule("CUD193", "cuda-compiler-component-crashed", Severity.ERROR)
def cuda_compiler_crashed(facts: Facts) -> Iterable[Hit]:
    """A component of the CUDA toolkit's compiler (ptxas, cicc, cudafe++) crashed on a kernel: a bug of that toolkit release

    ## What it checks
    In `triage`, nvcc reporting that one of its components died of a segmentation fault or an
    abort while it compiled a kernel: `nvcc error   : 'ptxas' died due to signal 11 (Invalid
    memory reference)`, `'cicc' died due to signal 11`, `'cudafe++' died due to signal 11`,
    usually followed by `core dumped` and make's `Error 139`. Only a build log states it.
    (`died due to signal 9 (Kill signal)` is the out-of-memory killer: SYS160.)

    ## Why it matters
    A crash of the compiler itself is not an error in the source or the node: the tool of
    this toolkit release faults on this input (a large template instantiation, a kernel for
    one architecture). Rebuilding does the same every time; another toolkit release, or
    leaving out the architecture whose code crashes, gets past it.

    ## Example
    compadre on POWER9 + V100: `nvcc error : 'ptxas' died due to signal 11 (Invalid memory
    reference)`, built after moving to CUDA 10.1.243; GridTools' test with CUDA 12.0 to 12.8:
    `'cudafe++' died due to signal 11`, waiting for a later release; llama.cpp on a GH200 with
    nvcc 12.3: `'ptxas' died due to signal 11` in a flash-attention template instance.

    ## Fix
    Build with another CUDA toolkit release (the newest one the driver and torch allow, or
    the one before this release): install it, point `CUDA_HOME` and `PATH` at it (CMake:
    `-DCMAKE_CUDA_COMPILER=/usr/local/cuda-X.Y/bin/nvcc`), rebuild from a clean build
    directory. Where only one target architecture's code crashes, build without it.

    ## References
    - https://github.com/sandialabs/compadre/issues/239
    - https://github.com/GridTools/gridtools/issues/1822
    - https://github.com/ggml-org/llama.cpp/issues/8714
    - https://docs.nvidia.com/cuda/cuda-compiler-driver-nvcc/index.html#the-cuda-compilation-trajectory
    """
    raise Skip("only a build log states that a CUDA compiler component crashed", "log.cuda_build")


@from_log("CUD193")
def cuda_compiler_crashed_in_log(facts: Facts, line: LogLine) -> Hit:
    """The component and signal from nvcc's line; the release from the log or node; the fix
    is another toolkit release under CUDA_HOME, then a clean rebuild."""
    found = _CRASHED.search(line.text)
    if found is None:
        raise NotStated(
            f"line {line.line} names no crashed CUDA compiler component", "log.cuda_build"
        )
    tool, signal = found.group("tool"), found.group("signal")
    kind = "a segmentation fault" if signal == "11" else "an abort"
    toolkit = line_toolkit(facts, line)
    release = f"CUDA {toolkit}'s" if toolkit else "this CUDA toolkit's"
    other = f"not {toolkit}: " if toolkit else ""
    return Hit(
        f"{release} {tool} ({_ROLES[tool]}) crashed with {kind} (signal {signal}) while it "
        f"compiled a kernel (line {line.line}): a bug of that compiler release on this input, "
        "not an error in the source or the node",
        evidence={"line": line.line, "tool": tool, "signal": int(signal), "cuda": toolkit},
        fix=fix(
            f"Build with another CUDA toolkit release ({other}the newest the driver and torch "
            "allow, or the release before this one): install it, export CUDA_HOME=/usr/local/cuda-X.Y "
            "and put $CUDA_HOME/bin first on PATH (CMake: -DCMAKE_CUDA_COMPILER="
            "/usr/local/cuda-X.Y/bin/nvcc), then rebuild from a clean build directory; where "
            "one target architecture's code crashes, build without it",
            "manual",
            set_env(CUDA_HOME="/usr/local/cuda-X.Y"),
            manual('export PATH="$CUDA_HOME/bin:$PATH"'),
            manual("cmake -B build -DCMAKE_CUDA_COMPILER=/usr/local/cuda-X.Y/bin/nvcc"),
        ),
    )
