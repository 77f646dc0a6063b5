"""Typed records of the compatibility matrix. Every fact carries its source.

TOML files under ``matrices/`` hold arrays of these tables (``[[torch]]``, ``[[known_bad]]``,
...); the loader converts them with the model codec, so a wrong key or type is reported with
its dotted path. Versions and specifiers are parsed here, once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from envcheck.matrix.generated import (
    CompanionMetadata,
    FlashAttnIndex,
    IsaacSimIndex,
    RayWheels,
    TorchWheel,
    VllmMetadata,
)
from envcheck.model.finding import Applicability, Severity
from envcheck.model.versions import DriverVersion


@dataclass(frozen=True)
class Meta:
    """A matrix file's description, review date and generator."""

    description: str = ""
    reviewed: str | None = None
    generated_by: str | None = None  # set in files written by `envcheck matrix refresh`


@dataclass(frozen=True)
class CudaToolkit:
    """A CUDA minor release and the drivers it needs (NVIDIA release notes, Tables 2 and 3)."""

    cuda: Version
    source: str
    min_driver: DriverVersion | None = None  # driver bundled with the GA toolkit: full support
    minor_compat_min_driver: DriverVersion | None = None  # floor of minor-version compatibility
    verified: bool = True
    note: str | None = None


@dataclass(frozen=True)
class DriverBranch:
    """An NVIDIA driver branch and the newest CUDA it supports."""

    branch: int
    max_cuda: Version
    source: str
    verified: bool = True
    note: str | None = None


@dataclass(frozen=True)
class SmSupport:
    """Which CUDA toolkits can compile code for an architecture (sm_90, sm_120, ...)."""

    arch: str
    first_cuda: Version
    source: str
    last_cuda: Version | None = None  # None: still supported
    verified: bool = True
    note: str | None = None
    # the last driver branch that supports GPUs of this architecture (R580 for Volta); None: all
    last_driver_branch: int | None = None
    # the first Triton release whose bundled ptxas compiles this architecture (Triton JIT
    # compiles with its own ptxas unless TRITON_PTXAS_PATH names another); None: unknown
    first_triton: Version | None = None
    first_triton_source: str | None = None


@dataclass(frozen=True)
class GpuModel:
    """A GPU model: how its name matches, its compute capability and architecture."""

    name: str
    match: tuple[str, ...]  # tokens matched as whole words in the name NVML/nvidia-smi reports
    compute_capability: Version
    architecture: str
    source: str
    rt_cores: bool | None = None
    rt_cores_source: str | None = None
    # a datacenter part: CUDA forward compatibility (cuda-compat) is available for it only
    datacenter: bool | None = None
    datacenter_source: str | None = None
    # the CPU a superchip pairs it with (GH200, GB200, GB10: Grace, aarch64): the node's CPU
    # when the report does not state it
    host_arch: Literal["x86_64", "aarch64"] | None = None
    host_arch_source: str | None = None
    verified: bool = True
    note: str | None = None


@dataclass(frozen=True)
class TorchRelease:
    """A torch release: its Pythons, CUDA variants, pins and architecture list."""

    version: Version
    python: tuple[str, ...]
    variants: tuple[str, ...]
    source: str
    pypi_default: str | None = None
    pins: dict[str, SpecifierSet] = field(default_factory=dict)  # PyPI Linux x86_64 wheel
    arch_list: dict[str, str] = field(default_factory=dict)  # variant -> "7.5;8.0;...;12.0+PTX"
    arch_list_verified: dict[str, bool] = field(default_factory=dict)
    numpy2: bool | None = None
    verified: bool = True
    note: str | None = None


@dataclass(frozen=True)
class TorchIndex:
    """The URL template of torch's wheel index, one index per variant."""

    url_template: str  # "https://download.pytorch.org/whl/{variant}"
    source: str


@dataclass(frozen=True)
class VllmRelease:
    """A vLLM release and the torch, CUDA and companions it requires."""

    version: Version
    source: str
    requires_python: SpecifierSet | None = None
    torch: SpecifierSet | None = None
    torchvision: SpecifierSet | None = None
    xformers: SpecifierSet | None = None
    ray: SpecifierSet | None = None
    numpy: SpecifierSet | None = None
    flashinfer: SpecifierSet | None = None
    cuda: Version | None = None  # CUDA of the torch its PyPI wheel pins
    verified: bool = True
    note: str | None = None


@dataclass(frozen=True)
class RayRelease:
    """A Ray release and the Pythons it has wheels for."""

    version: Version
    python: tuple[str, ...]
    source: str
    verified: bool = True


@dataclass(frozen=True)
class FlashAttnRelease:
    """A flash-attn release and the torch, Python and CUDA of its prebuilt wheels."""

    version: Version
    prebuilt_torch: tuple[str, ...]  # torch major.minor with prebuilt wheels
    python: tuple[str, ...]
    cuda_tag: Literal["major+minor", "major"]
    source: str
    verified: bool = True
    # false: the release's cxx11abiFALSE wheels (for PyPI's old-ABI torch) do not load on such a
    # torch (they ask for C++11-ABI symbols); reports for 2.8.x (flash-attention#1783)
    cxx11abi_false_loads: bool = True


@dataclass(frozen=True)
class IsaacSimRelease:
    """An Isaac Sim release: its Python, glibc, drivers and NumPy."""

    version: Version
    source: str
    python: str | None = None  # the one CPython minor the release is built for
    glibc: Version | None = None  # minimum glibc of its pip wheels
    min_driver: DriverVersion | None = None  # Kit refuses older drivers for RTX
    validated_driver: DriverVersion | None = None
    numpy: SpecifierSet | None = None
    verified: bool = True
    note: str | None = None


@dataclass(frozen=True)
class OmniGibsonRelease:
    """OmniGibson releases and the Isaac Sim, Python and NumPy they need."""

    versions: SpecifierSet
    source: str
    isaacsim: SpecifierSet | None = None
    python: str | None = None
    numpy: SpecifierSet | None = None
    verified: bool = True
    note: str | None = None


@dataclass(frozen=True)
class OsRelease:
    """The glibc a Linux distribution release ships (``os``: the os-release ID, ``ubuntu``;
    ``version``: its VERSION_ID, ``18.04``): what a node that states only its OS runs."""

    os: str
    version: str
    glibc: Version
    source: str
    note: str | None = None
    # the release's default libstdc++.so.6 (x86_64): its newest GLIBCXX_3.4.x and CXXABI_1.3.x
    # labels, and the first GCC release that provides that GLIBCXX label
    glibcxx_max: str | None = None
    cxxabi_max: str | None = None
    libstdcxx_gcc: str | None = None
    verified: bool = True


@dataclass(frozen=True)
class Soname:
    """A shared library's SONAME as a loader error names it (``libcudnn.so.9``) and the
    packages that ship it: a pip wheel (``pip``, with the directory it installs the file in),
    Debian/Ubuntu (``apt``; ``apt_nvidia``: NVIDIA's CUDA apt repository, X = the CUDA minor),
    RHEL (``dnf``) and conda. CUDA libraries whose SONAME is the same across CUDA majors
    (libcurand.so.10) have one entry per ``cuda_major``. ``toolkit_dir``: the directory under
    the CUDA toolkit's root that holds it when that is not ``lib64`` (CUPTI:
    ``extras/CUPTI/lib64``)."""

    name: str
    kind: str
    source: str
    cuda_major: int | None = None
    pip: str | None = None
    pip_dir: str | None = None
    toolkit_dir: str | None = None
    apt: str | None = None
    apt_nvidia: str | None = None
    dnf: str | None = None
    conda: str | None = None
    # the release line of the conda package whose build ships this SONAME (libffi.so.7: libffi
    # 3.3; the package's newer builds ship the next SONAME), pinned in the conda command
    conda_release: str | None = None
    note: str | None = None
    unverified_fields: str | None = None


@dataclass(frozen=True)
class ImportName:
    """A Python import name (``cv2``, ``torch._six``) and the distribution that provides it
    when the names differ (opencv-python), or the release that removed it (``removed_by``:
    the distribution, or ``python`` for the standard library; ``removed_in``: its version)."""

    module: str
    source: str
    distribution: str | None = None
    removed_by: str | None = None
    removed_in: Version | None = None
    replacement: str | None = None
    verified: bool = True
    note: str | None = None
    # the requirement of the package that imported the removed name whose releases from then on
    # no longer import it (`deepspeed>=0.14.4` for torch's elastic agent `log`): the importer's
    # upgrade, which threads run instead of pinning the library back
    importer_fix: str | None = None
    # the distribution's own compiled extension under a top-level name (flash_attn_2_cuda):
    # missing means the installed distribution lacks its build, so the fix reinstalls it built
    # here (--no-build-isolation), not a plain install that pip answers 'already satisfied'
    compiled: bool = False
    # the libraries that import this module whenever its distribution is installed, whether or
    # not the job uses it (accelerate's `if is_fp8_available(): import transformer_engine`): a
    # broken build of it fails their import too, and removing it is the fix threads take
    imported_when_installed: str | None = None
    # a standard-library module compiled only when a C library's headers were present when that
    # Python was built (`_lzma`: liblzma): the OS development packages it needs
    apt: str | None = None
    dnf: str | None = None
    brew: str | None = None
    # a PyPI backport of a standard-library module (``distribution`` enum34 for ``enum``): the
    # Python release whose standard library has the module; on that Python or a later one the
    # backport in site-packages shadows the interpreter's own module (PY171)
    stdlib_since: Version | None = None


@dataclass(frozen=True)
class NameSpan:
    """Releases of a library that have a name or a module: from ``first`` through ``last``
    (None: still in the newest release scanned); ``gone`` is the first release without it after
    ``last`` (generated/python_names.toml)."""

    first: Version
    last: Version | None = None
    gone: Version | None = None


@dataclass(frozen=True)
class NameHistory:
    """Which releases of ``distribution`` have the name ``name`` in ``module`` (``name`` None:
    the module path itself), read from the library's own source history over the releases
    ``oldest`` .. ``newest`` (generated/python_names.toml, scripts/gen_python_names.py)."""

    distribution: str
    module: str
    name: str | None
    spans: tuple[NameSpan, ...]
    oldest: Version
    newest: Version
    source: str

    def added(self) -> NameSpan | None:
        """The span that is still open in the newest release, when it starts after the oldest
        release scanned (so its ``first`` is the release that added the name)."""
        last = self.spans[-1] if self.spans else None
        if last is None or last.last is not None or last.first <= self.oldest:
            return None
        return last

    def removed(self) -> NameSpan | None:
        """The last span, when a release after it no longer has the name."""
        last = self.spans[-1] if self.spans else None
        return last if last is not None and last.gone is not None else None

    def has(self, version: Version) -> bool | None:
        """Whether ``version`` has the name; None when it is outside the releases scanned."""
        if version < self.oldest or version > self.newest:
            return None
        return any(
            span.first <= version and (span.gone is None or version < span.gone)
            for span in self.spans
        )

    def next_added(self, version: Version) -> NameSpan | None:
        """The first span that starts after ``version`` (the release to upgrade to)."""
        return next((s for s in self.spans if s.first > version), None)

    def last_before(self, version: Version) -> NameSpan | None:
        """The last span that ended at or before ``version`` (the release to go back to)."""
        ended = [s for s in self.spans if s.gone is not None and s.gone <= version]
        return ended[-1] if ended else None


@dataclass(frozen=True)
class RemovedSymbol:
    """A C symbol a release of a library removed (``iJIT_NotifyEvent``, gone from MKL 2024.1):
    a binary built against an earlier release fails with `undefined symbol: <symbol>` when the
    newer one loads. ``removed_by`` is the package that ships the library (its conda and pip
    name), ``removed_in`` the first release without it, ``last`` the last release with it."""

    symbol: str
    removed_by: str
    removed_in: Version
    source: str
    last: str | None = None
    library: str | None = None  # the library as users know it ("Intel MKL")
    note: str | None = None


@dataclass(frozen=True)
class KeywordChange:
    """A keyword argument one release of a library added to or removed from a callable
    (trl 0.16 removed ``SFTTrainer.__init__``'s ``tokenizer``; peft 0.10 added ``LoraConfig``'s
    ``layer_replication``): a caller written for the other side fails with ``TypeError:
    SFTTrainer.__init__() got an unexpected keyword argument 'tokenizer'``. ``callee`` is the
    callable as Python names it (its ``__qualname__``), ``package`` the distribution that ships
    it; ``removed_in`` the first release without the keyword (``last`` the last with it),
    ``added_in`` the first release with it, ``passed_from`` the first release whose own code
    passes it to an override; ``replacement`` the keyword that took its place,
    ``workaround`` a fix that needs no other release (a key to drop from a saved config)."""

    package: str
    callee: str
    keyword: str
    source: str
    removed_in: Version | None = None
    last: str | None = None
    added_in: Version | None = None
    # the package's own code passes the keyword to a method others override (transformers'
    # Trainer to a subclass's compute_loss) from this release on; ``callee`` is then the bare
    # method name, matched on any class
    passed_from: Version | None = None
    replacement: str | None = None
    workaround: str | None = None
    note: str | None = None
    # the packages whose own code passes the keyword to the callee, each as the requirement of
    # its releases that do: the other side of the skew ("trl>=0.12.0" for an added keyword,
    # pinned below that release; "openai<1.55.3" for a removed one, upgraded to that release)
    callers: tuple[str, ...] = ()
    # the callable under the names of subclasses that inherit it, as a traceback prints them
    # (vLLM's AsyncEngineArgs.__init__ is EngineArgs.__init__, a dataclass's inherited fields)
    inherited_by: tuple[str, ...] = ()
    # a keyword no release of the library took: another package's own copy of the callable
    # takes it (verl's LLM for vLLM 0.6.3 takes model_hf_config), and that package uses its
    # copy only with the library releases ``vendored_for`` ("vllm==0.6.3"); with any other
    # release installed, the package's call reaches the library's own callable and fails
    vendored_by: str | None = None
    vendored_for: str | None = None


@dataclass(frozen=True)
class Libstdcxx:
    """A symbol-version label of libstdc++.so.6 (``GLIBCXX_3.4.30``, ``CXXABI_1.3.13``) and
    the first GCC release whose libstdc++ provides it (the labels are cumulative)."""

    symbol_version: str
    gcc: str
    gcc_major: int
    source: str
    cxxabi_max: str | None = None
    libstdcxx_file: str | None = None
    note: str | None = None


@dataclass(frozen=True)
class PtxIsa:
    """A PTX ISA version and the CUDA release that introduced it: a driver JIT-compiles PTX of
    ISA ``isa`` only when its CUDA is at least ``cuda`` (NVIDIA's PTX release history)."""

    isa: str  # "8.5"
    cuda: Version
    source: str
    note: str | None = None


@dataclass(frozen=True)
class FirstRelease:
    """The first release of ``package`` that has ``name``: a command of its command-line tool
    (``kind = "command"``: trl's ``vllm-serve``), a model type its auto classes know
    (``kind = "model_type"``: transformers' ``qwen2``), or a C-API / C-ABI version of its headers
    (``kind = "c_api"`` / ``"c_abi"``: NumPy's ``0x10``, in hex as its import check prints it),
    or, for ``package = "python"``, a language feature by the error an older interpreter
    raises on it (``kind = "syntax"``: ``object is not subscriptable`` for ``list[int]``), or,
    for ``package = "glibc"``, a libc.so.6 symbol (``kind = "symbol"``: ``fcntl64`` is 2.28)."""

    package: str
    kind: Literal["command", "model_type", "c_api", "c_abi", "syntax", "symbol"]
    name: str
    version: Version
    source: str
    note: str | None = None


@dataclass(frozen=True)
class Companion:
    """A package built against exactly one torch release (torchvision, torchaudio, xformers)."""

    package: str
    version: Version
    torch: Version
    source: str
    verified: bool = True


@dataclass(frozen=True)
class LegacyTorch:
    """A torch release older than the ``[[torch]]`` table's first, with the CUDA variants its
    Linux wheels were published in (pytorch.org's 'Previous PyTorch Versions'): what a project
    pinned to that release installs for a GPU its default build has no kernels for."""

    version: Version
    variants: tuple[str, ...]
    source: str


@dataclass(frozen=True)
class WheelPlatform:
    """Which releases of a package the index serves as wheels for one CPU architecture (the
    rest are an sdist there: pip builds it, which for a CUDA package needs the toolkit and
    hours, or fails). Read from the wheels' file names on the index (their platform tags)."""

    package: str
    arch: Literal["x86_64", "aarch64"]
    versions: SpecifierSet  # the releases with a wheel for ``arch``
    source: str
    wheels: tuple[str, ...] = ()  # platform tags or file names the range was read from
    cuda: bool = True  # whether those wheels are CUDA builds (PyPI's aarch64 torch: no)
    verified: bool = True
    note: str | None = None


@dataclass(frozen=True)
class Bound:
    """What releases of a package really need of a dependency, beyond what their metadata says
    (vLLM <= 0.11.0 declares transformers>=4.x with no cap, and breaks on transformers 5)."""

    package: str
    versions: SpecifierSet  # the releases of ``package`` this applies to
    dependency: str
    allowed: SpecifierSet  # the dependency versions those releases work with
    reason: str
    source: str
    symptom: str | None = None
    verified: bool = True
    note: str | None = None
    # the requirement to install when it is narrower than ``allowed`` (the release's own extra
    # pins vllm==0.7.2; "{version}" is the installed release: trl[vllm]=={version});
    # default: ``dependency`` + ``allowed``
    install: str | None = None
    # a setting that lets the pair run as it is, where the thread established one (VLLM_USE_V1=0)
    workaround: str | None = None
    # the releases import the dependency without declaring it (triton 3.0-3.2 and setuptools):
    # a lock that holds them must hold the dependency too
    required: bool = False


@dataclass(frozen=True)
class Override:
    """A known-good replacement for one of torch's own pins."""

    package: str
    versions: tuple[str, ...]
    replaces: SpecifierSet
    torch: SpecifierSet
    reason: str
    source: str
    verified: bool = True


@dataclass(frozen=True)
class GpuCondition:
    """Which GPUs a known-bad entry applies to."""

    names: tuple[str, ...] = ()
    compute_capability: SpecifierSet | None = None
    rt_cores: bool | None = None
    min_count: int = 1


@dataclass(frozen=True)
class Condition:
    """All given parts must hold; ``any`` holds when one of its conditions does."""

    packages: dict[str, SpecifierSet] = field(default_factory=dict)
    absent: tuple[str, ...] = ()
    # not installed, or not shown by a partial package list (an opt-in extra a filtered dump
    # would not name): the rule says so rather than skipping
    absent_or_unlisted: tuple[str, ...] = ()
    installer: dict[str, str] = field(default_factory=dict)
    gpu: GpuCondition | None = None
    driver: SpecifierSet | None = None
    python: SpecifierSet | None = None
    torch_cuda: SpecifierSet | None = None
    # true: torch is a CPU-only build (+cpu, 'CUDA used to build PyTorch: None', conda *_cpu_*);
    # false: it is not known to be one (not installed, a CUDA/ROCm build, or a build not stated)
    torch_cpu: bool | None = None
    # false: the CUDA toolkit on PATH (nvcc) has another major than torch's CUDA; true: same major
    nvcc_matches_torch: bool | None = None
    glibc: SpecifierSet | None = None  # the system glibc (ldd --version)
    # true: a log shows the CUDA toolkit compiling (an extension build, a JIT compiler)
    nvcc_in_use: bool | None = None
    # false: no nvcc on PATH or under CUDA_HOME (unknown unless the source looked); true: one found
    nvcc_found: bool | None = None
    # the NCCL a log states the job loaded (NCCL's banner) is in this range / was built for
    # this CUDA; false when no log states it
    nccl_loaded: SpecifierSet | None = None
    nccl_loaded_cuda: SpecifierSet | None = None
    # the node's CPU architecture is one of these (uname -m: "aarch64", "x86_64")
    arch: tuple[str, ...] = ()
    env_set: tuple[str, ...] = ()
    env_unset: tuple[str, ...] = ()
    any: tuple[Condition, ...] = ()


@dataclass(frozen=True)
class Evidence:
    """A line of evidence a known-bad entry shows when its condition holds."""

    when: Condition
    severity: Severity
    text: str
    verified: bool = True


@dataclass(frozen=True)
class FixSpec:
    """A known-bad entry's fix: what to install, uninstall, set or do."""

    summary: str
    applicability: Applicability
    pip: tuple[str, ...] = ()
    pip_flags: tuple[str, ...] = ()
    pip_uninstall: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    manual: tuple[str, ...] = ()


@dataclass(frozen=True)
class KnownBad:
    """A known-bad combination: when it applies, its cause, source and fix."""

    code: str
    id: str
    title: str
    severity: Severity
    when: Condition
    message: str  # may name facts: {torch}, {numpy}, ... (package versions), {driver}, {gpu}
    symptom: str
    cause: str
    source: str
    fix: FixSpec | None = None
    evidence: tuple[Evidence, ...] = ()
    verified: bool = True
    note: str | None = None


@dataclass(frozen=True)
class Constant:
    """A named value the rules use, with its source."""

    name: str
    value: float
    source: str
    note: str | None = None


@dataclass(frozen=True)
class Signature:
    """A log line that means something (``envcheck triage``): a regex in the common subset of
    Python ``re``, RE2 and POSIX ERE (``grep -E``; no ``(?...)``, ``\\d``-style escapes,
    backreferences, lazy quantifiers or lookaround), what it means, and the rules that can
    confirm or rule out its causes, most likely first. ``noise`` marks benign lines."""

    id: str
    pattern: str
    meaning: str
    source: str
    causes: tuple[str, ...] = ()
    noise: bool = False
    verified: bool = True
    note: str | None = None  # what to check when no rule can (causes beyond one node's facts)
    # Python regexes with named groups, run only on the lines this signature matched (and the
    # ``context`` lines after the first one): each group is a fact (envcheck/triage/extract.py)
    extract: tuple[str, ...] = ()
    context: int = 0
    # the lines before the first match the extractors also read, as one block ending at the
    # line before it (a traceback's frames above `ImportError: cannot import name ...`)
    context_before: int = 0
    # causes the line itself establishes, whatever the node's facts say ("sm_120 is not
    # compatible with the current PyTorch installation" is TOR101 by definition)
    confirms: tuple[str, ...] = ()
    # the distribution whose own runtime check prints the matched line (LLaMA-Factory's
    # check_version): a ``requirement`` its extractors read is that distribution's requirement
    requirer: str | None = None
    # a family-wide line (any undefined symbol, any resolver conflict): tried after every
    # specific signature, so that a line a specific signature knows is named by that one
    generic: bool = False
    # causes the line's stated facts may decide (the rule's ``@from_log`` reads what the log
    # states and leaves the cause open when it says nothing): a line whose signature
    # ``confirms`` the code outright wins over these
    decides: tuple[str, ...] = ()


@dataclass(frozen=True)
class Xid:
    """An Xid event the NVIDIA kernel driver logs (``NVRM: Xid (PCI:0000:3b:00): 79, ...``):
    its number, the driver's own name for it (nverror.h) and what it means; ``fault`` is who is
    likely at fault (``application``: the program's own bug, not the node; ``driver``;
    ``hardware``; ``thermal-power``), ``action`` the recommended step, in order."""

    number: int
    name: str  # the driver's mnemonic: ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS
    meaning: str
    fault: Literal["application", "driver", "hardware", "thermal-power"]
    action: str
    source: str
    note: str | None = None


@dataclass(frozen=True)
class CudaError:
    """An error code of the CUDA runtime (``cudaError_t``), the CUDA driver (``CUresult``) or NVML
    (``nvmlReturn_t``) with the text the library prints for it (``cudaGetErrorString``,
    ``cuGetErrorString``, ``nvmlErrorString``), or a line nvidia-smi prints when it fails
    (``api = "nvidia-smi"``, ``number`` its exit code). ``cause``/``fix``: what it means on a node
    and what to do, where it is a node problem (an application bug has none)."""

    api: Literal["runtime", "driver", "nvml", "nvidia-smi"]
    name: str  # cudaErrorNoDevice, CUDA_ERROR_NO_DEVICE, NVML_ERROR_UNKNOWN
    message: str
    source: str
    number: int | None = None
    cause: str | None = None
    fix: str | None = None
    # "program": the failing job (its arguments, its kernel, its size) is at fault, not the node
    fault: Literal["node", "program"] = "node"
    note: str | None = None


@dataclass(frozen=True)
class ArchFloor:
    """The compute capability a library's kernel, op or dtype needs, read from the library's own
    check; ``message`` is the text of that check as the library prints it (how a log line finds
    its entry)."""

    package: str
    feature: str  # what needs the GPU: "fp8e4nv (float8_e4m3fn) in a Triton kernel"
    message: str
    fix: str
    source: str
    # None: the line states the floor itself (xformers' 'requires device with capability > (8, 0)')
    min_compute_capability: Version | None = None
    # what the line means on a GPU at or above the floor (FlashInfer's check misfires there),
    # and what to do then
    at_or_above: str | None = None
    at_or_above_fix: str | None = None
    # true: nothing of the package runs below the floor (FlashInfer), so installing it on such
    # GPUs is itself the problem; false: only the feature does (Triton's fp8e4nv)
    whole_package: bool = False
    note: str | None = None
    # true: the check refuses GPUs NEWER than the release's kernels or dispatch know (xformers'
    # 'requires device with capability <= (9, 0) ... (too new)'): a ceiling, read by TOR190;
    # the bound is ``max_compute_capability``, or, None, the one the line states
    ceiling: bool = False
    max_compute_capability: Version | None = None
    # the words any library's check names the feature by ('bf16', 'bfloat16', 'flash attention'):
    # a line in a wording no message matches, that states its floor, finds the entry by the
    # keyword it names first (the line's stated floor wins over min_compute_capability)
    keywords: tuple[str, ...] = ()
    # what runs on a GPU below the floor (another dtype, attention or quantization), worded for
    # any floor a line states; read with ``keywords`` (``fix`` names this entry's own floor)
    fallback: str | None = None


@dataclass(frozen=True)
class ExtensionWheels:
    """The releases of a compiled-ops package its wheel index serves for one CUDA release and
    torch minor (mmcv's docs/en/_static/version.json: cu121 + torch 2.4.x -> 2.2.0 only)."""

    cuda: str  # "12.1"
    torch: str  # "2.4" (every 2.4.x)
    versions: tuple[str, ...]


@dataclass(frozen=True)
class Extension:
    """A package whose CUDA/C++ ops are compiled against one torch and CUDA (detectron2, mmcv,
    torch-scatter, apex): how to get a build for the installed torch, read from the package's
    own install docs and setup.py. ``modules``: its import names; ``ops``: the compiled modules
    a build without its CUDA ops lacks (``mmcv._ext``, apex's ``amp_C``); ``wheel_index``: a
    find-links URL with ``{torch}`` (2.1.0), ``{torch_mm}`` (2.1) and ``{cuda_tag}`` (cu121);
    ``installer``: the tool its docs install wheels with (``mim``); ``build``: its documented
    build-from-source command (``{requirement}`` stands for what to install); ``arch_env``: the
    variable its build reads the GPU architectures from, when not TORCH_CUDA_ARCH_LIST."""

    package: str
    modules: tuple[str, ...]
    source: str
    ops: tuple[str, ...] = ()
    wheel_index: str | None = None
    installer: str | None = None
    build: str | None = None
    arch_env: str | None = None
    note: str | None = None
    # the releases the wheel index serves per CUDA and torch minor (Linux), where the package
    # publishes that table: a requirement no wheel meets for the installed torch is a source build
    wheels: tuple[ExtensionWheels, ...] = ()


@dataclass(frozen=True)
class GpuBuild:
    """How a GPU library (ONNX Runtime, JAX, CuPy, llama.cpp, ...) is installed with its CUDA
    part, from its own install documentation: ``line`` (a regex) finds the entry from a log line
    that names the library; ``install`` are the commands that install the CUDA build
    (``{cuda}`` stands for the CUDA major, one of ``cuda_majors``, the node's where known, else
    ``cuda_default``); ``cuda_libs`` the commands that install the CUDA and cuDNN libraries the
    build loads at run time, and ``requires`` what it needs of them, as its documentation says."""

    library: str  # the library as users know it ("ONNX Runtime")
    package: str  # the distribution whose build is at fault ("onnxruntime")
    line: str
    install: tuple[str, ...]
    source: str
    cuda_majors: tuple[int, ...] = ()
    cuda_default: int | None = None
    cuda_libs: tuple[str, ...] = ()
    requires: str | None = None
    note: str | None = None


@dataclass(frozen=True)
class MatrixFile:
    """One TOML file of the matrix, as written."""

    meta: Meta = field(default_factory=Meta)
    toolkit: tuple[CudaToolkit, ...] = ()
    driver_branch: tuple[DriverBranch, ...] = ()
    sm: tuple[SmSupport, ...] = ()
    gpu: tuple[GpuModel, ...] = ()
    torch: tuple[TorchRelease, ...] = ()
    torch_index: tuple[TorchIndex, ...] = ()
    vllm: tuple[VllmRelease, ...] = ()
    ray: tuple[RayRelease, ...] = ()
    flash_attn: tuple[FlashAttnRelease, ...] = ()
    isaacsim: tuple[IsaacSimRelease, ...] = ()
    omnigibson: tuple[OmniGibsonRelease, ...] = ()
    os_release: tuple[OsRelease, ...] = ()
    first_release: tuple[FirstRelease, ...] = ()
    ptx_isa: tuple[PtxIsa, ...] = ()
    soname: tuple[Soname, ...] = ()
    libstdcxx: tuple[Libstdcxx, ...] = ()
    import_name: tuple[ImportName, ...] = ()
    removed_symbol: tuple[RemovedSymbol, ...] = ()
    keyword_change: tuple[KeywordChange, ...] = ()
    companion: tuple[Companion, ...] = ()
    legacy_torch: tuple[LegacyTorch, ...] = ()
    override: tuple[Override, ...] = ()
    bound: tuple[Bound, ...] = ()
    wheel_platform: tuple[WheelPlatform, ...] = ()
    known_bad: tuple[KnownBad, ...] = ()
    constant: tuple[Constant, ...] = ()
    signature: tuple[Signature, ...] = ()
    cuda_error: tuple[CudaError, ...] = ()
    arch_floor: tuple[ArchFloor, ...] = ()
    extension: tuple[Extension, ...] = ()
    gpu_build: tuple[GpuBuild, ...] = ()
    xid: tuple[Xid, ...] = ()
    # written by `envcheck matrix refresh` (see envcheck/matrix/generated.py)
    torch_wheel: tuple[TorchWheel, ...] = ()
    vllm_metadata: tuple[VllmMetadata, ...] = ()
    ray_wheels: tuple[RayWheels, ...] = ()
    flash_attn_index: tuple[FlashAttnIndex, ...] = ()
    isaacsim_index: tuple[IsaacSimIndex, ...] = ()
    companion_metadata: tuple[CompanionMetadata, ...] = ()
