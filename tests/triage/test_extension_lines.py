"""The CUDA-extension packages' own lines (matrices/signatures/extensions.toml): an op built
without CUDA (TOR180), a PyG package built for another CUDA (TOR150), OpenMMLab's mmcv range
check (PKG101, with mmcv's own wheel table), tiny-cuda-nn's compute-capability check (CUD153),
LLVM's NVPTX selection failure inside Triton (CUD151). Each fix is the package's build for the
node's torch and CUDA, from matrices/packages/extensions.toml."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from envcheck.rules.extension_builds import TorchTags, pick_wheel, requirement_text, wheel_index
from tests.builtin_matrix import builtin_matrix
from tests.conftest import CliResult
from tests.triage.from_log import causes as _causes
from tests.triage.from_log import fix_text as _fix
from tests.triage.from_log import log_file

MATRIX = builtin_matrix()


def _spec(tmp_path: Path, torch: str) -> Path:
    spec = tmp_path / "spec.toml"
    spec.write_text(f'[packages]\ntorch = "{torch}"\n')
    return spec


def _confirmed(found: dict[str, dict[str, object]], code: str) -> dict[str, object]:
    cause = found[code]
    assert cause["verdict"] == "confirmed", cause
    return cause


# --- TOR180: ops built without CUDA ------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "package", "spelled"),
    [
        (
            "RuntimeError: Detectron2 is not compiled with GPU support!",
            "detectron2",
            "FORCE_CUDA=1",
        ),
        ("RuntimeError: nms is not compiled with GPU support", None, "FORCE_CUDA=1"),
        ("ModuleNotFoundError: No module named 'mmcv._ext'", "mmcv", "mim install"),
        ("ModuleNotFoundError: No module named 'fused_layer_norm_cuda'", "apex", "--cuda_ext"),
        ("ImportError: No module named 'pytorch3d._C'", "pytorch3d", "FORCE_CUDA=1"),
    ],
)
def test_ops_built_without_cuda_name_the_package_and_its_build(
    tmp_path: Path, cli: Callable[..., CliResult], line: str, package: str | None, spelled: str
) -> None:
    text = _fix(_confirmed(_causes(cli, log_file(tmp_path, line)), "TOR180"))
    assert spelled in text
    if package is not None:
        assert package in text
    assert "--no-build-isolation" in text or "mim install" in text


def test_the_traceback_frame_names_the_package_when_the_line_does_not(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "Traceback (most recent call last):",
        '  File "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py", line 1501, in _call_impl',
        "    return forward_call(*args, **kwargs)",
        '  File "/opt/conda/lib/python3.10/site-packages/pytorch3d/ops/knn.py", line 72, in forward',
        "    idx, dists = _C.knn_points_idx(p1, p2, lengths1, lengths2, norm, K, version)",
        "RuntimeError: Not compiled with GPU support.",
    )
    text = _fix(_confirmed(_causes(cli, log), "TOR180"))
    assert "pytorch3d.git@stable" in text and "FORCE_CUDA=1" in text


def test_mmcv_ops_missing_gets_the_index_of_the_nodes_torch(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(tmp_path, "ModuleNotFoundError: No module named 'mmcv._ext'")
    found = _causes(cli, log, "--spec", str(_spec(tmp_path, "2.1.2+cu118")))
    text = _fix(_confirmed(found, "TOR180"))
    assert "https://download.openmmlab.com/mmcv/dist/cu118/torch2.1/index.html" in text


# --- TOR150: PyG's CUDA check, undefined symbols of a package with a wheel index -----------------


def test_pyg_cuda_check_reinstalls_from_the_index_of_torchs_cuda(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "RuntimeError: Detected that PyTorch and torch_scatter were compiled with different CUDA "
        "versions. PyTorch has CUDA version 12.1 and torch_scatter has CUDA version 11.8. Please "
        "reinstall the torch_scatter that matches your PyTorch install.",
    )
    found = _causes(cli, log, "--spec", str(_spec(tmp_path, "2.2.1+cu121")))
    text = _fix(_confirmed(found, "TOR150"))
    assert "pip install torch-scatter -f https://data.pyg.org/whl/torch-2.2.0+cu121.html" in text


def test_pyg_cuda_check_without_a_node_fills_in_the_cuda_the_line_states(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "RuntimeError: Detected that PyTorch and torch_cluster were compiled with different CUDA "
        "versions. PyTorch has CUDA version 11.7 and torch_cluster has CUDA version 11.8.",
    )
    text = _fix(_confirmed(_causes(cli, log), "TOR150"))
    assert "https://data.pyg.org/whl/torch-${TORCH}+cu117.html" in text
    assert "torch-cluster" in text


def test_undefined_symbol_in_a_pyg_package_prints_its_wheel_index(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "OSError: /usr/lib/python3.11/site-packages/torch_sparse/_convert_cuda.so: undefined "
        "symbol: _ZN3c1017RegisterOperatorsD1Ev",
    )
    found = _causes(cli, log, "--spec", str(_spec(tmp_path, "2.4.0+cu124")))
    text = _fix(_confirmed(found, "TOR150"))
    assert "pip install torch-sparse -f https://data.pyg.org/whl/torch-2.4.0+cu124.html" in text
    assert "pip install torch-sparse --no-build-isolation" in text  # the rebuild threads type


# --- PKG101: OpenMMLab's mmcv range, mmcv's own wheel table --------------------------------------

_MMCV = (
    "AssertionError: MMCV==2.2.0 is used but incompatible. Please install mmcv>=2.0.0rc4, <2.2.0."
)


def test_mmcv_range_picks_the_newest_release_with_a_wheel_for_the_nodes_torch(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    found = _causes(cli, log_file(tmp_path, _MMCV), "--spec", str(_spec(tmp_path, "2.0.1+cu118")))
    text = _fix(_confirmed(found, "PKG101"))
    assert 'mim install "mmcv==2.1.0"' in text
    assert (
        "pip install mmcv==2.1.0 -f https://download.openmmlab.com/mmcv/dist/cu118/torch2.0/index.html"
        in text
    )
    assert "pip install 'mmcv" not in text  # no plain install: mmcv 2.x is an sdist there


def test_mmcv_range_on_a_torch_without_such_wheels_says_which_torch_has_them(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    found = _causes(cli, log_file(tmp_path, _MMCV), "--spec", str(_spec(tmp_path, "2.3.1+cu121")))
    text = _fix(_confirmed(found, "PKG101"))
    assert "no mmcv wheel inside mmcv>=2.0.0rc4,<2.2.0 for torch 2.3" in text
    assert "pip install torch==2.1.* --index-url https://download.pytorch.org/whl/cu121" in text
    assert "https://download.openmmlab.com/mmcv/dist/cu121/torch2.1/index.html" in text


def test_mmengine_range_is_read_too(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    line = "AssertionError: MMEngine==0.7.0 is used but incompatible. Please install mmengine>=0.7.1, <1.0.0."
    text = _fix(_confirmed(_causes(cli, log_file(tmp_path, line)), "PKG101"))
    assert "mmengine" in text and "0.7.1" in text


def test_pick_wheel_reads_the_table_not_the_newest_release() -> None:
    mmcv = MATRIX.extension("mmcv")
    assert mmcv is not None
    pick = pick_wheel(mmcv, "mmcv<2.1.0,>=2.0.0rc4", TorchTags("1.13.0", "1.13", "cu117"))
    assert pick is not None and pick.requirement == "mmcv==2.0.1" and pick.why == ""
    assert requirement_text("mmcv<2.2.0,>=2.0.0rc4") == "mmcv>=2.0.0rc4,<2.2.0"
    scatter = MATRIX.extension("torch_scatter")
    assert scatter is not None
    assert pick_wheel(scatter, "torch-scatter>=2", TorchTags(None, None, None)) is None
    assert (
        wheel_index(scatter, TorchTags(None, None, "cu121"))
        == "https://data.pyg.org/whl/torch-${TORCH}+cu121.html"
    )


# --- CUD153 / CUD151: the package's own architecture check, LLVM inside Triton -------------------


def test_tinycudann_rebuild_names_its_own_architecture_variable(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = "OSError: Could not find compatible tinycudann extension for compute capability 89."
    text = _fix(_confirmed(_causes(cli, log_file(tmp_path, line)), "CUD153"))
    assert "TCNN_CUDA_ARCHITECTURES=89 pip install" in text
    assert 'TORCH_CUDA_ARCH_LIST="8.9"' in text


@pytest.mark.parametrize(
    ("intrinsic", "floor"),
    [("shfl.sync.bfly.i32", "7.0"), ("redux.sync.add", "8.0")],
)
def test_llvm_nvptx_selection_failure_names_the_gpu_floor(
    tmp_path: Path, cli: Callable[..., CliResult], intrinsic: str, floor: str
) -> None:
    line = f"LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.{intrinsic}"
    cause = _confirmed(_causes(cli, log_file(tmp_path, line)), "CUD151")
    (finding,) = cause["findings"]  # type: ignore[misc]
    assert f"compute capability {floor}" in finding["message"]


# --- DGL's own lines, Triton's launcher, xformers' dispatcher -----------------------------------


def test_dgl_cpu_build_gets_dgls_index_for_the_nodes_torch(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = (
        "dgl._ffi.base.DGLError: [10:00:00] /opt/dgl/src/runtime/c_runtime_api.cc:82: Check "
        "failed: allow_missing: Device API cuda is not enabled. Please install the cuda version "
        "of dgl."
    )
    found = _causes(cli, log_file(tmp_path, line), "--spec", str(_spec(tmp_path, "2.1.2+cu118")))
    text = _fix(_confirmed(found, "TOR180"))
    assert "pip install dgl -f https://data.dgl.ai/wheels/torch-2.1/cu118/repo.html" in text


def test_dgl_graphbolt_names_the_torch_release_from_the_library_name(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = (
        "FileNotFoundError: Cannot find DGL C++ graphbolt library at /opt/venv/lib/python3.11/"
        "site-packages/dgl/graphbolt/libgraphbolt_pytorch_2.4.1.so"
    )
    cause = _confirmed(_causes(cli, log_file(tmp_path, line)), "TOR150")
    (finding,) = cause["findings"]  # type: ignore[misc]
    assert "installed torch 2.4.1" in finding["message"]
    assert "https://data.dgl.ai/wheels/torch-2.4/" in _fix(cause)


def test_triton_launcher_error_is_read_as_the_cuda_error_it_quotes(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = "RuntimeError: Triton Error [CUDA]: an illegal memory access was encountered"
    cause = _confirmed(_causes(cli, log_file(tmp_path, line)), "DRV150")
    (finding,) = cause["findings"]  # type: ignore[misc]
    assert "cudaErrorIllegalAddress" in finding["message"]


def test_xformers_dispatcher_header_leaves_its_two_causes_open(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = "NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:"
    found = _causes(cli, log_file(tmp_path, line))
    assert found["TOR104"]["verdict"] == "unchecked"
    assert found["CUD151"]["verdict"] == "unchecked"


def test_gsplat_without_a_toolkit_installs_torchs_cuda_toolkit(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = "gsplat: No CUDA toolkit found. gsplat will be disabled."
    found = _causes(cli, log_file(tmp_path, line), "--spec", str(_spec(tmp_path, "2.3.1+cu121")))
    text = _fix(_confirmed(found, "SYS152"))
    assert "CUDA_HOME=/usr/local/cuda-12.1" in text


# --- no error on a clean log -------------------------------------------------------------------


def test_a_clean_install_log_of_these_packages_raises_nothing(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "Looking in links: https://download.openmmlab.com/mmcv/dist/cu121/torch2.1/index.html",
        "Successfully installed mmcv-2.1.0",
        "Looking in links: https://data.pyg.org/whl/torch-2.1.0+cu121.html",
        "Successfully installed torch-scatter-2.1.2+pt21cu121",
        "Compiling with CUDA: detectron2 CUDA Compiler 12.1",
        "[WARNING]your gpu arch (8, 9) isn't compiled in prebuilt, may cause invalid device function error. you can use NVRTC instead.",
    )
    result = cli("triage", str(log), "--json", "--no-probe")
    data = result.json()["data"]
    assert data["summary"]["confirmed"] == 0, result.stdout  # nothing error-level
    codes = {c["code"] for m in data["matches"] for c in m["causes"]}
    assert not codes & {"TOR180", "TOR150", "PKG101"}
