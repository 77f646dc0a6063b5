"""DRV: the NVIDIA driver against the CUDA that torch was built with, and the GPUs' state."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterable, Iterator

from packaging.version import InvalidVersion, Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.model import major_minor, parse_version, public
from envcheck.matrix.schema import CudaToolkit
from envcheck.model.finding import Action, Fix, Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.choose import (
    Support,
    TorchChoice,
    driver_support,
    torch_choices,
    variant_newest,
    variant_spans,
)
from envcheck.rules.fixes import fix, manual, pip_install
from envcheck.rules.node.driver_errors import HOST_REASON, NVML_APIS, table_fix

_MIB = 1024


def _torch_label(facts: Facts) -> str:
    build = facts.torch()
    assert build is not None
    return build.version if "+" in build.version else f"{build.version} ({facts.torch_variant()})"


def _driver_context(
    facts: Facts,
) -> tuple[Version, Version, str, Version, Version, CudaToolkit, Support] | None:
    """(driver, max CUDA, its source, torch CUDA, torch version, that CUDA's toolkit facts, how
    the driver supports it); None for CPU builds. Skips when the CUDA is not in the matrix."""
    cuda = facts.torch_cuda()
    if cuda is None:
        return None
    driver = _driver(facts)
    max_cuda, source = facts.max_cuda()
    cuda = major_minor(cuda)
    toolkit = facts.matrix.toolkit(cuda)
    if toolkit is None:
        raise Skip(f"CUDA {cuda} is not in the matrix")
    support = driver_support(toolkit, driver, max_cuda)
    return driver, max_cuda, source, cuda, facts.torch_version(), toolkit, support


def _driver(facts: Facts) -> Version:
    """The driver's version; when only the CUDA it supports is known (torch's 'found version
    11040', a spec's `cuda`), the lowest driver that reports that CUDA (the toolkit's driver, per
    NVIDIA's table), which is what decides minor-version compatibility."""
    try:
        return facts.driver()
    except Skip:
        implied = _implied_driver(facts)
        if implied is None:
            raise
        return implied


def _implied_driver(facts: Facts) -> Version | None:
    reported = parse_version(facts.gpu_info().cuda_driver_version)
    toolkit = facts.matrix.toolkit(reported) if reported is not None else None
    if toolkit is None or toolkit.min_driver is None:
        return None
    return toolkit.min_driver


def _driver_label(facts: Facts, driver: Version) -> str:
    try:
        return f"driver {facts.driver()}"
    except Skip:
        return f"the driver (version not stated; at least {driver} as it reports that CUDA)"


def _datacenter_note(facts: Facts) -> str:
    """'; NVIDIA GeForce RTX 4090 is not one' / '; these GPUs are' from the matrix's GPU table."""
    try:
        gpus = facts.gpus()
    except Skip:
        return ""
    flags = {g.name or "GPU": (m.datacenter if (m := facts.gpu_model(g)) else None) for g in gpus}
    consumer = [n for n, f in flags.items() if f is False]
    if consumer:
        return f"; {', '.join(consumer)} is not one"
    if flags and all(f is True for f in flags.values()):
        return "; these GPUs are"
    return ""


def _gpu_ccs(facts: Facts) -> list[Version]:
    """The GPUs' compute capabilities, or none when the GPUs are unknown."""
    try:
        return [facts.compute_capability(g) for g in facts.gpus()]
    except Skip:
        return []


def _same_release_fix(
    facts: Facts,
    torch: Version,
    driver: Version,
    max_cuda: Version,
    needs: str | None = None,
    allow_minor_compat: bool = False,
) -> Fix | None:
    """Move to a variant of the same torch release that the driver runs fully (or, allowed,
    through CUDA minor-version compatibility); ``needs``: the driver the installed build wants."""
    release = facts.matrix.torch_release(torch)
    if release is None:
        return None
    choices = torch_choices(
        facts.matrix,
        ccs=_gpu_ccs(facts),  # keep kernels for the GPUs here
        driver=driver,
        max_cuda=max_cuda,
        releases=[release],
        allow_minor_compat=allow_minor_compat,
    )
    if not choices:
        return None
    best = choices[0]
    url = facts.matrix.torch_index_url(best.variant)
    how = " (through CUDA minor-version compatibility)" if best.support == "minor-compat" else ""
    upgrade = f"upgrade the driver ({needs})" if needs else "upgrade the driver"
    return fix(
        f"Install torch {public(torch)}+{best.variant}, which {_driver_label(facts, driver)} "
        f"runs{how}, or {upgrade}",
        "unsafe",
        pip_install(f"torch=={public(torch)}", index_url=url),
        *local_version_form(str(public(torch)), best.variant, url),
        *conda_form(facts, str(public(torch)), best.variant),
    )


# PyTorch's conda channel: builds pin the CUDA runtime with the pytorch-cuda metapackage from
# 1.13 on (cudatoolkit before it); 2.5 is the channel's last release (pytorch/pytorch#138506,
# "Deprecating PyTorch's official Anaconda channel"; pytorch.org/get-started/previous-versions
# gives each release's conda command)
_PYTORCH_CUDA_FROM = Version("1.13")
_CONDA_CHANNEL_LAST = Version("2.5.1")
_CONDA_PATH = lazy(r"(?:^|/)(?:ana|mini)conda[0-9]*/|/conda/|/envs/[^/]+/lib/python")


def conda_installed_torch(facts: Facts) -> bool:
    """torch came from conda: conda list says so, or its files are in a conda environment and
    no other installer is named."""
    try:
        dist = facts.dist("torch")
    except Skip:
        return False
    if dist is None:
        return False
    if dist.installer == "conda":
        return True
    return dist.installer in (None, "") and bool(
        dist.location and _CONDA_PATH.search(dist.location)
    )


def conda_form(facts: Facts, release: str, variant: str) -> tuple[Action, ...]:
    """The same torch build as a conda install, beside pip's, when conda installed torch: the
    pytorch channel's own spelling (pytorch-cuda=X.Y, cudatoolkit=X.Y before 1.13). None past
    the channel's last release or for a variant that is not a CUDA one."""
    if not conda_installed_torch(facts) or not variant.startswith("cu"):
        return ()
    try:
        version = Version(release)
    except InvalidVersion:
        return ()
    if version > _CONDA_CHANNEL_LAST:
        return ()
    digits = variant[2:]
    cuda = f"{digits[:-1]}.{digits[-1]}"
    if version >= _PYTORCH_CUDA_FROM:
        command = (
            f"conda install pytorch=={release} torchvision torchaudio pytorch-cuda={cuda} "
            "-c pytorch -c nvidia"
        )
    else:
        # CUDA 11's cudatoolkit comes from conda-forge beside the pytorch channel
        forge = " -c conda-forge" if cuda.startswith("11.") else ""
        command = (
            f"conda install pytorch=={release} torchvision torchaudio cudatoolkit={cuda} "
            f"-c pytorch{forge}"
        )
    return (manual(f"conda (torch came from conda): {command}"),)


def local_version_form(release: str, variant: str, url: str | None) -> tuple[Action, ...]:
    """The same install in the spelling PyTorch's previous-versions page gives for 1.x releases
    and threads keep using: the ``+cuXYZ`` local version with ``--extra-index-url``."""
    if url is None:
        return ()
    return (
        manual(
            f"or, pinning the build: pip install torch=={release}+{variant} --extra-index-url "
            f"{url} (torchvision / torchaudio from the same index)"
        ),
    )


def driver_package(facts: Facts, cuda: Version) -> Action | None:
    """The driver branch to install for ``cuda``: the first branch of matrices/cuda/drivers.toml
    whose newest CUDA covers it, as Ubuntu's package (``nvidia-driver-<branch>``)."""
    wanted = major_minor(cuda)
    fits = sorted(
        (b for b in facts.matrix.driver_branches if major_minor(b.max_cuda) >= wanted),
        key=lambda b: b.branch,
    )
    if not fits:
        return None
    branch = fits[0].branch
    newer = ", ".join(f"nvidia-driver-{b.branch}" for b in fits[1:])
    return manual(
        f"or upgrade the driver: sudo apt install nvidia-driver-{branch}  (branch {branch} or "
        f"newer runs CUDA {wanted}"
        + (f": {newer} too" if newer else "")
        + "; `ubuntu-drivers devices` lists the branches for the GPU; NVIDIA's installer: sudo "
        "sh NVIDIA-Linux-x86_64-<version>.run; reboot after)"
    )


def upgrade_branches(facts: Facts, supports: Version) -> Action | None:
    """The driver branches of matrices/cuda/drivers.toml that run a newer CUDA than a driver
    that supports CUDA <= ``supports``, as Ubuntu's packages: what to install when the CUDA the
    job needs is not known (a log that states only the driver's CUDA)."""
    have = major_minor(supports)
    newer = sorted(
        (b for b in facts.matrix.driver_branches if major_minor(b.max_cuda) > have),
        key=lambda b: b.branch,
    )
    if not newer:
        return None
    listed = ", ".join(f"nvidia-driver-{b.branch} (CUDA {b.max_cuda})" for b in newer)
    return manual(
        f"sudo apt install nvidia-driver-<branch>, a branch newer than this driver's: {listed}; "
        "pick one that runs the job's CUDA (torch.version.cuda), then reboot"
    )


def _with_driver_package(facts: Facts, remedy: Fix, cuda: Version) -> Fix:
    package = driver_package(facts, cuda)
    if package is None:
        return remedy
    return dataclasses.replace(remedy, actions=(*remedy.actions, package))


@rule("DRV101", "driver-too-old-for-torch", Severity.ERROR)
def driver_too_old(facts: Facts) -> Iterable[Hit]:
    """The NVIDIA driver is too old for the CUDA that torch was built with

    ## What it checks
    The CUDA version of the installed torch build (from `torch/version.py`, its `+cuXYZ` label, or
    the PyPI wheel's default) against the newest CUDA the driver supports (NVML's own figure, else
    the matrix's driver-branch table). It fires when the driver can run the build neither fully
    nor through CUDA minor-version compatibility (same CUDA major, driver at or above that
    major's floor: 450.80.02 for 11.x, 525.60.13 for 12.x, branch 580 for 13.x).

    ## Why it matters
    torch loads, then the first CUDA call fails: `RuntimeError: The NVIDIA driver on your system
    is too old` or `CUDA driver version is insufficient for CUDA runtime version`. Under Ray this
    is a worker that dies at start-up, hours into a queue wait.

    ## Example
    Driver 470.182.03 (CUDA <= 11.4) with torch 2.4.0+cu121: 12.x needs at least 525.60.13.
    A newer CUDA major (torch 2.11 from PyPI is CUDA 13.0) on a 12.x driver would need NVIDIA's
    forward-compatibility package, available for datacenter GPUs only.

    ## Fix
    Install a torch variant the driver runs (same release, older CUDA, from its wheel index), or
    upgrade the driver to at least the toolkit's driver.

    ## References
    - https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html
    - NVIDIA CUDA Toolkit Release Notes, Table 3 (toolkit and minimum driver versions)
    - https://github.com/nagadomi/nunif/issues/702
    """
    context = _driver_context(facts)
    if context is None:
        return []
    driver, max_cuda, source, cuda, torch, toolkit, support = context
    if support != "no":
        return []
    needs = (
        f">= {toolkit.min_driver}" if toolkit.min_driver else "a newer driver (floor UNVERIFIED)"
    )
    message = (
        f"{_driver_label(facts, driver)} supports CUDA <= {max_cuda} ({source}); torch "
        f"{_torch_label(facts)} needs CUDA {cuda}: driver {needs}"
    )
    floor = toolkit.minor_compat_min_driver
    if floor is not None:
        message += f", or at least {floor} through CUDA {cuda.major}.x minor-version compatibility"
    if max_cuda.major < cuda.major:
        message += (
            f". Running CUDA {cuda.major}.x on this {max_cuda.major}.x driver would need NVIDIA's "
            f"forward-compatibility package (datacenter GPUs only{_datacenter_note(facts)})"
        )
    remedy = (
        _same_release_fix(facts, torch, driver, max_cuda, needs)
        or _same_release_fix(facts, torch, driver, max_cuda, needs, allow_minor_compat=True)
        or fix(
            f"Upgrade the NVIDIA driver to {needs.removeprefix('>= ')} or newer",
            "manual",
            manual(f"upgrade the NVIDIA driver ({needs}) for CUDA {cuda}"),
        )
    )
    remedy = _with_driver_package(facts, remedy, cuda)
    evidence = {
        "driver": str(driver),
        "driver_max_cuda": str(max_cuda),
        "driver_max_cuda_source": source,
        "torch": facts.dist("torch").version,  # type: ignore[union-attr]
        "torch_cuda": str(cuda),
        "torch_cuda_source": facts.torch_cuda_source(),
        "required_driver": str(toolkit.min_driver) if toolkit.min_driver else None,
        "minor_compat_floor": str(floor) if floor else None,
    }
    return [Hit(message, evidence=evidence, fix=remedy)]


# what each line that establishes DRV101 says happened
_LINE_SAYS = {
    "driver-too-old": "torch found the NVIDIA driver too old for the CUDA it was built with",
    "cuda-error-804": (
        "CUDA error 804: a libcuda newer than the loaded kernel module (a container's "
        "cuda-compat library, or driver packages updated without a reboot) tried forward "
        "compatibility, which runs on datacenter GPUs only"
    ),
    "container-cuda-requirement": (
        "the NVIDIA container runtime refused the image: its NVIDIA_REQUIRE_CUDA is newer than "
        "the driver supports"
    ),
    "nvidia-docker-cuda-unsupported": (
        "nvidia-docker refused the image: the CUDA of its com.nvidia.cuda.version label is newer "
        "than the driver supports"
    ),
    "driver-insufficient": (
        "the CUDA runtime in use is newer than the loaded driver supports "
        "(cudaErrorInsufficientDriver)"
    ),
}


@from_log("DRV101")
def driver_too_old_in_log(facts: Facts, line: LogLine) -> Hit:
    """A line that says the driver is older than the CUDA in use: torch's 'The NVIDIA driver on
    your system is too old (found version 12040)', CUDA error 804, nvidia-container-cli's
    'unsatisfied condition: cuda>=12.4'. The fix names what the driver runs (from the CUDA the
    log or the node states) and what the CUDA in use needs."""
    says = _LINE_SAYS.get(line.signature, "the driver is too old for the CUDA in use")
    try:
        max_cuda: Version | None = facts.max_cuda()[0]
    except Skip:
        max_cuda = None
    if line.signature == "driver-insufficient":
        _insufficient_is_torch_s(facts, line, max_cuda)
    try:
        cuda = facts.torch_cuda()
    except Skip:
        cuda = None
    image = line.signature not in ("driver-too-old", "driver-insufficient")
    required = parse_version(line.stated.get("cuda_required"))
    needed = required or (cuda if not image else None)
    toolkit = facts.matrix.toolkit(needed) if needed is not None else None
    upgrade = "Upgrade the NVIDIA driver"
    if needed is not None:
        floor = f" (>= {toolkit.min_driver})" if toolkit and toolkit.min_driver else ""
        upgrade += f" to one that supports CUDA {major_minor(needed)}{floor}"
    elif image:
        upgrade += " to one that supports the CUDA in use (the container image's)"
    else:
        upgrade += " to one that supports torch's CUDA (`python -c 'import torch; print(torch.version.cuda)'`)"
    actions = [manual(upgrade[0].lower() + upgrade[1:])]
    package = driver_package(facts, needed) if needed is not None else None
    if package is None and needed is None and max_cuda is not None:
        package = upgrade_branches(facts, max_cuda)
    if package is not None:
        actions.append(package)
    if not image:
        # what threads run on the host (Ubuntu's recommended driver), then the reboot it needs
        upgrade += (
            " (update to the latest driver on Ubuntu: sudo ubuntu-drivers autoinstall, then "
            "sudo reboot)"
        )
        actions += [manual("sudo ubuntu-drivers autoinstall && sudo reboot  (Ubuntu)")]
    alternative = ""
    if line.signature == "container-cuda-requirement" and required is not None:
        branch = _image_lts_branch(facts, required)
        if branch is not None:
            upgrade += (
                f", or the long-term branch R{branch} that NVIDIA's CUDA {required.major} images "
                "also accept (data-center and professional GPUs)"
            )
            actions.append(_lts_branch_action(branch, required))
    if max_cuda is None and line.signature == "container-cuda-requirement":
        # nvidia-container-cli's own advice: "or use an earlier cuda container"
        alternative += (
            ", or use an image built for the CUDA the driver runs (nvidia-smi's 'CUDA Version')"
        )
    if max_cuda is not None and image:
        alternative += f", or use an image built for CUDA <= {max_cuda} (an earlier release)"
        tag = _cuda_image_tag(max_cuda)
        if tag is not None:
            alternative += f": NVIDIA's base image {tag}"
            actions.append(manual(f"or the image of the driver's CUDA: docker run ... {tag}"))
    if line.signature == "container-cuda-requirement" and required is not None:
        skip, first = _skip_requirement(required, max_cuda)
        alternative += f"; {skip[0]}"
        if first:  # the log's facts: the driver runs the image's CUDA major
            actions.insert(0, skip[1])
        else:
            actions.append(skip[1])
    if not image and max_cuda is not None:
        alternative, install = _torch_for_driver(facts, max_cuda)
        if install is not None:
            actions.append(install)
            pinned = install.packages[0] if install.packages else ""
            if install.index_url and pinned.startswith("torch=="):
                variant = install.index_url.rstrip("/").rsplit("/", 1)[-1]
                actions += local_version_form(
                    pinned.removeprefix("torch=="), variant, install.index_url
                )
                actions += conda_form(facts, pinned.removeprefix("torch=="), variant)
                actions += _other_variant_pins(facts, max_cuda, variant)
    driver = f" (it supports CUDA <= {max_cuda})" if max_cuda is not None else ""
    remedy = fix(upgrade + alternative, "manual", *actions)
    if line.signature == "cuda-error-804":
        remedy = _forward_compat_fix(facts, upgrade + alternative, actions)
    return Hit(
        f"{says} (line {line.line}){driver}",
        evidence={
            "line": line.line,
            "driver_max_cuda": str(max_cuda) if max_cuda else None,
            "cuda_needed": str(needed) if needed else None,
        },
        fix=remedy,
    )


def _skip_requirement(
    required: Version, max_cuda: Version | None
) -> tuple[tuple[str, Action], bool]:
    """NVIDIA_DISABLE_REQUIRE, the container runtime's switch that skips the image's
    NVIDIA_REQUIRE_* check (NVIDIA Container Toolkit docs, 'NVIDIA_DISABLE_REQUIRE': 'Single
    switch to disable all the constraints of the form NVIDIA_REQUIRE_*'; nvidia-container-
    toolkit#152: the maintainer's workaround for images whose constraints were tightened). It
    runs the image where the driver runs its CUDA major (minor-version compatibility, CUDA 11
    and newer): first when the log's driver does, a condition when the driver is unknown, and
    only forward compatibility (data-center GPUs) when the driver's major is older."""
    same = max_cuda is not None and max_cuda.major == required.major and required.major >= 11
    older = max_cuda is not None and max_cuda.major < required.major
    if same:
        when = f"the driver runs CUDA {required.major}.x through minor-version compatibility"
    elif older:
        when = (
            f"only on a data-center GPU, where the image's cuda-compat runs CUDA {required} on "
            "this driver (forward compatibility)"
        )
    else:
        when = f"where the driver runs CUDA {required.major}.x, by minor-version compatibility"
    said = f"or skip the runtime's check ({when}): docker run -e NVIDIA_DISABLE_REQUIRE=true"
    action = manual(
        f"docker run -e NVIDIA_DISABLE_REQUIRE=true ...  (skips the image's NVIDIA_REQUIRE_CUDA "
        f"check; {when})"
    )
    return (said, action), same


def _cuda_image_tag(cuda: Version) -> str | None:
    """NVIDIA's CUDA base image of a release before CUDA 11, whose tags are the release's
    major.minor and flavor (nvidia/cuda:8.0-runtime, -devel with nvcc; nvidia-docker's wiki
    runs nvidia/cuda:8.0-runtime; CUDA 11 on tags the full release and OS, which the log does
    not state: None)."""
    if cuda.major >= 11:
        return None
    return f"nvidia/cuda:{cuda.major}.{cuda.minor}-runtime (-devel with nvcc)"


def _image_lts_branch(facts: Facts, required: Version) -> int | None:
    """The long-term driver branch NVIDIA's CUDA images of ``required``'s major accept beside
    ``cuda>=X.Y`` (matrices/cuda/drivers.toml ``container.lts_branch.<major>``: their
    NVIDIA_REQUIRE_CUDA lists it among the brand alternatives), when that branch's own CUDA is
    older than ``required`` (else the branch that runs X.Y is named already) and of the same
    major (CUDA minor-version compatibility runs the image there)."""
    value = facts.matrix.constant(f"container.lts_branch.{required.major}")
    if value is None:
        return None
    branch = int(value)
    own = next((b.max_cuda for b in facts.matrix.driver_branches if b.branch == branch), None)
    if own is None or own.major != required.major or major_minor(own) >= major_minor(required):
        return None
    return branch


def _lts_branch_action(branch: int, required: Version) -> Action:
    return manual(
        f"or the long-term branch the image also accepts: sudo apt install nvidia-driver-{branch}"
        f"  (NVIDIA's CUDA {required.major} images list driver>={branch},driver<{branch + 1} in "
        "NVIDIA_REQUIRE_CUDA for data-center and professional GPUs; "
        "`docker inspect --format '{{.Config.Env}}' IMAGE` shows the list; reboot after)"
    )


# threads' fixes for 804: a reboot where the driver was updated since boot (faster-whisper#653,
# cusignal#398), the host driver upgraded where a container image brings cuda-compat (vllm#4940)
_REBOOT_804 = (
    "sudo reboot  (when the NVIDIA driver packages were updated since boot: the new libcuda is "
    "newer than the kernel module still loaded; compare `cat /proc/driver/nvidia/version` with "
    "the libcuda.so.* version)"
)
_COMPAT_804 = (
    "take the forward-compatibility library off the loader's path: unset LD_LIBRARY_PATH "
    "entries under /usr/local/cuda*/compat (or apt remove cuda-compat-*) unless the GPU is a "
    "datacenter one"
)


# the image's layer: an image built for a CUDA the host driver runs needs no forward
# compatibility (Haidra-Org/horde-worker-reGen#349: 'lower the container version used';
# oobabooga/textgen#4407: the Dockerfile of the CUDA 11.8 build; nixiesearch/nixiesearch#386:
# the image moved to CUDA 12.4 for hosts on driver 550)
_OLDER_IMAGE_804 = (
    "or run an image built for a CUDA the host's driver supports (nvidia-smi on the host prints "
    "it: 'CUDA Version: 12.2' runs a 12.2 image, not a 12.4 one): an older tag of the image, or "
    "its build for that CUDA"
)


def _forward_compat_fix(facts: Facts, upgrade: str, actions: list[Action]) -> Fix:
    """804: a container (the node says so) first upgrades the host driver; elsewhere a reboot
    after a driver update is the common fix. Both are named, with cuda-compat's removal."""
    container = None
    with contextlib.suppress(Skip):
        container = facts.system().container
    in_container = container not in (None, "none")
    steps = [*actions, manual(_OLDER_IMAGE_804), manual(_COMPAT_804)]
    steps = [*steps, manual(_REBOOT_804)] if in_container else [manual(_REBOOT_804), *steps]
    first, then = (
        (upgrade, "reboot") if in_container else ("Reboot", upgrade[0].lower() + upgrade[1:])
    )
    if in_container:
        summary = (
            f"{first} (in the container's host), or run an image built for the driver's CUDA; "
            f"or {then} if the driver was updated since boot"
        )
    else:
        summary = (
            f"{first} if the NVIDIA driver was updated since boot (the libcuda is newer than the "
            f"loaded module); else {then} (or, in a container, use an image built for the "
            "driver's CUDA), and take cuda-compat off LD_LIBRARY_PATH"
        )
    return fix(summary, "manual", *steps)


def _insufficient_is_torch_s(facts: Facts, line: LogLine, max_cuda: Version | None) -> None:
    """CUDA's 'driver version is insufficient for CUDA runtime version' establishes DRV101 only
    where the node shows a loaded driver (with none at all CUDA says the same: DRV103's cause)
    and the runtime is torch's (CTranslate2's 'CUDA failed with error ...' is DRV140's)."""
    library = facts.matrix.gpu_build(line.text)
    if library is not None:  # another library's own runtime: DRV220's
        raise NotStated(f"line {line.line} is {library.library}'s CUDA runtime, not torch's", "log")
    if max_cuda is None:
        raise NotStated(
            f"line {line.line} does not say which driver is loaded (with none at all CUDA says "
            "the same)",
            "gpu.driver",
        )
    ctranslate2 = "CUDA failed with error" in line.text
    with contextlib.suppress(Skip):
        ctranslate2 = ctranslate2 or (
            facts.dist("ctranslate2") is not None and facts.dist("torch") is None
        )
    if ctranslate2:
        raise NotStated(f"line {line.line} is CTranslate2's CUDA runtime, not torch's", "packages")


def _driver_or_implied(facts: Facts) -> Version | None:
    """The driver's version, else the lowest that reports the CUDA stated (``_driver``),
    else None (a Skip of the GPU facts themselves is raised)."""
    driver = _implied_driver(facts)
    with contextlib.suppress(Skip):
        driver = facts.driver()
    return driver


def _runnable(
    facts: Facts, driver: Version, max_cuda: Version
) -> Iterator[tuple[bool, list[TorchChoice]]]:
    """The torch builds the driver runs: fully first, then through CUDA minor-version
    compatibility (the flag says which)."""
    for minor_compat in (False, True):
        yield (
            minor_compat,
            torch_choices(
                facts.matrix,
                ccs=_gpu_ccs(facts),
                driver=driver,
                max_cuda=max_cuda,
                allow_minor_compat=minor_compat,
            ),
        )


def _torch_for_driver(facts: Facts, max_cuda: Version) -> tuple[str, Action | None]:
    """', or install torch X+cuY, which the driver runs' and its command: the installed torch
    release's variant when torch is known, else the newest release with a variant the driver
    runs fully (through minor-version compatibility when none does)."""
    driver = _driver_or_implied(facts)
    if driver is None:
        return "", None
    torch = None
    with contextlib.suppress(Skip):
        torch = facts.torch_version() if facts.torch_cuda() is not None else None
    if torch is not None:
        remedy = _same_release_fix(facts, torch, driver, max_cuda, allow_minor_compat=True)
        if remedy is not None and remedy.actions:
            summary = remedy.summary.split(", or upgrade", 1)[0]
            return f"; or {summary[0].lower()}{summary[1:]}", remedy.actions[0]
    for minor_compat, choices in _runnable(facts, driver, max_cuda):
        if choices:
            best = choices[0]
            how = " through CUDA minor-version compatibility" if minor_compat else ""
            url = facts.matrix.torch_index_url(best.variant)
            text = (
                f"; or install a torch build the driver runs{how}: torch "
                f"{best.release.version}+{best.variant} is the newest the matrix knows"
            )
            # threads pin the build their project needs (torch==1.13.1+cu117 on a 470 driver):
            # every variant the driver runs, with its releases
            others = variant_spans(choices, best)
            if others is not None:
                text += f" (the builds it runs, by CUDA variant: {others})"
            return text, pip_install(f"torch=={best.release.version}", index_url=url)
    return "", None


def _other_variant_pins(facts: Facts, max_cuda: Version, chosen: str) -> list[Action]:
    """The newest torch of each other CUDA variant the driver runs, as the pin a project that
    needs an older torch installs (kronos#71: torch==1.13.1 on a CUDA 11.4 driver), newest
    CUDA first; nothing when torch is installed (its own release's build is the fix then) or
    the driver is unknown."""
    with contextlib.suppress(Skip):
        if facts.torch_version() is not None and facts.torch_cuda() is not None:
            return []
    driver = _driver_or_implied(facts)
    if driver is None:
        return []
    for _, choices in _runnable(facts, driver, max_cuda):
        best = next((c for c in choices if c.variant == chosen), None)
        if best is None:
            continue
        out: list[Action] = []
        for variant, release in variant_newest(choices, best):
            url = facts.matrix.torch_index_url(variant)
            if url is not None:
                out.append(
                    manual(
                        f"or an older torch of another build it runs: pip install "
                        f"torch=={release} --index-url {url}"
                    )
                )
        return out
    return []


@rule("DRV102", "driver-minor-version-compat-only", Severity.WARNING)
def driver_minor_compat(facts: Facts) -> Iterable[Hit]:
    """torch runs on this driver only through CUDA minor-version compatibility

    ## What it checks
    The torch build's CUDA is newer than the newest CUDA the driver supports, but within the same
    CUDA major and with the driver at or above that major's minor-version-compatibility floor.

    ## Why it matters
    Minor-version compatibility runs the build, with limits: PTX that a newer toolkit produced
    cannot be JIT-compiled by an older driver (`the provided PTX was compiled with an unsupported
    toolchain`), features that need a newer driver fail, and CUDA container images whose
    `NVIDIA_REQUIRE_CUDA` asks for a newer driver refuse to start.

    ## Example
    Driver 535.104.05 supports CUDA <= 12.2; torch 2.5.1 from PyPI is a CUDA 12.4 build that
    needs >= 550.54.14, or runs through the 12.x minor-version floor 525.60.13 with PTX limits.

    ## Fix
    Usually nothing is needed. To remove the limits, install a variant built for CUDA <= the
    driver's (for example `--index-url https://download.pytorch.org/whl/cu121`) or upgrade the
    driver.

    ## References
    - https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html
    - https://github.com/triton-inference-server/server/issues/2193
    """
    context = _driver_context(facts)
    if context is None:
        return []
    driver, max_cuda, source, cuda, torch, toolkit, support = context
    if support != "minor-compat":
        return []
    message = (
        f"{_driver_label(facts, driver)} supports CUDA <= {max_cuda}; torch {_torch_label(facts)} needs CUDA {cuda} "
        f"(driver >= {toolkit.min_driver}), or the {cuda.major}.x minor-version floor "
        f"{toolkit.minor_compat_min_driver} with PTX limits: no JIT of PTX from newer toolkits, and "
        "images whose NVIDIA_REQUIRE_CUDA demands a newer driver will not start"
    )
    evidence = {
        "driver": str(driver),
        "driver_max_cuda": str(max_cuda),
        "driver_max_cuda_source": source,
        "torch_cuda": str(cuda),
        "full_support_driver": str(toolkit.min_driver) if toolkit.min_driver else None,
        "minor_compat_floor": str(toolkit.minor_compat_min_driver),
    }
    remedy = _same_release_fix(facts, torch, driver, max_cuda)
    if remedy is not None:
        # "or upgrade the driver" as the package users install (the branch that runs torch's CUDA)
        remedy = _with_driver_package(facts, remedy, cuda)
    return [Hit(message, evidence=evidence, fix=remedy)]


@from_log("DRV102")
def ptx_newer_than_driver_in_log(facts: Facts, line: LogLine) -> Hit:
    """CUDA error 222, 'the provided PTX was compiled with an unsupported toolchain': the PTX
    the program loads (torch's, an extension's, a JIT's) comes from a newer CUDA toolkit than
    the driver can JIT-compile. With another CUDA major the runtime would have stopped first
    (error 35), so the program runs through minor-version compatibility, which does not cover
    PTX. The threads' fix is a newer driver (BachiLi/diffvg#84, Pointcept/PointTransformerV2#7:
    450.80.02 -> 470.57.02): the branch that runs the CUDA the node states (torch's), else the
    branches newer than the driver's; a build for the driver's CUDA is the other way out."""
    try:
        max_cuda: Version | None = facts.max_cuda()[0]
    except Skip:
        max_cuda = None
    cuda = None
    with contextlib.suppress(Skip):
        cuda = facts.torch_cuda()
    if cuda is None:
        cuda = parse_version(line.stated.get("nvcc_version"))
    needed = cuda if cuda is not None and (max_cuda is None or cuda > max_cuda) else None
    upgrade = "Upgrade the NVIDIA driver"
    package: Action | None = None
    if needed is not None:
        toolkit = facts.matrix.toolkit(needed)
        floor = f" (>= {toolkit.min_driver})" if toolkit and toolkit.min_driver else ""
        upgrade += f" to one that supports CUDA {major_minor(needed)}{floor}"
        package = driver_package(facts, needed)
    elif max_cuda is not None:
        upgrade += f" to a branch newer than this one (it supports CUDA <= {max_cuda})"
        package = upgrade_branches(facts, max_cuda)
    else:
        upgrade += " to the newest branch for the GPU (nvidia-smi shows the one installed)"
    actions = [manual(upgrade[0].lower() + upgrade[1:])]
    if package is not None:
        actions.append(package)
    actions.append(manual("sudo ubuntu-drivers autoinstall && sudo reboot  (Ubuntu)"))
    alternative = (
        "; or install the program built for CUDA <= the driver's (torch from the wheel index of "
        "that CUDA, the extension rebuilt with that toolkit)"
    )
    if max_cuda is not None:
        said, install = _torch_for_driver(facts, max_cuda)
        torch_known = False
        with contextlib.suppress(Skip):
            torch_known = facts.dist("torch") is not None
        if install is not None and torch_known:
            alternative = said
            actions.append(install)
    driver = f" (it supports CUDA <= {max_cuda})" if max_cuda is not None else ""
    return Hit(
        f"CUDA error 222 (line {line.line}): the PTX the program loads comes from a newer CUDA "
        f"toolkit than the driver{driver} can JIT-compile; CUDA minor-version compatibility "
        "does not cover PTX",
        evidence={
            "line": line.line,
            "driver_max_cuda": str(max_cuda) if max_cuda else None,
            "cuda_needed": str(needed) if needed else None,
        },
        fix=fix(upgrade + alternative, "manual", *actions),
    )


@rule("DRV103", "no-driver-for-cuda-torch", Severity.ERROR)
def no_driver(facts: Facts) -> Iterable[Hit]:
    """A CUDA build of torch is installed but no NVIDIA driver or GPU is visible

    ## What it checks
    torch is a CUDA build while NVML, `/proc/driver/nvidia` and `nvidia-smi` show no driver, or
    the driver shows no GPUs. An error: a node with a CUDA stack and no GPU is not fit for a
    GPU job unless the user states it is meant to be GPU-less (`--expect no-gpu`). Declared nodes without a `[gpu]` table are skipped, not flagged;
    a pasted collect_env that says `No CUDA` (torch saw no CUDA and nvidia-smi gave nothing)
    states the absence and is flagged.

    ## Why it matters
    `torch.cuda.is_available()` is False: training silently runs on the CPU or fails at the first
    `.cuda()`. In containers this is usually a missing `--gpus all` / NVIDIA runtime, or
    `NVIDIA_VISIBLE_DEVICES` / `CUDA_VISIBLE_DEVICES` set to nothing.

    ## Example
    A container started without `--gpus all`: NVML's library is not mounted, torch 2.4.0+cu121
    is installed.

    ## Fix
    Start the container with the NVIDIA runtime (`docker run --gpus all`; docker compose:
    `runtime: nvidia` or a GPU device reservation; a GPU resource request on Kubernetes), with
    the NVIDIA Container Toolkit (`nvidia-container-toolkit`) installed on the host, or install
    the driver. Where the input says why the host has no driver (the module not built for the
    running kernel, not loaded, refused by Secure Boot, nouveau holding the GPUs) and the node
    is not a container, the errors table's fix for a driver that is not loaded comes first:
    `sudo apt install linux-headers-$(uname -r)`, `sudo dkms autoinstall`, `sudo ubuntu-drivers
    autoinstall`, blacklisting nouveau. On a node meant to have no GPU (an image-build stage, a
    CPU worker) say so: `--expect no-gpu` (or `expect = "no-gpu"` in envcheck.toml).

    ## References
    - https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html
    """
    cuda = facts.torch_cuda()
    if cuda is None:
        return []
    expect = facts.report.expect
    if expect.is_ok and expect.data is not None and expect.data.no_gpu:
        raise Skip("the node is expected to have no GPU (--expect no-gpu)", "expect")
    section = facts.report.gpu
    if not section.is_ok:
        if facts.declared and not section.stated_absent:
            raise Skip("no GPU facts declared")
        nodes = _device_nodes_note(facts)
        container = manual(
            "start the container with --gpus all (docker compose: `runtime: nvidia` "
            "or a GPU device reservation; Kubernetes: an nvidia.com/gpu limit), with "
            "the NVIDIA Container Toolkit (nvidia-container-toolkit) on the host"
        )
        remedy = fix(
            "Run with the NVIDIA container runtime (docker run --gpus all) or install the driver",
            "manual",
            container,
        )
        host = _host_driver_fix(facts, section.reason or "") if section.stated_absent else None
        if host is not None:  # the input says why the host has no driver: that fix first
            remedy = dataclasses.replace(
                host,
                summary=f"{host.summary}; in a container: start it with the GPUs (--gpus all)",
                actions=(*host.actions, container),
            )
        return [
            Hit(
                f"torch {facts.dist('torch').version} is a CUDA {cuda} build but no NVIDIA driver is "  # type: ignore[union-attr]
                f"visible: {section.reason}{nodes}",
                evidence={"gpu_probe": section.describe(), "torch_cuda": str(cuda)},
                fix=remedy,
            )
        ]
    gpus = facts.gpus()
    if gpus:
        return []
    env = facts.env() if facts.report.env.is_ok else {}
    visible = {k: env[k] for k in ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES") if k in env}
    return [
        Hit(
            f"driver {facts.gpu_info().driver_version} is loaded but shows no GPUs"
            + (f" ({', '.join(f'{k}={v!r}' for k, v in visible.items())})" if visible else ""),
            evidence={"visible_devices": visible},
            fix=fix(
                "Make the GPUs visible to this environment",
                "manual",
                manual("check --gpus / device plugin and *_VISIBLE_DEVICES"),
            ),
        )
    ]


def _host_driver_fix(facts: Facts, reason: str) -> Fix | None:
    """The errors table's fix for a driver that is not loaded (NVML_ERROR_DRIVER_NOT_LOADED:
    build and load the module, install the driver, blacklist nouveau, Secure Boot), when the
    input's own reason is the host's and the node is not stated to be a container."""
    if not HOST_REASON.search(reason) or _in_container(facts):
        return None
    entry = facts.matrix.cuda_error(name="NVML_ERROR_DRIVER_NOT_LOADED", apis=NVML_APIS)
    if entry is None or entry.fix is None:
        return None
    return table_fix(entry.fix)


def _device_nodes_note(facts: Facts) -> str:
    """'; no /dev/nvidia* device nodes (a container started without GPUs)' from the driver's
    files, when they were read."""
    binaries = facts.report.binaries
    driver = binaries.data.driver if binaries.is_ok and binaries.data else None
    if driver is None:
        return ""
    if not any(n.removeprefix("/dev/nvidia").isdigit() for n in driver.device_nodes):
        where = " (a container started without GPUs?)" if _in_container(facts) else ""
        return f"; no /dev/nvidia<N> device nodes{where}"
    return ""


def _in_container(facts: Facts) -> bool:
    system = facts.report.system
    return bool(system.is_ok and system.data and system.data.container not in (None, "none"))


@rule("DRV104", "gpu-memory-held", Severity.WARNING)
def gpu_memory_held(facts: Facts) -> Iterable[Hit]:
    """GPU memory is already held by other processes

    ## What it checks
    Processes NVML lists on each GPU (compute and graphics) and the memory they hold. It fires
    for a GPU where other processes hold at least 1 GiB or 10% of its memory before the job
    starts.

    ## Why it matters
    Leftover processes (a crashed run's workers, a stale vLLM server, a Ray worker that outlived
    `ray stop`) keep VRAM. The next job's vLLM sizes its KV cache from `gpu_memory_utilization`
    of the total and then cannot allocate, or rollouts "freeze" waiting for memory.

    ## Example
    GPU 0: 2 processes hold 68.2 GiB of 79.6 GiB.

    ## Fix
    Stop them (`nvidia-smi --query-compute-apps=pid,used_memory --format=csv`, `ray stop --force`)
    before starting the job.

    ## References
    - https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceQueries.html
    """
    held = []
    unknown = 0
    for gpu in facts.gpus():
        if gpu.process_count is None or gpu.process_memory_mib is None:
            unknown += 1
            continue
        total = gpu.memory_total_mib or 0
        if gpu.process_count and (
            gpu.process_memory_mib >= _MIB or (total and gpu.process_memory_mib >= 0.1 * total)
        ):
            held.append(gpu)
    if not held and unknown and unknown == len(facts.gpus()):
        raise Skip(
            "processes on the GPUs unknown (NVML process queries unavailable)", "gpu.processes"
        )
    return [
        Hit(
            f"GPU {g.index} ({g.name}): {g.process_count} process(es) already hold "
            f"{(g.process_memory_mib or 0) / 1024:.1f} GiB"
            + (f" of {g.memory_total_mib / 1024:.1f} GiB" if g.memory_total_mib else ""),
            evidence={
                "gpu": g.index,
                "processes": g.process_count,
                "memory_mib": g.process_memory_mib,
            },
            fix=fix(
                "Stop the processes holding GPU memory before the job starts",
                "manual",
                manual(
                    "nvidia-smi --query-compute-apps=pid,used_memory --format=csv; then stop them (ray stop --force)"
                ),
            ),
        )
        for g in held
    ]
