"""NET170 on the lines of the layers that time out waiting for a rank: Gloo's recv/send timeout
on a connected pair establishes it; torch's NCCL watchdog and its rendezvous store leave it open
beside their network causes, with the line's own numbers in the reason and the fix."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import CliResult

_WATCHDOG = (
    "[rank1]:[E1127 10:21:33.392152094 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught "
    "collective operation timeout: WorkNCCL(SeqNum=5431, OpType=ALLREDUCE, NumelIn=1, "
    "NumelOut=1, Timeout(ms)=600000) ran for 600041 milliseconds before timing out.\n"
)
_STORE = (
    "torch.distributed.DistStoreError: Timed out after 1801 seconds waiting for clients. "
    "2/4 clients joined.\n"
)
_GLOO = (
    "RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] Timed "
    "out waiting 5000ms for recv operation to complete\n"
)


def _net170(cli: Callable[..., CliResult], tmp_path: Path, text: str) -> tuple[int, Any]:
    log = tmp_path / "job.log"
    log.write_text(text)
    done = cli("triage", "--no-probe", "--json", str(log))
    causes = [c for m in done.json()["data"]["matches"] for c in m["causes"]]
    return done.returncode, next(c for c in causes if c["code"] == "NET170")


def test_the_watchdog_leaves_it_open_with_the_op_and_timeout(cli, tmp_path: Path) -> None:
    code, cause = _net170(cli, tmp_path, _WATCHDOG)
    assert code == 1 and cause["verdict"] == "unknown"
    assert "waited for 600 s for the other ranks at ALLREDUCE" in cause["reason"]
    assert "find the rank that did not arrive in the other ranks' logs" in cause["fix"]["summary"]
    # the timeout in the forms the launchers take it, after finding the rank
    for form in ("init_process_group(timeout=", "ddp_timeout=", "InitProcessGroupKwargs("):
        assert form in cause["fix"]["summary"], form


def test_the_store_names_how_many_ranks_never_joined(cli, tmp_path: Path) -> None:
    code, cause = _net170(cli, tmp_path, _STORE)
    assert code == 1 and cause["verdict"] == "unknown"
    assert "2 of 4 ranks never joined" in cause["reason"]
    assert "--nnodes and --nproc-per-node" in cause["fix"]["summary"]


def test_gloo_on_a_connected_pair_confirms_it(cli, tmp_path: Path) -> None:
    code, cause = _net170(cli, tmp_path, _GLOO)
    assert code == 1 and cause["verdict"] == "confirmed"
    assert "a peer rank did not reach the same collective" in cause["findings"][0]["message"]


def test_a_connection_gloo_lost_is_not_a_timeout(cli, tmp_path: Path) -> None:
    """pair.cc's `Connection closed by peer` is the lost-connection family, not NET170."""
    log = tmp_path / "job.log"
    log.write_text(
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed "
        "by peer [10.0.0.2]:41939\n"
    )
    done = cli("triage", "--no-probe", "--json", str(log))
    matches = done.json()["data"]["matches"]
    assert [m["id"] for m in matches] == ["gloo-pair-connection-lost"]
    assert "NET170" not in {c["code"] for c in matches[0]["causes"]}


def test_torchruns_rendezvous_timeout_names_the_launch_flags_and_join_timeout(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    text = (
        '  File "/opt/venv/lib/python3.11/site-packages/torch/distributed/elastic/rendezvous/'
        'dynamic_rendezvous.py", line 679, in run\n'
        "    raise RendezvousTimeoutError\n"
        "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError\n"
    )
    code, cause = _net170(cli, tmp_path, text)
    assert code == 1 and cause["verdict"] == "unknown"
    for part in ("--rdzv-id", "--nnodes", "join_timeout=1800"):
        assert part in cause["fix"]["summary"], part
