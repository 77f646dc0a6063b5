"""GitHub issue forms whose answers sit on the line after their `### Heading`: NVIDIA's
open-gpu-kernel-modules form (the module's version is the driver's, the kernel release, a
rolling distribution with no version number, the GPU as `nvidia-smi -L` prints it) is read, not
refused as an unknown format."""

from __future__ import annotations

from envcheck.ingest.common import Source
from envcheck.ingest.detect import parse

FORM = """\
### NVIDIA Open GPU Kernel Modules Version

535.54.03

### Please confirm this issue does not happen with the proprietary driver (of the same version).

- [X] I confirm that this does not happen with the proprietary driver package.

### Operating System and Version

Arch Linux

### Kernel Release

6.4.1-arch2-1

### Hardware: GPU

{gpu}

### Describe the bug

After resume from suspend, the screen stays black.
"""


def test_the_open_kernel_modules_form() -> None:
    report = parse(Source(name="dump.txt", text=FORM.format(gpu="NVIDIA GeForce RTX 3080")))
    gpu, system = report.gpu.data, report.system.data
    assert gpu is not None and system is not None
    assert gpu.driver_version == "535.54.03"
    assert [g.name for g in gpu.gpus or ()] == ["NVIDIA GeForce RTX 3080"]
    assert (system.os_pretty, system.kernel) == ("Arch Linux", "6.4.1-arch2-1")


def test_the_gpus_as_nvidia_smi_lists_them_on_one_line() -> None:
    listed = (
        "GPU 0: NVIDIA GeForce RTX 2080 Ti (UUID: GPU-67a571b1-79ee-1016-8ea3-c1fff3f1c1d2) "
        "GPU 1: NVIDIA GeForce RTX 2080 Ti (UUID: GPU-3e34e62f-d88e-f448-415e-be2cbf2c6178)"
    )
    report = parse(Source(name="dump.txt", text=FORM.format(gpu=listed)))
    assert report.gpu.data is not None
    assert [g.name for g in report.gpu.data.gpus or ()] == ["NVIDIA GeForce RTX 2080 Ti"] * 2


def test_several_labelled_facts_on_one_line() -> None:
    text = "OS: Ubuntu 20.04 LTS; GPU: 2x A6000; Driver: 515.65.01; CUDA: 11.7\n"
    report = parse(Source(name="dump.txt", text=text))
    gpu, system = report.gpu.data, report.system.data
    assert gpu is not None and system is not None
    assert gpu.driver_version == "515.65.01"
    assert [g.name for g in gpu.gpus or ()] == ["A6000"]
    assert system.os_pretty == "Ubuntu 20.04 LTS"


def test_a_data_center_gpu_named_beside_the_driver_in_prose() -> None:
    report = parse(Source(name="dump.txt", text="Driver version 470.xx, Tesla K80\n"))
    assert report.gpu.data is not None
    assert [g.name for g in report.gpu.data.gpus or ()] == ["Tesla K80"]


def test_a_gpu_named_under_the_vendors_name_in_prose() -> None:
    for text, name in (
        ("NVIDIA GeForce RTX 3060 Laptop GPU\n", "NVIDIA GeForce RTX 3060 Laptop GPU"),
        ("The GPU is an NVIDIA Tesla T4 on a cloud instance.\n", "NVIDIA Tesla T4"),
    ):
        report = parse(Source(name="dump.txt", text=text))
        assert report.gpu.data is not None
        assert [g.name for g in report.gpu.data.gpus or ()] == [name]
