"""TOR110: a CPU-only torch on a node with NVIDIA GPUs."""

from __future__ import annotations

from collections.abc import Iterable

from packaging.version import Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.model import public
from envcheck.model.finding import Fix, Severity
from envcheck.model.report import Gpu
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.choose import torch_choices
from envcheck.rules.data import render_fix
from envcheck.rules.fixes import fix, from_spec, manual, pip_install
from envcheck.rules.node.gpu_state import CUDA_UNUSABLE, cuda_unusable_cause


def _capabilities(facts: Facts, gpus: Iterable[Gpu]) -> list[Version]:
    """The compute capabilities known of these GPUs (an unknown model is left out)."""
    ccs = []
    for gpu in gpus:
        try:
            ccs.append(facts.compute_capability(gpu))
        except Skip:
            continue
    return ccs


def _cuda_build_fix(facts: Facts, torch: Version, ccs: list[Version]) -> Fix | None:
    """The same torch release as a CUDA build with kernels for the GPUs that the driver runs
    (else the closest newer release that has one)."""
    try:
        driver: Version | None = facts.driver()
        max_cuda: Version | None = facts.max_cuda()[0]
    except Skip:
        driver = max_cuda = None
    release = facts.matrix.torch_release(torch)
    pools = [[release]] if release is not None else []
    pools.append([r for r in facts.matrix.torch_releases if r.version >= public(torch)])
    for pool in pools:
        for minor_compat in (False, True):
            choices = torch_choices(
                facts.matrix,
                ccs=ccs,
                driver=driver,
                max_cuda=max_cuda,
                releases=pool,
                allow_minor_compat=minor_compat,
            )
            if choices:
                oldest = min(c.release.version for c in choices)
                best = next(c for c in choices if c.release.version == oldest)
                url = facts.matrix.torch_index_url(best.variant)
                return fix(
                    f"Replace the CPU-only torch with torch {best.release.version}+{best.variant}, "
                    "a CUDA build with kernels for every GPU here"
                    + (" that this driver runs" if driver is not None else "")
                    + " (then reinstall torchvision/torchaudio for it)",
                    "unsafe",
                    pip_install(
                        f"torch=={best.release.version}",
                        index_url=url,
                        flags=("--force-reinstall",),
                    ),
                )
    return None


def _cpu_torch_gpus_unstated(facts: Facts) -> list[Hit]:
    """A pasted or declared environment that shows a CPU-only torch and says nothing of GPUs
    (a `conda list` excerpt, xformers.info): a warning, since on a GPU node nothing would use
    the GPUs, and on a CPU machine it is what was wanted."""
    torch = facts.torch_version()
    # the CUDA build of that release the table knows (no GPU known: the default CUDA variant)
    concrete = _cuda_build_fix(facts, torch, [])
    return [
        Hit(
            f"torch {torch} is a CPU-only build, and the text states no GPU: on a node with "
            "NVIDIA GPUs torch.cuda.is_available() is False and nothing runs on them",
            evidence={"torch": str(torch), "gpus": None},
            fix=fix(
                f"On a GPU node install a CUDA build of torch {public(torch)} instead",
                "manual",
                *(concrete.actions if concrete is not None else ()),
                manual(
                    "conda: a pytorch build whose string names cuda, with pytorch-cuda (or "
                    "cudatoolkit for torch < 1.13) and without the cpuonly package; pip: torch "
                    "from the PyTorch index of a CUDA variant the GPUs and driver support"
                ),
            ),
            severity=Severity.WARNING,
        )
    ]


@rule("TOR110", "cpu-only-torch-on-gpu-node", Severity.ERROR)
def cpu_torch_on_gpu_node(facts: Facts) -> Iterable[Hit]:
    """A CPU-only torch build is installed on a node with NVIDIA GPUs

    ## What it checks
    Whether the installed torch is a CPU-only build (a `+cpu` version, `CUDA used to build
    PyTorch: None` in collect_env, conda's `pytorch ... py3.9_cpu_0` build, the `cpu` variant
    in a spec) while the node reports NVIDIA GPUs.

    ## Why it matters
    Everything imports, and nothing uses the GPUs: `torch.cuda.is_available()` is False,
    `AssertionError: Torch not compiled with CUDA enabled`, vLLM and DeepSpeed stop with
    `No CUDA GPUs are available` or fall back to the CPU. It happens when pip resolved torch from
    a CPU index (`--index-url .../cpu`, a mirror), when conda picked the `cpuonly` build, or when
    a package's pin replaced a CUDA build with PyPI's CPU wheel for macOS/Windows-like markers.

    ## Example
    torch 2.4.0+cpu with 8 x NVIDIA H100 80GB HBM3 on driver 550.54.15. A pasted environment
    that shows a CPU-only torch but states no GPU (a `conda list` excerpt with `py3.8_cpu_0`)
    gets a warning.

    ## Fix
    Install the CUDA build of the same torch release that has kernels for the GPUs here and that
    the driver runs (from the PyTorch index of that CUDA variant), then reinstall the packages
    built against torch (torchvision, torchaudio).

    ## References
    - https://pytorch.org/get-started/locally/
    - https://github.com/pytorch/pytorch/issues/30664
    """
    cpu = facts.torch_is_cpu()
    if cpu is None:
        raise Skip("whether torch is a CPU-only build is unknown")
    if not cpu:
        return []
    try:
        gpus = facts.gpus()
    except Skip:
        # probed, or a text whose own GPU query failed (collect_env's 'Could not collect'):
        # the GPU facts are missing for a reason of their own, not left unsaid
        if not facts.declared or facts.report.gpu.query_failed:
            raise
        return _cpu_torch_gpus_unstated(facts)
    if not gpus:
        return []
    torch = facts.torch_version()
    ccs = _capabilities(facts, gpus)
    return [
        Hit(
            f"torch {torch} is a CPU-only build on a node with {facts.gpu_summary(gpus)}: "
            "torch.cuda.is_available() is False and nothing runs on the GPUs",
            evidence={"torch": str(torch), "gpus": [g.name for g in gpus]},
            fix=_cuda_build_fix(facts, torch, ccs),
        )
    ]


_NOT_COMPILED = (
    "torch-not-compiled-with-cuda"  # matrices/signatures/arch.toml: torch's own statement
)
# matrices/signatures/build.toml: torch's extension builder parsing a torch.version.cuda of None
_BUILD_CHECK = "cpp-extension-cpu-torch"

# conda's classic solver can settle on the CPU build of pytorch where mamba (libmamba) picks the
# CUDA build for the same environment file: https://github.com/PMBio/deeprvat/issues/16
_INSTALL_CUDA_BUILD = (
    "pip: torch from the PyTorch index of a CUDA variant the GPUs and driver support; conda: a "
    "pytorch build whose string names cuda, with pytorch-cuda (cudatoolkit for torch < 1.13) and "
    "without the cpuonly package (`conda list pytorch` shows the build); when conda's solver keeps "
    "choosing the CPU build, solve the environment with mamba (or conda's libmamba solver)"
)


def _cpu_fallback(facts: Facts, torch: Version | None) -> tuple[str, Fix] | None:
    """A known-bad entry for CPU-only builds (``torch_cpu = true``) that names this torch release:
    why the package manager installed the CPU build, and its fix."""
    if torch is None:
        return None
    for entry in facts.matrix.known_bad:
        spec = entry.when.packages.get("torch")
        if entry.when.torch_cpu is not True or spec is None or entry.fix is None:
            continue
        if spec.contains(public(torch), prereleases=True):
            return entry.title, from_spec(render_fix(entry.fix, facts))
    return None


JETSON_TORCH_STEPS = (
    "pip uninstall -y torch torchvision torchaudio  (PyPI's aarch64 wheels)",
    "install NVIDIA's torch wheel for the JetPack release (cat /etc/nv_tegra_release names "
    "the L4T release): the 'PyTorch for Jetson' list, "
    "https://forums.developer.nvidia.com/t/pytorch-for-jetson/72048, or the l4t-pytorch image "
    "of jetson-containers",
    'python3 -c "import torch; print(torch.cuda.is_available())"',
)


def jetson_gpu(facts: Facts, line: LogLine) -> str | None:
    """The Jetson the log or the node names: the platform a line states (L4T, JetPack, an
    l4t-* image), else a GPU of the node whose GPU-table entry is a Jetson module (an
    integrated Tegra GPU: Orin, Xavier); None elsewhere. PyPI's torch builds, x86 or aarch64
    SBSA, do not drive a Jetson's GPU whatever architectures they list."""
    stated = line.stated.get("jetson_platform")
    if stated:
        return stated
    try:
        gpus = facts.gpus()
    except Skip:
        return None
    for gpu in gpus:
        model = facts.gpu_model(gpu)
        if model is not None and (
            model.name.startswith("Jetson") or "Tegra" in (model.architecture or "")
        ):
            return model.name
    return None


def _jetson_torch(platform: str) -> str:
    """The fix on a Jetson: PyPI's aarch64 torch wheels are built for servers (CPU-only, or
    CUDA for SBSA GPUs) and do not drive the Jetson's integrated GPU; NVIDIA publishes torch
    wheels per JetPack release (Lmy0217/PyTorch-aarch64#3: a CPU-only aarch64 wheel on a Jetson
    Nano; pinokiocomputer/pinokio#1027: `pip install torch` on an AGX Orin)."""
    return (
        f"On a Jetson ({platform}, as the log says) install NVIDIA's torch build for the "
        "JetPack release in place of PyPI's aarch64 wheel, which does not drive the Jetson's GPU"
    )


@from_log("TOR110")
def cpu_torch_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """'Torch not compiled with CUDA enabled' is torch's own statement that it is a CPU-only build
    (torch/cuda/__init__.py raises it when the job asks for CUDA): the line establishes TOR110.
    Where the node's torch and GPUs are known, the fix names the CUDA build of that release."""
    try:
        torch: Version | None = facts.version("torch")
    except Skip:
        torch = None
    remedy = None
    try:
        gpus = facts.gpus()
    except Skip:
        gpus = ()
    if torch is not None and gpus:
        remedy = _cuda_build_fix(facts, torch, _capabilities(facts, gpus))
    have = f"torch {torch}" if torch is not None else "the installed torch"
    jetson = line.stated.get("jetson_platform")
    if jetson:  # PyPI's aarch64 wheels do not drive a Jetson's GPU: NVIDIA's Jetson builds do
        remedy = fix(_jetson_torch(jetson), "manual", *(manual(s) for s in JETSON_TORCH_STEPS))
    if line.signature in CUDA_UNUSABLE:  # the program's own output: CUDA is not usable
        try:
            cuda_unusable_cause(facts, line, "TOR110")
        except LookupError:
            return None  # a CUDA build: not this cause
        except NotStated as unknown:
            if jetson:
                raise NotStated(unknown.reason, unknown.fact, fix=_jetson_torch(jetson)) from None
            raise
        if remedy is None and torch is not None:
            remedy = _cuda_build_fix(facts, torch, [])
        if remedy is None:
            remedy = fix(
                "Install a CUDA build of torch in place of the CPU-only one",
                "manual",
                manual(_INSTALL_CUDA_BUILD),
            )
        return Hit(
            f"{have} is a CPU-only build: the program says CUDA is not usable (line "
            f"{line.line}: '{line.text.strip()[:120]}')",
            evidence={"line": line.line, "torch": str(torch) if torch is not None else None},
            fix=remedy,
        )
    if line.signature == _BUILD_CHECK:  # torch's extension builder found no CUDA in torch
        if remedy is None:
            release = f" {public(torch)}" if torch is not None else ""
            remedy = fix(
                f"Install a CUDA build of torch{release} in place of the CPU-only one, then build "
                "the extension again",
                "manual",
                manual(_INSTALL_CUDA_BUILD),
            )
        return Hit(
            f"{have} is a CPU-only build (line {line.line}): torch.version.cuda is None, so torch's "
            "extension builder cannot compile a CUDA extension against it",
            evidence={"line": line.line, "torch": str(torch) if torch is not None else None},
            fix=remedy,
        )
    if line.signature != _NOT_COMPILED:  # a package manager's request that only a CPU build meets
        known = _cpu_fallback(facts, torch)
        if known is None:
            raise NotStated("no known CPU-only fallback for the torch release the line asks for")
        title, remedy = known
        return Hit(
            f"{have} installed by this request (line {line.line}) is the CPU-only build: {title}",
            evidence={"line": line.line, "torch": str(torch)},
            fix=remedy,
        )
    if remedy is None:
        release = f" {public(torch)}" if torch is not None else ""
        remedy = fix(
            f"Install a CUDA build of torch{release} in place of the CPU-only one",
            "manual",
            manual(_INSTALL_CUDA_BUILD),
        )
    return Hit(
        f"{have} is a CPU-only build (line {line.line}: 'Torch not compiled with CUDA enabled'): "
        "the job asked for CUDA and torch.cuda cannot run on any GPU",
        evidence={"line": line.line, "torch": str(torch) if torch is not None else None},
        fix=remedy,
    )
