"""Two Intel MKL releases in one process (SYS242): an MKL symbol does not resolve because an older
MKL than the one the binary was built with loads first.

The signature `undefined-symbol-mkl` (matrices/signatures/linker_symbols.toml, with its sources)
names the line: an `mkl_*` / `MKL_*` symbol, or any symbol one of MKL's own libraries
(`libmkl_*.so`) cannot resolve from its siblings. The path on the line says which copy loaded:
one outside the conda environment (/opt/intel, /usr/local/lib) or the base installation's lib/
while an environment runs.
"""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Action, Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.fixes import fix, manual

# an MKL library file on the line: its directory is the copy that loaded
_MKL_FILE = lazy(r"^(?P<dir>.*)/libmkl_[A-Za-z0-9_]+\.so")
# a conda environment's lib/ (envs/<name>/lib, a container's /opt/conda/lib) and a base
# installation's (anaconda3/lib)
_ENV_LIB = lazy(r"/(?:envs/[^/]+|conda)/lib$")
_BASE_LIB = lazy(r"/(?:(?:ana|mini)conda[0-9]*|miniforge[0-9]*|mambaforge)/lib$")


@rule("SYS242", "mkl-release-mixed", Severity.ERROR)
def mkl_release_mixed(facts: Facts) -> Iterable[Hit]:
    """Another Intel MKL than the one the binary was built with loads first

    ## What it checks
    A loader line whose symbol is Intel MKL's (`mkl_lapack_ao_zgetrf`, `MKL_Get_Version`), or
    one of MKL's own libraries (`libmkl_gf_lp64.so`, `libmkl_core.so`) failing to resolve a
    symbol of its siblings: two MKL releases meet in one process. The path says which copy
    loaded: an MKL under `/opt/intel` or `/usr/local/lib` on `LD_LIBRARY_PATH`, or the base
    conda installation's `lib/` while an environment runs. Only a log states it.

    ## Why it matters
    torch, NumPy and SciPy from conda are built against the environment's MKL; an older copy
    found first lacks the symbols they use, and every import of them fails.

    ## Example
    `ImportError: /opt/intel/compilers_and_libraries_2018.1.163/linux/mkl/lib/intel64_lin/
    libmkl_gf_lp64.so: undefined symbol: mkl_lapack_ao_zgetrf` on `import torch` from a conda
    environment.

    ## Fix
    Load one MKL, the environment's: drop the other MKL's directory from `LD_LIBRARY_PATH` (or
    put `$CONDA_PREFIX/lib` first), and keep the environment's MKL at the release its packages
    were built with (`conda list mkl`; `conda install mkl=<that release>`, or update the base
    installation's MKL when its copy is the one that loads).

    ## References
    - https://github.com/pytorch/pytorch/issues/5100
    - https://github.com/pytorch/pytorch/issues/7758
    """
    raise Skip("only a log line states an MKL symbol that does not resolve", "log.mkl")


@from_log("SYS242")
def mkl_release_mixed_in_log(facts: Facts, line: LogLine) -> Hit:
    symbol = line.stated.get("undefined_symbol")
    path = line.stated.get("library_path")
    if symbol is None:
        raise NotStated(f"line {line.line} is cut before the symbol", "libraries.mkl")
    found = _MKL_FILE.match(path or "")
    folder = found.group("dir") if found is not None else None
    prepend = manual("export LD_LIBRARY_PATH=$CONDA_PREFIX/lib:$LD_LIBRARY_PATH")
    versions = manual("conda list mkl  (the environment's MKL and the packages built against it)")
    actions: list[Action]
    if folder is not None and _BASE_LIB.search(folder):
        copy = f"the base conda installation's MKL ({folder}), not the active environment's"
        summary = (
            f"The base installation's MKL in {folder} loads instead of the environment's: put "
            "the environment's first (export LD_LIBRARY_PATH=$CONDA_PREFIX/lib:$LD_LIBRARY_PATH "
            f"and drop {folder} from it), or update the base installation's MKL to the "
            "environment's release (conda update -n base mkl)"
        )
        actions = [prepend, manual("conda update -n base mkl"), versions]
    elif folder is not None and not _ENV_LIB.search(folder):
        copy = f"an MKL outside the conda environment ({folder})"
        summary = (
            f"Another MKL ({folder}) loads before the one the failing package was built with: "
            f"drop {folder} from LD_LIBRARY_PATH (it is there for another program), or put the "
            "environment's first: export LD_LIBRARY_PATH=$CONDA_PREFIX/lib:$LD_LIBRARY_PATH; "
            "then keep the environment's MKL at its packages' release (conda install "
            "mkl=<that release>)"
        )
        actions = [
            manual(f"remove {folder} from LD_LIBRARY_PATH  (echo $LD_LIBRARY_PATH)"),
            prepend,
            versions,
        ]
    else:
        where = f" ({folder})" if folder is not None else ""
        copy = f"the MKL that loads{where}"
        summary = (
            "The MKL that loads is not the release the failing package was built with: install "
            "that release in the environment (conda list mkl shows it and its dependents; conda "
            "install mkl=<that release>, pip install mkl==<that release> outside conda), and "
            "keep other MKL directories off LD_LIBRARY_PATH"
        )
        actions = [versions, manual("conda install mkl=<the release its packages need>"), prepend]
    return Hit(
        f"{path or 'a library'} (line {line.line}) cannot resolve {symbol}: {copy} is another "
        "Intel MKL release than the one the binary was built with",
        evidence={"line": line.line, "library": path, "symbol": symbol, "mkl_dir": folder},
        fix=fix(summary, "manual", *actions),
    )
