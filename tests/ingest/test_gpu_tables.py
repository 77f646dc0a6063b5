"""GPU tables and CPU listings pasted about a node, read instead of refused as an unknown format:
``nvidia-smi topo -m`` (how many GPUs, NVLink or PCIe), DCGM's ``dcgmi discovery -l`` (the GPUs'
names) and ``lscpu`` (the machine and its CPU count). Inputs as public pages print them."""

from __future__ import annotations

from envcheck.ingest.common import Source
from envcheck.ingest.detect import parse
from envcheck.model.report import NodeReport

# a 4x A100 report (nvidia-smi -L, then nvidia-smi topo -m with its legend)
LIST_AND_TOPO = (
    "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-435b8647-c13a-0cc8-d748-41679ddb08d1)\n"
    "GPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-bc692286-b1c5-2909-5328-a5a23087f4aa)\n"
    "GPU 2: NVIDIA A100-SXM4-80GB (UUID: GPU-915ac7c9-50de-d59c-e310-15a580b86c91)\n"
    "GPU 3: NVIDIA A100-SXM4-80GB (UUID: GPU-24a09821-2da2-18fe-7b33-87f43f38025f)\n"
    "\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
    "GPU0\t X \tNV12\tNV12\tNV12\t0-31,64-95\t0\t\tN/A\n"
    "GPU1\tNV12\t X \tNV12\tNV12\t32-63,96-127\t1\t\tN/A\n"
    "GPU2\tNV12\tNV12\t X \tNV12\t32-63,96-127\t1\t\tN/A\n"
    "GPU3\tNV12\tNV12\tNV12\t X \t32-63,96-127\t1\t\tN/A\n"
    "\n"
    "Legend:\n"
    "\n"
    "  X    = Self\n"
    "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes "
    "(e.g., QPI/UPI)\n"
)

# a DGX A100's matrix with its HCAs (a public operations note), alone
TOPO_DGX = (
    "# nvidia-smi topo -m\n"
    "\tGPU0\tGPU1\tmlx5_0\tmlx5_1\tCPU Affinity\tNUMA Affinity\n"
    "GPU0\t X \tNV12\tPXB\tSYS\t48-63,176-191\t3\n"
    "GPU1\tNV12\t X \tPXB\tSYS\t48-63,176-191\t3\n"
    "mlx5_0\tPXB\tPXB\t X \tSYS\t\t\n"
    "mlx5_1\tSYS\tSYS\tSYS\t X \t\t\n"
)

TOPO_PCIE = "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tSYS\t0-31\nGPU1\tSYS\t X \t0-31\n"

# DCGM's discovery box
DCGMI = """\
1 GPU found.
+--------+----------------------------------------------------------------------+
| GPU ID | Device Information                                                   |
+--------+----------------------------------------------------------------------+
| 0      | Name: NVIDIA A100-SXM4-80GB                                          |
|        | PCI Bus ID: 00000000:07:00.0                                         |
|        | Device UUID: GPU-4c5e6f7a-1111-2222-3333-444455556666                |
+--------+----------------------------------------------------------------------+
"""

LSCPU = """\
Architecture:                    aarch64
CPU op-mode(s):                  64-bit
Byte Order:                      Little Endian
CPU(s):                          72
On-line CPU(s) list:             0-71
Vendor ID:                       ARM
Model name:                      Neoverse-V2
"""


def _read(body: str) -> NodeReport:
    return parse(Source(name="paste.txt", text=body))


def test_topo_beside_nvidia_smi_list_keeps_the_names_and_the_count() -> None:
    report = _read(LIST_AND_TOPO)
    assert report.gpu.data is not None and report.gpu.data.gpus is not None
    assert [g.name for g in report.gpu.data.gpus] == ["NVIDIA A100-SXM4-80GB"] * 4
    assert "nvidia-smi topo -m" in report.origin.detail


def test_topo_alone_states_the_gpu_count_and_nvlink() -> None:
    report = _read(TOPO_DGX)
    assert report.gpu.data is not None and report.gpu.data.gpus is not None
    assert len(report.gpu.data.gpus) == 2
    assert any("NV12 (NVLink)" in n for n in report.gpu.notes)


def test_topo_without_nvlink_says_so() -> None:
    report = _read(TOPO_PCIE)
    assert any("no NVLink" in n for n in report.gpu.notes)


def test_dcgmi_discovery_names_the_gpus() -> None:
    report = _read(DCGMI)
    assert report.gpu.data is not None and report.gpu.data.gpus is not None
    assert [g.name for g in report.gpu.data.gpus] == ["NVIDIA A100-SXM4-80GB"]


def test_lscpu_states_the_machine_and_cpu_count() -> None:
    report = _read(LSCPU)
    assert report.system.data is not None
    assert (report.system.data.arch, report.system.data.cpu_count) == ("aarch64", 72)
