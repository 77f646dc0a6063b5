"""DRV103 from a log: the container engine could not give the container the GPUs. Docker says
`could not select device driver "" with capabilities: [[gpu]]` for `--gpus` (or a compose
file's GPU reservation, `[[compute utility]]`) and `unknown or invalid runtime name: nvidia` for `--runtime=nvidia`
when the NVIDIA Container Toolkit is not installed on the host, or installed but not registered
with this Docker daemon (a snap or rootless Docker reads another daemon.json). torch's own
lines ('Found no NVIDIA driver on your system', 'No CUDA GPUs are available') say the process
saw no driver or no GPU: a container started without GPUs, CUDA_VISIBLE_DEVICES hiding them
(named where the node states it), or no driver loaded on the host. nvidia-container-cli's own
refusals name theirs: a GPU the host lacks, the ldconfig its configuration names, and no cgroup
v1 devices controller (a cgroup v2 host with libnvidia-container before 1.8). A setup.py that
builds its CUDA ops only where torch sees a GPU (Deformable-DETR's `NotImplementedError: Cuda is
not availabel`) in a container the log states is the container's missing GPUs; the torch build
unstated, a CPU-only torch (TOR110) stays open beside it."""

from __future__ import annotations

import contextlib

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, from_log
from envcheck.rules.fixes import fix, manual
from envcheck.rules.node.container_engine import runtime_hit
from envcheck.rules.node.driver_upgrade import WSL_STEPS, on_wsl
from envcheck.rules.node.gpu_state import CUDA_UNUSABLE, cuda_unusable_cause

_NO_RUNTIME = lazy(
    r"could not select device driver (?:\"(?P<driver>[^\"]*)\" )?with capabilities: \[\["
    r"|unknown or invalid runtime name: (?P<runtime>nvidia)"
)

# a package's setup.py that builds its CUDA ops only where torch.cuda.is_available() (Deformable-
# DETR's models/ops/setup.py and its copies)
SETUP_REFUSAL = "setup-py-cuda-unavailable-refusal"
_CONTAINER_FACTS = ("container_stated", "container_run", "container_image", "container_host")

# NVIDIA Container Toolkit install guide (Installing with Apt; Configuring Docker)
INSTALL = (
    "sudo apt-get install -y nvidia-container-toolkit  (after adding NVIDIA's "
    "libnvidia-container repository; dnf/zypper likewise)"
)
CONFIGURE = "sudo nvidia-ctk runtime configure --runtime=docker"
RESTART = "sudo systemctl restart docker"


@from_log("DRV103")
def container_without_gpu_runtime_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """Docker has no NVIDIA runtime to hand the GPUs to the container: the NVIDIA Container
    Toolkit is missing on the host or not configured for this daemon."""
    if line.signature in CUDA_UNUSABLE:  # the program's own output: CUDA is not usable
        try:
            cuda_unusable_cause(facts, line, "DRV103")
        except LookupError:
            return None  # a CPU-only torch: TOR110's cause
        except NotStated:
            if line.signature != SETUP_REFUSAL or not _in_container(line):
                raise
            return _build_in_container_without_gpu(line)
    if line.signature == "container-device-unknown":
        return _unknown_device(line)
    if line.signature == "cdi-devices-unresolvable":
        return _cdi_unresolvable(line)
    if line.signature == "container-ldcache-missing-ldconfig":
        return _missing_ldconfig(line)
    if line.signature == "container-cgroup-devices-not-found":
        return _cgroup_v2(line)
    found = _NO_RUNTIME.search(line.text)
    if found is None:
        return _no_gpu_seen(facts, line)
    asked = "--runtime=nvidia" if found.group("runtime") else "--gpus (or a GPU reservation)"
    stated = runtime_hit(facts, line, asked)  # docker info / daemon.json pasted beside it
    if stated is not None:
        return stated
    return Hit(
        f"Docker could not give the container GPUs (line {line.line}): {asked} needs the NVIDIA "
        "Container Toolkit, which is not installed on the host or not registered with this "
        "Docker daemon",
        evidence={"line": line.line},
        fix=fix(
            "Install the NVIDIA Container Toolkit on the host (nvidia-container-toolkit), "
            "register it with Docker (nvidia-ctk runtime configure) and restart Docker; then "
            "docker run --gpus all",
            "manual",
            manual(INSTALL),
            manual(CONFIGURE),
            manual(RESTART),
            manual(
                "docker run --rm --gpus all ubuntu nvidia-smi  (check; a snap-installed Docker "
                "does not read /etc/docker/daemon.json: use Docker's own packages)"
            ),
        ),
    )


_HIDDEN = ("", "-1", "none", "void", "NoDevFiles")

# torch's words (torch/cuda/__init__.py, c10/cuda/CUDAFunctions.cpp): 'No CUDA GPUs are
# available' is a driver that answered with zero devices, which threads trace to
# CUDA_VISIBLE_DEVICES naming a GPU the node lacks (a script's os.environ[...] = '3' on a one-GPU
# node: CoR-GS#23, FGDM#7, WITT#34, Anomaly-Transformer#74); 'Found no NVIDIA driver' is no
# driver at all (pytorch#74733)
_NO_DEVICES = "No CUDA GPUs are available"
_NO_DRIVER = "Found no NVIDIA driver"
VISIBLE = (
    "export CUDA_VISIBLE_DEVICES=0  (an index `nvidia-smi -L` lists; a script or launch script "
    "that sets CUDA_VISIBLE_DEVICES, or os.environ['CUDA_VISIBLE_DEVICES'], to a GPU the node "
    "lacks hides every GPU: `echo $CUDA_VISIBLE_DEVICES`, `grep -rn CUDA_VISIBLE_DEVICES .`)"
)
CONTAINER = (
    "in a container: docker run --gpus all ...  (docker compose: `runtime: nvidia` or a "
    "GPU device reservation; Kubernetes: an nvidia.com/gpu limit), with the NVIDIA "
    "Container Toolkit on the host (sudo apt-get install -y nvidia-container-toolkit)"
)
DRIVER = (
    "on the host: nvidia-smi must list the GPUs; if it fails, install or load the NVIDIA "
    "driver: sudo ubuntu-drivers autoinstall (or sudo apt install nvidia-driver-<branch>), "
    "then sudo reboot (sudo modprobe nvidia when it is installed but not loaded)"
)


def _no_gpu_seen(facts: Facts, line: LogLine) -> Hit:
    """torch saw no driver or no GPU: CUDA_VISIBLE_DEVICES hiding them where the node says so;
    else, in the order the line makes likely, CUDA_VISIBLE_DEVICES naming a GPU the node lacks
    ('No CUDA GPUs are available'), the container's GPUs, the host driver ('Found no NVIDIA
    driver': no driver at all)."""
    try:
        env = facts.env()
    except Skip:
        env = {}
    hidden = {
        k: env[k]
        for k in ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES")
        if k in env and env[k].strip() in _HIDDEN
    }
    actions = []
    if hidden:
        actions.append(manual("unset " + " ".join(hidden) + "  (it hides every GPU)"))
    # no driver at all: torch's words, or the shell's that nvidia-smi (the driver's utility) is
    # not installed
    no_driver = _NO_DRIVER in line.text or "nvidia-smi" in line.text
    steps = (
        [manual(DRIVER), manual(CONTAINER)] if no_driver else [manual(CONTAINER), manual(DRIVER)]
    )
    if not no_driver:
        steps.insert(0 if _NO_DEVICES in line.text else 1, manual(VISIBLE))
    actions += steps
    why = (
        f"{', '.join(f'{k}={v!r}' for k, v in hidden.items())} hides every GPU"
        if hidden
        else "no NVIDIA driver loaded, or a container started without GPUs"
        if no_driver
        else "CUDA_VISIBLE_DEVICES naming no GPU the node has, a container started without "
        "GPUs, or no NVIDIA driver loaded"
    )
    # WSL from the line, the node, or another line of the log ('Ubuntu/WSL2 on Windows 10')
    wsl = on_wsl(facts, line.text) or bool(line.stated.get("host_platform"))
    if no_driver and wsl:
        actions[:0] = [manual(step) for step in WSL_STEPS]
    if hidden:
        first = "unset " + " ".join(hidden) + "; "
    elif no_driver and wsl:
        first = (
            "on WSL, WSL 2 with NVIDIA's Windows driver (WSL 1 has no GPU; no Linux driver "
            "inside the distribution); "
        )
    elif no_driver:
        first = (
            "install or load the NVIDIA driver on the host (sudo ubuntu-drivers autoinstall, "
            "then sudo reboot); "
        )
    elif _NO_DEVICES in line.text:
        first = "export CUDA_VISIBLE_DEVICES=0 (a GPU `nvidia-smi -L` lists); "
    else:
        first = ""
    return Hit(
        f"the process saw no usable NVIDIA driver or GPU (line {line.line}): {why}",
        evidence={"line": line.line, "hidden_by": hidden},
        fix=fix(
            "Give the process the GPUs: "
            + first
            + "docker run --gpus all in a container, the NVIDIA driver loaded on the host",
            "manual",
            *actions,
        ),
    )


@from_log("SYS135")
def container_toolkit_symbol_in_log(facts: Facts, line: LogLine) -> Hit:
    """CUDA's initialisation answered 500 ('named symbol not found') in a container: the
    driver library the container runtime mounted lacks an entry point the CUDA runtime asks
    for. The threads are Docker Desktop and WSL 2 after the Windows driver 555.85, whose
    NVIDIA Container Toolkit before 1.15.0 mounts an incomplete set (NVIDIA's known issue
    4668302, vllm-project/vllm#5035); Docker Desktop 4.31 ships 1.15.0. A driver the node
    states is named; the threads' other way out is the driver before 555.85 (552.44)."""
    driver = None
    with contextlib.suppress(Skip):
        driver = facts.driver()
    said = f" (driver {driver})" if driver is not None else ""
    return Hit(
        f"CUDA's initialisation failed with error 500 (line {line.line}){said}: the driver "
        "library the container runtime mounted lacks an entry point the CUDA runtime asks "
        "for (Docker Desktop / WSL 2 with the Windows driver 555.85 and an NVIDIA Container "
        "Toolkit older than 1.15.0)",
        evidence={"line": line.line, "driver": str(driver) if driver is not None else None},
        fix=fix(
            "Update Docker Desktop to 4.31 or newer (it ships NVIDIA Container Toolkit "
            "1.15.0); on a Linux host, nvidia-container-toolkit >= 1.15.0; or go back to a "
            "Windows driver before 555.85 (552.44)",
            "manual",
            manual("update Docker Desktop to 4.31+ (Settings > Software updates), restart it"),
            manual(
                "on a Linux host: sudo apt-get install -y --only-upgrade nvidia-container-toolkit "
                "&& sudo systemctl restart docker  (`nvidia-ctk --version`: 1.15.0 or newer)"
            ),
            manual("or install the Windows driver 552.44 (before 555.85) and restart WSL"),
        ),
    )


# the image's path of a library the runtime mounts, as the line names it under the container's
# root (.../merged/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1 -> /usr/lib/x86_64-linux-gnu/...)
_IMAGE_PATH = lazy(r"/merged(?P<path>/\S+)$")


@from_log("DRV170")
def image_driver_file_in_log(facts: Facts, line: LogLine) -> Hit:
    """The NVIDIA container runtime could not mount the host's driver library: the image has a
    file of that name (a driver package in the image, an image committed from a running GPU
    container; the threads are WSL 2's). The image's copy goes: a Dockerfile FROM the image
    that removes it (knaw-huc/loghi#3), and the packages that put it there."""
    library = line.stated.get("library_path", "")
    found = _IMAGE_PATH.search(library)
    path = (
        found.group("path")
        if found
        else "/usr/lib/x86_64-linux-gnu/" + line.stated.get("soname", "libnvidia-ml.so.1")
    )
    directory = path.rsplit("/", 1)[0]
    # the two the runtime always mounts go together (the thread removed both)
    files = dict.fromkeys([path, f"{directory}/libnvidia-ml.so.1", f"{directory}/libcuda.so.1"])
    remove = "rm -f " + " ".join(files)
    return Hit(
        f"the container runtime could not mount the host's driver library at {path} (line "
        f"{line.line}): the image already has that file, a driver library of its own",
        evidence={"line": line.line, "path": path},
        fix=fix(
            f"Remove the image's own driver libraries: build FROM the image with RUN {remove} "
            "(and apt-get purge the driver packages that installed them: libnvidia-compute-*, "
            "nvidia-opencl-dev); never docker commit a running GPU container",
            "manual",
            manual(f"Dockerfile: FROM <image> then RUN {remove}; docker build -t <image>-gpu ."),
            manual(
                "in the image: dpkg -S " + path + "  (the package that ships it: apt-get purge it)"
            ),
        ),
    )


def _unknown_device(line: LogLine) -> Hit:
    """nvidia-container-cli was asked for a GPU (index, UUID, PCI address) the host does not
    have (libnvidia-container src/cli/common.c): the device named must be one `nvidia-smi -L`
    lists on the host."""
    device = line.stated.get("container_device", "the device")
    return Hit(
        f"the NVIDIA container runtime was asked for GPU {device!r} (line {line.line}), which no "
        "GPU of the host matches",
        evidence={"line": line.line, "device": device},
        fix=fix(
            f"Ask for a GPU the host has: `nvidia-smi -L` on the host lists the indexes and "
            f"UUIDs; docker run --gpus '\"device=0\"' (or NVIDIA_VISIBLE_DEVICES=<index or "
            f"UUID>) instead of {device}",
            "manual",
            manual("nvidia-smi -L  (on the host: the GPUs' indexes and UUIDs)"),
            manual(
                "docker run --gpus '\"device=0\"' ...  (or -e NVIDIA_VISIBLE_DEVICES=<index or "
                "UUID>; compose: device_ids: ['0'])"
            ),
        ),
    )


def _cdi_unresolvable(line: LogLine) -> Hit:
    """The engine asked for GPUs by CDI name and no CDI spec names them: NVIDIA's CDI page
    generates the spec with nvidia-ctk (and again after each driver upgrade, or the spec names
    the old driver's files); nvidia-container-toolkit#146 and nixpkgs#420638 are this line."""
    device = line.stated.get("container_device", "nvidia.com/gpu=all")
    return Hit(
        f"the container engine found no CDI spec naming {device} (line {line.line}): the NVIDIA "
        "CDI spec was not generated on this host, predates its driver, or is not readable",
        evidence={"line": line.line, "device": device},
        fix=fix(
            "Generate the NVIDIA CDI spec on the host (sudo nvidia-ctk cdi generate "
            "--output=/etc/cdi/nvidia.yaml, again after every driver upgrade), check it lists "
            f"{device} (nvidia-ctk cdi list), then start the container again",
            "manual",
            manual(
                "sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml  (from "
                "nvidia-container-toolkit; sudo apt-get install -y nvidia-container-toolkit "
                "where nvidia-ctk is missing)"
            ),
            manual("nvidia-ctk cdi list  (must list nvidia.com/gpu=all and each GPU)"),
            manual(
                "podman run --rm --device nvidia.com/gpu=all ubuntu nvidia-smi -L  (check; "
                "the spec must be readable by the user that runs the engine)"
            ),
        ),
    )


def _cgroup_v2(line: LogLine) -> Hit:
    """nvidia-container-cli found no cgroup v1 devices controller: a cgroup v2 host and a
    libnvidia-container older than 1.8 (its release notes: cgroup v2 from 1.8.0). The toolkit's
    upgrade is the fix; threads that could not upgrade booted into cgroup v1 (nvidia-docker#1486:
    systemd.unified_cgroup_hierarchy=false on the kernel command line)."""
    return Hit(
        f"the NVIDIA container runtime found no cgroup v1 devices controller (line {line.line}): "
        "the host runs cgroup v2 and the installed libnvidia-container predates its cgroup v2 "
        "support (1.8.0)",
        evidence={"line": line.line},
        fix=fix(
            "Upgrade the NVIDIA Container Toolkit to 1.8 or newer (it handles cgroup v2), then "
            "restart Docker; or boot the host into cgroup v1: add "
            "systemd.unified_cgroup_hierarchy=false to GRUB_CMDLINE_LINUX, regenerate the GRUB "
            "config and reboot",
            "manual",
            manual(
                "sudo apt-get install -y --only-upgrade nvidia-container-toolkit "
                "libnvidia-container1 libnvidia-container-tools  (1.8.0 or newer; "
                "nvidia-container-cli --version shows the installed one)"
            ),
            manual(RESTART),
            manual(
                "or cgroup v1: add systemd.unified_cgroup_hierarchy=false to GRUB_CMDLINE_LINUX "
                "in /etc/default/grub, then sudo update-grub (or grub-mkconfig -o "
                "/boot/grub/grub.cfg) and sudo reboot"
            ),
        ),
    )


def _missing_ldconfig(line: LogLine) -> Hit:
    """nvidia-container-cli could not run the ldconfig its configuration names: Debian's
    /sbin/ldconfig.real on a host with only /sbin/ldconfig (RPM distributions), or the reverse
    (nvidia-container-toolkit's config.toml, [nvidia-container-cli] ldconfig = "@<path>")."""
    missing = line.stated.get("ldconfig_path", "/sbin/ldconfig.real")
    other = "/sbin/ldconfig" if missing.endswith(".real") else "/sbin/ldconfig.real"
    return Hit(
        f"the NVIDIA container runtime could not run {missing} (line {line.line}), the ldconfig "
        "its configuration names",
        evidence={"line": line.line, "ldconfig": missing},
        fix=fix(
            f"Point the runtime at the host's ldconfig: in /etc/nvidia-container-runtime/"
            f'config.toml set ldconfig = "@{other}" (ls {other}), then restart Docker',
            "manual",
            manual(
                f"sudo sed -i 's|^ldconfig = .*|ldconfig = \"@{other}\"|' "
                "/etc/nvidia-container-runtime/config.toml"
            ),
            manual(RESTART),
        ),
    )


def _in_container(line: LogLine) -> bool:
    """Whether the log says the job runs in a container: its prose, a `docker run`, NGC's
    image, Docker's hostname on NCCL's lines."""
    return any(line.stated.get(name) for name in _CONTAINER_FACTS)


def _build_in_container_without_gpu(line: LogLine) -> Hit:
    """A setup.py that builds its CUDA ops only where torch sees a GPU, run in a container the
    log states: a CUDA toolkit is there (cpp_extension's CUDA_HOME), so the container's missing
    GPUs come first; a CPU-only torch (TOR110) stays open beside it, the torch build unstated."""
    return Hit(
        f"the package's setup.py builds its CUDA ops only where torch sees a GPU (line "
        f"{line.line}), and the log says it runs in a container: one started without the GPUs "
        "(no --gpus, or no NVIDIA Container Toolkit on the host); a `docker build` step has no "
        "GPU either",
        evidence={"line": line.line},
        fix=fix(
            "Run the build in a container started with the GPUs: docker run --gpus all ... "
            "(the NVIDIA Container Toolkit, nvidia-container-toolkit, installed on the host and "
            "registered with Docker), then python setup.py build install there; a Dockerfile's "
            "RUN step sees no GPU: build the ops in the running container (or with FORCE_CUDA=1 "
            "where the setup.py reads it)",
            "manual",
            manual(CONTAINER),
            manual(INSTALL),
            manual(CONFIGURE),
        ),
    )
