"""What the collective test makes of its ranks' results (canned, as rank.py returns them)."""

from __future__ import annotations

import pytest

from envcheck.cluster.collective import classify, summarize

GLOO_IFACE = (
    "RuntimeError: [enforce fail at /__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/"
    "device.cc:84] ifa != nullptr. Unable to find address for: nosuch0"
)
STORE_TIMEOUT = "DistStoreError: wait timeout after 15000ms, keys: /0//cpu//0/1"


@pytest.mark.parametrize(
    ("raw", "multi_host", "kind", "words"),
    [
        (
            {"error": GLOO_IFACE, "ifname": "nosuch0"},
            True,
            "interface",
            ["GLOO_SOCKET_IFNAME=nosuch0", "no interface 'nosuch0'"],
        ),
        (
            {"error": STORE_TIMEOUT, "bound": ["127.0.1.1:4000"]},
            True,
            "loopback",
            ["127.0.1.1:4000", "GLOO_SOCKET_IFNAME"],
        ),
        (
            {"error": STORE_TIMEOUT, "bound": ["127.0.0.1:4000"]},
            False,
            "timeout",
            ["timed out", "wait timeout"],
        ),
        (
            {"error": "RuntimeError: Connection refused | more"},
            True,
            "unreachable",
            ["Connection refused"],
        ),
        (
            {"error": "RuntimeError: Gloo connectFullMesh failed with [pair.cc:144] no error"},
            True,
            "unreachable",
            ["connectFullMesh"],
        ),
        ({"stopped": True}, True, "waiting", ["waiting for", "stopped"]),
        ({"error": "ValueError: something else"}, True, "error", ["something else"]),
    ],
)
def test_classify(raw: dict, multi_host: bool, kind: str, words: list[str]) -> None:
    got_kind, reason = classify(raw, backend="gloo", multi_host=multi_host)
    assert got_kind == kind
    for word in words:
        assert word in reason
    assert "/__w/pytorch" not in reason


def test_a_rank_with_a_missing_interface_is_the_cause_and_the_others_waited() -> None:
    results = [
        {"ok": False, "stage": "init", "stopped": True, "ifname": None},
        {"ok": False, "stage": "init", "error": GLOO_IFACE, "ifname": "nosuch0"},
        {"ok": False, "stage": "init", "error": STORE_TIMEOUT},
    ]
    report = summarize("gloo", ["a", "b", "c"], results, multi_host=False, store="h:1", timeout=10)
    assert not report.ok
    kinds = {r.node: r.kind for r in report.ranks}
    assert kinds == {"a": "waiting", "b": "interface", "c": "timeout"}
    assert report.summary.startswith("b failed at init: GLOO_SOCKET_IFNAME=nosuch0")
    assert "a, c waited for it" in report.summary
    assert "waiting for b" in report.ranks[2].reason  # type: ignore[operator]
    assert all(not p.ok for p in report.pairs)


def test_all_ranks_ok_gives_every_ring_pair() -> None:
    results = [
        {"ok": True, "stage": "done", "bound": [f"127.0.0.1:{4000 + i}"], "ifname": "lo"}
        for i in range(3)
    ]
    report = summarize(
        "gloo", ["a", "b", "c"], results, multi_host=False, store="h:1", timeout=10, seconds=1.5
    )
    assert report.ok and report.summary.startswith(
        "all-reduce and send/recv ring across 3 node(s) worked"
    )
    assert [(p.src, p.dst, p.ok) for p in report.pairs] == [
        ("a", "b", True),
        ("b", "c", True),
        ("c", "a", True),
    ]
    assert report.ranks[1].bound == ("127.0.0.1:4001",)
