"""NCCL's own device kernels without an image for the GPU (CUD153's reading of NCCL's lines).

While it sets up a communicator, NCCL asks CUDA for the attributes of each of its kernels
(``ncclInitKernelsForDevice`` in src/enqueue.cc, 2.12 to 2.23): a libnccl compiled with an
``NVCC_GENCODE`` that holds no image the GPU runs answers ``enqueue.cc:58 NCCL WARN Cuda
failure 'named symbol not found'`` (or 'invalid device function') for every kernel. The line
names NCCL's own kernels, so it establishes the cause by itself (NVIDIA/nccl#1372: a site build
for A100s, sm_80 only, run on H100s); the GPUs the log states, and the NCCL release it prints,
make the fix name the ``-gencode`` to add.
"""

from __future__ import annotations

import contextlib

from packaging.version import Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.rules.base import Hit, LogLine
from envcheck.rules.choose import sm
from envcheck.rules.fixes import fix, manual

SIGNATURE = "nccl-kernels-no-image"


def _gencode(cc: Version) -> str:
    arch = f"{cc.major}{cc.minor}"
    return f"-gencode=arch=compute_{arch},code=sm_{arch}"


def nccl_kernels_hit(facts: Facts, line: LogLine) -> Hit | None:
    """CUD153 for NCCL's own kernels: the libnccl in use has no image for the GPU. None for
    every other line (the other readings of CUD153 decide those)."""
    if line.signature != SIGNATURE:
        return None
    ccs: list[Version] = []
    names: list[str] = []
    with contextlib.suppress(Skip):
        gpus = facts.gpus()
        ccs = sorted({facts.compute_capability(g) for g in gpus})
        names = list(dict.fromkeys(g.name for g in gpus if g.name))
    version = line.stated.get("nccl_version")
    built = line.stated.get("nccl_cuda")
    nccl = f"NCCL {version}" + (f"+cuda{built}" if built else "") if version else "the libnccl"
    gpu = (
        f"{', '.join(names) or 'the GPU'} ({', '.join(sm(cc) for cc in ccs)})"
        if ccs
        else "this GPU"
    )
    gencode = " ".join(_gencode(cc) for cc in ccs) if ccs else "-gencode=arch=compute_XY,code=sm_XY"
    return Hit(
        f"NCCL could not resolve its own kernels on {gpu} (line {line.line}: "
        f"{line.text.split('NCCL WARN ', 1)[-1].strip()}, as NCCL sets up its kernels): "
        f"{nccl} was compiled without an image this GPU's architecture runs",
        evidence={
            "line": line.line,
            "nccl_version": version,
            "gpu_archs": [sm(cc) for cc in ccs],
        },
        fix=fix(
            "Use an NCCL built for this GPU: rebuild the site's NCCL with NVCC_GENCODE naming "
            f"the GPU's architecture ({gencode}, beside the ones it has), or unset the "
            "LD_LIBRARY_PATH / LD_PRELOAD entry that loads it, so that torch's own NCCL (the "
            "nvidia-nccl wheel) is used",
            "manual",
            manual(f'make -j src.build NVCC_GENCODE="{gencode}"   # in the NCCL checkout'),
            manual("python -c 'import torch; print(torch.cuda.nccl.version())'"),
        ),
    )
