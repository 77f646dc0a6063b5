"""A container the NVIDIA runtime refuses for its CUDA: the fixes threads apply besides a
driver upgrade, ordered by what the log states. NVIDIA_DISABLE_REQUIRE (the runtime's switch
that skips NVIDIA_REQUIRE_*) first where the driver the log names runs the image's CUDA major
by minor-version compatibility, as a condition where the driver is unknown, limited to
forward compatibility where its major is older; nvidia-docker 1.0's refusal names the image of
the driver's CUDA; a runtime without cgroup v2 support names its upgrade and the cgroup v1
boot. Versions other than the corpus's."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult
from tests.triage.from_log import causes as _causes
from tests.triage.from_log import fix_text as _fix
from tests.triage.from_log import log_file

_REFUSED = (
    "nvidia-container-cli: requirement error: unsatisfied condition: cuda>={cuda}, please "
    "update your driver to a newer version, or use an earlier cuda container: unknown."
)


def _drv101(cli: Callable[..., CliResult], log: Path) -> dict[str, object]:
    cause = _causes(cli, log)["DRV101"]
    assert cause["verdict"] == "confirmed", cause
    return cause


def test_a_driver_of_the_same_major_skips_the_check_first(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |",
        _REFUSED.format(cuda="12.6"),
    )
    cause = _drv101(cli, log)
    commands = [str(c) for c in cause["fix"]["commands"]]  # type: ignore[index]
    assert "NVIDIA_DISABLE_REQUIRE=true" in commands[0]
    assert "minor-version compatibility" in commands[0]


def test_an_unknown_driver_names_the_switch_as_a_condition(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    text = _fix(_drv101(cli, log_file(tmp_path, _REFUSED.format(cuda="12.4"))))
    assert "Upgrade the NVIDIA driver" in text.split("\n")[0] or text.startswith("Upgrade")
    assert "NVIDIA_DISABLE_REQUIRE=true" in text
    assert "where the driver runs CUDA 12.x" in text
    assert "an image built for the CUDA the driver runs" in text


def test_an_older_major_limits_the_switch_to_forward_compatibility(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "| NVIDIA-SMI 470.82.01    Driver Version: 470.82.01    CUDA Version: 11.4     |",
        _REFUSED.format(cuda="12.1"),
    )
    text = _fix(_drv101(cli, log))
    assert "data-center GPU" in text and "forward compatibility" in text
    assert "an image built for CUDA <= 11.4" in text


def test_nvidia_docker_1_names_the_image_of_the_drivers_cuda(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "nvidia-docker | 2017/02/08 14:01:45 Error: unsupported CUDA version: driver 7.5 < "
        "image 8.0",
    )
    text = _fix(_drv101(cli, log))
    assert "CUDA 8.0" in text
    assert "nvidia/cuda:7.5-runtime" in text


def test_a_runtime_without_cgroup_v2_names_the_upgrade_and_cgroup_v1(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "Error response from daemon: failed to create task for container: failed to create shim "
        "task: OCI runtime create failed: runc create failed: unable to start container process: "
        "error during container init: error running hook #0: error running hook: exit status 1, "
        "stdout: , stderr: nvidia-container-cli: container error: cgroup subsystem devices not "
        "found: unknown",
    )
    cause = _causes(cli, log)["DRV103"]
    assert cause["verdict"] == "confirmed", cause
    text = _fix(cause)
    assert "nvidia-container-toolkit" in text and "1.8" in text
    assert "systemd.unified_cgroup_hierarchy=false" in text
