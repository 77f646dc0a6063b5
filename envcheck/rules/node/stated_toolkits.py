"""The CUDA releases a build log or the node states: nvcc's (its banner, a versioned toolkit path,
else the node's toolkit) and torch's (its +cuXYZ tag, else the node's torch), major.minor. Read
by the build rules that weigh nvcc against a header, a device function or torch's CUDA."""

from __future__ import annotations

import contextlib

from packaging.version import InvalidVersion, Version

from envcheck.facts.conditions import torch_cuda_stated
from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.model import major_minor
from envcheck.rules.base import LogLine


def _version(text: str | None) -> Version | None:
    try:
        return major_minor(Version(text)) if text else None
    except InvalidVersion:
        return None


def stated_toolkit(facts: Facts, line: LogLine) -> Version | None:
    """nvcc's release as the log states it (banner, versioned path), else the node's."""
    stated = _version(line.stated.get("nvcc_version"))
    if stated is None:
        with contextlib.suppress(Skip):
            toolkit = facts.system().nvcc
            stated = _version(toolkit.version if toolkit is not None else None)
    return stated


def stated_torch_cuda(facts: Facts, line: LogLine) -> Version | None:
    """torch's CUDA release as the log or the node states it."""
    stated = _version(line.stated.get("torch_cuda"))
    if stated is None:
        with contextlib.suppress(Skip):
            cuda = torch_cuda_stated(facts)
            stated = major_minor(cuda) if cuda is not None else None
    return stated
