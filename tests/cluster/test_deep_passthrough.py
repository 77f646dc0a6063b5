"""`cluster --deep` hands the option to every node's probe task (no Ray needed to test that)."""

from __future__ import annotations

import zlib

from envcheck.cluster import task
from envcheck.probes.context import ProbeContext


def test_probe_task_passes_deep_and_unhides_gpus(monkeypatch):
    seen: list[ProbeContext] = []

    def fake_collect(ctx: ProbeContext):
        seen.append(ctx)
        from envcheck.model.report import NodeReport

        return NodeReport(node="n", envcheck_version="0", created_at="2026-11-23T00:00:00Z")

    monkeypatch.setattr("envcheck.probes.collect", fake_collect)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")  # what Ray sets for a task with num_gpus=0
    assert zlib.decompress(task.probe_node(3.0, False, ("gpu", "torch")))
    assert seen[-1].deep == ("gpu", "torch") and "CUDA_VISIBLE_DEVICES" not in seen[-1].env
    task.probe_node(3.0, False)  # an older caller: no deep, environment untouched
    assert seen[-1].deep == () and seen[-1].env.get("CUDA_VISIBLE_DEVICES") == ""
