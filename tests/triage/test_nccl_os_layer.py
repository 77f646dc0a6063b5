"""NCCL 2.29 moved its socket and shared-memory calls into src/os/linux.cc and some of its
verbs and allocation wrappers into headers, so a WARN line no longer names `socket.cc` or
`shmutils.cc`: these lines, in NCCL 2.30.7's own format strings (filled as NCCL fills them),
must land in the same subsystem families as the older layout's."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from tests.triage.from_log import log_file, triage_data

_HEAD = "node1:1234:5678 [0] "
LINES = [
    # src/os/linux.cc: WARN("%s: connect to %s failed : %s", funcName, ...)
    (
        "linux.cc:302 NCCL WARN ncclSocketConnect: connect to 10.0.0.2<43211> failed : "
        "Connection refused",
        "nccl-warn-socket",
        "NET104",
    ),
    # src/os/linux.cc: WARN("ncclOsSocketPollConnect to %s failed with error %s", ...)
    (
        "linux.cc:328 NCCL WARN ncclOsSocketPollConnect to 10.0.0.2<43211> failed with error "
        "Connection timed out",
        "nccl-warn-socket",
        "NET104",
    ),
    # src/os/linux.cc: WARN("Error while %s shared memory segment %s (size %ld), error: %s (%d)")
    (
        "linux.cc:842 NCCL WARN Error while attaching to shared memory segment "
        "/tmp/nccl-AbCdEf (size 9637888), error: Permission denied (13)",
        "nccl-warn-shm",
        "SYS101",
    ),
    # src/include/ibvwrap.h: WARN("Call to ibv_poll_cq() returned %d", ...)
    ("ibvwrap.h:63 NCCL WARN Call to ibv_poll_cq() returned -1", "nccl-warn-ib", "NET150"),
    # src/misc/mlx5dvwrap.cc: WARN("NET/MLX5: lib wrapper not initialized.")
    ("mlx5dvwrap.cc:32 NCCL WARN NET/MLX5: lib wrapper not initialized.", "nccl-warn-ib", "NET150"),
    # src/include/alloc.h: WARN("Failed to CUDA host alloc %ld bytes", ...)
    (
        "alloc.h:159 NCCL WARN Failed to CUDA host alloc 4194304 bytes",
        "pinned-host-memory",
        "SYS181",
    ),
    # src/include/alloc.h: WARN("Failed to CUDA calloc async %ld bytes", ...)
    (
        "alloc.h:520 NCCL WARN Failed to CUDA calloc async 4096 bytes",
        "gpu-memory-short-in-words",
        "DRV104",
    ),
]


@pytest.mark.parametrize(("line", "signature", "code"), LINES)
def test_a_warn_of_the_new_layout_lands_in_its_family(
    tmp_path: Path, cli: Callable[..., CliResult], line: str, signature: str, code: str
) -> None:
    data = triage_data(cli, log_file(tmp_path, _HEAD + line))
    first = next(m for m in data["matches"] if not m["noise"])
    assert first["id"] == signature
    assert code in [c["code"] for c in first["causes"]]
