"""torch's build facts, read from ``torch/version.py`` as text (parsed, never executed)."""

from __future__ import annotations

import ast
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from envcheck.errors import InputError
from envcheck.inputs import read_regular
from envcheck.model.report import PackagesInfo, TorchBuild
from envcheck.model.section import Section
from envcheck.patterns import lazy

_LABEL = lazy(r"^(cu\d+|cpu|rocm[\d.]+|xpu)$")
CUDA_DIST_PREFIXES = ("nvidia-", "cuda-toolkit", "cuda-bindings")


def is_cuda_dist(name: str) -> bool:
    return canonicalize_name(name).startswith(CUDA_DIST_PREFIXES)


def parse_version_py(text: str) -> dict[str, str | None]:
    """Top-level string/None assignments of torch/version.py (both annotated and plain)."""
    values: dict[str, str | None] = {}
    tree = ast.parse(text)
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        is_text = isinstance(value, ast.Constant) and (
            value.value is None or isinstance(value.value, str)
        )
        if isinstance(target, ast.Name) and is_text:
            values[target.id] = value.value  # type: ignore[attr-defined]
    return values


def variant_of(
    version: str, cuda: str | None, hip: str | None, known: bool
) -> tuple[str | None, str | None]:
    """(local label, variant). The variant comes from the label, else from torch.version.cuda."""
    label = version.split("+", 1)[1] if "+" in version else None
    if label and _LABEL.match(label):
        return label, label
    if cuda:
        return label, "cu" + "".join(cuda.split(".")[:2])
    if hip:
        return label, "rocm" + ".".join(hip.split(".")[:2])
    return label, ("cpu" if known else None)


def _torch_pins(requires: tuple[str, ...], markers: dict[str, str]) -> dict[str, str]:
    env = {**markers, "extra": ""}
    pins: dict[str, str] = {}
    for line in requires:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if not is_cuda_dist(req.name) and canonicalize_name(req.name) != "triton":
            continue
        if req.marker is not None and markers and not req.marker.evaluate(env):
            continue
        pins[canonicalize_name(req.name)] = str(req.specifier)
    return pins


def probe_torch(packages: Section[PackagesInfo], markers: dict[str, str]) -> Section[TorchBuild]:
    if not packages.is_ok or packages.data is None:
        return Section.unavailable(f"installed packages unknown ({packages.describe()})")
    dist = packages.data.get("torch")
    if dist is None:
        return Section.unavailable("torch is not installed")
    installed = {d.key: d.version for d in packages.data.distributions if is_cuda_dist(d.name)}
    pins = _torch_pins(dist.requires, markers)
    version_file = Path(dist.location or ".") / "torch" / "version.py"
    notes: tuple[str, ...] = ()
    values: dict[str, str | None] = {}
    try:
        values = parse_version_py(read_regular(str(version_file), limit=1024**2).decode("utf-8"))
    except InputError as exc:
        notes = (f"torch/version.py unreadable ({exc.message}); CUDA build unknown",)
    except (OSError, UnicodeDecodeError) as exc:
        notes = (f"torch/version.py unreadable ({exc.__class__.__name__}); CUDA build unknown",)
    except SyntaxError:
        notes = ("torch/version.py could not be parsed; CUDA build unknown",)
    known = "cuda" in values
    version = values.get("__version__") or dist.version
    label, variant = variant_of(version, values.get("cuda"), values.get("hip"), known)
    build = TorchBuild(
        version=version,
        local_label=label,
        cuda=values.get("cuda"),
        hip=values.get("hip"),
        git_version=values.get("git_version"),
        variant=variant,
        location=dist.location,
        version_file=str(version_file) if not notes else None,
        requires_cuda=pins,
        installed_cuda=installed,
    )
    return Section.ok(build, source="torch/version.py" if not notes else "metadata", notes=notes)
