"""The probe task that runs on each node. Ray ships this module by value, so the function only
needs *an* envcheck on the node (any version with ``envcheck.probes.collect``), not this one.

It returns the node's report as zlib-compressed JSON: plain data whatever the node's envcheck
version, and about 6x smaller on the wire than the JSON text (a few hundred bytes per
distribution before compression).
"""

from __future__ import annotations


def probe_node(
    timeout: float, redact: bool, deep: tuple[str, ...] = (), torch_timeout: float = 120.0
) -> bytes:
    import json
    import os
    import zlib
    from typing import Any

    from envcheck.probes import collect
    from envcheck.probes.context import ProbeContext

    extra: dict[str, Any] = {}
    if deep:  # only then: an older envcheck on the node has no ``deep`` option
        env = dict(os.environ)
        if env.get("CUDA_VISIBLE_DEVICES") == "":
            del env["CUDA_VISIBLE_DEVICES"]  # Ray hides the GPUs from a task with num_gpus=0
        extra = {"deep": tuple(deep), "env": env, "torch_timeout": torch_timeout}
    report = collect(ProbeContext(timeout=timeout, redact=redact, **extra))
    text = json.dumps(report.to_dict(), separators=(",", ":"), ensure_ascii=False)
    return zlib.compress(text.encode("utf-8"), 6)


def echo(value: int) -> int:
    """A task that does nothing: the Ray round trip the fan-out is measured against."""
    return value
