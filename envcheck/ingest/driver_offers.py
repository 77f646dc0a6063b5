"""Two more things people paste about the driver, beside its tools' reports (``driver_tools``):

- torch's CUDA-initialisation message, in a pasted Python session or as the warning
  ``UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found
  version 11040)`` (c10/cuda/CUDAFunctions.cpp; the same words as a RuntimeError in older
  releases): the number is cuDriverGetVersion's (1000 * major + 10 * minor), the newest CUDA the
  driver supports, as nvidia-smi's "CUDA Version" (11040 is 11.4);
- Ubuntu's lists of the driver packages for the GPU it detected: ``ubuntu-drivers list``
  (``nvidia-driver-535, (kernel modules provided by linux-modules-nvidia-535-generic-hwe-22.04)``;
  ``--gpgpu``: ``nvidia-driver-535-server, ...``) and ``nvidia-detector`` (one
  ``nvidia-driver-535`` line under its command). They say which packages fit the GPU, not what
  is installed: the offers are notes, the driver stays unknown.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from envcheck.ingest.common import FormatError, Source, blank
from envcheck.model.report import GpuInfo, NodeReport
from envcheck.model.section import Section

TORCH_INIT = "torch's CUDA initialization message"
UBUNTU_LIST = "ubuntu-drivers list / nvidia-detector"

_TOO_OLD = re.compile(
    r"NVIDIA driver on your system is too old \(found version (?P<packed>[0-9]{4,6})\)"
)
_OFFER = re.compile(
    r"^\s*(?P<package>nvidia-driver-[0-9]{3}(?:-server|-open|-server-open)?)\s*"
    r"(?P<provided>,\s*\(kernel modules provided by (?P<modules>[\w.+-]+)\))?\s*$"
)
_OFFER_COMMAND = re.compile(r"(?:ubuntu-drivers\s+list|nvidia-detector)\b")


def _packed(packed: str) -> str:
    number = int(packed)
    return f"{number // 1000}.{number % 1000 // 10}"


# -- torch's "driver too old (found version N)" ---------------------------------------------------


def find_torch_init(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    return (i, i + 1) if _TOO_OLD.search(lines[i]) else None


def parse_torch_init(source: Source) -> NodeReport:
    found = _TOO_OLD.search(source.text)
    if found is None:
        raise FormatError(f"format not recognised as {TORCH_INIT}: no 'found version N'")
    cuda = _packed(found["packed"])
    info = GpuInfo(cuda_driver_version=cuda, driver_source=TORCH_INIT)
    note = (
        f"torch found the driver too old: it supports CUDA <= {cuda} (found version "
        f"{found['packed']}, cuDriverGetVersion's number)"
    )
    return blank(source, TORCH_INIT).with_sections(
        gpu=Section.ok(info, source=TORCH_INIT, notes=(note,))
    )


# -- ubuntu-drivers list, nvidia-detector --------------------------------------------------------


def find_offers(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    first = _OFFER.match(lines[i])
    if first is None:
        return None
    under_command = i > 0 and bool(_OFFER_COMMAND.search(lines[i - 1]))
    end = i + 1
    while end < len(lines) and end not in stops and _OFFER.match(lines[end]):
        end += 1
    provided = any((m := _OFFER.match(line)) and m["provided"] for line in lines[i:end])
    return (i, end) if under_command or provided else None


def parse_offers(source: Source) -> NodeReport:
    offers = [m["package"] for m in map(_OFFER.match, source.text.splitlines()) if m]
    if not offers:
        raise FormatError(f"format not recognised as {UBUNTU_LIST}: no nvidia-driver package")
    notes = (
        f"Ubuntu offers for the NVIDIA GPU it detected: {', '.join(dict.fromkeys(offers))} "
        "(packages that fit the GPU; the list does not say which is installed)",
    )
    info = GpuInfo(gpus_reason="ubuntu-drivers list names no model")
    return blank(source, UBUNTU_LIST).with_sections(
        gpu=Section.ok(info, source=UBUNTU_LIST, notes=notes)
    )


# -- ls /usr/src: the driver's kernel-module source DKMS builds from ------------------------------

USR_SRC = "/usr/src/nvidia-<version> (the driver's module source)"
_SRC_COMMAND = re.compile(r"\bls\b.*\s/usr/src/?(?:\s|$|\|)")
_SRC_DIR = re.compile(
    r"^\s*(?:/usr/src/)?nvidia(?:-srv)?-(?P<version>[0-9]{3}\.[0-9]{1,3}(?:\.[0-9]{1,3})?)/?\s*$"
)


def find_usr_src(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    """The ``nvidia-<version>`` directories ``ls /usr/src`` lists, under its command line (or
    named with their /usr/src/ path)."""
    found = _SRC_DIR.match(lines[i])
    if found is None:
        return None
    end = i + 1
    while end < len(lines) and end not in stops and _SRC_DIR.match(lines[end]):
        end += 1
    with_path = "/usr/src/" in lines[i]
    return (i, end) if with_path or (i > 0 and _SRC_COMMAND.search(lines[i - 1])) else None


def parse_usr_src(source: Source) -> NodeReport:
    versions = [m["version"] for m in map(_SRC_DIR.match, source.text.splitlines()) if m]
    if not versions:
        raise FormatError(f"format not recognised as {USR_SRC}: no nvidia-<version> directory")
    ordered = sorted(set(versions), key=lambda v: tuple(int(p) for p in v.split(".")))
    notes = [
        "the driver's kernel-module source installed under /usr/src (what DKMS builds the module "
        "from); the loaded module may differ until it is built and loaded"
    ]
    if len(ordered) > 1:
        notes.append(f"several driver sources are installed: {', '.join(ordered)}")
    info = GpuInfo(driver_version=ordered[-1], driver_source=USR_SRC)
    return blank(source, USR_SRC).with_sections(
        gpu=Section.ok(info, source=USR_SRC, notes=tuple(notes))
    )
