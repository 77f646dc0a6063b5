"""NET170: a rank did not reach a collective (or torch's rendezvous store) within its timeout:
Gloo's `Timed out waiting 5000ms for recv operation to complete` over a connection that was
already up, torch's NCCL watchdog, the store's `1/2 clients joined`. The log of the rank that
timed out shows only that it waited; the cause is on the other ranks, and the fix says how to
find it (their first error, the collectives they run, how long they take) before raising the
timeout."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.fixes import fix, manual

_FIND = (
    "the other ranks' logs (the first error there, from a rank that died or raised before "
    "the collective; or a step only some ranks run: checkpoint saving, evaluation, data "
    "loading on rank 0)"
)
_DEBUG = "export TORCH_DISTRIBUTED_DEBUG=DETAIL  (reports ranks that call different collectives)"
_STACKS = "py-spy dump --pid <pid of each rank>  (where a rank that did not arrive is waiting)"
_TIMEOUT = (
    "dist.init_process_group(..., timeout=datetime.timedelta(minutes=60))  (only for a long "
    "step one rank runs alone)"
)

# Where the slow step is legitimate (one rank saving, evaluating, tokenizing), the threads' fix
# is the process group's timeout in the form the job's launcher takes it: torch's own
# init_process_group(timeout=...), transformers' TrainingArguments(ddp_timeout=...) (seconds,
# default 1800), accelerate's InitProcessGroupKwargs(timeout=...), deepspeed.init_distributed(
# timeout=...). Sources: https://pytorch.org/docs/stable/distributed.html ;
# https://huggingface.co/docs/transformers/main_classes/trainer (ddp_timeout) ;
# https://huggingface.co/docs/accelerate/package_reference/kwargs (InitProcessGroupKwargs) ;
# https://github.com/pytorch/pytorch/pull/14435 (the timeout kwarg: 'useful for ... parts of a
# program with wildly varying runtime (e.g. some data loading or preprocessing)', #14376)
_RAISE = (
    "where one rank's long step is legitimate, raise the timeout where the job sets it: "
    "dist.init_process_group(timeout=datetime.timedelta(minutes=60)), "
    "TrainingArguments(ddp_timeout=3600) (transformers), "
    "Accelerator(kwargs_handlers=[InitProcessGroupKwargs(timeout=timedelta(minutes=60))]) "
    "(accelerate), deepspeed.init_distributed(timeout=timedelta(minutes=60))"
)


@rule("NET170", "rank-missed-collective", Severity.ERROR)
def rank_missed_collective(facts: Facts) -> Iterable[Hit]:
    """A rank did not reach a collective or the rendezvous within the timeout

    ## What it checks
    Only a log says it: a rank that waited past its process group's timeout for the others,
    in the words of the layer that timed out: Gloo's `Timed out waiting Nms for recv operation
    to complete` on a connection that was already up, torch's NCCL watchdog (`Watchdog caught
    collective operation timeout: WorkNCCL(SeqNum=..., OpType=ALLREDUCE, ...,
    Timeout(ms)=600000)`), torch's rendezvous store (`Timed out after 1800 seconds waiting
    for clients. 1/2 clients joined.`), and torchrun's elastic rendezvous
    (`torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError`, after its join
    timeout).

    ## Why it matters
    Every rank of a collective must call it, in the same order. When one does not arrive, the
    others wait until the timeout and fail, and their logs show only that they waited: the
    cause is on the rank that did not arrive. It died or raised first (its own log has the
    first error), it is still busy with work only it does (rank 0 saving a checkpoint or
    evaluating while the others wait at the next all-reduce), or it called a different
    collective. For the rendezvous store, the ranks that never joined did not start, died
    before `init_process_group`, or could not reach MASTER_ADDR:MASTER_PORT (NET103-NET105).

    ## Example
    A trainer whose rank 0 evaluates for 40 minutes while the others wait at the next
    all-reduce under the default 30 minute (Gloo) or 10 minute (NCCL) timeout.

    ## Fix
    Read the other ranks' logs for the first error; `TORCH_DISTRIBUTED_DEBUG=DETAIL` reports
    ranks that call different collectives; `py-spy dump` shows where a rank waits. Raise the
    timeout (`init_process_group(timeout=...)`) only for a long step one rank runs alone.

    ## References
    - facebookincubator/gloo gloo/transport/tcp/unbound_buffer.cc (`Timed out waiting %dms
      for recv operation to complete`)
    - pytorch/pytorch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (the watchdog's
      `Watchdog caught collective operation timeout`), torch/csrc/distributed/c10d/TCPStore.cpp
      (`Timed out after {} seconds waiting for clients. {}/{} clients joined.`)
    - https://pytorch.org/docs/stable/distributed.html (init_process_group's timeout;
      TORCH_DISTRIBUTED_DEBUG)
    """
    raise Skip("only a log line states a rank that waited past its timeout", "log.network")


def _waited(line: LogLine) -> str:
    """What the rank waited for and how long, as the line states it."""
    op = line.stated.get("collective_op")
    ms = line.stated.get("collective_timeout_ms")
    what = {"recv": "data from a peer", "send": "a peer to take its data"}.get(
        op or "", f"the other ranks at {op}" if op else "the other ranks"
    )
    took = f" for {int(ms) / 1000:g} s" if ms and ms.isdigit() else ""
    return f"waited{took} for {what}"


@from_log("NET170")
def rank_missed_collective_in_log(facts: Facts, line: LogLine) -> Hit:
    """Gloo's timeout on a connected pair establishes it; the NCCL watchdog and the store's
    timeout leave it open beside the network causes, with the same way to find the rank."""
    if line.signature == "c10d-store-wait-timeout":
        joined, expected = line.stated.get("clients_joined"), line.stated.get("clients_expected")
        missing = (
            f"{int(expected) - int(joined)} of {expected} ranks never joined"
            if joined and expected and joined.isdigit() and expected.isdigit()
            else "ranks never joined"
        )
        raise NotStated(
            f"line {line.line}: {missing}; rank 0's log cannot say whether they did not start, "
            "died first, or could not reach the store",
            fix=(
                f"start every rank with the same world size ({missing}): each node's "
                "launcher's --nnodes and --nproc-per-node, or WORLD_SIZE; and read the first "
                "error in their logs"
            ),
        )
    if line.signature == "torchrun-rendezvous-timeout":
        raise NotStated(
            f"line {line.line}: torchrun's rendezvous did not gather its nodes in time; this "
            "node's log cannot say which node did not join, or why",
            fix=(
                "start every node with the same --nnodes, --rdzv-id and --rdzv-endpoint, and "
                "check each node reaches the endpoint (nc -zv <host> <port>); where nodes start "
                "minutes apart, raise the join timeout: torchrun --rdzv-conf join_timeout=1800"
            ),
        )
    if line.signature != "gloo-collective-timeout":
        raise NotStated(
            f"line {line.line}: the rank {_waited(line)}; its own log cannot say which rank did "
            "not arrive, or why",
            fix=f"find the rank that did not arrive in {_FIND}; {_RAISE}",
        )
    return Hit(
        f"the rank {_waited(line)} over a Gloo connection that was already up (line "
        f"{line.line}): a peer rank did not reach the same collective in time (it died or "
        "raised first, it was still busy, or it called another collective)",
        evidence={"line": line.line, "timeout_ms": line.stated.get("collective_timeout_ms")},
        fix=fix(
            f"Find the rank that did not arrive in {_FIND}; raise the timeout only for a long "
            "step one rank runs alone",
            "manual",
            manual(_DEBUG),
            manual(_STACKS),
            manual(_TIMEOUT),
        ),
    )
