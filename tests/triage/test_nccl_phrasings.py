"""The NCCL / Gloo / torch.distributed / Ray network family's wordings across releases and
libraries (``nccl_phrasings_data.PHRASINGS``): each line, as its source prints it, is read as a
failure (not noise) that names the cause the condition is.

Measured against main before this battery's signatures were generalised: 47 of 63 named the
cause, 15 matched nothing (Gloo's 'Read timeout' / 'Connect timeout' / 'Socket closed', the
DebugLogger's retry line, torch's 'Failed to recv, got 0 bytes' in both forms, DeepSpeed's and
pdsh's ssh failures, Ray >= 2.10's heartbeat death, torchrun's RendezvousTimeoutError) and 1
named other causes (torch's 'Some NCCL operations have failed or timed out' without NET170)."""

from __future__ import annotations

import pytest

from envcheck import api
from tests.triage.nccl_phrasings_data import PHRASINGS


@pytest.mark.parametrize(("line", "source", "code"), PHRASINGS, ids=[p[0][:60] for p in PHRASINGS])
def test_each_wording_names_its_cause(line: str, source: str, code: str) -> None:
    assert source.startswith("https://"), source
    result = api.triage(line + "\n")
    failures = [m for m in result.matches if not m.noise]
    assert failures, [m.tally.signature.id for m in result.matches]
    named = {c.code for m in failures for c in m.causes}
    assert code in named, (code, sorted(named))


@pytest.mark.parametrize(
    "line",
    [
        # the same words outside Gloo's pair / torch's store: a web client's reset, a teardown
        "ConnectionResetError: [Errno 104] Connection reset by peer",
        "urllib3.exceptions.ReadTimeoutError: HTTPSConnectionPool(host='x', port=443): Read timed "
        "out. (read timeout=10)",
        # a healthy NCCL start-up line
        "gpu1:100:200 [0] NCCL INFO Bootstrap : Using eth0:10.1.2.3<0>",
        # git over ssh refused: ssh's words without a launcher's '<host>: ' prefix
        "git@github.com: Permission denied (publickey).",
        "Host key verification failed.",
        "ssh: connect to host github.com port 22: Connection refused",
    ],
)
def test_other_lines_with_the_same_words_name_no_network_cause(line: str) -> None:
    result = api.triage(line + "\n")
    named = {c.code for m in result.matches if not m.noise for c in m.causes}
    assert not named & {"NET101", "NET103", "NET104", "NET170", "NET180"}, named


def test_a_host_ssh_cannot_resolve_is_the_name_not_the_keys() -> None:
    """DeepSpeed's check and ssh's own 'Could not resolve hostname' in one log: NET103 (the
    hostfile's name) is confirmed, NET180 (keys, sshd) stands aside."""
    text = (
        "RuntimeError: Using hostfile at /etc/hostfile but host=worker-1 was not reachable via "
        "ssh. If you are running with a single node please remove /etc/hostfile or setup "
        "passwordless ssh.\n"
        "ssh: Could not resolve hostname worker-1: Name or service not known\n"
    )
    verdicts = {c.code: c.verdict for m in api.triage(text).matches for c in m.causes}
    assert verdicts["NET103"] == "confirmed", verdicts
    assert verdicts["NET180"] == "ruled_out", verdicts
