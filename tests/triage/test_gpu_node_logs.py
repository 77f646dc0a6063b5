"""Failures made on a real H200 by scripts/gpu_failures.py (tests/triage/gpu_node/README.md).

What each failure is comes from how the scenario made it (the script's ``kind``), not from
triage's output: each case names the signature family and the cause whose fix is the right
one for that failure. Triage runs twice: on the log alone (``--no-probe``), and against the
node's own saved report (``--report``), as on the node.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli

HERE = Path(__file__).parent / "gpu_node"
REPORT = HERE / "h200-node-report.json"
ROOT = Path(__file__).resolve().parents[2]


def _triage(name: str, node: bool) -> tuple[int, dict[str, Any]]:
    where = ["--report", str(REPORT)] if node else ["--no-probe"]
    done = run_cli("triage", *where, "--json", str(HERE / f"{name}.log"))
    return done.returncode, done.json()["data"]


def _causes(data: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(signature, cause, verdict) of every failure line, causes in printed order."""
    return [
        (m["id"], c["code"], c["verdict"])
        for m in data["matches"]
        if not m["noise"]
        for c in m["causes"]
    ]


def _top(data: dict[str, Any]) -> list[tuple[str, str]]:
    """(signature, its first cause) of every failure line."""
    return [
        (m["id"], m["causes"][0]["code"] if m["causes"] else "")
        for m in data["matches"]
        if not m["noise"]
    ]


# (log, signature, the cause whose fix is right), from how the scenario made the failure
MADE = [
    ("torch_oom", "cuda-out-of-memory", "DRV150"),
    ("torch_invalid_ordinal", "cuda-error", "DRV150"),
    ("torch_no_visible_gpu", "torch-found-no-driver", "DRV103"),
    ("torch_stub_libcuda", "cuda-error", "DRV150"),
    ("torch_device_assert", "cuda-error", "DRV150"),
    ("triton_illegal_address", "cuda-error", "DRV150"),
    ("cupy_illegal_address", "cuda-error", "DRV150"),
    ("jax_no_visible_gpu", "cuda-error", "DRV150"),
    ("cuda_in_forked_child", "cuda-reinit-in-forked-child", "CUD195"),
    ("nccl_duplicate_gpu", "nccl-duplicate-gpu", "CUD152"),
    ("nccl_bad_socket_ifname", "nccl-no-socket-interface", "NET101"),
    ("gloo_bad_socket_ifname", "gloo-unable-to-find-address", "NET101"),
    ("store_port_in_use", "c10d-store-port-in-use", "NET160"),
    ("nvcc_missing_header", "vendored-cutlass-headers-missing", "SYS165"),
    ("torch_ext_compile_error", "extension-build-failed", "SYS153"),
    ("ext_undefined_symbol", "undefined-symbol-torch", "TOR150"),
    ("ext_missing_cudart11", "shared-object-cannot-open", "SYS150"),
    ("triton_shared_memory", "triton-shared-memory-over-limit", "TOR200"),
    ("module_missing", "no-module-named", "PY151"),
    ("spawn_unguarded_main", "multiprocessing-main-not-guarded", "PY170"),
    ("gloo_recv_timeout", "gloo-collective-timeout", "NET170"),
    # the second run on the node (the scenarios the first left unrun, and two arch failures)
    ("torch_oom_other_process", "cuda-out-of-memory", "DRV104"),
    ("torch_oom_beside_jax", "cuda-out-of-memory", "DRV104"),
    ("cupy_block_too_large", "cuda-error", "DRV150"),
    ("cubin_other_arch", "no-kernel-image", "CUD153"),
    ("cupy_kernel_compile_error", "nvrtc-kernel-compile-error", "CUD158"),
    ("torch_visible_index_past_end", "torch-found-no-driver", "DRV103"),
]

# made failures whose cause only the node decides: the log alone leaves it open
MADE_ON_NODE = [
    # torch's own kernels and the extension's are both called from the job's frame
    ("ext_no_kernel_image", "no-kernel-image", "CUD153"),
]


def found_with(name: str, node: bool, signature: str, code: str) -> tuple[str, dict[str, Any]]:
    """Triage of a made failure: it fails (exit 1) with ``signature`` led by ``code``; the
    verdict of that cause, and the data."""
    exit_code, data = _triage(name, node)
    assert exit_code == 1
    assert (signature, code) in _top(data), _top(data)
    return {(s, c): v for s, c, v in _causes(data)}[(signature, code)], data


@pytest.mark.parametrize(("name", "signature", "code"), MADE)
@pytest.mark.parametrize("node", [False, True], ids=["log", "node"])
def test_a_made_failure_is_found_with_its_cause(
    name: str, signature: str, code: str, node: bool
) -> None:
    verdict, _ = found_with(name, node, signature, code)
    assert verdict in {"confirmed", "unknown"}


@pytest.mark.parametrize(("name", "signature", "code"), MADE_ON_NODE)
def test_a_made_failure_the_node_decides_is_confirmed_on_it(
    name: str, signature: str, code: str
) -> None:
    assert found_with(name, True, signature, code)[0] == "confirmed"


# the fix's own words that make it the right one for how the failure was made
FIX_WORDS = [
    ("torch_invalid_ordinal", "CUDA_VISIBLE_DEVICES"),
    ("torch_no_visible_gpu", "CUDA_VISIBLE_DEVICES"),
    ("jax_no_visible_gpu", "CUDA_VISIBLE_DEVICES"),
    ("torch_stub_libcuda", "stubs"),
    ("torch_device_assert", "CUDA_LAUNCH_BLOCKING=1"),
    ("cupy_illegal_address", "compute-sanitizer"),
    ("nccl_bad_socket_ifname", "NCCL_SOCKET_IFNAME"),
    ("gloo_bad_socket_ifname", "GLOO_SOCKET_IFNAME"),
    ("torch_oom_other_process", "kill 1072"),
    ("torch_oom_beside_jax", "kill 1143"),
    ("ext_no_kernel_image", 'TORCH_CUDA_ARCH_LIST=\\"9.0\\"'),
    ("nvidia_smi_missing_index", "nvidia-smi -L"),
    ("torch_visible_index_past_end", "CUDA_VISIBLE_DEVICES"),
    ("cubin_other_arch", "nvcc -cubin -arch=sm_90"),
]


@pytest.mark.parametrize(("name", "words"), FIX_WORDS)
def test_the_fix_names_what_made_the_failure(name: str, words: str) -> None:
    _, data = _triage(name, node=True)
    first = next(m for m in data["matches"] if not m["noise"])
    fix = json.dumps(first["causes"][0].get("fix"))
    assert words in fix, fix


@pytest.mark.parametrize("name", ["clean_train", "clean_nccl_info"])
@pytest.mark.parametrize("node", [False, True], ids=["log", "node"])
def test_a_clean_run_has_no_finding(name: str, node: bool) -> None:
    exit_code, data = _triage(name, node)
    assert exit_code == 0, _top(data)


@pytest.mark.parametrize("node", [False, True], ids=["log", "node"])
def test_nccl_info_that_the_node_rules_out_is_no_failure(node: bool) -> None:
    """NCCL's INFO `NET/IB : No device found.` on a one-node job without InfiniBand: the cause
    (NET150) is ruled out, by the node's facts or by the log's own `nNodes 1`, so the line is
    shown as information ruled out here and sets no exit 1."""
    _, data = _triage("clean_nccl_info", node)
    ib = next(m for m in data["matches"] if m["id"] == "nccl-ib-unavailable")
    assert ib["noise"] and ib["information_ruled_out"]
    assert [c["verdict"] for c in ib["causes"]] == ["ruled_out"]


def test_the_same_info_line_in_a_job_of_two_nodes_stays_open(tmp_path: Path) -> None:
    """Across nodes NCCL's traffic goes over the network: without InfiniBand it falls back to
    sockets, so the same INFO line keeps its cause open when the node's HCAs are unknown."""
    log = tmp_path / "two-nodes.log"
    text = (HERE / "clean_nccl_info.log").read_text()
    log.write_text(text.replace("nNodes 1", "nNodes 2"))
    done = run_cli("triage", "--no-probe", "--json", str(log))
    assert done.returncode == 1
    ib = next(m for m in done.json()["data"]["matches"] if m["id"] == "nccl-ib-unavailable")
    assert not ib["noise"] and [c["verdict"] for c in ib["causes"]] == ["unknown"]


def test_the_script_makes_and_triages_the_failures_a_cpu_can_make(tmp_path: Path) -> None:
    """The two scenarios that need no GPU, end to end: the failing program's log, then
    triage's verdict in results.tsv."""
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "gpu_failures.py"),
            str(tmp_path),
            "--no-probe",
            "--only",
            "native_segfault",
            "module_missing",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Segmentation fault" in (tmp_path / "native_segfault.log").read_text()
    rows = {
        line.split("\t")[0]: line.split("\t")
        for line in (tmp_path / "results.tsv").read_text().splitlines()[1:]
    }
    assert rows["native_segfault"][1] != "0" and rows["native_segfault"][2] == "1"
    assert rows["native_segfault"][3].startswith("native-crash")
    assert rows["module_missing"][3].startswith("no-module-named PY151")
    assert "triage found 2" in done.stdout


def test_the_script_refuses_an_unknown_scenario(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gpu_failures.py"), str(tmp_path), "--only", "x"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "unknown scenario(s): x" in done.stderr
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("node", [False, True], ids=["log", "node"])
def test_a_segfault_in_code_that_loads_no_openmp_package_confirms_no_cause(node: bool) -> None:
    """`ctypes.string_at(0)` under faulthandler on a node with torch and scikit-learn installed:
    nothing in the log shows either loaded, so the OpenMP cause (SYS203) stays open and the
    generic native crash (SYS250) leads."""
    exit_code, data = _triage("native_segfault", node)
    assert exit_code == 1
    causes = _causes(data)
    assert causes[0][:2] == ("native-crash", "SYS250")
    assert all(verdict != "confirmed" for _, _, verdict in causes)


@pytest.mark.parametrize("name", ["torch_oom_other_process", "torch_oom_beside_jax"])
def test_an_oom_whose_numbers_show_no_fragmentation_offers_no_allocator_setting(name: str) -> None:
    _, data = _triage(name, node=True)
    fixes = json.dumps([c.get("fix") for m in data["matches"] for c in m["causes"]])
    assert "0 bytes is reserved by PyTorch but unallocated" in (HERE / f"{name}.log").read_text()
    assert "expandable_segments" not in fixes and "max_split_size_mb" not in fixes


def test_no_devices_on_a_node_whose_nvml_sees_a_gpu_is_a_selection_of_a_missing_one() -> None:
    """`nvidia-smi -i 5` on the one-GPU node printed 'No devices were found': the node's NVML
    lists its H200, so the GPUs did not fail to initialise; the command chose none of them."""
    verdict, data = found_with("nvidia_smi_missing_index", True, "nvidia-smi-no-devices", "DRV151")
    assert verdict == "confirmed"
    message = data["matches"][0]["causes"][0]["findings"][0]["message"]
    assert "selected a GPU that is not there" in message
    assert "NVIDIA H200" in message
    # from the log alone the table's causes stand: GPUs that failed to initialise
    _, alone = _triage("nvidia_smi_missing_index", node=False)
    assert "enumerated zero GPUs" in json.dumps(alone["matches"][0]["causes"][0])


def _with_address_space(tmp_path: Path, soft: int) -> Path:
    """The node's report with the address-space limit the job ran under (`ulimit -v`, bytes;
    -1 unlimited), as `probe` reads it from /proc/self/limits in that shell."""
    report = json.loads(REPORT.read_text())
    report["system"]["data"]["ulimits"]["as"] = {"soft": soft, "hard": -1}
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    return path


@pytest.mark.parametrize(
    ("name", "signature"),
    [
        ("torch_init_under_vmem_limit", "cuda-out-of-memory"),
        ("jax_init_under_vmem_limit", "cuda-init-out-of-memory"),
    ],
)
def test_cuda_start_up_under_an_address_space_limit_is_that_limit(
    tmp_path: Path, name: str, signature: str
) -> None:
    """`ulimit -v 16777216` (16 GiB) made torch's first CUDA call and JAX's backend fail with
    out of memory on the empty H200: with the limit on the node, SYS192 leads; with none, it is
    ruled out; from the log alone it stays open."""
    limited = run_cli(
        "triage",
        "--report",
        str(_with_address_space(tmp_path, 16 * 2**30)),
        "--json",
        str(HERE / f"{name}.log"),
    ).json()["data"]
    assert (signature, "SYS192") in _top(limited)
    verdicts = {(s, c): v for s, c, v in _causes(limited)}
    assert verdicts[(signature, "SYS192")] == "confirmed"
    assert "ulimit -v unlimited" in json.dumps(limited)
    unlimited = run_cli(
        "triage",
        "--report",
        str(_with_address_space(tmp_path, -1)),
        "--json",
        str(HERE / f"{name}.log"),
    ).json()["data"]
    assert {(s, c): v for s, c, v in _causes(unlimited)}[(signature, "SYS192")] == "ruled_out"
    _, alone = _triage(name, node=False)
    assert {(s, c): v for s, c, v in _causes(alone)}[(signature, "SYS192")] == "unknown"


def test_an_allocations_oom_is_not_the_address_space_limit_whatever_the_node(
    tmp_path: Path,
) -> None:
    """torch's allocator line states an allocation the job made after CUDA started: a limit
    on the node does not make it SYS192's (the line's facts outrank the node's check)."""
    data = run_cli(
        "triage",
        "--report",
        str(_with_address_space(tmp_path, 16 * 2**30)),
        "--json",
        str(HERE / "torch_oom.log"),
    ).json()["data"]
    verdicts = {(s, c): v for s, c, v in _causes(data)}
    assert verdicts[("cuda-out-of-memory", "SYS192")] == "ruled_out"
    assert _top(data)[0] == ("cuda-out-of-memory", "DRV150")
