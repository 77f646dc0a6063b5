"""Build small, valid wheels and a PEP 503 file index for resolver and installer tests.

Each wheel holds one importable package (that does nothing), a dist-info with METADATA
(Requires-Dist lines), WHEEL and RECORD, so pip and uv install and resolve them for real.
"""

from __future__ import annotations

import base64
import hashlib
import html
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.utils import canonicalize_name


@dataclass(frozen=True)
class WheelSpec:
    name: str
    version: str
    requires: tuple[str, ...] = ()
    requires_python: str | None = None
    tag: str = "py3-none-any"
    module: str | None = None  # the package's __init__.py (default: it sets __version__)


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode()


def make_wheel(directory: Path, spec: WheelSpec) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    dist = spec.name.replace("-", "_").replace(".", "_")
    info = f"{dist}-{spec.version}.dist-info"
    metadata = [
        "Metadata-Version: 2.1",
        f"Name: {spec.name}",
        f"Version: {spec.version}",
        "Summary: a test wheel built by envcheck's tests",
    ]
    if spec.requires_python:
        metadata.append(f"Requires-Python: {spec.requires_python}")
    metadata += [f"Requires-Dist: {r}" for r in spec.requires]
    files = {
        f"{dist}/__init__.py": (spec.module or f"__version__ = {spec.version!r}\n").encode(),
        f"{info}/METADATA": ("\n".join(metadata) + "\n").encode(),
        f"{info}/WHEEL": (
            f"Wheel-Version: 1.0\nGenerator: envcheck-tests\nRoot-Is-Purelib: true\nTag: {spec.tag}\n"
        ).encode(),
    }
    record = [f"{path},{_record_hash(data)},{len(data)}" for path, data in files.items()]
    record.append(f"{info}/RECORD,,")
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    target = directory / f"{dist}-{spec.version}-{spec.tag}.whl"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, data in files.items():
            info_entry = zipfile.ZipInfo(path, date_time=(2024, 1, 1, 0, 0, 0))
            archive.writestr(info_entry, data)
    return target


def make_wheels(directory: Path, specs: Iterable[WheelSpec]) -> list[Path]:
    return [make_wheel(directory, s) for s in specs]


def make_simple_index(simple: Path, wheels: Sequence[Path]) -> str:
    """A PEP 503 index in the folder ``simple`` linking to the given wheels; returns its URL."""
    by_name: dict[str, list[Path]] = {}
    for wheel in wheels:
        by_name.setdefault(canonicalize_name(wheel.name.split("-")[0]), []).append(wheel)
    simple.mkdir(parents=True, exist_ok=True)
    links = []
    for name, files in sorted(by_name.items()):
        page = simple / name
        page.mkdir(exist_ok=True)
        anchors = []
        for wheel in files:
            digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
            anchors.append(
                f'<a href="{wheel.resolve().as_uri()}#sha256={digest}">{html.escape(wheel.name)}</a>'
            )
        (page / "index.html").write_text(
            "<!DOCTYPE html><html><body>\n" + "<br>\n".join(anchors) + "\n</body></html>\n",
            encoding="utf-8",
        )
        links.append(f'<a href="{name}/">{name}</a>')
    (simple / "index.html").write_text(
        "<!DOCTYPE html><html><body>\n" + "<br>\n".join(links) + "\n</body></html>\n",
        encoding="utf-8",
    )
    return simple.resolve().as_uri()


CUDA_MARK = 'platform_system == "Linux" and platform_machine == "x86_64"'

# A small world that looks like the real one where it matters: torch pins its CUDA wheels,
# vLLM pins torch, and the cuBLAS fix exists as a newer wheel.
STANDARD = (
    WheelSpec(
        "torch", "2.4.0", (f"nvidia-cublas-cu12==12.1.3.1; {CUDA_MARK}", "numpy", "filelock")
    ),
    WheelSpec(
        "torch", "2.5.1", (f"nvidia-cublas-cu12==12.4.5.8; {CUDA_MARK}", "numpy", "filelock")
    ),
    WheelSpec("vllm", "0.6.3", ("torch==2.4.0", "numpy<2.0.0", "ray>=2.9")),
    WheelSpec("vllm", "0.6.4", ("torch==2.5.1", "numpy<2.0.0", "ray>=2.9")),
    WheelSpec("nvidia-cublas-cu12", "12.1.3.1"),
    WheelSpec("nvidia-cublas-cu12", "12.3.4.1"),
    WheelSpec("nvidia-cublas-cu12", "12.4.5.8"),
    WheelSpec("numpy", "1.26.4"),
    WheelSpec("numpy", "2.1.3"),
    WheelSpec("filelock", "3.16.1"),
    WheelSpec("ray", "2.40.0", ("filelock",)),
)
