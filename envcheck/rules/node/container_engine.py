"""The host's container engine as pasted dumps state it (``docker info``, daemon.json, the NVIDIA
Container Toolkit's version and config.toml: the system section's ``container_engine``), read by
the rules of Docker's and NVML's lines:

- DRV103 (Docker has no NVIDIA runtime to hand the GPUs to): a daemon.json that configures the
  ``nvidia`` runtime while ``docker info`` of the running daemon lacks it is a daemon not
  restarted since the file was written (dockerd reads daemon.json only at start; moby
  daemon/config; https://github.com/Leon-Sander/Local-Multimodal-AI-Chat/issues/31); a daemon
  with neither has the toolkit unregistered (``nvidia-ctk runtime configure``); one that has the
  runtime but refuses ``--gpus`` lacks ``nvidia-container-runtime-hook`` on PATH (moby
  daemon/nvidia_linux.go registers the ``nvidia`` device driver only when the hook is found).
- DRV151 (NVML ``Unknown Error`` in a container): ``no-cgroups = true`` in the toolkit's
  config.toml gives a rootful container no device cgroup rules for the GPUs; set it back to
  false (https://github.com/NVIDIA/nvidia-container-toolkit/issues/381, the maintainers:
  `no-cgroups = true` is only needed for rootless containers).
"""

from __future__ import annotations

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.report import ContainerEngine
from envcheck.rules.base import Hit, LogLine
from envcheck.rules.fixes import fix, manual

RESTART = "sudo systemctl restart docker"
CONFIGURE = "sudo nvidia-ctk runtime configure --runtime=docker"
CHECK = "docker info | grep -i runtime   # check: Runtimes lists nvidia"
NO_CGROUPS_OFF = (
    "sudo nvidia-ctk config --set nvidia-container-cli.no-cgroups=false --in-place"
    "   # or edit /etc/nvidia-container-runtime/config.toml: no-cgroups = false"
)
_CONFIG = "/etc/nvidia-container-runtime/config.toml"


def engine(facts: Facts) -> ContainerEngine | None:
    """The container engine the given node states, None when nothing states it."""
    try:
        return facts.system().container_engine
    except Skip:
        return None


def _listed(names: tuple[str, ...] | None) -> str:
    return ", ".join(names) if names else "none"


def runtime_hit(facts: Facts, line: LogLine, asked: str) -> Hit | None:
    """DRV103 worded by what ``docker info`` and daemon.json state, None when they state no
    runtime list."""
    stated = engine(facts)
    if stated is None or stated.runtimes is None:
        return None
    running = stated.runtimes
    configured = stated.configured_runtimes or ()
    evidence: dict[str, object] = {
        "line": line.line,
        "runtimes": list(running),
        "configured_runtimes": list(configured),
    }
    if "nvidia" not in running and "nvidia" in configured:
        return Hit(
            f"Docker could not give the container GPUs (line {line.line}): daemon.json "
            "configures the nvidia runtime, but the running daemon has only "
            f"{_listed(running)} (docker info): it has not been restarted since daemon.json "
            "was written (dockerd reads it only at start)",
            evidence=evidence,
            fix=fix(
                "Restart the Docker daemon so it reads daemon.json, then check that docker "
                "info lists the nvidia runtime",
                "manual",
                manual(RESTART),
                manual(CHECK),
                manual(
                    "a rootless or snap Docker reads another daemon.json "
                    "(~/.config/docker/daemon.json; the snap's own): configure that one"
                ),
            ),
        )
    if "nvidia" not in running:
        return Hit(
            f"Docker could not give the container GPUs (line {line.line}): {asked} needs the "
            f"NVIDIA runtime, and the running daemon has only {_listed(running)} "
            "(docker info): the NVIDIA Container Toolkit is not registered with it",
            evidence=evidence,
            fix=fix(
                "Register the NVIDIA Container Toolkit with Docker (nvidia-ctk runtime "
                "configure, installing nvidia-container-toolkit first where it is missing) "
                "and restart Docker",
                "manual",
                manual(CONFIGURE),
                manual(RESTART),
                manual(CHECK),
            ),
        )
    if asked.startswith("--gpus"):
        return Hit(
            f"Docker could not give the container GPUs (line {line.line}): the daemon has the "
            "nvidia runtime, but --gpus needs nvidia-container-runtime-hook on the daemon's "
            "PATH (moby registers its 'nvidia' device driver only then): the "
            "nvidia-container-toolkit package is missing or its hook was removed",
            evidence=evidence,
            fix=fix(
                "Install (or reinstall) nvidia-container-toolkit, which provides "
                "nvidia-container-runtime-hook, and restart Docker",
                "manual",
                manual(
                    "sudo apt-get install --reinstall -y nvidia-container-toolkit  "
                    "(dnf/zypper likewise)"
                ),
                manual(RESTART),
            ),
        )
    return None


def no_cgroups_hit(facts: Facts, where: str) -> Hit | None:
    """DRV151 for NVML's 'Unknown Error' (``where``: 'line 4', 'as the input states') where
    the toolkit's config.toml sets no-cgroups."""
    stated = engine(facts)
    if stated is None or stated.no_cgroups is not True or stated.rootless:
        return None  # rootless Docker needs no-cgroups = true
    cgroup = f" on a cgroup v{stated.cgroup_version} host" if stated.cgroup_version else ""
    return Hit(
        f"NVML failed with 'Unknown Error' ({where}) and {_CONFIG} sets no-cgroups = "
        f"true{cgroup}: the container gets no device cgroup rules for the GPUs, so it cannot "
        "open /dev/nvidia*; no-cgroups = true is for rootless Docker only",
        evidence={"where": where, "no_cgroups": True, "cgroup_version": stated.cgroup_version},
        fix=fix(
            f"Set no-cgroups = false in {_CONFIG} (unless Docker runs rootless), restart "
            "Docker and recreate the container",
            "manual",
            manual(NO_CGROUPS_OFF),
            manual(RESTART),
        ),
    )
