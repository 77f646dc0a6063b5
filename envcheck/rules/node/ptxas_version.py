"""CUD155: a ptxas older than the PTX it is given (the signature `ptxas-older-than-ptx` in
matrices/signatures/cuda_libs.toml). ptxas states both PTX ISA versions, the file's and the
newest it knows ('Unsupported .version 8.5; current version is '7.5''); the PTX ISA table
(matrices/cuda/ptx_isa.toml) names the CUDA release that introduced each, so the fix names the
toolkit whose ptxas assembles that PTX and the one that is running."""

from __future__ import annotations

from collections.abc import Iterable

from packaging.version import Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual


def _newest_of_major(facts: Facts, need: Version) -> Version | None:
    """The newest CUDA toolkit the matrix lists of ``need``'s major, where newer than it."""
    same = [t.cuda for t in facts.matrix.toolkits if t.cuda.major == need.major]
    newest = max(same, default=None)
    return newest if newest is not None and newest > need else None


@rule("CUD155", "ptxas-older-than-ptx", Severity.ERROR)
def ptxas_older_than_ptx(facts: Facts) -> Iterable[Hit]:
    """The ptxas in use is older than the PTX it assembles: the PTX's ISA is newer than any its CUDA release knows

    ## What it checks
    Only a log says it: the standalone ptxas refusing a PTX file's ISA version, `ptxas
    /tmp/x.ptx, line 5; fatal : Unsupported .version 8.5; current version is '7.5'`. The PTX
    ISA table names the CUDA release that introduced each version: the one the PTX needs and
    the one the ptxas comes from.

    ## Why it matters
    Compilers that emit PTX themselves (Triton, tinygrad, XLA, MLIR, an nvcc of a newer
    toolkit) write the newest PTX ISA their own CUDA knows and then run whichever ptxas is
    found: the one on PATH, CUDA_HOME's, a conda environment's older toolkit, or
    TRITON_PTXAS_PATH. A ptxas from an older toolkit refuses the file whatever the GPU.

    ## Example
    tinygrad's PTX of ISA 8.5 given to a CUDA 11.5 ptxas: `fatal : Unsupported .version 8.5;
    current version is '7.5'` (ISA 8.5 came with CUDA 12.5).

    ## Fix
    Run the ptxas of the CUDA release that introduced the PTX's ISA or a newer one: put that
    toolkit's bin first on PATH (CUDA_HOME to match), or, where a tool is pointed at a ptxas
    (TRITON_PTXAS_PATH), point it at that toolkit's or unset it so Triton uses the ptxas it
    bundles. Within the CUDA major the rest of the build uses (torch's CUDA, an extension's
    nvcc), the newest release of that major keeps them on one major.

    ## References
    - https://docs.nvidia.com/cuda/parallel-thread-execution/#release-notes-ptx-release-history
    - matrices/cuda/ptx_isa.toml
    """
    raise Skip("only a log states ptxas refusing a PTX version", "log.build")


@from_log("CUD155")
def ptxas_older_than_ptx_in_log(facts: Facts, line: LogLine) -> Hit:
    """Both ISA versions from the line, each with the CUDA release that introduced it."""
    ptx = line.stated.get("ptx_isa") or "?"
    known = line.stated.get("ptxas_isa") or "?"
    need = facts.matrix.ptx_cuda(ptx)
    have = facts.matrix.ptx_cuda(known)
    have_text = f" (CUDA {have})" if have is not None else ""
    if need is None:
        cuda = "the CUDA release that introduced it"
        within = ""
        message = (
            f"ptxas knows PTX ISA up to {known}{have_text} and was given PTX ISA {ptx} "
            f"(line {line.line}), newer than any release the matrix lists"
        )
        path = "export PATH=/usr/local/cuda-<that release>/bin:$PATH"
    else:
        cuda = f"CUDA {need}"
        within = ""
        newest = _newest_of_major(facts, need)
        if newest is not None:
            # the same major keeps what was built with the PTX's compiler (torch's CUDA,
            # an extension's nvcc) on one CUDA major: CUD110
            within = f" (within CUDA {need.major}: {need} to {newest}, the newest the matrix knows)"
        message = (
            f"ptxas knows PTX ISA up to {known}{have_text} and was given PTX ISA {ptx}, which "
            f"came with CUDA {need} (line {line.line}): the ptxas in use is from an older "
            "toolkit than the compiler that wrote the PTX"
        )
        path = f"export PATH=/usr/local/cuda-{need}/bin:$PATH CUDA_HOME=/usr/local/cuda-{need}"
    return Hit(
        message,
        evidence={"line": line.line, "ptx_isa": ptx, "ptxas_isa": known, "needs": str(need)},
        fix=fix(
            f"Run the ptxas of {cuda} or newer{within}: put that toolkit's bin first on PATH "
            f"({path}; "
            "a conda environment: its cuda-nvcc package of that release); where "
            "TRITON_PTXAS_PATH points at this ptxas, point it at that toolkit's or unset it so "
            "Triton uses the ptxas it bundles",
            "manual",
            manual(f"install the CUDA toolkit {need or '<the PTX ISA release>'} or newer"),
            manual(path),
        ),
    )
