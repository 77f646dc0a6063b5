"""What one resolution of a fix plan asks of uv, read from the node and the plan's steps.

The plan's pins by name (a later step wins, as pip's last install does), the installed
distributions the plan leaves alone (top-level ones pinned as requirements, dependencies as
constraints), the cuBLAS-style pins the matrix accepts as overrides of torch's own, and the
torch variant index torch comes from. Pure: no uv run here (``plan/resolved.py`` runs it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from envcheck.matrix.model import Matrix
from envcheck.model.plan import Conflict, Stack, Step, Target
from envcheck.model.report import Distribution, NodeReport
from envcheck.plan.resolver_answer import NotResolved
from envcheck.plan.simulate import parse_requirement, variant_of_index

TORCH_FAMILY = ("torch", "torchvision", "torchaudio")
PlanPins = dict[str, tuple[Requirement, tuple[str, ...]]]  # name -> (requirement, rule codes)


@dataclass
class Request:
    """What one resolution of a plan asks of uv."""

    python: str
    arch: str
    plan: PlanPins
    installed: dict[str, Distribution]  # unchanged by the plan
    top: set[str]  # installed names pinned as requirements; the rest are constraints
    overrides: list[str]
    torch_index: str | None
    excluded: set[str] = field(default_factory=set)  # not on the index: kept as installed
    freed: set[str] = field(default_factory=set)  # dependencies the resolution may move
    # dependencies already at odds with what requires them, which the plan does not touch: pip
    # leaves them as they are (an installed cuBLAS override of torch's pin stays)
    held: set[str] = field(default_factory=set)
    # the plan's pins that follow the resolution: a rule's pin that cannot hold with the
    # anchors (xformers up to the installed torch, under a vLLM that pins both) becomes "this
    # package may move" and uv picks the release every other constraint allows
    followed: dict[str, tuple[Requirement, tuple[str, ...], Conflict]] = field(default_factory=dict)
    node: dict[str, Distribution] = field(default_factory=dict)  # every installed distribution

    def stack(self) -> Stack:
        requirements = [str(req) for req, _ in self.plan.values()]
        overrides = list(self.overrides)
        constraints = []
        for key, dist in sorted(self.installed.items()):
            if key in self.excluded:
                # installed, not on the index: pip, installing the plan, finds it met by what is
                # installed; the resolution takes it as given (an override whose marker never
                # holds drops it from every requirement, instead of failing on it)
                overrides.append(f"{dist.name}; sys_platform == 'never'")
                continue
            pin = f"{dist.name}=={dist.version}"
            if key in self.top:
                requirements.append(pin)
            elif key in self.held:
                overrides.append(pin)
            elif key not in self.freed and key not in self.followed:
                constraints.append(pin)
        return Stack(
            target=Target(python=self.python, arch=self.arch),
            requirements=tuple(requirements),
            overrides=tuple(overrides),
            constraints=tuple(constraints),
            torch_index_url=self.torch_index,
        )

    def relaxable(self, named: set[str]) -> set[str]:
        """The plan's pins uv named that may follow the resolution instead: not torch's (the
        chooser picked that build for the GPUs, the driver and vLLM's pin) and not an override
        the matrix accepts. The anchors (installed top-level packages the plan does not pin)
        stay requirements at their versions."""
        pinned_overrides = {canonicalize_name(Requirement(o).name) for o in self.overrides}
        return {
            key
            for key in named & set(self.plan)
            if key not in TORCH_FAMILY and key not in pinned_overrides
        }

    def follow(self, keys: set[str], conflict: Conflict) -> None:
        """Let ``keys`` follow the resolution: the pin is dropped, an installed one may move
        (``conflict``: what uv said of the pin)."""
        for key in keys:
            req, codes = self.plan.pop(key)
            self.followed[key] = (req, codes, conflict)
            dist = self.node.get(key)
            if dist is not None and key not in self.installed:
                self.installed[key] = dist
                self.freed.add(key)

    def movable(self) -> set[str]:
        """Installed dependencies the resolution may still free."""
        return {k for k in self.installed if k not in self.top and k not in self.freed}


def node_python(report: NodeReport) -> str | None:
    data = report.python.data if report.python.is_ok else None
    return data.version if data is not None and data.version else None


def node_arch(report: NodeReport, matrix: Matrix | None = None) -> str:
    """The node's CPU: as the report states it, else the CPU a superchip GPU pairs with
    (GH200, GB200, GB10: aarch64, per the matrix), else x86_64."""
    data = report.system.data if report.system.is_ok else None
    if data is not None and data.arch in ("x86_64", "aarch64"):
        return data.arch
    gpus = report.gpu.data.gpus if report.gpu.is_ok and report.gpu.data else ()
    for gpu in gpus or ():
        model = matrix.gpu_model(gpu.name) if matrix is not None else None
        if model is not None and model.host_arch:
            return model.host_arch
    return "x86_64"


def plan_pins(steps: Sequence[Step]) -> tuple[PlanPins, set[str], str | None]:
    """The plan's requirements by name (a later step wins, as pip's last install does), the
    names it uninstalls, and the torch variant index it installs torch from."""
    pins: PlanPins = {}
    removed: set[str] = set()
    torch_index = None
    for step in steps:
        action = step.action
        if action.kind == "pip_uninstall":
            removed |= {canonicalize_name(n) for n in action.packages}
        elif action.kind == "pip_install":
            for text in action.packages:
                req = parse_requirement(text)
                if req is None:
                    continue
                key = canonicalize_name(req.name)
                pins[key] = (req, step.codes)
                if key in TORCH_FAMILY and action.index_url:
                    torch_index = action.index_url
    return pins, removed, torch_index


def exact(req: Requirement) -> str | None:
    """The version an ``==`` pin names (None for a range or a wildcard)."""
    found = [s.version for s in req.specifier if s.operator == "==" and "*" not in s.version]
    return found[0] if len(found) == 1 else None


def top_level(
    installed: Mapping[str, Distribution], matrix: Matrix, torch: Version | None
) -> set[str]:
    """Installed names nothing else installed requires (the user's own installs). Without
    requirements (a declared or pasted list), torch's own wheels are its dependencies."""
    dists = list(installed.values())
    if any(d.requires for d in dists):
        required: set[str] = set()
        for dist in dists:
            for text in dist.requires:
                req = parse_requirement(text)
                if req is not None and canonicalize_name(req.name) != dist.key:
                    required.add(canonicalize_name(req.name))
        return {d.key for d in dists if d.key not in required}
    companions = {"triton"}
    release = matrix.torch_release(torch) if torch is not None else None
    if release is not None:
        companions |= {canonicalize_name(n) for n in release.pins}
    return {d.key for d in dists if not d.key.startswith("nvidia-") and d.key not in companions}


def _torch_version(report: NodeReport, plan: PlanPins) -> Version | None:
    if "torch" in plan:
        text = exact(plan["torch"][0])
    else:
        packages = report.packages.data if report.packages.is_ok else None
        dist = packages.get("torch") if packages is not None else None
        text = dist.version if dist is not None else None
    try:
        return Version(Version(text).public) if text else None
    except InvalidVersion:
        return None


def build_request(report: NodeReport, steps: Sequence[Step], matrix: Matrix) -> Request:
    """The request for ``steps`` on the node; raises NotResolved when the node's Python or
    packages are unknown."""
    python = node_python(report)
    if python is None:
        raise NotResolved("the node's Python version is unknown")
    packages = report.packages.data if report.packages.is_ok else None
    if packages is None:
        raise NotResolved("the node's installed packages are unknown")
    plan, removed, torch_index = plan_pins(steps)
    installed: dict[str, Distribution] = {}
    for dist in packages.distributions:
        if dist.key in plan or dist.key in removed or dist.key in installed:
            continue
        try:
            Version(dist.version)
        except InvalidVersion:
            continue
        installed[dist.key] = dist
    torch = _torch_version(report, plan)
    overrides = []
    for key, (req, _codes) in plan.items():
        version = exact(req)
        if torch is None or version is None or key in TORCH_FAMILY:
            continue
        if any(version in o.versions for o in matrix.overrides_for(req.name, Version(str(torch)))):
            overrides.append(str(req))
    excluded: set[str] = set()
    if torch_index is None and "torch" in installed:
        # an installed variant build (2.4.0+cu121) comes from its variant's index
        label = variant_of_index("/" + installed["torch"].version.partition("+")[2])
        if label:
            torch_index = matrix.torch_index_url(label)
            if torch_index is None:
                excluded.add("torch")
    # what is top-level is a property of the node as it is (torch, which the plan moves,
    # still makes its cuBLAS a dependency)
    everything = {d.key: d for d in packages.distributions}
    top = top_level(everything, matrix, torch) & set(installed)
    return Request(
        python,
        node_arch(report, matrix),
        plan,
        installed,
        top,
        overrides,
        torch_index,
        excluded=excluded,
        node=everything,
    )
