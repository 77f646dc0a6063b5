"""The GPU kernels an unpacked wheel (or any folder) carries, per shared object, read from the
fatbin headers as ``envcheck check`` reads them; with ``--expect-arch`` it compares the SASS
of one library with a published arch list and exits 1 when they differ.

    unzip -q torch-2.5.1-cp311-cp311-manylinux1_x86_64.whl 'torch/lib/*' -d .bench/torch251
    python scripts/wheel_kernels.py .bench/torch251 \\
        --library libtorch_cuda.so --expect-arch 5.0,6.0,7.0,7.5,8.0,8.6,9.0

Not a unit test: it needs a real wheel (hundreds of MB), kept under the ignored .bench/.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from envcheck.binaries.elf import read_elf

_SHARED = re.compile(r"\.so(?:\.\d+)*$")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--library", help="the library --expect-arch is about (a file name)")
    parser.add_argument("--expect-arch", help="published arch list: 5.0,6.0,...,9.0 (SASS)")
    args = parser.parse_args()
    seen: dict[str, tuple[int, ...]] = {}
    for path in sorted(p for p in args.folder.rglob("*") if _SHARED.search(p.name)):
        if not path.is_file():
            continue
        start = time.perf_counter()
        kernels = read_elf(path).kernels
        ms = (time.perf_counter() - start) * 1000
        if kernels is None:
            continue
        seen[path.name] = kernels.sass
        ptx = ", ".join(
            f"sm_{a} (ISA {i})" for a, i in zip(kernels.ptx, kernels.ptx_isa, strict=False)
        )
        print(
            f"{path.relative_to(args.folder)}: SASS {', '.join(f'sm_{a}' for a in kernels.sass)}"
            f"; PTX {ptx or 'none'}; {kernels.entries} images, {kernels.reads} reads, {ms:.1f} ms"
        )
    if args.expect_arch and args.library:
        want = tuple(sorted(int(a.replace(".", "")) for a in args.expect_arch.split(",")))
        got = seen.get(args.library)
        verdict = "matches" if got == want else f"DIFFERS (read {got})"
        print(f"{args.library}: published {want}: {verdict}")
        return 0 if got == want else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
