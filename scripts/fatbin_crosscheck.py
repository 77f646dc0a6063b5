"""Compare the GPU architectures envcheck reads from each library's fatbin headers with what
NVIDIA's own ``cuobjdump --list-elf --list-ptx`` lists for the same file.

    python scripts/fatbin_crosscheck.py /path/to/site-packages [--cuobjdump cuobjdump]

Not a unit test: it needs real CUDA libraries and cuobjdump (CUDA toolkit), so it is run on a
GPU machine (docs/gpu.md). Exit 0 when every library agrees, 1 when one differs, 2 when
cuobjdump is missing.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from envcheck.binaries.elf import read_elf
from envcheck.binaries.fatbin import FatbinKernels, read_kernels

_SHARED = re.compile(r"\.so(?:\.\d+)*$")
# "ELF file    1: libtorch_cuda.1.sm_80.cubin", "PTX file    2: x.sm_90a.ptx"
_LISTED = re.compile(r"^(ELF|PTX) file\s+\d+:.*\.sm_(\d+)[a-z]?\.(?:cubin|ptx)\s*$")


def cuobjdump_archs(tool: str, path: Path, timeout: float) -> tuple[set[int], set[int]] | str:
    try:
        done = subprocess.run(
            [tool, "--list-elf", "--list-ptx", str(path)],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"cuobjdump took over {timeout:.0f} s"
    sass: set[int] = set()
    ptx: set[int] = set()
    for line in done.stdout.splitlines():
        match = _LISTED.match(line.strip())
        if match:
            (sass if match.group(1) == "ELF" else ptx).add(int(match.group(2)))
    if not sass and not ptx and done.returncode != 0:
        return f"cuobjdump exit {done.returncode}: {done.stderr.strip()[:120]}"
    return sass, ptx


def nv_fatbin_only(path: Path) -> FatbinKernels | None:
    from elftools.elf.elffile import ELFFile

    with path.open("rb") as handle:
        section = ELFFile(handle).get_section_by_name(".nv_fatbin")
        if section is None:
            return None
        return read_kernels(handle, section["sh_offset"], section["sh_size"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--cuobjdump", default="cuobjdump")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--limit", type=int, default=0, help="at most this many libraries")
    args = parser.parse_args()
    tool = shutil.which(args.cuobjdump)
    if tool is None:
        print(f"fatbin_crosscheck: {args.cuobjdump} not found on PATH", file=sys.stderr)
        return 2
    agree = differ = 0
    for path in sorted(p for p in args.folder.rglob("*") if _SHARED.search(p.name)):
        if not path.is_file() or path.is_symlink():
            continue
        start = time.perf_counter()
        whole = read_elf(path).kernels
        ours_ms = (time.perf_counter() - start) * 1000
        if whole is None:
            continue
        # cuobjdump lists the .nv_fatbin section only: compare that, report the rest apart
        kernels = nv_fatbin_only(path) or whole
        extra = ""
        if (whole.sass, whole.ptx) != (kernels.sass, kernels.ptx):
            extra = (
                f"; with the fatbins kept in its data sections: SASS {list(whole.sass)}"
                f" PTX {list(whole.ptx)}"
            )
        start = time.perf_counter()
        theirs = cuobjdump_archs(tool, path, args.timeout)
        their_ms = (time.perf_counter() - start) * 1000
        name = path.relative_to(args.folder)
        ours = (set(kernels.sass), set(kernels.ptx))
        if isinstance(theirs, str):
            print(f"{name}: envcheck SASS {sorted(ours[0])} PTX {sorted(ours[1])}; {theirs}")
            continue
        same = ours == theirs
        agree += same
        differ += not same
        verdict = (
            "agree"
            if same
            else f"DIFFER: cuobjdump SASS {sorted(theirs[0])} PTX {sorted(theirs[1])}"
        )
        print(
            f"{name}: SASS {sorted(ours[0])} PTX {sorted(ours[1])}: {verdict} "
            f"(envcheck {ours_ms:.1f} ms, {whole.entries} images; cuobjdump {their_ms:.0f} ms)"
            f"{extra}"
        )
        if args.limit and agree + differ >= args.limit:
            break
    print(f"{agree} libraries agree, {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
