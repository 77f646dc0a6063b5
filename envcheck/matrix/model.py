"""The merged compatibility matrix and the lookups rules use."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from packaging.version import InvalidVersion, Version

from envcheck.matrix.generated import Generated
from envcheck.matrix.lazy import allow_lazy
from envcheck.matrix.schema import (
    ArchFloor,
    Bound,
    Companion,
    Constant,
    CudaError,
    CudaToolkit,
    DriverBranch,
    Extension,
    FirstRelease,
    FlashAttnRelease,
    GpuBuild,
    GpuModel,
    ImportName,
    IsaacSimRelease,
    KeywordChange,
    KnownBad,
    LegacyTorch,
    Libstdcxx,
    NameHistory,
    OmniGibsonRelease,
    OsRelease,
    Override,
    PtxIsa,
    RayRelease,
    RemovedSymbol,
    Signature,
    SmSupport,
    Soname,
    TorchIndex,
    TorchRelease,
    VllmRelease,
    WheelPlatform,
    Xid,
)
from envcheck.names import canonicalize_name
from envcheck.patterns import lazy

if TYPE_CHECKING:
    from envcheck.matrix.python_names import Importer, PythonNames


def parse_version(text: str | None) -> Version | None:
    if text is None:
        return None
    try:
        return Version(text)
    except InvalidVersion:
        return None


def public(version: Version) -> Version:
    """The release a build belongs to: 2.4.0+cu121 -> 2.4.0 (pre-releases stay as they are)."""
    return Version(version.public)


def major_minor(version: Version) -> Version:
    return Version(f"{version.major}.{version.minor}")


def variant_cuda(variant: str | None) -> Version | None:
    """cu121 -> 12.1, cu130 -> 13.0; None for cpu/rocm."""
    match = re.fullmatch(r"cu(\d+)(\d)", variant or "")
    return Version(f"{match.group(1)}.{match.group(2)}") if match else None


def cuda_variant(cuda: Version) -> str:
    return f"cu{cuda.major}{cuda.minor}"


def gpu_name_forms(name: str) -> tuple[str, ...]:
    """A GPU name as written, then normalised: nvidia-smi's `NVIDIA GeForce RTX 5090`, people's
    `RTX5090` / `RTX5070TI`, cloud consoles' `nvidia-h100-80gb-hbm3` / `NVIDIA_A100`."""
    form = re.sub(r"[_-]+", " ", name)
    form = re.sub(r"(?i)\b(RTX|GTX|RTX PRO)(?=[0-9])", r"\1 ", form)
    form = re.sub(r"(?i)\b([0-9]{4})\s*ti\b", r"\1 Ti", form)
    form = re.sub(r"(?i)\b([0-9]{4})\s*super\b", r"\1 SUPER", form)
    form = re.sub(r"\s+", " ", form).strip()
    return (name, form) if form != name else (name,)


@functools.cache
def _word(token: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![A-Za-z0-9]){re.escape(token)}(?![A-Za-z0-9])", re.IGNORECASE)


def _mentions(token: str, form: str, lowered: str) -> bool:
    """``token`` as a whole word of ``form``, case-insensitively. The pattern is compiled only
    for a token that occurs in the text at all (for ASCII text and token, a case-insensitive
    match needs the lowered token inside the lowered text): a name mentions one or two of the
    matrix's dozens of tokens, and compiling them all was most of a GPU lookup."""
    if form.isascii() and token.isascii() and token.lower() not in lowered:
        return False
    return _word(token).search(form) is not None


_PACKAGE_NAME = lazy(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")


def package_names(field: str | None, cuda_major: int | None = None) -> list[str]:
    """The package names a ``[[soname]]`` field offers ('nvidia-cudnn-cu12 (9.x, torch
    2.4-2.10) / nvidia-cudnn-cu13 (torch 2.11+)'): the first word of each '/'- or
    ';'-separated alternative that is a name, the one for ``cuda_major`` first. A field that
    describes a copy bundled inside another package ('bundled inside torch wheels') offers none."""
    if not field or field.startswith("bundled"):
        return []
    names: list[str] = []
    for part in re.split(r"\s[/;]\s", field):
        words = part.split()
        if words and _PACKAGE_NAME.match(words[0]) and words[0] not in names:
            names.append(words[0])
    if cuda_major is not None:
        names.sort(key=lambda n: not n.endswith(f"-cu{cuda_major}"))
    return names


@dataclass(frozen=True)
class Matrix:
    """The merged compatibility matrix: every table and its lookups."""

    files: tuple[str, ...] = ()
    toolkits: tuple[CudaToolkit, ...] = ()
    driver_branches: tuple[DriverBranch, ...] = ()
    sm_support: tuple[SmSupport, ...] = ()
    gpus: tuple[GpuModel, ...] = ()
    torch_releases: tuple[TorchRelease, ...] = ()
    torch_index: TorchIndex | None = None
    vllm_releases: tuple[VllmRelease, ...] = ()
    ray_releases: tuple[RayRelease, ...] = ()
    flash_attn_releases: tuple[FlashAttnRelease, ...] = ()
    isaacsim_releases: tuple[IsaacSimRelease, ...] = ()
    omnigibson_releases: tuple[OmniGibsonRelease, ...] = ()
    os_releases: tuple[OsRelease, ...] = ()
    first_releases: tuple[FirstRelease, ...] = ()
    ptx_isas: tuple[PtxIsa, ...] = ()
    sonames: tuple[Soname, ...] = ()
    libstdcxx: tuple[Libstdcxx, ...] = ()
    import_names: tuple[ImportName, ...] = ()
    removed_symbols: tuple[RemovedSymbol, ...] = ()
    keyword_changes: tuple[KeywordChange, ...] = ()
    companions: tuple[Companion, ...] = ()
    legacy_torch: tuple[LegacyTorch, ...] = ()
    overrides: tuple[Override, ...] = ()
    bounds: tuple[Bound, ...] = ()
    wheel_platforms: tuple[WheelPlatform, ...] = ()
    known_bad: tuple[KnownBad, ...] = ()
    constants: dict[str, Constant] = field(default_factory=dict)
    signatures: tuple[Signature, ...] = ()
    cuda_errors: tuple[CudaError, ...] = ()
    arch_floors: tuple[ArchFloor, ...] = ()
    extensions: tuple[Extension, ...] = ()
    gpu_builds: tuple[GpuBuild, ...] = ()
    xids: tuple[Xid, ...] = ()
    generated: Generated = field(default_factory=Generated)  # `envcheck matrix refresh` output
    # generated/python_names.toml of each matrix directory: read lazily (python_names())
    python_names_files: tuple[str, ...] = ()
    origins: dict[int, tuple[str, str, int]] = field(
        default_factory=dict, compare=False, repr=False
    )

    def origin(self, entry: object) -> tuple[str, str, int] | None:
        """(file, table, index) an entry was read from."""
        return self.origins.get(id(entry))

    # --- CUDA and drivers -----------------------------------------------------------------

    def toolkit(self, cuda: Version) -> CudaToolkit | None:
        key = major_minor(cuda)
        return next((t for t in self.toolkits if t.cuda == key), None)

    def max_cuda_for_driver(self, driver: Version) -> DriverBranch | None:
        """The newest CUDA of the driver's branch, from the toolkit table."""
        return next((b for b in self.driver_branches if b.branch == driver.major), None)

    def newest_cuda_supported(self, driver: Version) -> CudaToolkit | None:
        """Newest toolkit whose GA driver this driver meets (derived from Table 3)."""
        ok = [t for t in self.toolkits if t.min_driver is not None and driver >= t.min_driver]
        return max(ok, key=lambda t: t.cuda) if ok else None

    def cuda_error(
        self,
        *,
        number: int | None = None,
        name: str | None = None,
        text: str | None = None,
        apis: tuple[str, ...] = ("runtime", "driver"),
    ) -> CudaError | None:
        """The error a log names: by its name (cudaErrorNoDevice, CUDA_ERROR_NO_DEVICE,
        NVML_ERROR_UNKNOWN: the name says the API), else by the library's message found in
        ``text`` (the longest that occurs, so 'system not yet initialized' wins over 'not
        initialized'), else by number (the first API of ``apis`` that has it: a bare 'error 209'
        printed by a runtime user is cudaError_t's). Entries with a cause come first."""
        table = [e for e in self.cuda_errors if e.api in apis]
        if name:
            found = [e for e in table if e.name.lower() == name.lower()]
            if found:
                return _with_cause(found)
        if text:
            lowered = _plain(text)
            found = [e for e in table if e.message and _plain(e.message) in lowered]
            if not found:  # a paste cut after the first sentence ('... NVIDIA driver.')
                found = [e for e in table if (f := _first_sentence(e.message)) and f in lowered]
            if found:
                longest = max(len(e.message) for e in found)
                return _with_cause([e for e in found if len(e.message) == longest])
        if number is not None:
            for api in apis:
                found = [e for e in table if e.api == api and e.number == number]
                if found:
                    return _with_cause(found)
        return None

    def xid(self, number: int) -> Xid | None:
        """The Xid event of that number the table knows, or None."""
        return next((x for x in self.xids if x.number == number), None)

    def arch_floor(self, text: str) -> ArchFloor | None:
        """The library check whose message occurs in ``text`` (case-insensitively; a line
        retyped with double quotes for single ones matches alike)."""
        lowered = text.lower().replace('"', "'")
        found = [f for f in self.arch_floors if f.message.lower().replace('"', "'") in lowered]
        return max(found, key=lambda f: len(f.message)) if found else None

    def arch_feature(self, text: str) -> tuple[ArchFloor, str] | None:
        """The floor entry a line in any library's wording names by one of its ``keywords``
        (case-insensitively, at a word's start), with the whole word as the line writes it: the
        keyword that stands first in the line wins (the sentence's subject: 'Float8 dynamic
        activation quantization' is FP8's); ceilings are never found this way."""
        lowered = text.lower()
        best: tuple[int, int, ArchFloor] | None = None
        for entry in self.arch_floors:
            if entry.ceiling:
                continue
            for word in entry.keywords:
                found = re.search(r"(?<![a-z0-9])" + re.escape(word.lower()), lowered)
                if found is not None and (best is None or found.start() < best[0]):
                    best = (found.start(), found.end(), entry)
        if best is None:
            return None
        start, end, entry = best
        rest = re.match(r"[\w-]*", text[end:])  # the rest of the word: 'quantiz' + 'ation'
        return entry, text[start : end + (len(rest.group()) if rest else 0)]

    def extension(self, name: str) -> Extension | None:
        """The compiled-ops package ``name`` names: its distribution, an import name or one of
        its compiled modules (``mmcv._ext``, ``torch_scatter``, ``amp_C``); None when unknown."""
        wanted = name.strip()
        key = canonicalize_name(wanted)
        for entry in self.extensions:
            if canonicalize_name(entry.package) == key:
                return entry
        for entry in self.extensions:
            if wanted in entry.ops or wanted in entry.modules:
                return entry
        top = wanted.split(".", 1)[0]
        return next((e for e in self.extensions if top in e.modules), None)

    def gpu_build(self, text: str) -> GpuBuild | None:
        """The GPU library whose ``line`` pattern a log line matches (the first in file order),
        or None."""
        return next((b for b in self.gpu_builds if re.search(b.line, text)), None)

    def sm(self, arch: str) -> SmSupport | None:
        return next((s for s in self.sm_support if s.arch == arch), None)

    def archs_compiled_by(self, cuda: Version) -> tuple[SmSupport, ...]:
        """Architectures a CUDA toolkit can compile SASS for."""
        key = major_minor(cuda)
        return tuple(
            s
            for s in self.sm_support
            if s.first_cuda <= key and (s.last_cuda is None or key <= s.last_cuda)
        )

    # --- GPUs -----------------------------------------------------------------------------

    @functools.cached_property
    def _gpu_tokens(self) -> list[tuple[str, GpuModel]]:
        pairs = [(token, gpu) for gpu in self.gpus for token in gpu.match]
        pairs.sort(key=lambda p: len(p[0]), reverse=True)
        return pairs

    @functools.cached_property
    def _gpu_named(self) -> dict[str, GpuModel | None]:
        return {}

    def gpu_model(self, name: str | None) -> GpuModel | None:
        """The model a GPU name denotes, however it is spelled (see ``gpu_name_forms``): the
        longest matching token wins. Each name is looked up once per matrix (the rules ask for
        the node's GPUs hundreds of times in one run: every implied wheel asks for the CPU a
        superchip implies)."""
        if not name:
            return None
        named = self._gpu_named
        if name in named:
            return named[name]
        found = None
        for form in gpu_name_forms(name):
            lowered = form.lower()
            found = next(
                (gpu for token, gpu in self._gpu_tokens if _mentions(token, form, lowered)), None
            )
            if found is not None:
                break
        named[name] = found
        return found

    # --- packages ---------------------------------------------------------------------------

    def torch_release(self, version: Version) -> TorchRelease | None:
        key = public(version)
        return next((t for t in self.torch_releases if t.version == key), None)

    def torch_index_url(self, variant: str) -> str | None:
        return self.torch_index.url_template.format(variant=variant) if self.torch_index else None

    def vllm_release(self, version: Version) -> VllmRelease | None:
        key = public(version)
        return next((v for v in self.vllm_releases if v.version == key), None)

    def ray_release(self, version: Version) -> RayRelease | None:
        key = public(version)
        return next((r for r in self.ray_releases if r.version == key), None)

    def flash_attn_release(self, version: Version) -> FlashAttnRelease | None:
        key = public(version)
        return next((f for f in self.flash_attn_releases if f.version == key), None)

    def isaacsim_release(self, version: Version) -> IsaacSimRelease | None:
        """Isaac Sim pip versions have four parts (4.5.0.0); the matrix keys on three or two."""
        parts = version.release
        for release in sorted(
            self.isaacsim_releases, key=lambda r: len(r.version.release), reverse=True
        ):
            n = len(release.version.release)
            padded = parts + (0,) * (n - len(parts))  # "5.0" names release 5.0.0
            if padded[:n] == release.version.release:
                return release
        return None

    def omnigibson_release(self, version: Version) -> OmniGibsonRelease | None:
        return next(
            (o for o in self.omnigibson_releases if o.versions.contains(version, prereleases=True)),
            None,
        )

    def ptx_cuda(self, isa: str) -> Version | None:
        """The CUDA release that introduced PTX ISA ``isa``; None when the matrix lacks it."""
        return next((p.cuda for p in self.ptx_isas if p.isa == isa), None)

    def first_release(self, package: str, kind: str, name: str) -> Version | None:
        """The first release of ``package`` that has the command / model type ``name``; None
        when the matrix does not know it."""
        wanted = canonicalize_name(package)
        return next(
            (
                r.version
                for r in self.first_releases
                if r.kind == kind and r.name == name and canonicalize_name(r.package) == wanted
            ),
            None,
        )

    def soname(self, name: str) -> tuple[Soname, ...]:
        """The packages that ship the shared library ``name`` as a loader names it
        (``libcudnn.so.9``; a file name with more version parts, ``libcudnn.so.9.1.0``, or a
        Python's ``libpython3.10.so.1.0`` finds its SONAME's entries); one entry per CUDA major
        where the SONAME is shared; () when the matrix does not know it."""
        wanted = name.strip()
        candidates = [wanted]
        base, sep, numbers = wanted.partition(".so")
        parts = [p for p in numbers.split(".") if p] if sep else []
        candidates += [base + ".so." + ".".join(parts[:n]) for n in range(len(parts) - 1, 0, -1)]
        candidates.append(re.sub(r"^libpython3\.[0-9]+m?", "libpython3.X", wanted))
        for candidate in candidates:
            found = tuple(s for s in self.sonames if s.name == candidate)
            if found:
                return found
        return ()

    def import_name(self, module: str) -> ImportName | None:
        """What the matrix knows of the import name ``module`` (its distribution, or the
        release that removed it); a submodule (``cv2.dnn``) finds its package's entry."""
        parts = module.strip().split(".")
        for n in range(len(parts), 0, -1):
            wanted = ".".join(parts[:n])
            found = next((e for e in self.import_names if e.module == wanted), None)
            if found is not None:
                return found
        return None

    def removed_member(self, owner: str, name: str) -> ImportName | None:
        """The curated removal of ``name`` from a class ``owner`` (``DataFrame``, ``append``:
        the entry ``pandas.DataFrame.append``), as an instance's AttributeError names them;
        None when no release is recorded as removing it."""
        suffix = f".{owner}.{name}"
        return next(
            (e for e in self.import_names if e.removed_by and e.module.endswith(suffix)), None
        )

    def python_names(self) -> PythonNames:
        """The generated table of names and modules by release, read on first use."""
        from envcheck.matrix.python_names import read

        return read(self.python_names_files)

    def python_name(self, module: str, name: str) -> NameHistory | None:
        """The releases of the library holding ``module`` that have ``name`` in it; None when
        its presence never changed over the releases scanned (or the library was not)."""
        if not self.python_names_files:
            return None
        return self.python_names().name(module, name)

    def python_module(self, path: str) -> NameHistory | None:
        """The releases that have the module ``path`` (or the deepest parent whose presence
        changed); None when unknown."""
        if not self.python_names_files:
            return None
        return self.python_names().module(path)

    def python_importer(self, distribution: str) -> Importer | None:
        """What each release of the importing package ``distribution`` requires and imports
        (generated/importers.toml); None when unknown."""
        if not self.python_names_files:
            return None
        return self.python_names().importer(distribution)

    def python_importing(self, module: str, name: str | None) -> tuple[Importer, ...]:
        """The importing packages (generated/importers.toml) some release of which imports
        ``name`` from ``module`` (``name`` None: the module)."""
        if not self.python_names_files:
            return ()
        return self.python_names().importing(module, name)

    def removed_symbol(self, symbol: str) -> RemovedSymbol | None:
        """The library release that removed the C symbol ``symbol``; None when unknown."""
        return next((e for e in self.removed_symbols if e.symbol == symbol), None)

    def keyword_changes_for(self, callee: str, keyword: str) -> tuple[KeywordChange, ...]:
        """The releases that added or removed ``keyword`` of ``callee`` (its ``__qualname__``
        as a traceback prints it: ``SFTTrainer.__init__``, or a subclass's that inherits it,
        ``inherited_by``; a bare ``__init__`` from Python before 3.10 matches every class's).
        Underscores are compared loosely, as a pasted
        ``LoraConfig.init()`` lost its dunders to Markdown). An entry whose keyword is ``*``
        stands for every keyword of that callable the table does not name."""

        def bare(name: str) -> str:
            return name.replace("_", "")

        want = bare(callee)
        class_less = "." not in callee

        def named(name: str) -> bool:
            return (
                bare(name) == want
                or (class_less and bare(name).endswith("." + want))
                or ("." not in name and want.endswith("." + bare(name)))
            )

        found = tuple(
            e
            for e in self.keyword_changes
            if e.keyword in (keyword, "*") and any(named(n) for n in (e.callee, *e.inherited_by))
        )
        # an entry for the keyword itself wins over one for any keyword of the callable ("*")
        exact = tuple(e for e in found if e.keyword == keyword)
        return exact or found

    def soname_wheels(self, library: str) -> tuple[str, ...]:
        """The pip wheels that ship ``library``: a name without its .so suffix (``libcublas``)
        for any CUDA major, CUDA 12's first; a soname (``libcublasLt.so.12``, or with the full
        version ``libcublasLt.so.12.1.3.1``) for that major only; () when the matrix knows
        none."""
        if ".so" in library:
            exact = [
                e for e in self.sonames if e.name == library or library.startswith(e.name + ".")
            ]
            if exact:
                return tuple(dict.fromkeys(n for e in exact for n in package_names(e.pip)))
            library = library.split(".so", 1)[0]
        names: list[str] = []
        for entry in self.sonames:
            if entry.name.startswith(library + ".so"):
                names += [n for n in package_names(entry.pip) if n not in names]
        return tuple(sorted(names, key=lambda n: not n.endswith("-cu12")))

    def libstdcxx_label(self, label: str) -> Libstdcxx | None:
        """The first GCC release whose libstdc++ provides ``label`` (GLIBCXX_3.4.30,
        CXXABI_1.3.13); None when the matrix does not know it."""
        return next((e for e in self.libstdcxx if e.symbol_version == label), None)

    def os_glibc(self, os_id: str | None, version: str | None) -> OsRelease | None:
        """The glibc the distribution release ships ("ubuntu", "18.04"); None when unknown."""
        if not os_id or not version:
            return None
        return next(
            (r for r in self.os_releases if r.os == os_id.lower() and r.version == version),
            None,
        )

    def companion(self, package: str, version: Version) -> Companion | None:
        key = canonicalize_name(package)
        return next(
            (
                c
                for c in self.companions
                if canonicalize_name(c.package) == key and c.version == public(version)
            ),
            None,
        )

    def wheel_for(self, package: str, version: Version, arch: str) -> WheelPlatform | None:
        """The ``[[wheel_platform]]`` entry saying ``package`` ``version`` has a wheel for
        ``arch``; None when the matrix says nothing of it."""
        name = canonicalize_name(package)
        return next(
            (
                w
                for w in self.wheel_platforms
                if canonicalize_name(w.package) == name
                and w.arch == arch
                and w.versions.contains(version, prereleases=True)
            ),
            None,
        )

    def wheels_known(self, package: str, arch: str) -> bool:
        """Whether the matrix lists which releases of ``package`` have ``arch`` wheels (then a
        release it does not list has none)."""
        name = canonicalize_name(package)
        return any(
            canonicalize_name(w.package) == name and w.arch == arch for w in self.wheel_platforms
        )

    def bounds_for(self, package: str, version: Version) -> tuple[Bound, ...]:
        """The dependency bounds that apply to this release of ``package``."""
        name = canonicalize_name(package)
        return tuple(
            b
            for b in self.bounds
            if canonicalize_name(b.package) == name
            and b.versions.contains(version, prereleases=True)
        )

    def overrides_for(self, package: str, torch: Version) -> tuple[Override, ...]:
        key = canonicalize_name(package)
        return tuple(
            o
            for o in self.overrides
            if canonicalize_name(o.package) == key
            and o.torch.contains(public(torch), prereleases=True)
        )

    def constant(self, name: str) -> float | None:
        const = self.constants.get(name)
        return const.value if const else None


_ARTICLE = lazy(r"\b(?:the|a|an) ")


def _plain(text: str) -> str:
    """A message compared without case or articles: older tools' wordings drop them
    ("couldn't communicate with NVIDIA driver" of nvidia-smi 3xx)."""
    return _ARTICLE.sub("", text.lower())


def _first_sentence(message: str) -> str | None:
    """The first sentence of a message of several, compared as ``_plain``, when it is long
    enough to name the message alone (40 characters); else None."""
    first, dot, rest = message.partition(". ")
    if not dot or not rest.strip() or len(first) < 40:
        return None
    return _plain(first)


def _with_cause(entries: list[CudaError]) -> CudaError:
    return next((e for e in entries if e.cause), entries[0])


allow_lazy(Matrix)  # a kept merged matrix decodes each table on first use (matrix/merged.py)
