"""`dmesg | grep -i nvidia` without an NVRM line: the kernel's and the NVIDIA modules' own lines
as they load are read (the module loaded, the modeset banner's driver version), not refused as
an unknown format; the modules they name are not taken as lsmod's list (an excerpt that does
not show nvidia_uvm loading does not say it is absent)."""

from __future__ import annotations

from envcheck.ingest.common import Source
from envcheck.ingest.detect import parse

TAINT_ONLY = """\
[    5.123456] nvidia: module license 'NVIDIA' taints kernel.
[    5.223456] nvidia-nvlink: Nvlink Core is being initialized, major device number 235
[    5.323456] nvidia 0000:01:00.0: vgaarb: changed VGA decodes: olddecodes=io+mem,decodes=none:owns=io+mem
"""

MODESET = """\
[    4.100000] nvidia: loading out-of-tree module taints kernel.
[    4.500000] nvidia-modeset: Loading NVIDIA Kernel Mode Setting Driver for UNIX platforms  535.129.03  Thu Oct 19 18:42:12 UTC 2023
[    4.600000] [drm] Initialized nvidia-drm 0.0.0 20160202 for 0000:01:00.0 on minor 1
"""


def test_module_lines_alone_are_read() -> None:
    report = parse(Source(name="dmesg.txt", text=TAINT_ONLY))
    assert report.gpu.is_ok
    assert report.gpu.data is not None
    assert report.gpu.data.kernel_modules is None
    assert any("loading: nvidia" in note for note in report.gpu.notes)


def test_modeset_banner_states_the_driver() -> None:
    report = parse(Source(name="dmesg.txt", text=MODESET))
    assert report.gpu.data is not None
    assert str(report.gpu.data.driver_version) == "535.129.03"
