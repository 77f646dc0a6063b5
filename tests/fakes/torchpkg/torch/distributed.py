"""The torch.distributed names torch_child.py's all-reduce workers use (see torch/__init__.py)."""

from __future__ import annotations

import os
import sys
import time
from typing import Any


def init_process_group(backend: str, init_method: str, rank: int, world_size: int) -> None:
    os.environ["FAKE_TORCH_WORLD"] = str(world_size)


def all_reduce(tensor: Any) -> None:
    mode = os.environ.get("FAKE_TORCH", "ok")
    if mode == "nccl_hang":
        from torch import _note_pid

        _note_pid()
        while True:
            time.sleep(3600)
    if mode == "nccl_error":
        sys.stderr.write(
            "gpu-node-1:2211:2230 [1] NCCL WARN Cuda failure 'peer access is not supported "
            "between these two devices'\n"
        )
        raise RuntimeError("NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled cuda error")
    tensor.fill = float(os.environ["FAKE_TORCH_WORLD"])


def destroy_process_group() -> None:
    return None
