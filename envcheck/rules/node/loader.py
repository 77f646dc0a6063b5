"""The loader family: a shared object the dynamic loader cannot find (SYS150) and a libstdc++
older than a binary needs (SYS151), for any library and any package.

A line states the facts: the SONAME (`libcudnn.so.9: cannot open shared object file`, ldd's
`libX.so.N => not found`), the symbol-version label and the copy of libstdc++.so.6 the loader
picked (`/opt/conda/envs/x/lib/libstdc++.so.6: version `GLIBCXX_3.4.30' not found (required
by ...)`). The rules read the matrix's `[[soname]]` table (cuda/sonames.toml: who ships the
library) and `[[libstdcxx]]` (hardware/libstdcxx.toml: the GCC release that provides a label)
and, when the node is known, its OS release and torch's CUDA.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping

from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.model import Matrix, package_names
from envcheck.matrix.schema import OsRelease, Soname, TorchRelease
from envcheck.model.finding import Action, Fix, Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.extension_builds import torch_tags, wheel_index
from envcheck.rules.fixes import apt_command, apt_words, conda_words, fix, manual, pip_install
from envcheck.rules.node.cuda_libs import _pins
from envcheck.rules.node.gpu_runtimes import _commands as _runtime_cuda_commands
from envcheck.rules.node.gpu_runtimes import cuda_major
from envcheck.rules.node.imports import distribution_of
from envcheck.rules.node.loader_by_name import cpm_kernels_missing, torch_preload_missing
from envcheck.rules.node.located_library import lead_with_located

# glibc's and ldd's wordings, and CTranslate2's ('Library %s is not found or cannot be loaded')
_SONAME = lazy(
    r"(lib[A-Za-z0-9_+.-]*?\.so(?:\.[0-9]+[a-z]?)*)"
    r"(?:: cannot open| => not found| is not found or cannot be loaded)"
)
_SITE = lazy(r"(?P<site>/[^\s:'\"()]*?/(?:site|dist)-packages)/")
_LABEL = lazy(r"^(GLIBCXX|CXXABI)_([0-9.]+)$")
_CONDA = lazy(r"/(?:envs/[^/]+|(?:mini|ana)conda[0-9]*|miniforge[0-9]*|mambaforge|conda)/lib/")
_SYSTEM = lazy(r"^/(?:usr/)?lib(?:64|32)?/")


def _first_word(text: str | None) -> str | None:
    """The package name a table field starts with ('libcudart12 (Ubuntu 24.04 ...)')."""
    return text.split()[0] if text and text.split() else None


def _label_key(label: str) -> tuple[str, tuple[int, ...]] | None:
    found = _LABEL.match(label)
    if found is None:
        return None
    return found.group(1), tuple(int(p) for p in found.group(2).split(".") if p.isdigit())


def _has_label(newest: str | None, label: str) -> bool | None:
    """Does a libstdc++ whose newest label of this kind is ``newest`` provide ``label``?"""
    want, have = _label_key(label), _label_key(newest or "")
    if want is None or have is None or want[0] != have[0]:
        return None
    return have[1] >= want[1]


def _torch_cuda_major(facts: Facts) -> int | None:
    try:
        cuda = facts.torch_cuda()
    except Skip:
        return None
    return cuda.major if cuda is not None else None


def _torch_pins(facts: Facts) -> Mapping[str, SpecifierSet]:
    """The nvidia-* wheels and versions the node's torch pins (its METADATA, or the matrix's
    release entry); {} when the node does not say."""
    try:
        return _pins(facts)
    except Skip:
        return {}


def _pick(entries: tuple[Soname, ...], major: int | None) -> tuple[Soname, ...]:
    if len(entries) > 1 and major is not None:
        chosen = tuple(e for e in entries if e.cuda_major == major)
        if chosen:
            return chosen
    return entries


@rule("SYS150", "shared-library-not-found", Severity.ERROR)
def shared_library_not_found(facts: Facts) -> Iterable[Hit]:
    """The loader cannot find a shared library a binary or extension needs

    ## What it checks
    A log line of the dynamic loader that names a shared object it could not open
    (`error while loading shared libraries: libX.so.N: cannot open shared object file`,
    `OSError: libcudnn.so.9: cannot open shared object file`, ldd's `libX.so.N => not found`):
    which pip wheel, apt, dnf or conda package ships that SONAME (the matrix's `[[soname]]`
    table, for the CUDA major of the node's torch when it is known). Only a log states which
    library failed to load: on a node alone the rule does not run, except for the driver's
    `libcuda.so.1` where a pasted `ldconfig -p` shows the loader's cache without it (none, or
    only the CUDA toolkit's link-time stub `libcuda.so`). The package whose extension wants a
    CUDA library is the traceback's innermost site-packages frame above the line, or, with no
    frame shown, the import statement printed just above it (`from vllm import cuda_utils`)
    or in the traceback of the exception raised while handling it, when the matrix knows that
    package: its build for the node's CUDA is the other way out, with the package's own
    commands per CUDA where `[[gpu_build]]` has them (vLLM's +cu118 release assets).
    A torch in a `lib64/` site-packages whose nvidia-* wheels pip put under `lib/` (RHEL-family
    Pythons, some venvs) is told to link lib's nvidia directory beside torch.

    ## Why it matters
    The loader searches LD_LIBRARY_PATH, the binary's RUNPATH and ld.so.cache, never
    site-packages: a library that a wheel ships but the failing binary does not find through its
    RUNPATH, or one no installed package ships, stops the import or the program at once.

    ## Example
    `ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory`:
    nvidia-cudnn-cu12 ships it (site-packages/nvidia/cudnn/lib).

    ## Fix
    Install the package that ships the library (`pip install nvidia-cudnn-cu12==9.*`, at the
    version the node's torch pins when known; `apt install libgl1`; conda's package at the
    release whose build ships that SONAME, `conda install -c conda-forge libffi=3.3` for
    libffi.so.7), or, when it is installed, put its directory on `LD_LIBRARY_PATH` (a program
    under /usr/local from a source install: `sudo ldconfig` first). A sub-library
    (libcudnn_cnn_infer.so.8) is shipped by its family's package; torch's own libraries
    (libc10.so) load with `import torch`.

    ## References
    - bminor/glibc elf/dl-load.c, elf/dl-catch.c (the loader's messages)
    - matrices/cuda/sonames.toml (who ships each SONAME, with sources)
    """
    gpu = facts.report.gpu
    cached = gpu.data.libcuda_cached if gpu.is_ok and gpu.data is not None else None
    if cached is None or any(p.endswith("libcuda.so.1") for p in cached):
        raise Skip("only a log line states a library the loader could not open", "log.loader")
    stub = next((p for p in cached if "/stubs/" in p), None)
    said = (
        f"only the CUDA toolkit's stub {stub}, which links but fails every call (error 34)"
        if stub
        else "no libcuda"
    )
    return [
        Hit(
            f"the loader's cache (ldconfig -p) has no libcuda.so.1, {said}: every CUDA program "
            "opens libcuda.so.1, the NVIDIA driver's user-space library, and fails without it",
            evidence={"libcuda_cached": list(cached)},
            fix=fix(
                "Install the NVIDIA driver's user-space libraries (they bring libcuda.so.1) and "
                "run sudo ldconfig; in a container, start it with the GPUs (--gpus all): the "
                "NVIDIA runtime mounts the host's libcuda",
                "manual",
                manual(
                    "ls -l /usr/lib/x86_64-linux-gnu/libcuda.so*  (the driver's copy; "
                    "then sudo ldconfig so the cache lists it)"
                ),
                manual(
                    "Ubuntu: sudo apt install libnvidia-compute-<branch>  (the branch of the "
                    "loaded module: cat /proc/driver/nvidia/version), or reinstall the driver"
                ),
                manual("in a container: docker run --gpus all ...  (NVIDIA Container Toolkit)"),
                manual(
                    "WSL 2: export LD_LIBRARY_PATH=/usr/lib/wsl/lib:$LD_LIBRARY_PATH (the "
                    "Windows driver's libcuda is there)"
                ),
                manual(
                    "never put the toolkit's lib64/stubs directory on LD_LIBRARY_PATH at run "
                    "time: its libcuda.so is for linking only"
                ),
            ),
        )
    ]


# NVIDIA's CUDA libraries whose SONAME major is the component's major version, which is the
# wheel's version (cudnn-feedstock: soname = version.split('.')[0]; torch's METADATA pins:
# pip version = component version). Not the tools (libnvToolsExt.so.1 ships in nvtx 12.x).
_VERSIONED_LIKE_SONAME = frozenset({"cudnn", "cuda-runtime", "cuda-math", "cuda-compiler", "nccl"})

_PURELIB = "$(python -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])')"


def _soname_actions(
    entry: Soname,
    soname: str,
    site: str | None,
    major: int | None,
    pins: Mapping[str, SpecifierSet] | None = None,
    toolkit: str = "/usr/local/cuda",
) -> tuple[list[str], list[Action]]:
    words: list[str] = []
    actions: list[Action] = []
    minor = re.match(r"libpython3\.([0-9]+)", soname)
    wheels = _wheels_to_offer(package_names(entry.pip, major), major)
    for index, wheel in enumerate(wheels):
        spec = wheel
        so_major = re.search(r"\.so\.([0-9]+)", soname)
        if (
            so_major
            and int(so_major.group(1)) >= 1
            and wheel.startswith("nvidia-")
            and entry.kind in _VERSIONED_LIKE_SONAME
        ):
            spec = f"{wheel}=={so_major.group(1)}.*"  # the release line the SONAME names
        pinned = (pins or {}).get(wheel)
        if pinned is not None and str(pinned):  # the version the node's torch pins
            spec = f"{wheel}{pinned}"
        per_cuda = _CUDA_SUFFIX.search(wheel) if len(wheels) > 1 else None
        words.append(f"pip install {spec}" + (f" (CUDA {per_cuda.group(1)})" if per_cuda else ""))
        actions.append(pip_install(spec))
        if entry.pip_dir and index == 0:
            folder = (site or _PURELIB) + "/" + entry.pip_dir.removeprefix("site-packages/")
            actions.append(
                manual(f"if {wheel} is installed: export LD_LIBRARY_PATH={folder}:$LD_LIBRARY_PATH")
            )
    for field, how in ((entry.apt, "apt"), (entry.dnf, "dnf"), (entry.conda, "conda")):
        found = package_names(field)
        if not found:
            continue
        name = found[0].replace("3.X", f"3.{minor.group(1)}") if minor else found[0]
        # the spellings threads use: `apt install` and `apt-get install` (`-y` in a Dockerfile),
        # `conda install` with and without conda-forge's channel
        if how == "apt":
            words.append(apt_words(name))
            actions.append(apt_command(name))
        elif how == "conda":
            major_of = re.search(r"\.so\.([0-9]+)", soname)
            if major_of and int(major_of.group(1)) >= 1 and entry.kind in _VERSIONED_LIKE_SONAME:
                name = f"{name}={major_of.group(1)}"  # conda's package follows the SONAME's major
            elif entry.conda_release:  # the release whose build ships this SONAME (libffi=3.3)
                name = f"{name}={entry.conda_release}"
            words.append(conda_words(name))
            actions.append(manual(f"conda install -c conda-forge {name}"))
            if entry.kind in _NVIDIA_CHANNEL_KINDS and (entry.cuda_major or 0) >= 12:
                # NVIDIA's own conda channel carries CUDA 12's component packages under the
                # same names (CUDA installation guide, Conda Installation: conda install cuda
                # -c nvidia; a release's label: -c nvidia/label/cuda-12.4.0)
                words.append(f"conda install -c nvidia {name}")
                actions.append(manual(f"conda install -c nvidia {name}  (NVIDIA's channel)"))
        else:
            words.append(f"sudo dnf install {name}")
            actions.append(manual(f"sudo dnf install -y {name}"))
    if entry.kind == "python" and minor is not None:
        words_, actions_ = _libpython_actions(f"3.{minor.group(1)}")
        words += words_
        actions += actions_
    if entry.apt_nvidia:
        name = entry.apt_nvidia.split(" (")[0]
        minor_note = "; X = the CUDA minor" if "-X" in name else ""
        words.append(f"apt-get install {name} (NVIDIA's CUDA repository{minor_note})")
        actions.append(manual(f"sudo apt-get install -y {name}  (NVIDIA's CUDA repository)"))
    if entry.kind in _TOOLKIT_KINDS:
        # NVIDIA's installation guide, post-installation actions: the toolkit's lib64 on
        # LD_LIBRARY_PATH (CUPTI: extras/CUPTI/lib64, the entry's toolkit_dir); a conda
        # environment's CUDA packages install into $CONDA_PREFIX/lib
        folder = f"{toolkit}/{entry.toolkit_dir or 'lib64'}"
        words.append(
            "if the CUDA toolkit or a conda package already has it: export "
            f"LD_LIBRARY_PATH={folder}:$LD_LIBRARY_PATH (or "
            "$CONDA_PREFIX/lib in a conda environment)"
        )
        actions.append(
            manual(f"if the toolkit has it: export LD_LIBRARY_PATH={folder}:$LD_LIBRARY_PATH")
        )
        # or register the folder with the loader's cache for every process (NVIDIA's
        # installation guide, post-installation actions: ldconfig)
        actions.append(
            manual(
                f"or for every process: echo {folder} | sudo tee "
                "/etc/ld.so.conf.d/cuda.conf && sudo ldconfig"
            )
        )
        if entry.conda:
            actions.append(
                manual(
                    "if the conda package has it: export "
                    "LD_LIBRARY_PATH=$CONDA_PREFIX/lib:$LD_LIBRARY_PATH"
                )
            )
    return words, actions


_CUDA_SUFFIX = lazy(r"-cu([0-9]+)$")
# the CUDA toolkit's own components, which NVIDIA's conda channel publishes (not cuDNN or NCCL)
_NVIDIA_CHANNEL_KINDS = frozenset({"cuda-runtime", "cuda-math", "cuda-compiler", "cuda-tools"})


def _wheels_to_offer(wheels: list[str], major: int | None) -> list[str]:
    """The wheel to install: the one for the node's CUDA major when it is known; when it is not
    and the SONAME ships in a wheel per CUDA major (libcudnn.so.8: nvidia-cudnn-cu11 and -cu12),
    every one of them, the newest CUDA first (each is the right one on its own CUDA)."""
    if not wheels:
        return []
    majors = [_CUDA_SUFFIX.search(w) for w in wheels]
    if major is not None or len(wheels) == 1 or not all(majors):
        return wheels[:1]
    return sorted(wheels, key=lambda w: -int(_CUDA_SUFFIX.search(w).group(1)))  # type: ignore[union-attr]


def _libpython_actions(version: str) -> tuple[list[str], list[Action]]:
    """libpython3.X.so.1.0 exists only for a Python built with --enable-shared (CPython's
    configure; pyenv's wiki: PYTHON_CONFIGURE_OPTS="--enable-shared"); Debian's libpython3.X
    (and -dev) packages ship it for the system Python; a shared Python installed elsewhere
    (/usr/local, a conda environment) has it in its LIBDIR, which the loader may not search."""
    libdir = "$(python3 -c 'import sysconfig; print(sysconfig.get_config_var(\"LIBDIR\"))')"
    words = [
        f"sudo apt-get install libpython{version}-dev (the system Python's)",
        f"a Python built from source or by pyenv needs --enable-shared: env "
        f'PYTHON_CONFIGURE_OPTS="--enable-shared" pyenv install {version} (./configure '
        "--enable-shared)",
        f"a shared Python installed elsewhere: export LD_LIBRARY_PATH={libdir}:$LD_LIBRARY_PATH",
    ]
    actions = [
        apt_command(f"libpython{version}-dev"),
        manual(f'env PYTHON_CONFIGURE_OPTS="--enable-shared" pyenv install --force {version}'),
        manual(f"export LD_LIBRARY_PATH={libdir}:$LD_LIBRARY_PATH"),
    ]
    return words, actions


# libraries of the CUDA toolkit (and cuDNN / NCCL), which a toolkit install puts in
# /usr/local/cuda/lib64 and conda's packages in $CONDA_PREFIX/lib
_TOOLKIT_KINDS = frozenset(
    {"cuda-runtime", "cuda-math", "cuda-compiler", "cuda-tools", "cudnn", "nccl"}
)


# the CUDA toolkit's libraries (and cuDNN, NCCL): a toolkit install puts them in
# /usr/local/cuda/lib64, where threads point LD_LIBRARY_PATH
_NVIDIA_SONAME = lazy(r"lib(?:cu|npp|nvrtc|nvJitLink|nvToolsExt|nvblas|nccl)[A-Za-z0-9_]*\.so")


def _unknown_soname_fix(
    soname: str, toolkit_dir: str | None = None, needer: str | None = None
) -> Fix:
    """A library the matrix does not know: what threads run when it is installed but not found
    (its directory on LD_LIBRARY_PATH, or in ld.so.conf.d and ldconfig), then how to find the
    package that ships it. ``toolkit_dir``: the CUDA toolkit's directory that holds a library
    of NVIDIA's (``_toolkit_folder``). ``needer``: the program that needs it; one under
    /usr/local was put there by a source install (make install), whose libraries land in
    /usr/local/lib, a directory ld.so.conf lists but the loader's cache holds only after
    ldconfig runs (duo_unix#12, openjpeg#219: sudo ldconfig fixed it)."""
    where = (
        toolkit_dir or "/usr/local/cuda/lib64"
        if _NVIDIA_SONAME.match(soname)
        else "<its directory>"
    )
    stem = soname.split(".so", maxsplit=1)[0]
    debian = debian_package(soname)
    likely = (
        f"; Debian's and Ubuntu's package for it is most likely {debian} (the library's name "
        f"and SONAME version): {apt_words(debian)}"
        if debian
        else ""
    )
    local = bool(needer and needer.startswith("/usr/local/") and where == "<its directory>")
    first = (
        f"{needer} was installed under /usr/local (a source build's make install): its "
        f"libraries are in /usr/local/lib, which the loader's cache lists only after sudo "
        f"ldconfig runs (ls /usr/local/lib/{soname}*); otherwise: "
        if local
        else ""
    )
    return fix(
        f"{first}Put the directory that holds {soname} on the loader's path: export "
        f"LD_LIBRARY_PATH={where}:$LD_LIBRARY_PATH (find / -name '{soname}*' shows where it "
        "is), or add that directory to /etc/ld.so.conf.d/ and run sudo ldconfig; if it is "
        f"nowhere, install the package that ships {soname} (apt-file search {soname}){likely}",
        "manual",
        *([manual("sudo ldconfig  (after make install into /usr/local)")] if local else []),
        manual(f"export LD_LIBRARY_PATH={where}:$LD_LIBRARY_PATH"),
        manual(f"find / -name '{soname}*' 2>/dev/null  (installed but not on the path?)"),
        manual(f"echo {where} | sudo tee /etc/ld.so.conf.d/{stem}.conf && sudo ldconfig"),
        manual(f"apt-file search {soname}  (Debian/Ubuntu; RHEL: dnf provides '*/{soname}')"),
        *([apt_command(debian)] if debian else []),
    )


# a CUDA toolkit's root as an LD_LIBRARY_PATH entry names it: /usr/local/cuda-9.0/lib64,
# /opt/cuda/targets/x86_64-linux/lib (NVIDIA's installation guide: <root>/lib64 on the path)
_TOOLKIT_ROOT = lazy(r"^(?P<root>/[^:]*?cuda[^:/]*)/(?:lib64|lib|targets/[^/:]+/lib)/?$")


def _toolkit_folder(matrix: Matrix, soname: str, line: LogLine) -> tuple[str, str]:
    """(root, directory) of the CUDA toolkit that holds ``soname``: the toolkit root the log's
    LD_LIBRARY_PATH names (TensorFlow prints it: /usr/local/cuda-9.0), else /usr/local/cuda,
    and under it the table's ``toolkit_dir`` of the library's entries (any release of that
    library: CUPTI is in extras/CUPTI/lib64 in every toolkit), else lib64."""
    root = "/usr/local/cuda"
    for entry in (line.stated.get("ld_library_path") or "").split(":"):
        found = _TOOLKIT_ROOT.match(entry)
        if found is not None:
            root = found.group("root")
            break
    stem = soname.split(".so", maxsplit=1)[0]
    subdirs = [
        e.toolkit_dir
        for e in matrix.sonames
        if e.toolkit_dir and e.name.split(".so", maxsplit=1)[0] == stem
    ]
    return root, f"{root}/{subdirs[0] if subdirs else 'lib64'}"


_SONAME_PARTS = lazy(r"^lib(?P<name>[A-Za-z0-9_+.-]+?)\.so(?:\.(?P<version>[0-9][0-9.]*))?$")


def debian_package(soname: str) -> str | None:
    """The Debian / Ubuntu package a SONAME is shipped in by Debian's naming rule for shared
    libraries (Debian Policy 8.1: the library's name followed by its SONAME version,
    libavutil.so.58 -> libavutil58, a '-' between two digits: libfoo2.so.1 -> libfoo2-1,
    lowercase; 8.4: the unversioned development link libfoo.so ships in libfoo-dev). None for
    NVIDIA's CUDA libraries (their packages carry the CUDA release instead) and a name the rule
    cannot spell. A likely name, printed with apt-file search beside it."""
    found = _SONAME_PARTS.match(soname)
    if found is None or _NVIDIA_SONAME.match(soname):
        return None
    name = found.group("name").lower().replace("_", "-")
    version = found.group("version")
    if not version:
        return f"lib{name}-dev"
    joiner = "-" if name[-1].isdigit() else ""
    return f"lib{name}{joiner}{version}"


@from_log("SYS150")
def shared_library_not_found_in_log(facts: Facts, line: LogLine) -> Hit:
    """The library the line names; where a listing in the log shows it installed, its
    directory leads the fix (located_library.py)."""
    hit = _shared_library_not_found(facts, line)
    soname = line.stated.get("soname") or ""
    return lead_with_located(hit, line, soname)


def shared_library_missing(facts: Facts, line: LogLine, soname: str) -> Hit:
    """SYS150's reading of ``soname`` as the library the loader could not open, for a line
    whose own signature is another's (cuDNN 8's `Error: libcublasLt.so.11: cannot open ...`)."""
    stated = {**line.stated, "soname": soname}
    return _shared_library_not_found(facts, dataclasses.replace(line, stated=stated))


def _shared_library_not_found(facts: Facts, line: LogLine) -> Hit:
    soname = line.stated.get("soname")
    gl_library = line.stated.get("gl_library")
    if soname is None and gl_library:  # PyOpenGL loads 'OSMesa', 'GL', 'glut' as lib<name>.so
        soname = f"lib{gl_library}.so"
    preload = line.stated.get("preload_lib")
    if soname is None and preload:  # torch's `libcublas.so.*[0-9] not found in the system path`
        return torch_preload_missing(facts, line, preload)
    cpm = line.stated.get("cpm_library")
    if soname is None and cpm:  # cpm_kernels' `Library cublasLt is not initialized`
        return cpm_kernels_missing(facts, line, cpm)
    if soname is None and _PYOPENGL_NO_GL.search(line.text):
        return _pyopengl_platform_unloaded(line)
    if soname is None:
        found = _SONAME.search(line.text)
        if found is None:
            raise NotStated(f"line {line.line} does not name the library", "libraries.missing")
        soname = found.group(1)
    needer = line.stated.get("required_by")
    by = f" needed by {needer}" if needer else ""
    if _MUSL.search(line.text):
        return _musl_missing(soname, needer, line)
    own = _OWN_FILE.search(line.text)
    if own is not None and not needer:
        return _package_file_missing(facts, own.group("path"), own.group("top"), line)
    site_match = _SITE.search(line.text)
    site = site_match.group("site") if site_match else None
    major = _torch_cuda_major(facts)
    entries, via = _lookup(facts.matrix, soname)
    entries = _pick(entries, major)
    optional = "Could not load dynamic library" in line.text  # a probe that goes on without it
    severity = Severity.WARNING if optional else None
    if _TORCH_LIB.match(soname) and all(e.kind == "torch" for e in entries):
        return _torch_library(soname, by, needer, line, severity)
    toolkit, folder = _toolkit_folder(facts.matrix, soname, line)
    if not entries:
        unknown = _unknown_soname_fix(soname, folder, needer)
        old_cuda = _soname_cuda(soname, entries)
        if old_cuda is not None:  # a CUDA runtime of a release no wheel ships (10.x)
            said_old, action_old = _old_cuda_build(soname, old_cuda[1], major)
            unknown = fix(
                f"{said_old[0].upper()}{said_old[1:]}; otherwise: {unknown.summary}",
                "manual",
                action_old,
                *unknown.actions,
            )
        return Hit(
            f"the loader cannot find {soname}{by} (line {line.line}); the matrix does not know "
            "which package ships it",
            evidence={"line": line.line, "soname": soname, "required_by": needer},
            fix=unknown,
            severity=severity,
        )
    words: list[str] = []
    actions: list[Action] = []
    for entry in entries:
        more, acts = _soname_actions(entry, soname, site, major, _torch_pins(facts), toolkit)
        if len(entries) > 1 and entry.cuda_major is not None:
            more = [f"{w} (CUDA {entry.cuda_major})" for w in more]
        words += more
        actions += acts
    kind = entries[0].kind
    if kind == "driver" and "nvidia-container-cli" in line.text:
        return _container_runtime_without_driver(soname, line, _on_wsl(facts, line))
    if kind == "driver":  # the driver's user-space library: never a package of the job's own
        words = [
            "the NVIDIA driver on the host (" + " or ".join(words) + ")"
            if words
            else "the NVIDIA driver",
            "in a container, start it with the host's GPUs: docker run --gpus all (the "
            "nvidia-container-toolkit on the host; docker compose: a deploy.resources."
            "reservations.devices entry with driver: nvidia and capabilities: [gpu]; Docker "
            "before 19.03: docker run --runtime=nvidia, or nvidia-docker run)",
        ]
        actions.append(manual("docker run --gpus all ...  (or the CDI device nvidia.com/gpu=all)"))
        # Docker 19.03 added --gpus; before it nvidia-docker2 registered the `nvidia` runtime
        # and nvidia-docker 1.0 wrapped `docker run` (tensorflow#10642, tensorflow#10073)
        actions.append(
            manual(
                "Docker before 19.03: docker run --runtime=nvidia ...  (nvidia-docker2), or "
                "nvidia-docker run ...  (nvidia-docker 1.0)"
            )
        )
        # NVIDIA Container Toolkit's install guide: the package, then nvidia-ctk configures
        # Docker's runtime (docker compose's GPU support: deploy.resources.reservations.devices)
        actions.append(
            manual(
                "on the host: sudo apt-get install -y nvidia-container-toolkit && sudo nvidia-ctk "
                "runtime configure --runtime=docker && sudo systemctl restart docker"
            )
        )
        actions.append(
            manual(
                "docker compose: deploy: {resources: {reservations: {devices: [{driver: nvidia, "
                "count: all, capabilities: [gpu]}]}}}"
            )
        )
        if soname.startswith("libcuda.so"):
            # WSL 2 maps the Windows driver's libraries to /usr/lib/wsl/lib (microsoft/WSL#8587,
            # facebookresearch/nougat#105): the loader must be told
            wsl = manual(
                "WSL 2: export LD_LIBRARY_PATH=/usr/lib/wsl/lib:$LD_LIBRARY_PATH  (the driver's "
                "libcuda is there; or sudo ldconfig with it in /etc/ld.so.conf.d/)"
            )
            if _on_wsl(facts, line):  # the log's platform: the Windows driver's copy first
                actions = [wsl, *actions]
                words.insert(0, "on WSL 2 (as the log says) /usr/lib/wsl/lib on LD_LIBRARY_PATH")
            else:
                actions.append(wsl)
                words.append("on WSL 2 /usr/lib/wsl/lib on LD_LIBRARY_PATH")
    notes = " ".join(dict.fromkeys(e.note for e in entries if e.note))
    if via is not None and soname.endswith(".so"):
        notes = (
            f"{soname} is the unversioned development name of {via} (a program that opens it "
            "needs the -dev link, or the versioned library's directory on the path). " + notes
        )
    elif via is not None:
        notes = f"{soname} ships with {via}. " + notes
    loader = _loading_package(facts, line, entries)
    if loader is not None:  # the package whose extension asked for it: its build for this CUDA
        by = f" needed by {loader}'s extension"
        index = _extension_index(facts, loader)
        if index is not None:  # its own wheel index for the node's torch and CUDA (PyG's)
            words.insert(0, f"{loader}'s wheel for the installed torch and CUDA: {index}")
            actions.insert(0, manual(index))
        words.append(
            f"{loader}'s build for the CUDA the node has (it was built for the CUDA major of "
            f"{soname}): pip install --upgrade --force-reinstall --no-cache-dir {loader}"
        )
        actions.append(
            manual(
                f"pip install --upgrade --force-reinstall --no-cache-dir {loader}  ({loader} loads "
                f"{soname}: a release built for the node's CUDA)"
            )
        )
    built_for = _soname_cuda(soname, entries)
    if loader is None and built_for is not None and (major is None or major != built_for[0]):
        # no frame names the importer: a package built for the SONAME's CUDA on a node of
        # another CUDA is the cause threads establish (LLMDet#32: libcudart.so.10.1 on CUDA
        # 12.1, the mmcv build was wrong); the importer's build for the node's CUDA is the fix
        said_old, action_old = _old_cuda_build(soname, built_for[1], major)
        if major is not None:
            words.insert(0, said_old)
            actions.insert(0, action_old)
        else:
            words.append(said_old)
            actions.append(action_old)
    through_torch = _torch_reinstall(facts, line, entries, soname, major)
    if through_torch is not None:  # torch's CUDA build brings the library with its wheels
        said_torch, torch_action, torch_first = through_torch
        if torch_first:
            words.insert(0, said_torch)
            actions.insert(0, torch_action)
        else:
            words.append(said_torch)
            actions.append(torch_action)
    split = _lib64_split(line, entries, soname)
    if split is not None:  # torch under lib64/, the nvidia-* wheels under lib/: link them
        said_split, split_actions = split
        words.insert(0, said_split)
        actions = [*split_actions, *actions]
    runtime = _runtime_commands(facts, line, entries)
    if runtime is not None:  # the GPU runtime that opens it: its own way to the CUDA libraries
        said_runtime, runtime_actions = runtime
        words.insert(0, said_runtime)
        actions = [*runtime_actions, *actions]
    jetson = _jetson_container(line, entries)
    if jetson is not None:  # L4T: JetPack's CUDA comes from the host through the nvidia runtime
        said_jetson, jetson_actions = jetson
        words.insert(0, said_jetson)
        actions = [*jetson_actions, *actions]
    for_cuda = f" for torch's CUDA {major}" if major is not None and entries[0].cuda_major else ""
    # the table's notes are advice about the fix (another package, the headless wheel, the
    # container's GPUs): they go with it; the message keeps what the name itself says
    advice = " ".join(dict.fromkeys(e.note for e in entries if e.note))
    said = notes.replace(advice, "").strip() if advice else notes
    return Hit(
        f"the loader cannot find {soname}{by} (line {line.line}), a {kind} library{for_cuda}: "
        f"the package that ships it is not installed, or not where the loader looks. {said}".strip(),
        evidence={
            "line": line.line,
            "soname": soname,
            "required_by": needer,
            "packages": [
                {
                    "pip": e.pip,
                    "apt": e.apt,
                    "dnf": e.dnf,
                    "conda": e.conda,
                    "cuda_major": e.cuda_major,
                }
                for e in entries
            ],
        },
        fix=fix(
            f"Install what ships {soname}: "
            + " or ".join(words or ["see the matrix entry"])
            + (f". {advice}" if advice else ""),
            "manual",
            *actions,
        ),
        severity=severity,
    )


_JETSON_KINDS = frozenset({"cuda-math", "cuda-runtime", "cuda-compiler", "cuda-tools", "cudnn"})
_JETSON_KINDS_MORE = frozenset({"tensorrt"})


def _jetson_container(
    line: LogLine, entries: tuple[Soname, ...]
) -> tuple[str, tuple[Action, ...]] | None:
    """On a Jetson (the log names L4T, JetPack or a Jetson module), CUDA, cuDNN and TensorRT
    are JetPack's, installed on the host; NVIDIA's container runtime mounts them into L4T
    containers (its host-files-for-container.d CSV lists), and `docker build` uses that runtime
    only when it is Docker's default. The pip packages of the CUDA libraries are x86_64/SBSA
    builds that do not serve a Jetson. dusty-nv/jetson-containers#121 (libcurand.so.10 while
    building l4t-pytorch: the maintainer's fix, the default runtime), #194 (the CSV lists)."""
    platform = line.stated.get("jetson_platform")
    if not platform:
        return None
    if not all(e.kind in _JETSON_KINDS | _JETSON_KINDS_MORE for e in entries):
        return None
    said = (
        f"on a Jetson ({platform}, as the log says) JetPack's CUDA libraries on the host, which "
        "NVIDIA's container runtime mounts into the container: docker run --runtime nvidia, "
        'and for docker build "default-runtime": "nvidia" in /etc/docker/daemon.json '
        "(then sudo systemctl restart docker); outside a container: sudo apt install "
        "nvidia-jetpack"
    )
    return said, (
        manual(
            'sudo nano /etc/docker/daemon.json  (add "default-runtime": "nvidia" beside the '
            '"runtimes" entry of nvidia), then sudo systemctl restart docker'
        ),
        manual("docker run --runtime nvidia ...  (L4T images get CUDA from the host)"),
        manual("ls /etc/nvidia-container-runtime/host-files-for-container.d/  (cuda.csv etc.)"),
        manual("without a container: sudo apt install nvidia-jetpack"),
    )


# NVIDIA names the CUDA runtime and NVRTC after the CUDA release (libcudart.so.10.1,
# libcudart.so.11.0, libnvrtc.so.11.2; CUDA 12 on: the major only)
_RUNTIME_SONAME = lazy(r"^lib(?:cudart|nvrtc)\.so\.(?P<cuda>[0-9]+(?:\.[0-9]+)?)$")


def _soname_cuda(soname: str, entries: tuple[Soname, ...]) -> tuple[int, str] | None:
    """(major, release as the SONAME or the table names it) of the CUDA a library belongs to:
    the table's `cuda_major` when its entries agree, else the runtime's own SONAME version."""
    majors = {e.cuda_major for e in entries}
    if len(majors) == 1 and None not in majors:
        (only,) = majors
        assert only is not None
        return only, str(only)
    found = _RUNTIME_SONAME.match(soname)
    if found is None:
        return None
    return int(found.group("cuda").split(".")[0]), found.group("cuda")


def _old_cuda_build(soname: str, cuda: str, major: int | None) -> tuple[str, Action]:
    """The importer built for the SONAME's CUDA on a node of another CUDA: its build for the
    node's CUDA, not the old runtime, is what threads install."""
    node = (
        f"torch's CUDA here is {major}"
        if major is not None
        else "when the node's CUDA is another (nvidia-smi; python -c 'import torch; "
        "print(torch.version.cuda)')"
    )
    said = (
        f"{node}, the package that loads {soname} is a build for CUDA {cuda}: reinstall that "
        "package (the traceback's last frame above the line names it) in its build for the "
        "node's CUDA, pip install --force-reinstall --no-cache-dir <package> from its index for "
        "that CUDA, rather than adding CUDA " + cuda + "'s runtime"
    )
    return said, manual(
        f"pip install --force-reinstall --no-cache-dir <the package importing {soname}>  "
        f"(its build for the node's CUDA, not CUDA {cuda})"
    )


_TORCH_FRAME = lazy(r"[/\\](?:site|dist)-packages[/\\]torch[/\\]")


def _torch_reinstall(
    facts: Facts,
    line: LogLine,
    entries: tuple[Soname, ...],
    soname: str,
    major: int | None,
) -> tuple[str, Action, bool] | None:
    """torch's CUDA builds bring the CUDA libraries they load (the nvidia-* wheels they pin, or
    copies bundled in torch/lib before 2.1): threads end a missing libcudnn / libcublas by
    reinstalling torch from the index of its CUDA variant (pytorch/pytorch#104259: uninstall
    torch and the nvidia-* wheels, pip install torch --index-url .../cu117; marella/chatdocs#8:
    pip3 install torch --index-url .../cu116). First when torch itself fails to load it (its
    frame above the line); otherwise another way, with `import torch` first. The variant is the
    node's torch's; else the newest torch release whose pins name the wheel for the SONAME's
    major (matrices/torch/torch.toml); None when neither says (no torch wheel brings it)."""
    kinds = {e.kind for e in entries}
    if not kinds & _TOOLKIT_KINDS - {"cuda-tools"}:
        return None
    frame = line.stated.get("importer_file") or ""
    from_torch = bool(_TORCH_FRAME.search(frame) or _TORCH_FRAME.search(line.text))
    if line.stated.get("ops_loader"):  # torch.ops.load_library for another package's ops
        from_torch = False
    version = None
    variant = None
    try:
        version = facts.known_version("torch")
        variant = facts.torch_variant() if version is not None else None
    except Skip:
        pass
    if variant is not None and not variant.startswith("cu"):
        variant = None
    pin = f"torch=={version.public}" if version is not None else "torch"
    if variant is None:
        try:
            ceiling: Version | None = facts.max_cuda()[0]
        except Skip:
            ceiling = None
        found = _torch_release_shipping(facts.matrix, entries, soname, major, ceiling)
        if found is not None:
            release, variant = found
            if version is None and not from_torch:
                pin = f"torch=={release}"
    if variant is None:  # no torch build the node or the matrix knows brings it (cuDNN 7)
        return None
    url = facts.matrix.torch_index_url(variant)
    if url is None:
        return None
    command = f"pip install --force-reinstall --no-cache-dir {pin} --index-url {url}"
    # the form of PyTorch's install selector (pytorch.org/get-started/locally: `pip3 install
    # torch torchvision torchaudio --index-url https://download.pytorch.org/whl/cu121`), which
    # threads run (finic-ai/rag-stack#44, marella/chatdocs#8)
    selector = f"pip install torch torchvision torchaudio --index-url {url}"
    if from_torch:
        said = (
            f"torch's own CUDA libraries are incomplete: reinstall torch from its CUDA index, "
            f"which brings {soname} with the nvidia-* wheels it pins: {command} (first pip "
            f"uninstall torch and every nvidia-* wheel when files were removed by hand; "
            f"PyTorch's own form: {selector})"
        )
        return said, manual(command), True
    newest = (
        f" ({pin.split('==')[1]} is the newest torch whose wheels bring {soname})"
        if version is None and "==" in pin
        else ""
    )
    said = (
        f"take it from torch's CUDA build: {command}{newest} (PyTorch's own form: {selector}), "
        "and import torch before the package that needs it (torch loads its CUDA libraries "
        "into the process)"
    )
    return said, manual(f"{command}  (then import torch first)"), False


def _variant_cuda(variant: str) -> Version | None:
    """The CUDA release a torch variant is built with: cu121 -> 12.1, cu118 -> 11.8."""
    digits = variant[2:] if variant.startswith("cu") else ""
    if len(digits) < 2 or not digits.isdigit():
        return None
    return Version(f"{digits[:-1]}.{digits[-1]}")


def _under(variant: str, ceiling: Version | None) -> bool:
    """Whether the driver runs a variant: its CUDA at most the newest the driver supports (the
    figure nvidia-smi prints, `CUDA Version: 12.2`); True when the driver's is not known."""
    cuda = _variant_cuda(variant)
    return ceiling is None or cuda is None or cuda <= ceiling


def _torch_release_shipping(
    matrix: Matrix,
    entries: tuple[Soname, ...],
    soname: str,
    major: int | None,
    ceiling: Version | None = None,
) -> tuple[str, str] | None:
    """(release, variant) of the newest torch whose PyPI pins name a wheel that ships
    ``soname`` (its major as the pin's major for cuDNN-like libraries), for ``major`` when
    known, and with a variant the driver runs when its newest CUDA (``ceiling``) is known (a
    driver of CUDA 12.2 gets a cu121 build, not the newest cu13x: threads install the build of
    the CUDA nvidia-smi shows); None when no release in the matrix pins one."""
    so_major = re.search(r"\.so\.([0-9]+)", soname)
    wheels = {w for e in entries for w in package_names(e.pip, major)}
    for release in sorted(matrix.torch_releases, key=lambda r: r.version, reverse=True):
        for wheel, spec in release.pins.items():
            if wheel not in wheels:
                continue
            cuda = _CUDA_SUFFIX.search(wheel)
            if cuda is None or (major is not None and int(cuda.group(1)) != major):
                continue
            if ceiling is not None and int(cuda.group(1)) > ceiling.major:
                continue
            if (
                so_major is not None
                and any(e.kind in _VERSIONED_LIKE_SONAME for e in entries)
                and not any(s.version.split(".")[0] == so_major.group(1) for s in spec)
            ):
                continue
            runnable = [
                v
                for v in release.variants
                if v.startswith(f"cu{cuda.group(1)}") and _under(v, ceiling)
            ]
            variant = runnable[0] if runnable else None
            if ceiling is not None and runnable:  # the newest the driver runs
                variant = max(runnable, key=lambda v: _variant_cuda(v) or Version("0"))
            default = release.pypi_default
            if default and default.startswith(f"cu{cuda.group(1)}") and _under(default, ceiling):
                variant = default
            if variant is not None:
                return str(release.version), variant
        crossed = _other_variant_shipping(release, entries, wheels, major, ceiling)
        if crossed is not None:
            return str(release.version), crossed
    return None


_LIB64_SITE = lazy(
    r"^(?P<prefix>.*?)/?lib64/(?P<python>python3\.[0-9]+)/(?P<site>site|dist)-packages$"
)


def _lib64_split(
    line: LogLine, entries: tuple[Soname, ...], soname: str
) -> tuple[str, list[Action]] | None:
    """torch in a lib64/ site-packages (``lib64_site``: RHEL-family Pythons and some venvs
    keep platform wheels there) while pip put the nvidia-* wheels, pure-Python by their tags,
    in lib/: torch's RUNPATH ($ORIGIN/../../nvidia/<lib>/lib) looks beside itself and finds
    nothing (pytorch#165812: 'torch install to venv/lib64 but nvidia install to venv/lib';
    pytorch#104259: a symlink of lib's nvidia directory into lib64 fixed it). None when the
    log names no such site-packages or no nvidia-* wheel ships the library."""
    where = line.stated.get("lib64_site")
    found = _LIB64_SITE.match(where) if where else None
    if found is None or not any("nvidia-" in (e.pip or "") for e in entries):
        return None
    prefix = found.group("prefix")
    lib = f"{prefix}/lib/{found.group('python')}/{found.group('site')}-packages/nvidia"
    lib64 = f"{where}/nvidia"
    command = f"ln -s $(realpath {lib}) {lib64}"
    said = (
        f"torch is installed under {where} but the nvidia-* wheels that ship {soname} go to "
        f"lib/ ({lib}), where torch's RUNPATH does not look: link that directory beside "
        f"torch, {command} (or put its */lib directories on LD_LIBRARY_PATH)"
    )
    return said, [manual(f"{command}  (torch finds the nvidia-* wheels beside itself)")]


def _other_variant_shipping(
    release: TorchRelease,
    entries: tuple[Soname, ...],
    wheels: set[str],
    major: int | None,
    ceiling: Version | None = None,
) -> str | None:
    """A variant on torch's own index of another CUDA major than the release's PyPI pins
    (2.7.1's cu118 beside its cu126 default): its wheels depend on the same nvidia-* families
    with that major's suffix, so a library whose SONAME follows the CUDA major (libcudart.so.11.0,
    libcublas.so.11) comes with it (pytorch/pytorch .github/scripts/
    generate_binary_build_matrix.py, PYTORCH_EXTRA_INSTALL_REQUIREMENTS["11.8"]:
    nvidia-cuda-runtime-cu11==11.8.89, nvidia-cublas-cu11, ...). cuDNN's major is its own
    (the variant's pin is not in the matrix): not read this way. The newest such variant, None
    when the release has none."""
    if any(e.kind == "cudnn" for e in entries):
        return None
    families = {_CUDA_SUFFIX.sub("", w) for w in release.pins}
    for wheel in sorted(wheels):
        cuda = _CUDA_SUFFIX.search(wheel)
        if cuda is None or (major is not None and int(cuda.group(1)) != major):
            continue
        if _CUDA_SUFFIX.sub("", wheel) not in families or wheel in release.pins:
            continue
        variants = [
            v for v in release.variants if v.startswith(f"cu{cuda.group(1)}") and _under(v, ceiling)
        ]
        if variants:
            return max(variants, key=lambda v: int(v[2:]))
    return None


_MUSL = lazy(r"Error loading shared library [^ :]+: No such file or directory \(needed by ")
# glibc's own libraries: a musl system (Alpine) has none of them; a glibc build needs them
_GLIBC_OWN = lazy(
    r"^(?:ld-linux[A-Za-z0-9_.-]*|libc|libm|libdl|libpthread|librt|libresolv|libutil)\.so"
)


def _musl_missing(soname: str, needer: str | None, line: LogLine) -> Hit:
    """musl's loader (Alpine): a library glibc ships means the object is a glibc build (a
    manylinux wheel, a binary built on Debian/Ubuntu) on a musl system, where Alpine's gcompat
    layer or a glibc-based image is the way out; any other library is an Alpine package, which
    apk installs by the SONAME it provides (`apk add so:libgomp.so.1`)."""
    by = f" needed by {needer}" if needer else ""
    if _GLIBC_OWN.match(soname):
        return Hit(
            f"musl's loader cannot find {soname}{by} (line {line.line}), a library of glibc: the "
            "object is a glibc build (a manylinux wheel or a binary built on a glibc distribution) "
            "running on a musl system (Alpine)",
            evidence={"line": line.line, "soname": soname, "required_by": needer},
            fix=fix(
                "Run it on a glibc-based image (python:3.X-slim / debian / ubuntu instead of "
                "*-alpine), or install Alpine's glibc compatibility layer: apk add gcompat "
                "libstdc++; or install the package's musllinux wheel or build it from source on "
                "Alpine (pip install --no-binary <package> <package>)",
                "manual",
                manual("FROM python:3.X-slim  (a glibc image instead of python:3.X-alpine)"),
                manual("apk add --no-cache gcompat libstdc++"),
            ),
        )
    return Hit(
        f"musl's loader cannot find {soname}{by} (line {line.line}): the Alpine package that "
        "ships it is not installed in the image",
        evidence={"line": line.line, "soname": soname, "required_by": needer},
        fix=fix(
            f"Install the Alpine package that provides {soname}: apk add so:{soname} (apk "
            "resolves the package by the SONAME it provides)",
            "manual",
            manual(f"apk add --no-cache so:{soname}"),
        ),
    )


_SITE_TOP = lazy(r"[/\\](?:site|dist)-packages[/\\](?P<top>[A-Za-z0-9_]+)[/\\]")
# dlopen() names the FILE it was given when that file itself is absent ('OSError: /x/site-packages/
# bitsandbytes/libbitsandbytes_cuda114.so: cannot open shared object file'); a missing
# dependency is named by its SONAME alone
_OWN_FILE = lazy(
    r"(?P<path>/[^\s:'\"()]*?[/\\](?:site|dist)-packages[/\\](?P<top>[A-Za-z0-9_]+)"
    r"[/\\][^\s:'\"()]*?\.so(?:\.[0-9]+)*): cannot open shared object file"
)


def _package_file_missing(facts: Facts, path: str, top: str, line: LogLine) -> Hit:
    """A package's own shared object is absent at the path its code opened: the installed
    release ships no build of that file for this CUDA or platform (bitsandbytes'
    libbitsandbytes_cuda114.so on a Jetson, bitsandbytes-foundation/bitsandbytes#232), or a
    source install did not compile it (#1190: libbitsandbytes_cpu.so in an egg built without
    its native library). The package is what changes, not LD_LIBRARY_PATH."""
    dist = distribution_of(facts, top)
    name = path.rsplit("/", 1)[-1]
    return Hit(
        f"{dist}'s own library {name} is not there (line {line.line}): the installed {dist} "
        "ships no such file (no build for this CUDA or platform) or its source install did "
        "not compile it",
        evidence={"line": line.line, "soname": name, "path": path, "package": dist},
        fix=fix(
            f"Reinstall {dist} so that it has {name}: pip install --force-reinstall "
            f"--no-cache-dir {dist}, or a release with a build for this CUDA / platform: pip "
            f"install --upgrade {dist}; from source, build its native library before installing",
            "manual",
            manual(f"pip install --force-reinstall --no-cache-dir {dist}"),
            manual(f"pip install --upgrade {dist}  (a release that ships {name} for this setup)"),
            manual(f"ls {path.rsplit('/', 1)[0]}  (the builds it does ship)"),
        ),
    )


def _runtime_commands(
    facts: Facts, line: LogLine, entries: tuple[Soname, ...]
) -> tuple[str, list[Action]] | None:
    """A GPU runtime that opens CUDA libraries itself (ONNX Runtime's CUDA provider, CuPy,
    TensorFlow, JAX: the matrix's `[[gpu_build]]`, named on the line or in the frame above it):
    its documented commands for the libraries it loads come first. A SONAME of an older CUDA
    major than the runtime's current builds (libcublasLt.so.11 from an onnxruntime-gpu whose
    PyPI releases are CUDA 12) says an old build is installed: upgrading it is the other fix."""
    majors = [e.cuda_major for e in entries if e.cuda_major is not None]
    if not majors:
        return None
    named = (line.stated.get(k) or "" for k in ("importer_file", "importer_statement"))
    build = facts.matrix.gpu_build("\n".join((line.text, *named)))
    if build is None:
        return None
    wanted = majors[0] if len(set(majors)) == 1 else None
    commands = _runtime_cuda_commands(
        build.cuda_libs or build.install, cuda_major(facts, build, wanted)
    )
    actions: list[Action] = [manual(c) for c in commands]
    said = f"{build.library} opens it: {commands[0]}" if commands else build.library
    default = build.cuda_default
    if wanted is not None and default is not None and wanted < default:
        upgrades = [
            c.split("  (")[0].replace("pip install ", "pip install --upgrade ", 1)
            for c in build.install
            if c.startswith("pip install ") and "{cuda}" not in c
        ]
        for command in upgrades:
            actions.insert(
                0,
                manual(
                    f"{command}  ({build.library}'s current releases are built for CUDA "
                    f"{default}; the installed one asks for CUDA {wanted}'s {entries[0].name})"
                ),
            )
        if upgrades:
            said = f"{upgrades[0]} (a build for CUDA {default}), or " + said
    return said, actions


def _loading_package(facts: Facts, line: LogLine, entries: Iterable[Soname]) -> str | None:
    """The distribution whose code loads a CUDA library (the innermost site-packages frame
    above the line, ``importer_file``, else the import statement printed above it when the
    import-names table knows its module, ``importer_statement``): an extension built for that library's CUDA major
    (bitsandbytes, xformers, a CUDA 11 build on a CUDA 12 node) is reinstalled in the build for
    the node's CUDA as the other way out. None when the library is not a CUDA one, the frame is
    not shown, or it is torch's own or a CUDA wheel's (their fix is the library itself)."""
    if not any(e.cuda_major is not None for e in entries):
        return None
    path = line.stated.get("importer_file")
    found = _SITE_TOP.search(path) if path else None
    top = found.group("top") if found is not None else None
    ops_loader = line.stated.get("ops_loader")
    if ops_loader and top in (None, "torch"):  # torch.ops.load_library(<its ops library>)
        top = ops_loader
    if top is None and path is None:
        # no frame shown: the import statement printed above the error (vllm#1718's `from
        # vllm import cuda_utils`) names the package as well
        top = line.stated.get("importer_statement")
        if top is not None and not _known_package(facts, top):
            return None  # a name no table knows: maybe the user's own module, not a package
    if top is None or top.startswith("_"):
        return None
    dist = distribution_of(facts, top)
    if dist in ("torch", "nvidia") or dist.startswith("nvidia-"):
        return None
    return dist


def _extension_index(facts: Facts, dist: str) -> str | None:
    """`pip install <dist> -f <its wheel index>` for a compiled-ops package the matrix's
    `[[extension]]` table knows (torch-scatter's data.pyg.org/whl/torch-X+cuY.html, filled from
    the node's torch where it is stated): a build for a CUDA the node lacks is replaced by the
    one for torch's (rusty1s/pytorch_scatter README)."""
    entry = facts.matrix.extension(dist)
    if entry is None:
        return None
    url = wheel_index(entry, torch_tags(facts))
    if url is None:
        return None
    return f"pip install --force-reinstall --no-cache-dir {entry.package} -f {url}"


def _known_package(facts: Facts, module: str) -> bool:
    """Whether an import name is a package the matrix knows to ship compiled code that loads
    CUDA libraries (a compiled-ops `[[extension]]`, a `[[gpu_build]]`, a package with wheels
    per CPU architecture), or one the node states installed. A pure-Python package named by
    the statement (`from diffusers import ...`) reaches the library through torch: not named."""
    matrix = facts.matrix
    dist = distribution_of(facts, module)
    return bool(
        matrix.extension(module) is not None
        or matrix.extension(dist) is not None
        or any(canonicalize_name(b.package) == dist for b in matrix.gpu_builds)
        or any(matrix.wheels_known(dist, arch) for arch in ("x86_64", "aarch64"))
        or facts.known_version(dist) is not None
    )


def _container_runtime_without_driver(soname: str, line: LogLine, wsl: bool) -> Hit:
    """nvidia-container-cli (the hook `--gpus` runs) loads the HOST's driver libraries: when it
    cannot, the host has no NVIDIA driver it can find (not installed, or Docker from a snap /
    Docker Desktop that does not see it); the container's own contents do not matter
    (NVIDIA/libnvidia-container#231, docker/for-win#13835: 'my drivers simply were not
    installed'). Where the log says WSL 2 or Docker Desktop, the driver's libraries come from
    the Windows driver (/usr/lib/wsl/lib), which WSL 2 maps only on Windows 11 or Windows 10
    21H2 (build 19044) and newer (AbdBarho/stable-diffusion-webui-docker#129: 20H2, fixed by
    updating Windows)."""
    if wsl or line.stated.get("host_platform"):
        return _wsl_without_driver(soname, line)
    return Hit(
        f"the NVIDIA container runtime could not load the host's {soname} (line {line.line}): "
        "the host has no NVIDIA driver it can find (not installed, or a Docker from a snap or "
        "Docker Desktop that does not see it)",
        evidence={"line": line.line, "soname": soname, "required_by": "nvidia-container-cli"},
        fix=fix(
            "Install the NVIDIA driver on the host (nvidia-smi must work there), then "
            "(re)install the nvidia-container-toolkit and restart Docker; use Docker's own "
            "packages rather than the snap",
            "manual",
            manual(
                "on the host: sudo ubuntu-drivers install  (or sudo apt install "
                "nvidia-driver-<branch>), reboot, check nvidia-smi"
            ),
            manual(
                "sudo apt-get install --reinstall -y nvidia-container-toolkit && sudo nvidia-ctk "
                "runtime configure --runtime=docker && sudo systemctl restart docker"
            ),
            manual(
                "a snap-installed Docker cannot see the host driver: snap remove docker, install docker-ce"
            ),
        ),
    )


# the first Windows 10 build whose WSL 2 maps the NVIDIA driver's libraries (21H2)
_WSL_GPU_BUILD = 19044


def _wsl_without_driver(soname: str, line: LogLine) -> Hit:
    """nvidia-container-cli in WSL 2 or Docker Desktop found no driver library: WSL 2 maps the
    Windows driver's own libraries under /usr/lib/wsl/lib, from Windows 11 or Windows 10 21H2
    on (NVIDIA's CUDA on WSL User Guide); a Linux driver installed inside WSL does not help.
    A Windows build the log states below 21H2's is named as the cause."""
    build = line.stated.get("windows_build")
    old = build is not None and build.isdigit() and int(build) < _WSL_GPU_BUILD
    said = (
        f"Windows build {build} is older than 21H2 (build {_WSL_GPU_BUILD}), the first whose "
        "WSL 2 maps the NVIDIA driver's libraries"
        if old
        else "in WSL 2 (Docker Desktop) the driver's libraries are the Windows driver's, mapped "
        "under /usr/lib/wsl/lib"
    )
    return Hit(
        f"the NVIDIA container runtime could not load {soname} (line {line.line}) in WSL 2: "
        + said,
        evidence={
            "line": line.line,
            "soname": soname,
            "required_by": "nvidia-container-cli",
            "windows_build": build,
        },
        fix=fix(
            "Update Windows to Windows 11 or Windows 10 21H2 (build 19044) or newer and install "
            "the NVIDIA driver for Windows (WSL 2 maps its libraries; install no Linux driver "
            "inside WSL), then restart Docker Desktop",
            "manual",
            manual(
                "winver  (Windows: the build must be 19044 (21H2) or newer, or Windows 11; "
                "update through Settings > Windows Update)"
            ),
            manual(
                "install the NVIDIA Windows driver (Game Ready / Studio / data center) on "
                "Windows; in WSL: ls /usr/lib/wsl/lib/libnvidia-ml.so.1"
            ),
            manual("wsl --update && wsl --shutdown  (PowerShell), then restart Docker Desktop"),
        ),
    )


def _on_wsl(facts: Facts, line: LogLine) -> bool:
    """The line, the log or the node says WSL 2: the platform a line of the log states, else
    ``driver_upgrade.on_wsl`` (a /usr/lib/wsl path or WSL on the line, a Microsoft kernel)."""
    from envcheck.rules.node.driver_upgrade import on_wsl

    platform = line.stated.get("host_platform") or ""
    return "wsl" in platform.lower() or on_wsl(facts, line.text)


_SUBLIBRARY = lazy(r"^(?P<stem>lib[A-Za-z0-9]+[_-][A-Za-z0-9]+)[A-Za-z0-9_-]*(?P<so>\.so.*)$")


def _lookup(matrix: Matrix, soname: str) -> tuple[tuple[Soname, ...], str | None]:
    """The table's entries for ``soname`` and, when they are another name's, which: a
    sub-library its family's entry names in its note (libcudnn_cnn_infer.so.8 ships with
    libcudnn.so.8, libnvrtc-builtins.so.12.4 with libnvrtc.so.12), or the unversioned
    development name (libcudart.so) of the SONAMEs the table knows (libcudart.so.12)."""
    found = matrix.soname(soname)
    if found:
        return found, None
    sub = _SUBLIBRARY.match(soname)
    if sub is not None:
        main = re.sub(r"[_-].*$", "", sub.group("stem")) + sub.group("so")
        family = matrix.soname(main)
        if family and any(e.note and sub.group("stem") in e.note for e in family):
            return family, family[0].name
    if soname.endswith(".so"):
        versioned = tuple(e for e in matrix.sonames if e.name.startswith(soname + "."))
        if versioned:
            return versioned, " / ".join(dict.fromkeys(e.name for e in versioned))
    return (), None


_TORCH_LIB = lazy(r"^lib(?:torch|c10|caffe2)[A-Za-z0-9_]*\.so")


def _torch_library(
    soname: str, by: str, needer: str | None, line: LogLine, severity: Severity | None
) -> Hit:
    """torch's own libraries (torch/lib: libc10.so, libtorch_cpu.so, libtorch_cuda.so): an
    extension links them without a RUNPATH to torch/lib and relies on `import torch` having
    loaded them; a name the installed torch no longer ships (libtorch_cuda_cu.so, split off
    before torch 2.0) means the extension was built for another torch."""
    torch_lib = "$(python -c 'import os, torch; print(os.path.dirname(torch.__file__))')/lib"
    return Hit(
        f"the loader cannot find {soname}{by} (line {line.line}), one of torch's own libraries "
        "(site-packages/torch/lib): torch was not imported before the extension, is not "
        "installed in this environment, or is another release than the extension was built for",
        evidence={"line": line.line, "soname": soname, "required_by": needer},
        fix=fix(
            "import torch before the extension (it loads torch/lib); if that does not help, "
            "the extension was built for another torch: reinstall it for the installed torch "
            "(pip install --no-build-isolation --no-cache-dir --force-reinstall <package>), or "
            f"export LD_LIBRARY_PATH={torch_lib}:$LD_LIBRARY_PATH",
            "manual",
            manual("import torch  (before importing the extension)"),
            manual("pip install --no-build-isolation --no-cache-dir --force-reinstall <package>"),
            manual(f"export LD_LIBRARY_PATH={torch_lib}:$LD_LIBRARY_PATH"),
        ),
        severity=severity,
    )


@rule("SYS151", "libstdcxx-too-old", Severity.ERROR)
def libstdcxx_too_old(facts: Facts) -> Iterable[Hit]:
    """The libstdc++ the loader picked is older than a binary needs

    ## What it checks
    A loader line `<path>/libstdc++.so.6: version `GLIBCXX_3.4.N' not found (required by ...)`
    (or `CXXABI_1.3.M`): the GCC release whose libstdc++ first provides that label (the
    matrix's `[[libstdcxx]]` table), which copy was picked (a conda environment's `lib/`, the
    system's `/lib/x86_64-linux-gnu/`, one a wheel bundles), and, when the node's OS release is
    known, whether its system libstdc++ has the label. An `undefined symbol:` of libstdc++'s
    own (the C++11 ABI's `std::__cxx11` names, `_ZdlPvm`) is read as the label it needs
    (GLIBCXX_3.4.21, CXXABI_1.3.9: GCC 5.1), whatever package failed. Only a log states the
    failing label.

    ## Why it matters
    A binary built with a newer GCC than the libstdc++ that loads first cannot start: a conda
    environment's old `libstdcxx-ng` shadows the system's newer copy (or the reverse), and every
    package with a compiled extension built on a newer OS fails on import.

    ## Example
    `/opt/conda/envs/py310/lib/libstdc++.so.6: version `GLIBCXX_3.4.30' not found`: GLIBCXX_3.4.30
    arrived with GCC 12.1.0; the environment's libstdcxx-ng is older.

    ## Fix
    Give the process a libstdc++ from GCC >= that release: in a conda environment `conda install
    -c conda-forge 'libstdcxx-ng>=12.1'` (or conda-forge's `gcc`, which brings it); or load a
    newer copy first (`LD_PRELOAD` it, put its directory first on `LD_LIBRARY_PATH`
    (`$CONDA_PREFIX/lib` when the system's copy is the old one), or link the system's copy into
    the environment with `ln -sf`).

    ## References
    - https://gcc.gnu.org/onlinedocs/libstdc++/manual/abi.html
    - bminor/glibc elf/dl-version.c (match_symbol: "version `%s' not found (required by %s)")
    """
    raise Skip("only a log line states a missing libstdc++ symbol version", "log.loader")


def _normalized(path: str | None) -> str | None:
    """The path with `dir/../` folded (`/opt/conda/envs/x/bin/../lib/libstdc++.so.6`, as the
    loader prints a copy found through python's `$ORIGIN/../lib` RPATH)."""
    if not path:
        return path
    previous = None
    while previous != path:
        previous, path = path, re.sub(r"/[^/]+/\.\./", "/", path, count=1)
    return path


def _conda_prefix(path: str | None) -> str | None:
    """The conda environment a path lies in (`/opt/conda/envs/x/lib/python3.11/...` ->
    `/opt/conda/envs/x`); None for a path outside one."""
    path = _normalized(path)
    found = _CONDA.search(path) if path else None
    if path is None or found is None:
        return None
    return path[: found.end() - len("/lib/")]


def _which_copy(path: str | None) -> str:
    path = _normalized(path)
    if not path:
        return "unknown"
    if _CONDA.search(path):
        return "conda"
    if "/site-packages/" in path or "/dist-packages/" in path:
        return "wheel"
    if _SYSTEM.match(path):
        return "system"
    return "other"


# the version node of libstdc++.so.6 that first exports a libstdc++ symbol, by its mangled
# form (gcc-mirror/gcc libstdc++-v3/config/abi/pre/gnu.ver: the C++11 ABI's std::__cxx11 and
# [abi:cxx11] names under GLIBCXX_3.4.21, sized operator delete under CXXABI_1.3.9,
# __cxa_throw_bad_array_new_length under CXXABI_1.3.8)
_CXX11_ABI = lazy(r"St7__cxx11|B5cxx11")
_SIZED_DELETE = lazy(r"^_Zd[la]Pvm")
_BAD_ARRAY_NEW = lazy(r"^__cxa_throw_bad_array_new_length")
_CONDA_ROOT = lazy(
    r"^(?P<prefix>.*?/(?:envs/[^/]+|(?:ana|mini)conda[0-9]*|miniforge[0-9]*|mambaforge))/lib/"
)


def _std_symbol_line(line: LogLine) -> LogLine:
    """An undefined libstdc++ symbol (`undefined-symbol-libstdcxx`) read as the version label
    it needs: the C++11 ABI's names need GLIBCXX_3.4.21 (GCC 5.1), the sized operator delete
    CXXABI_1.3.9. The libstdc++ that loads is the environment's when the binary is in a conda
    environment. A type_info class of the runtime ABI every libstdc++ has means none is
    loaded: the binary was linked without it (NotStated, with that fix)."""
    symbol = line.stated.get("undefined_symbol", "")
    binary = line.stated.get("library_path")
    if _CXX11_ABI.search(symbol):
        label = "GLIBCXX_3.4.21"
    elif _SIZED_DELETE.match(symbol):
        label = "CXXABI_1.3.9"
    elif _BAD_ARRAY_NEW.match(symbol):
        label = "CXXABI_1.3.8"
    else:
        raise NotStated(
            f"{binary or 'the binary'} (line {line.line}) cannot resolve {symbol}, which every "
            "libstdc++ exports: no libstdc++ is loaded for it",
            "system.libstdcxx",
            fix=(
                "The binary was linked without libstdc++ (a C++ extension linked by gcc, not "
                "g++): rebuild it with CXX=g++ (or -lstdc++ in its link flags), or preload one: "
                "export LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libstdc++.so.6"
            ),
        )
    conda = _CONDA_ROOT.match(binary or "")
    stated = dict(line.stated)
    stated["symbol_version"] = label
    stated["required_by"] = binary or ""
    if conda is not None:
        stated["library_path"] = f"{conda.group('prefix')}/lib/libstdc++.so.6"
    else:
        stated.pop("library_path", None)
    return LogLine(line.signature, line.line, line.text, stated)


def _old_libgcc_action() -> Action:
    """Anaconda's old `libgcc` package (defaults, before conda-forge's split runtime) installs
    an old libstdc++.so.6 into the environment's lib/ and shadows `libgcc-ng` /
    `libstdcxx-ng` (ContinuumIO/anaconda-issues#5191, maintainer: 'conda remove libgcc', then
    'conda install libgcc-ng --force')."""
    return manual(
        "conda remove libgcc; conda install libgcc-ng libstdcxx-ng  (an old `libgcc` package "
        "shadows the runtime; conda install --force-reinstall libgcc-ng when it is installed)"
    )


def _needing_distribution(facts: Facts, needer: str | None) -> str | None:
    """The distribution whose extension needs the label (`(required by .../site-packages/
    scipy/spatial/_ckdtree...so)` -> scipy); None outside site-packages or for torch / NVIDIA's
    wheels, whose fix is the runtime."""
    found = _SITE_TOP.search(needer) if needer else None
    if found is None or found.group("top").startswith("_"):
        return None
    dist = distribution_of(facts, found.group("top"))
    if dist in ("torch", "nvidia") or dist.startswith("nvidia-"):
        return None
    return dist


def _os_release(facts: Facts) -> OsRelease | None:
    try:
        system = facts.system()
    except Skip:
        return None
    return facts.matrix.os_glibc(system.os_id, system.os_version)


@from_log("SYS151")
def libstdcxx_too_old_in_log(facts: Facts, line: LogLine) -> Hit:
    if line.signature == "undefined-symbol-libstdcxx":
        line = _std_symbol_line(line)
    label = line.stated.get("symbol_version")
    if label is None:
        raise NotStated(f"line {line.line} is cut before the symbol version", "system.libstdcxx")
    path = line.stated.get("library_path")
    needer = line.stated.get("required_by")
    entry = facts.matrix.libstdcxx_label(label)
    gcc = entry.gcc if entry else None
    gcc_short = ".".join(gcc.split(".")[:2]) if gcc else None
    copy = _which_copy(path)
    picked = {
        "conda": f"the conda environment's copy ({path})",
        "wheel": f"a copy a wheel bundles ({path})",
        "system": f"the system's copy ({path})",
        "other": f"the copy at {path}",
        "unknown": "the libstdc++.so.6 that loaded first",
    }[copy]
    since = f"{label} arrived with GCC {gcc}" if gcc else f"the matrix does not know {label}"
    release = _os_release(facts)
    system_has = None
    if release is not None:
        newest = release.glibcxx_max if label.startswith("GLIBCXX") else release.cxxabi_max
        system_has = _has_label(newest, label)
    actions: list[Action] = []
    summary: str
    at_least = gcc_short or "?"
    conda_pkg = f"libstdcxx-ng>={gcc_short}" if gcc_short else "libstdcxx-ng"
    gcc_pkg = f"gcc>={gcc_short}" if gcc_short else "gcc"
    system_copy = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"
    # conda-forge's libstdcxx-ng/libgcc-ng follow GCC's major (7 onwards): the runtime of the
    # GCC that introduced the label, as threads pin it
    gcc_major = int(gcc.split(".")[0]) if gcc and gcc.split(".")[0].isdigit() else None
    pinned_runtime = (
        f"conda install -c conda-forge libstdcxx-ng={gcc_major} libgcc-ng={gcc_major}  "
        f"(GCC {gcc_major}'s runtime, or newer)"
        if gcc_major is not None and gcc_major >= 7
        else None
    )
    check = manual(
        f"strings {path or system_copy} | grep {label.split('_')[0]}_  (the labels it has)"
    )
    if copy == "conda":
        prefix = (_normalized(path) or path).rsplit("/lib/", 1)[0] if path else "$CONDA_PREFIX"
        summary = (
            f"Upgrade the conda environment's libstdc++ to GCC >= {at_least}: conda install -c "
            f"conda-forge libstdcxx-ng (a release >= {at_least}), or conda install -c "
            f"conda-forge gcc{'=' + gcc if gcc else ''} (which brings it); or make the process "
            f"load the system's newer copy first: export LD_PRELOAD={system_copy}, export "
            f"LD_LIBRARY_PATH={system_copy.rsplit('/', 1)[0]}:$LD_LIBRARY_PATH, or "
            f"ln -sf {system_copy} {prefix}/lib/libstdc++.so.6"
        )
        actions.append(
            manual(
                f"conda install -n {prefix.rsplit('/', 1)[-1]} -c conda-forge '{conda_pkg}'"
                if "/envs/" in prefix
                else f"conda install -c conda-forge '{conda_pkg}'"
            )
        )
        actions.append(manual(f"conda install -c conda-forge '{gcc_pkg}'"))
        if pinned_runtime:
            actions.append(manual(pinned_runtime))
        actions.append(
            manual("conda install -c conda-forge gcc gxx  (the compilers bring the runtime)")
        )
        actions.append(_old_libgcc_action())
        if system_has is not False:
            actions.append(manual(f"export LD_PRELOAD={system_copy}"))
            actions.append(
                manual(f"export LD_LIBRARY_PATH={system_copy.rsplit('/', 1)[0]}:$LD_LIBRARY_PATH")
            )
            actions.append(manual(f"ln -sf {system_copy} {prefix}/lib/libstdc++.so.6"))
        actions.append(check)
    elif copy == "system":
        summary = (
            f"The system libstdc++ is older than GCC {gcc or '?'}: put a newer libstdc++.so.6 "
            "first on the loader's path: in a conda environment, conda install -c conda-forge "
            f"libstdcxx-ng (a release >= {at_least}; or conda install -c conda-forge "
            f"gcc{'=' + gcc if gcc else ''}, which brings it) and export "
            "LD_LIBRARY_PATH=$CONDA_PREFIX/lib:$LD_LIBRARY_PATH (or LD_PRELOAD "
            "$CONDA_PREFIX/lib/libstdc++.so.6); or upgrade the OS's libstdc++6 (Ubuntu: the "
            "ppa:ubuntu-toolchain-r/test PPA) or use a newer OS image"
        )
        actions.append(manual(f"conda install -c conda-forge '{conda_pkg}'"))
        if pinned_runtime:
            actions.append(manual(pinned_runtime))
        actions.append(manual("export LD_LIBRARY_PATH=$CONDA_PREFIX/lib:$LD_LIBRARY_PATH"))
        actions.append(_old_libgcc_action())
        env = _conda_prefix(needer)
        if env is not None:  # the binary that needs the label lives in a conda environment
            actions.append(manual(f"export LD_LIBRARY_PATH={env}/lib:$LD_LIBRARY_PATH  (here)"))
        # a conda environment whose libstdc++.so.6.0.N is there without its libstdc++.so.6
        # link falls through to the system's copy (pytorch/pytorch#157709: ln -s
        # libstdc++.so.6.0.34 libstdc++.so.6 in $CONDA_PREFIX/lib)
        lib = f"{env}/lib" if env is not None else "$CONDA_PREFIX/lib"
        least = entry.libstdcxx_file if entry is not None and entry.libstdcxx_file else None
        link = (
            f"cd {lib} && ln -sf {least or 'libstdc++.so.6.0.<N>'} libstdc++.so.6  (when ls "
            f"{lib}/libstdc++.so.6* shows a libstdc++.so.6.0.N"
            + (f" >= {least}" if least else "")
            + " without the libstdc++.so.6 link; use the newest N there)"
        )
        summary += (
            f"; in a conda environment whose lib/ has libstdc++.so.6.0.N but no libstdc++.so.6 "
            f"link, create it: {link.split('  (', maxsplit=1)[0]}"
        )
        actions.append(manual(link))
        actions.append(manual("export LD_PRELOAD=$CONDA_PREFIX/lib/libstdc++.so.6"))
        actions.append(
            manual(
                "sudo add-apt-repository ppa:ubuntu-toolchain-r/test && sudo apt-get update && "
                "sudo apt-get install libstdc++6  (Ubuntu; the PPA's newer GCC runtime; or: sudo "
                "apt install libstdc++6)"
            )
        )
        newer = [
            f"{r.os} {r.version}"
            for r in facts.matrix.os_releases
            if r.glibcxx_max
            and _has_label(r.glibcxx_max if label.startswith("GLIBCXX") else r.cxxabi_max, label)
            and r.os in ("ubuntu", "debian", "rhel", "rocky")
        ]
        if newer:
            actions.append(
                manual(f"or run on an OS whose libstdc++ has {label}: {', '.join(newer[:4])}")
            )
        actions.append(check)
    else:
        summary = (
            f"Load a libstdc++.so.6 from GCC >= {gcc or '?'} before {path or 'the old copy'}: "
            f"export LD_PRELOAD={system_copy} (when the system's has {label}), or in a conda "
            f"environment conda install -c conda-forge libstdcxx-ng (a release >= {at_least}) "
            "and export LD_LIBRARY_PATH=$CONDA_PREFIX/lib:$LD_LIBRARY_PATH, or link the "
            f"system's copy into the environment: ln -sf {system_copy} "
            "$CONDA_PREFIX/lib/libstdc++.so.6"
        )
        actions.append(manual(f"export LD_PRELOAD={system_copy}"))
        actions.append(manual(f"conda install -c conda-forge '{conda_pkg}'"))
        actions.append(manual("export LD_LIBRARY_PATH=$CONDA_PREFIX/lib:$LD_LIBRARY_PATH"))
        actions.append(manual(f"ln -sf {system_copy} $CONDA_PREFIX/lib/libstdc++.so.6"))
        actions.append(check)
    importer = _needing_distribution(facts, needer)
    if importer is not None:  # a wheel's extension built with a newer GCC: the other way out
        actions.append(
            manual(
                f"conda install -c conda-forge {importer}  (conda-forge's {importer} is built "
                "against the environment's libstdc++; or pip install an older "
                f"{importer} release built with an older GCC)"
            )
        )
    os_note = ""
    if release is not None and system_has is not None:
        os_note = (
            f"; this {release.os} {release.version}'s system libstdc++ "
            f"{'has' if system_has else 'lacks'} it"
        )
    by = f" by {needer}" if needer else ""
    return Hit(
        f"{label} is needed{by} (line {line.line}) but {picked} lacks it: {since}, the "
        f"libstdc++ that loaded is older{os_note}",
        evidence={
            "line": line.line,
            "symbol_version": label,
            "gcc": gcc,
            "library": path,
            "copy": copy,
            "required_by": needer,
        },
        fix=fix(summary, "manual", *actions),
    )


# PyOpenGL's error checker reading glGetError off a platform that loaded no GL library
# (mcfletch/pyopengl OpenGL/error.py: _ErrorChecker(_p, _p.GL.glGetError), GL None)
_PYOPENGL_NO_GL = lazy(r"'NoneType' object has no attribute 'gl[A-Z][A-Za-z]+'")


def _pyopengl_platform_unloaded(line: LogLine) -> Hit:
    """PyOpenGL's ``'NoneType' object has no attribute 'glGetError'``: the GL library of the
    platform it was told (PYOPENGL_PLATFORM / MUJOCO_GL, osmesa on a headless node as a rule)
    did not load. The line does not name the library, so the fix names the ways the threads
    established: OSMesa from conda-forge (mesalib) or apt (libosmesa6-dev), or EGL instead
    (https://github.com/NM512/dreamerv3-torch/issues/65)."""
    return Hit(
        f"PyOpenGL loaded no GL library for its platform (line {line.line}): with "
        "MUJOCO_GL=osmesa / PYOPENGL_PLATFORM=osmesa libOSMesa is missing",
        evidence={"line": line.line, "library": "OSMesa (or the platform's GL library)"},
        fix=fix(
            "Install the OSMesa library PyOpenGL opens: conda install -c conda-forge mesalib in a "
            "conda environment, or apt-get install libgl1-mesa-dev libosmesa6-dev; or render "
            "through EGL on an NVIDIA GPU instead (MUJOCO_GL=egl PYOPENGL_PLATFORM=egl)",
            "manual",
            manual("conda install -c conda-forge mesalib"),
            manual("sudo apt-get install -y libgl1-mesa-dev libosmesa6-dev"),
            manual("export MUJOCO_GL=egl PYOPENGL_PLATFORM=egl"),
        ),
    )
