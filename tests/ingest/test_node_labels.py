"""A Kubernetes node's GPU labels (NVIDIA's GPU Feature Discovery) pasted alone or inside a
`kubectl describe node`: the driver, its CUDA and the GPUs are read, not refused as an unknown
format. The label lines are as public pages print them (named at each)."""

from __future__ import annotations

from envcheck.ingest.common import Source
from envcheck.ingest.detect import parse
from envcheck.model.report import GpuInfo, NodeReport

# a `kubectl describe node` of a GPU node (a public setup note), the labels GFD 0.4 wrote
DESCRIBE = """\
k describe node ml00 | less

Name:               ml00
Roles:              <none>
Labels:             beta.kubernetes.io/arch=amd64
                    nvidia.com/cuda.driver.major=465
                    nvidia.com/cuda.driver.minor=19
                    nvidia.com/cuda.driver.rev=01
                    nvidia.com/cuda.runtime.major=11
                    nvidia.com/cuda.runtime.minor=3
                    nvidia.com/gfd.timestamp=1619147692
                    nvidia.com/gpu.count=2
                    nvidia.com/gpu.product=NVIDIA-GeForce-RTX-3090
"""

# the GPU Operator's documentation (`kubectl get nodes ... | grep nvidia.com`), newer labels
GET_NODES = """\
nvidia.com/cuda.driver-version.full=535.129.03
nvidia.com/cuda.driver-version.major=535
nvidia.com/cuda.driver-version.minor=129
nvidia.com/cuda.driver-version.revision=03
nvidia.com/cuda.driver.major=535
nvidia.com/cuda.driver.minor=129
nvidia.com/cuda.driver.rev=03
nvidia.com/cuda.runtime-version.full=12.2
nvidia.com/cuda.runtime-version.major=12
nvidia.com/cuda.runtime-version.minor=2
nvidia.com/cuda.runtime.major=12
nvidia.com/cuda.runtime.minor=2
"""

# `kubectl get node -o json | jq '.metadata.labels'`
JSON_LABELS = """\
{
  "nvidia.com/cuda.driver-version.full": "580.65.06",
  "nvidia.com/cuda.runtime-version.full": "13.0",
  "nvidia.com/gpu.compute.major": "9",
  "nvidia.com/gpu.compute.minor": "0",
  "nvidia.com/gpu.count": "8",
  "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"
}
"""


def _read(body: str) -> tuple[GpuInfo, NodeReport]:
    report = parse(Source(name="paste.txt", text=body))
    assert report.gpu.data is not None, report.gpu.reason
    return report.gpu.data, report


def test_describe_node_states_the_driver_its_cuda_and_the_gpus() -> None:
    gpu, report = _read(DESCRIBE)
    assert gpu.driver_version == "465.19.01"
    assert gpu.cuda_driver_version == "11.3"
    assert gpu.gpus is not None
    assert [g.name for g in gpu.gpus] == ["NVIDIA GeForce RTX 3090"] * 2
    assert "GPU Feature Discovery" in report.origin.detail


def test_newer_labels_alone_state_the_driver() -> None:
    gpu, _ = _read(GET_NODES)
    assert gpu.driver_version == "535.129.03"
    assert gpu.cuda_driver_version == "12.2"
    assert gpu.gpus is None


def test_json_labels_state_the_gpus_and_their_capability() -> None:
    gpu, _ = _read(JSON_LABELS)
    assert gpu.driver_version == "580.65.06"
    assert gpu.gpus is not None
    assert len(gpu.gpus) == 8
    assert {(g.name, g.compute_capability) for g in gpu.gpus} == {("NVIDIA H100 80GB HBM3", "9.0")}
