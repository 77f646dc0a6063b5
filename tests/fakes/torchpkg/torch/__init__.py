"""A fake ``torch`` for the --deep=torch smoke test: the names torch_child.py uses, no GPU.

FAKE_TORCH picks the behaviour: "ok"; "sigfpe" (the fp16 GEMM of shape (64, 14688) @ (14688,
1536), the one pytorch#152017 reports, kills the process with SIGFPE as cuBLAS 12.1.3.1 does on
H20); "cublas_error" (every bf16 GEMM raises cuBLAS's RuntimeError); "nocuda"; "hang_init"
(CUDA initialisation never returns); "nccl_hang" / "nccl_error" (the all-reduce). FAKE_TORCH_GPUS
is the device count (default 2).
"""

from __future__ import annotations

import os
import signal
import time
from types import SimpleNamespace

__version__ = "2.1.0+cu121"
float16, bfloat16, float32 = "float16", "bfloat16", "float32"


def _mode() -> str:
    return os.environ.get("FAKE_TORCH", "ok")


def _note_pid() -> None:
    """Append this process's pid to FAKE_TORCH_PIDFILE, so tests can check it was killed."""
    path = os.environ.get("FAKE_TORCH_PIDFILE")
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(f"{os.getpid()}\n")


class Tensor:
    def __init__(self, shape: tuple[int, ...], dtype: str, fill: float = 0.0) -> None:
        self.shape, self.dtype, self.fill = shape, dtype, fill

    def __getitem__(self, index: int) -> float:
        return self.fill


def zeros(*shape: int, dtype: str = float32, device: str = "cpu") -> Tensor:
    return Tensor(tuple(shape), dtype)


def ones(*shape: int, dtype: str = float32, device: str = "cpu") -> Tensor:
    return Tensor(tuple(shape), dtype, 1.0)


def matmul(a: Tensor, b: Tensor) -> Tensor:
    if (
        _mode() == "sigfpe"
        and a.dtype == float16
        and a.shape == (64, 14688)
        and b.shape == (14688, 1536)
    ):
        os.kill(os.getpid(), signal.SIGFPE)
    if _mode() == "cublas_error" and a.dtype == bfloat16:
        raise RuntimeError(
            "CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasGemmEx( handle, opa, "
            "opb, m, n, k, &falpha, a, CUDA_R_16BF, lda, b, CUDA_R_16BF, ldb, &fbeta, c, "
            "CUDA_R_16BF, ldc, CUDA_R_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP)`"
        )
    return Tensor((a.shape[0], b.shape[1]), a.dtype)


class _Cuda:
    def is_available(self) -> bool:
        return _mode() != "nocuda"

    def device_count(self) -> int:
        return int(os.environ.get("FAKE_TORCH_GPUS", "2"))

    def init(self) -> None:
        if _mode() == "hang_init":
            _note_pid()
            while True:
                time.sleep(3600)

    def synchronize(self) -> None:
        return None

    def set_device(self, index: int) -> None:
        return None


cuda = _Cuda()
backends = SimpleNamespace(cuda=SimpleNamespace(matmul=SimpleNamespace(allow_tf32=False)))
