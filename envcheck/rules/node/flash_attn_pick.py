"""Which flash-attn build loads on a torch: the C++ ABI of torch's wheels, the release wheels'
names, and the release to reinstall (TOR103's fix)."""

from __future__ import annotations

from packaging.version import Version

from envcheck.facts.conditions import evaluate
from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.schema import FlashAttnRelease
from envcheck.model.finding import Fix
from envcheck.patterns import lazy
from envcheck.rules.data import render_fix
from envcheck.rules.fixes import fix, from_spec, pip_install, pip_uninstall

# PyTorch's Linux wheels switched to the C++11 ABI with the CUDA 12.6 builds of 2.6.0 and with
# every build of 2.7 (https://github.com/Dao-AILab/flash-attention/issues/1644, quoting
# https://github.com/pytorch/pytorch/issues/152790); earlier pip wheels use the old ABI
_NEW_ABI_ALL = Version("2.7")
_NEW_ABI_FROM = Version("2.6")
_NEW_ABI_CUDA = Version("12.6")
# the newest torch with old-ABI pip wheels: what a torch exporting only old-ABI symbols can be
LAST_OLD_ABI = "2.6"
_VARIANT = lazy(r"cu\d+|cpu|rocm[\d.]+")
_RELEASES = "https://github.com/Dao-AILab/flash-attention/releases/download"


def torch_old_abi(facts: Facts, torch: Version | None) -> bool | None:
    """True when torch uses the old (pre-C++11) ABI, False when the C++11 one, None unknown.
    A probe states it (torch._C._GLIBCXX_USE_CXX11_ABI); for a torch from pip or the PyTorch index
    (a +cuXXX label, pip as installer, or a declared stack) the release and CUDA variant decide
    it; conda's builds (conda-forge uses the C++11 ABI), vendor and source builds are not judged
    before 2.7. From 2.7 every build uses the C++11 ABI."""
    try:
        build = facts.torch()
    except Skip:
        build = None
    if build is not None and build.cxx11_abi is not None:
        return not build.cxx11_abi
    if torch is None:
        return None
    release = Version(torch.base_version)
    if release >= _NEW_ABI_ALL:  # pip, conda-forge and NGC builds alike
        return False
    try:
        dist = facts.dist("torch")
    except Skip:
        dist = None
    if dist is not None and dist.installer == "conda":
        return None
    if not torch.local and not facts.declared and (dist is None or dist.installer != "pip"):
        # a bare version in a package list may be conda's (conda-forge builds use the C++11 ABI)
        return None
    if torch.is_prerelease or (torch.local and not _VARIANT.fullmatch(torch.local)):
        return None  # a source or vendor build (NGC's 2.3.0a0+40ec155e58.nv24.3): not judged
    if release < _NEW_ABI_FROM:
        return True
    try:
        cuda = facts.torch_cuda()
    except Skip:
        return None
    return None if cuda is None else cuda < _NEW_ABI_CUDA


def _on_index(facts: Facts) -> set[Version] | None:
    """flash-attn releases the package index carries (None when the table is absent)."""
    index = facts.matrix.generated.flash_attn_index
    return {e.version for e in index} if index else None


def _python(facts: Facts) -> str | None:
    try:
        py = facts.python_version()
    except Skip:
        return None
    return f"{py.major}.{py.minor}"


def newest_loading(facts: Facts, torch_mm: str, *, old_abi: bool | None) -> FlashAttnRelease | None:
    """The newest flash-attn release on the index with prebuilt wheels for ``torch_mm`` and this
    Python whose wheels load on the torch's ABI (releases whose old-ABI wheels do not load are
    passed over unless torch is known to use the C++11 ABI)."""
    python = _python(facts)
    index = _on_index(facts)
    candidates = [
        r
        for r in facts.matrix.flash_attn_releases
        if torch_mm in r.prebuilt_torch
        and (python is None or python in r.python)
        and (index is None or r.version in index)
        and (r.cxx11abi_false_loads or old_abi is False)
    ]
    return max(candidates, key=lambda r: r.version) if candidates else None


def known_bad_fix(facts: Facts) -> Fix | None:
    """The fix of a known-bad entry that pairs the installed flash-attn with this torch and
    names the flash-attn release to install instead (the matrix's [[known_bad]] data)."""
    for entry in facts.matrix.known_bad:
        names = set(entry.when.packages)
        if "flash-attn" not in names or entry.fix is None:
            continue
        if not any(p.startswith("flash-attn==") for p in entry.fix.pip):
            continue
        try:
            holds = evaluate(entry.when, facts)
        except Skip:
            continue
        if holds:
            return from_spec(render_fix(entry.fix, facts))
    return None


def _wheel_cuda(release: FlashAttnRelease, cuda: Version) -> str:
    """The CUDA tag setup.py's get_wheel_url puts in the wheel name for torch's CUDA: the major
    from 2.7.0; before, 11.x -> 118 and 12.x -> 122 (123 from 2.6.0)."""
    if release.cuda_tag == "major":
        return str(cuda.major)
    if cuda.major == 11:
        return "118"
    return "123" if release.version >= Version("2.6.0") else "122"


def abi_wheel_fix(
    facts: Facts, release: FlashAttnRelease, torch: Version, cuda: Version | None, old_abi: bool
) -> Fix | None:
    """The same release's wheel with torch's ABI flag, by its URL (the name setup.py's
    get_wheel_url builds), when the release has wheels for this torch and Python."""
    python = _python(facts)
    mm = f"{torch.major}.{torch.minor}"
    if python is None or cuda is None or mm not in release.prebuilt_torch:
        return None
    if python not in release.python or (old_abi and not release.cxx11abi_false_loads):
        return None
    cp = "cp" + python.replace(".", "")
    flag = "FALSE" if old_abi else "TRUE"
    wheel = (
        f"flash_attn-{release.version}+cu{_wheel_cuda(release, cuda)}torch{mm}cxx11abi{flag}"
        f"-{cp}-{cp}-linux_x86_64.whl"
    )
    return fix(
        f"Install flash-attn {release.version}'s release wheel for torch {mm}'s "
        f"{'old' if old_abi else 'C++11'} ABI: {wheel} (x86_64 Linux)",
        "safe",
        pip_uninstall("flash-attn"),
        pip_install(f"{_RELEASES}/v{release.version}/{wheel}"),
    )


def torch_for_tag(
    facts: Facts, torch_mm: str, cuda_tag: str, cxx11abi: bool
) -> tuple[str, str] | None:
    """The torch a tagged flash-attn wheel (`cu123torch2.3cxx11abiFALSE`) was built for, as
    (pin, index URL): the newest release of ``torch_mm`` in the matrix with a CUDA variant of
    the tag's CUDA major whose pip wheels use the tag's C++ ABI (the old ABI before 2.6, the
    C++11 one from 2.7, by variant in 2.6); None when the matrix has no such build."""
    major = cuda_tag[:2] if cuda_tag.startswith("1") else cuda_tag[:1]
    releases = sorted(
        (
            r
            for r in facts.matrix.torch_releases
            if f"{r.version.major}.{r.version.minor}" == torch_mm
        ),
        key=lambda r: r.version,
        reverse=True,
    )
    for release in releases:
        variants = [v for v in release.variants if v.startswith(f"cu{major}")]
        for variant in sorted(variants, reverse=True):
            cuda = Version(f"{variant[2:-1]}.{variant[-1]}")
            old_abi = release.version < _NEW_ABI_FROM or (
                release.version < _NEW_ABI_ALL and cuda < _NEW_ABI_CUDA
            )
            if old_abi == cxx11abi:
                continue
            url = facts.matrix.torch_index_url(variant)
            if url is not None:
                return f"torch=={release.version}", url
    return None
