"""CUD158: a kernel compiled at run time by NVRTC (CuPy's RawKernel and its own kernels, numba's
CUDA target, torch's jiterator) that does not compile. NVRTC's log names the file, line and
error; the node's causes have lines of their own (a header NVRTC cannot open, SYS152; its
builtins library missing, SYS150; an architecture it does not know, CUD150; a device function
the target does not declare, TOR193/CUD110), so a compile error with none of those is the
kernel's source: the program's own, or a library's kernel written for another CUDA."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual

# NVRTC's own diagnostic, as CuPy's CompileException and numba's NvrtcCompilationError quote it:
# '<file>(<line>): error: <message>'
_ERROR = lazy(r"\((?P<line>[0-9]+)\): (?:catastrophic )?error: (?P<message>.+)$")


@rule("CUD158", "nvrtc-kernel-does-not-compile", Severity.WARNING)
def nvrtc_kernel_does_not_compile(facts: Facts) -> Iterable[Hit]:
    """A kernel compiled at run time (NVRTC) does not compile

    ## What it checks
    Only a log states it: NVRTC's `NVRTC_ERROR_COMPILATION`, CuPy's `CompileException: <file>(N):
    error: ...`, numba's `NvrtcCompilationError`, with no line of a node cause beside it (an
    unopenable header, NVRTC's builtins library, an unknown architecture, a device function
    the target lacks: each has its own signature and rule).

    ## Why it matters
    CuPy, numba and torch's jiterator compile CUDA C++ when the kernel is first called, on the
    node, with the CUDA release the library was built for. A compile error then is in the
    kernel's source: the program's own (a typo, an identifier never declared), or a library's
    kernel written for another CUDA release. No driver or package change on the node fixes the
    former.

    ## Example
    `cp.RawKernel(r'... p[0] = undefined_x; ...', 'k')` called on an H200:
    `cupy.cuda.compiler.CompileException: ...cubin.cu(1): error: identifier "undefined_x" is
    undefined`.

    ## Fix
    Read NVRTC's log (the `file(line): error` lines above the exception) and correct the
    kernel's source; where the kernel is a library's own, install that library's release for
    the node's CUDA.

    ## References
    - https://docs.nvidia.com/cuda/nvrtc/index.html
    - https://docs.cupy.dev/en/stable/user_guide/kernel.html#raw-kernels
    """
    raise Skip("only a log states a kernel NVRTC could not compile", "log.nvrtc")


@from_log("CUD158")
def nvrtc_kernel_does_not_compile_in_log(facts: Facts, line: LogLine) -> Hit:
    """The error NVRTC gave, where the line quotes it; the kernel's source is the cause."""
    said = _ERROR.search(line.text)
    where = (
        f"NVRTC's error at the kernel's line {said.group('line')}: {said.group('message')}"
        if said
        else "NVRTC's log above the exception names the line and the error"
    )
    return Hit(
        f"a kernel compiled at run time by NVRTC does not compile (line {line.line}; {where}): "
        "the kernel's own source, not the node (a header, NVRTC's builtins or an architecture "
        "NVRTC lacked would have a line of its own)",
        evidence={"line": line.line},
        fix=fix(
            "Correct the kernel's source where NVRTC's log points; a library's own kernel: "
            "that library's release for the node's CUDA",
            "manual",
            manual(
                "read the `file(line): error` lines NVRTC printed above the exception and fix "
                "the kernel's source (CuPy: RawKernel / RawModule code; numba: the @cuda.jit "
                "function)"
            ),
        ),
    )
