"""Build real-format installed distributions (dist-info / egg-info) for tests."""

from __future__ import annotations

from pathlib import Path


def make_dist(
    site: Path,
    name: str,
    version: str | None,
    *,
    requires: tuple[str, ...] = (),
    installer: str | None = "pip",
    metadata: bool = True,
    files: dict[str, str] | None = None,
) -> Path:
    """Write ``name-version.dist-info`` (METADATA, INSTALLER) and any package files into site."""
    site.mkdir(parents=True, exist_ok=True)
    folder = name.replace("-", "_")
    info = site / f"{folder}-{version or '0'}.dist-info"
    info.mkdir()
    if metadata:
        lines = ["Metadata-Version: 2.1", f"Name: {name}"]
        if version is not None:
            lines.append(f"Version: {version}")
        lines += [f"Requires-Dist: {r}" for r in requires]
        lines += ["", f"{name} long description that the header parser must not read."]
        (info / "METADATA").write_text("\n".join(lines) + "\n", encoding="utf-8")
    if installer:
        (info / "INSTALLER").write_text(installer + "\n", encoding="utf-8")
    for rel, text in (files or {}).items():
        target = site / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return info


def make_egg_info(site: Path, name: str, version: str, requires: tuple[str, ...] = ()) -> Path:
    site.mkdir(parents=True, exist_ok=True)
    info = site / f"{name}.egg-info"
    info.mkdir()
    (info / "PKG-INFO").write_text(
        f"Metadata-Version: 1.2\nName: {name}\nVersion: {version}\n", encoding="utf-8"
    )
    if requires:
        (info / "requires.txt").write_text("\n".join(requires) + "\n", encoding="utf-8")
    return info


TORCH_VERSION_PY_2X = """from typing import Optional

__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip', 'xpu']
__version__ = '{version}'
debug = False
cuda: Optional[str] = {cuda!r}
git_version = 'e2d141dbde55c2a4370fac5165b0561b6af4798b'
hip: Optional[str] = None
xpu: Optional[str] = None
"""

TORCH_24_REQUIRES = (
    "filelock",
    "typing-extensions>=4.8.0",
    "sympy",
    "networkx",
    "jinja2",
    "fsspec",
    'nvidia-cuda-nvrtc-cu12==12.1.105; platform_system == "Linux" and platform_machine == "x86_64"',
    'nvidia-cuda-runtime-cu12==12.1.105; platform_system == "Linux" and platform_machine == "x86_64"',
    'nvidia-cudnn-cu12==9.1.0.70; platform_system == "Linux" and platform_machine == "x86_64"',
    'nvidia-cublas-cu12==12.1.3.1; platform_system == "Linux" and platform_machine == "x86_64"',
    'nvidia-nccl-cu12==2.20.5; platform_system == "Linux" and platform_machine == "x86_64"',
    'triton==3.0.0; platform_system == "Linux" and platform_machine == "x86_64" and python_version < "3.13"',
    'opt-einsum>=3.3; extra == "opt-einsum"',
)


def make_fake_torch(
    site: Path, version: str = "2.4.0", cuda: str | None = "12.1", *, raise_on_import: bool = True
) -> Path:
    """A torch distribution whose package raises when imported and whose version.py is real-format."""
    init = "raise RuntimeError('envcheck must never import torch')\n" if raise_on_import else ""
    return make_dist(
        site,
        "torch",
        version,
        requires=TORCH_24_REQUIRES,
        files={
            "torch/__init__.py": init,
            "torch/version.py": TORCH_VERSION_PY_2X.format(version=version, cuda=cuda),
        },
    )
