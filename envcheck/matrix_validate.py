"""Cross-reference checks of a merged matrix, what the schema alone cannot see, and the matrix
every command loads: the built-in one with overlays merged and checked the same way.

It sits above the rule catalogue and triage (it checks cause codes against the one and
signature patterns with the other), so ``matrix/`` itself never imports either."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.utils import InvalidName, canonicalize_name
from packaging.version import InvalidVersion, Version

from envcheck.errors import MatrixError
from envcheck.matrix.locate import line_of
from envcheck.matrix.model import Matrix, variant_cuda
from envcheck.matrix.schema import Condition
from envcheck.patterns import lazy
from envcheck.rules.base import CODE_PATTERN

REQUIRED_CONSTANTS = (
    "ray.object_store_fraction",
    "ray.object_store_max_bytes",
    "ray.memory_usage_threshold",
    "ray.local_fs_capacity_threshold",
    "docker.default_shm_bytes",
    "nccl.recommended_shm_bytes",
    "envcheck.ray_tmp_min_free_bytes",
    "unix.socket_path_max_bytes",
)
MESSAGE_FIELDS = {"pkg", "driver", "gpu", "python", "evidence"}
_VARIANT = lazy(r"^(cu\d{3}|cpu|rocm\d+(\.\d+)*|xpu)$")


@dataclass(frozen=True)
class Problem:
    """A problem ``matrix validate`` found, and where."""

    where: str
    key: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: key '{self.key}': {self.message}"


class _Collector:
    def __init__(self, matrix: Matrix) -> None:
        self.matrix = matrix
        self.problems: list[Problem] = []
        self._texts: dict[str, str] = {}

    def add(self, entry: object, field: str, message: str) -> None:
        origin = self.matrix.origin(entry)
        if origin is None:
            self.problems.append(Problem("<matrix>", field, message))
            return
        self.add_at(*origin, field, message)

    def add_at(self, path: str, table: str, index: int, field: str, message: str) -> None:
        key = f"{table}[{index}].{field}" if field else f"{table}[{index}]"
        if path not in self._texts:
            try:
                self._texts[path] = Path(path).read_text(encoding="utf-8")
            except OSError:
                self._texts[path] = ""
        line = line_of(self._texts[path], key)
        self.problems.append(Problem(f"{path}:{line}" if line else path, key, message))


def _names(cond: Condition) -> list[str]:
    names = list(cond.packages) + list(cond.absent) + list(cond.absent_or_unlisted)
    names += list(cond.installer)
    for sub in cond.any:
        names += _names(sub)
    return names


def validate(matrix: Matrix) -> list[Problem]:
    c = _Collector(matrix)
    for toolkit in matrix.toolkits:
        if toolkit.min_driver is None and toolkit.verified:
            c.add(toolkit, "min_driver", "missing although the entry is marked verified")
    for branch in matrix.driver_branches:
        if matrix.toolkit(branch.max_cuda) is None:
            c.add(branch, "max_cuda", f"CUDA {branch.max_cuda} has no [[toolkit]] entry")
    tokens: dict[str, str] = {}
    for gpu in matrix.gpus:
        if not gpu.match:
            c.add(gpu, "match", "needs at least one name token")
        for token in gpu.match:
            other = tokens.setdefault(token.lower(), gpu.name)
            if other != gpu.name:
                c.add(gpu, "match", f"token {token!r} is also used by {other}")
    releases = {t.version for t in matrix.torch_releases}
    for torch in matrix.torch_releases:
        for variant in torch.variants:
            if not _VARIANT.match(variant):
                c.add(
                    torch,
                    "variants",
                    f"{variant!r} is not a variant name like cu121, cpu or rocm6.2",
                )
            cuda = variant_cuda(variant)
            if cuda is not None and matrix.toolkit(cuda) is None:
                c.add(torch, "variants", f"{variant}: CUDA {cuda} has no [[toolkit]] entry")
        if torch.pypi_default is not None and torch.pypi_default not in torch.variants:
            c.add(torch, "pypi_default", f"{torch.pypi_default} is not one of its variants")
        for variant, text in torch.arch_list.items():
            if variant not in torch.variants:
                c.add(torch, f"arch_list.{variant}", "is not one of its variants")
            cuda = variant_cuda(variant)
            for item in re.split(r"[;\s]+", text.strip()):
                try:
                    cc = Version(item.removesuffix("+PTX"))
                except InvalidVersion:
                    c.add(
                        torch,
                        f"arch_list.{variant}",
                        f"{item!r} is not a compute capability like 8.6 or 12.0+PTX",
                    )
                    continue
                arch = f"sm_{cc.major}{cc.minor}"
                sm = matrix.sm(arch)
                if sm is None:
                    c.add(torch, f"arch_list.{variant}", f"{arch} has no [[sm]] entry")
                elif cuda is not None and (
                    cuda < sm.first_cuda or (sm.last_cuda is not None and cuda > sm.last_cuda)
                ):
                    until = sm.last_cuda or "now"
                    c.add(
                        torch,
                        f"arch_list.{variant}",
                        f"CUDA {cuda} cannot compile {arch} ({sm.first_cuda} to {until})",
                    )
        for py in torch.python:
            if not re.fullmatch(r"3\.\d+", py):
                c.add(torch, "python", f"{py!r} is not a Python minor version like 3.11")
    for vllm in matrix.vllm_releases:
        if vllm.torch is not None:
            pinned = [s.version for s in vllm.torch if s.operator == "=="]
            for version in pinned:
                if "*" not in version and Version(version) not in releases:
                    c.add(vllm, "torch", f"pins torch {version}, which has no [[torch]] entry")
    for companion in matrix.companions:
        if companion.torch not in releases:
            c.add(companion, "torch", f"torch {companion.torch} has no [[torch]] entry")
    for og in matrix.omnigibson_releases:
        if og.isaacsim is not None and not any(
            og.isaacsim.contains(i.version, prereleases=True) for i in matrix.isaacsim_releases
        ):
            c.add(og, "isaacsim", f"no [[isaacsim]] entry satisfies {og.isaacsim}")
    for override in matrix.overrides:
        if not any(override.torch.contains(v, prereleases=True) for v in releases):
            c.add(override, "torch", f"no [[torch]] release satisfies {override.torch}")
    codes: set[str] = set()
    from envcheck.rules import code_rules
    from envcheck.rules.data import FIX_FIELDS

    builtin = {r.code for r in code_rules()}
    for entry in matrix.known_bad:
        if not CODE_PATTERN.match(entry.code):
            c.add(entry, "code", "must be 2-4 capital letters and 3 digits, like CUD102")
        if entry.code in builtin:
            c.add(entry, "code", f"{entry.code} is already a built-in rule; pick another code")
        if entry.code in codes:
            c.add(entry, "code", "is used twice")
        codes.add(entry.code)
        for name in _names(entry.when):
            try:
                canonicalize_name(name, validate=True)
            except InvalidName:
                c.add(entry, "when", f"{name!r} is not a distribution name")
        import string

        try:
            parsed = list(string.Formatter().parse(entry.message))
        except ValueError as exc:  # "Single '{' encountered in format string"
            c.add(entry, "message", f"is not a valid message template: {exc} (write {{{{ for {{)")
            parsed = []
        for _, placeholder, _, _ in parsed:
            if placeholder and placeholder.split("[")[0] not in MESSAGE_FIELDS | FIX_FIELDS.keys():
                allowed = ", ".join(sorted(MESSAGE_FIELDS | FIX_FIELDS.keys()))
                c.add(
                    entry, "message", f"unknown placeholder {{{placeholder}}} (allowed: {allowed})"
                )
        if entry.fix is not None:
            for key, text in (
                ("fix.summary", entry.fix.summary),
                *(("fix.pip", t) for t in entry.fix.pip),
                *(("fix.manual", t) for t in entry.fix.manual),
            ):
                try:
                    names = [p for _, p, _, _ in string.Formatter().parse(text) if p]
                except ValueError as exc:
                    c.add(entry, key, f"is not a valid template: {exc} (write {{{{ for {{)")
                    continue
                for name in names:
                    if name.split("[")[0] not in MESSAGE_FIELDS | FIX_FIELDS.keys():
                        allowed = ", ".join(sorted(MESSAGE_FIELDS | FIX_FIELDS.keys()))
                        c.add(entry, key, f"unknown placeholder {{{name}}} (allowed: {allowed})")
    from envcheck.triage.patterns import check_signatures

    check_signatures(matrix, c.add)
    from envcheck.triage.ere import grep_pattern

    for sig in matrix.signatures:
        if grep_pattern(sig.pattern) is None:
            c.add(
                sig,
                "pattern",
                "grep -E can be given neither this pattern, nor a rewrite of it, nor a literal "
                "every match contains (triage's grep engine needs one)",
            )
    for name in REQUIRED_CONSTANTS:
        if name not in matrix.constants:
            c.problems.append(
                Problem("<matrix>", f"constant.{name}", "required by the rules but missing")
            )
    _check_places(c)
    _check_lazy(c)
    return c.problems


def _check_lazy(c: _Collector) -> None:
    """The generated tables read only on first use (python_names.toml, importers.toml): read
    them now, so a wrong shape is reported here rather than at the first failed import."""
    from envcheck.errors import MatrixError
    from envcheck.matrix.python_names import read

    if not c.matrix.python_names_files:
        return
    try:
        read(c.matrix.python_names_files)
    except MatrixError as exc:
        c.problems.append(Problem(exc.where or "<matrix>", exc.key or "", exc.message))


def _check_places(c: _Collector) -> None:
    from envcheck.matrix.load import builtin_dir
    from envcheck.matrix.places import misplaced

    builtin = builtin_dir()
    for path, table, index in sorted(set(c.matrix.origins.values())):
        reason = misplaced(path, table, builtin)
        if reason is not None:
            c.add_at(path, table, index, "", reason)


def load(
    cli_dirs: Sequence[str] = (),
    *,
    env: Mapping[str, str] | None = None,
    include_builtin: bool = True,
    check_overlays: bool = True,
) -> Matrix:
    """:func:`envcheck.matrix.load.load`, with every overlay checked as `envcheck matrix
    validate` checks it (unless ``check_overlays`` is False, as for `matrix validate` itself,
    which lists every problem)."""
    from envcheck.matrix.load import load as load_files
    from envcheck.matrix.load import overlay_dirs, tree_files

    matrix = load_files(cli_dirs, env=env, include_builtin=include_builtin)
    if include_builtin and check_overlays:
        overlays = overlay_dirs(cli_dirs, os.environ if env is None else env)
        if overlays:
            _check_overlays(matrix, {str(p) for d in overlays for p in tree_files(d)})
    return matrix


def _check_overlays(matrix: Matrix, files: set[str]) -> None:
    """Every command rejects an overlay `envcheck matrix validate` rejects (an unknown cause
    code, a pattern grep or re read differently, a built-in rule code reused), naming the
    file, line and key of the first problem."""
    for problem in validate(matrix):
        path = problem.where.rsplit(":", 1)[0] if ":" in problem.where else problem.where
        if path in files or problem.where in files:
            raise MatrixError(
                f"{problem.message} (see `envcheck matrix validate`)",
                where=problem.where,
                key=problem.key,
            )
