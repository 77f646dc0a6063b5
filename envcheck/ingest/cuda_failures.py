"""The CUDA errors a pasted text states, when it holds nothing else about the driver: what
people paste after "it does not see my GPU" is often only the failing call's output.

- torch's CUDA-initialisation warning (c10/cuda/CUDAFunctions.cpp): ``UserWarning: CUDA
  initialization: Unexpected error from cudaGetDeviceCount() ... Error 804: forward
  compatibility was attempted on non supported HW`` (the number), ``CUDA initialization: CUDA
  unknown error - this may be due to ...`` (the runtime's message);
- torch's ``RuntimeError: CUDA error: <message>`` and ``cuda runtime error (N)`` (1.x);
- a ``cudaErrorX`` or ``CUDA_ERROR_X`` name (CuPy, TensorFlow's ``failed call to cuInit:
  CUDA_ERROR_NO_DEVICE``, the CUDA samples, ONNX Runtime), and the runtime's own message
  ``CUDA driver version is insufficient for CUDA runtime version`` in any library's line;
- TensorFlow's cuda_diagnostics lines, ``kernel reported version is: 535.129.3`` (the loaded
  kernel module's version: the driver) beside ``libcuda reported version is: ...``.

Each becomes the GPU section's ``cuda_errors`` (the number as printed, else the error's name,
else the runtime's message), which DRV150 looks up in the ``[[cuda_error]]`` table of
matrices/cuda/errors.toml (GPU101-GPU103 read 802-804): the cause and fix come from the error,
not from the library that printed it. The driver's version is taken only from a line that
states it (TensorFlow's kernel line); the GPUs stay unknown.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from envcheck.ingest.common import FormatError, Source, blank, valid_version
from envcheck.model.report import GpuInfo, NodeReport
from envcheck.model.section import Section

CUDA_FAILURE = "a CUDA call's failure"

# torch's warning; the message runs to '(Triggered internally at ...)' or the line's end
_INIT = re.compile(
    r"CUDA initialization: (?P<message>.+?)\s*(?:\(Triggered internally|$)", re.MULTILINE
)
_ERROR_NUMBER = re.compile(r"\bError (?P<number>[0-9]{1,3}): ")
_RUNTIME_ERROR = re.compile(
    r"(?:CUDA error|CUDA failure [0-9]+|cuda runtime error \((?P<number>[0-9]{1,3})\))"
    r"\s*:\s*(?P<message>[^\n]+?)\s*$",
    re.MULTILINE,
)
_NAME = re.compile(r"\b(?P<name>cudaError[A-Z][A-Za-z]+|CUDA_ERROR_[A-Z_]+[A-Z])\b")
# the runtime's messages that name the node, stated without a prefix this module knows
_MESSAGE = re.compile(
    r"(?P<message>CUDA driver version is insufficient for CUDA runtime version|"
    r"no CUDA-capable device is detected|forward compatibility was attempted on non supported HW|"
    r"system has unsupported display driver / cuda driver combination|"
    r"system not yet initialized)"
)
_KERNEL = re.compile(r"kernel reported version is:\s*(?P<version>[0-9]{3}\.[0-9]+(?:\.[0-9]+)?)")
_LIBCUDA = re.compile(r"libcuda reported version is:\s*(?P<version>[0-9]{3}\.[0-9]+(?:\.[0-9]+)?)")
_ANY = (_INIT, _RUNTIME_ERROR, _NAME, _MESSAGE, _KERNEL)


def find(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    """One line that states a CUDA error (or TensorFlow's kernel version line)."""
    line = lines[i]
    return (i, i + 1) if any(p.search(line) for p in _ANY) else None


def _stated(text: str) -> list[str]:
    """The errors the text states, each as the number, else the name, else the message."""
    found: list[str] = []
    for init in _INIT.finditer(text):
        number = _ERROR_NUMBER.search(init["message"])
        found.append(number["number"] if number else init["message"])
    for error in _RUNTIME_ERROR.finditer(text):
        found.append(error["number"] or error["message"])
    found.extend(m["name"] for m in _NAME.finditer(text))
    if not found:
        found.extend(m["message"] for m in _MESSAGE.finditer(text))
    return list(dict.fromkeys(found))


def parse(source: Source) -> NodeReport:
    text = source.text
    errors = _stated(text)
    kernel = _KERNEL.search(text)
    if not errors and kernel is None:
        raise FormatError(f"format not recognised as {CUDA_FAILURE}: no CUDA error stated")
    notes: list[str] = []
    if errors:
        notes.append(f"a CUDA call failed: {'; '.join(errors)}")
    driver = valid_version(kernel["version"]) if kernel else None
    if kernel is not None:
        libcuda = _LIBCUDA.search(text)
        notes.append(
            f"the loaded kernel module's version as TensorFlow reports it: {kernel['version']}"
            + (f" (libcuda: {libcuda['version']})" if libcuda else "")
        )
    info = GpuInfo(
        driver_version=driver,
        driver_source=CUDA_FAILURE if driver else None,
        cuda_errors=tuple(errors),
    )
    return blank(source, CUDA_FAILURE).with_sections(
        gpu=Section.ok(info, source=CUDA_FAILURE, notes=tuple(notes))
    )
