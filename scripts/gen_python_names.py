"""Generate matrices/generated/python_names.toml: which release of a library added or removed a
public name or a module, read from the library's own source history.

For each release (a git tag of the library's repository, or a wheel of it in a folder; release
candidates, dev, alpha and beta releases skipped) the public modules' exported names are read
with ``ast``, never imported: def/class/assignment names, ``from x import a`` re-exports (and
``from .x import *`` resolved through the target's ``__all__``), ``__all__`` itself, and the
names of the lazy-import tables (transformers' and diffusers' ``_import_structure``,
huggingface_hub's ``_SUBMOD_ATTRS``). The module paths (``pkg.sub.mod``, three levels deep) of
each release are listed too. Only names and modules whose presence CHANGED over the scanned
releases are written, each as the spans of releases that have it: ``"A.."`` (from A on),
``"A..L"`` (A through L; the release after L in ``releases`` is the first without it).

    python scripts/gen_python_names.py [--mirrors /work/.mirror] [--wheels DIR] [--only LIB]

Mirrors are bare git clones at ``<mirrors>/<owner>+<name>/repo``; a library whose repository
is too big to mirror is read from its wheels (``<wheels>/<distribution>/*.whl``: one per
release). A library whose source is absent is left out (the output says which were read).
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from packaging.version import InvalidVersion, Version

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "matrices" / "generated" / "python_names.toml"
DEPTH = 3  # module paths tracked: pkg, pkg.sub, pkg.sub.mod
SKIPPED_PARTS = frozenset(
    {"tests", "test", "testdata", "benchmarks", "examples", "docs", "_vendor"}
)
LAZY_TABLES = frozenset({"_import_structure", "_SUBMOD_ATTRS"})
_ALL = re.compile(r"^__all__\s*=\s*(\[[^\]]*\]|\([^)]*\))", re.MULTILINE)
QUICK: dict[str, set[str] | None] = {}  # content key -> its literal __all__


@dataclass(frozen=True)
class Lib:
    """One library: where its releases come from and which of its modules' names to read."""

    distribution: str
    packages: tuple[str, ...]  # top-level import packages (or single-file modules)
    modules: tuple[str, ...]  # dotted modules whose exported names are read
    repo: str | None = None  # owner/name of the git mirror
    tag: str = r"v?(?P<v>[0-9]+(?:\.[0-9]+)+)"  # a release tag; group v is the version
    since: str = "0"
    roots: tuple[str, ...] = ("src/{pkg}", "{pkg}")  # where a package lives in the tree
    version_of: Callable[[str], str] | None = None  # tag version -> the package's version
    # names a module's lazy loader serves without binding them, from a release on: (module,
    # name suffixes, first release); such a name is never counted as removed there
    served: tuple[tuple[str, tuple[str, ...], str], ...] = ()


def _protobuf(tag: str) -> str:
    """protobuf's repository tags (v25.1) and its Python package's versions (4.25.1): 3.x up
    to 3.20, then 4.21-4.25, 5.26-5.29, 6.30 on (protobuf's version-support policy)."""
    major = int(tag.split(".", 1)[0])
    if major <= 3:
        return tag
    return f"{4 if major < 26 else 5 if major < 30 else 6}.{tag}"


LIBS: tuple[Lib, ...] = (
    Lib(
        "transformers",
        ("transformers",),
        (
            "transformers",
            "transformers.utils",
            "transformers.modeling_utils",
            "transformers.generation",
            "transformers.cache_utils",
            "transformers.pytorch_utils",
            "transformers.integrations",
            "transformers.utils.import_utils",
            "transformers.trainer",
            "transformers.trainer_utils",
            "transformers.training_args",
            "transformers.tokenization_utils_base",
            "transformers.generation.utils",
            "transformers.modeling_outputs",
            "transformers.modeling_attn_mask_utils",
            "transformers.modeling_flash_attention_utils",
            "transformers.configuration_utils",
            "transformers.utils.generic",
            "transformers.models.auto",
            "transformers.models.llama.modeling_llama",
            "transformers.models.qwen2.modeling_qwen2",
            "transformers.models.mistral.modeling_mistral",
            "transformers.models.bert.modeling_bert",
        ),
        # transformers 5's _LazyModule.__getattr__ (utils/import_utils.py): "If trying to
        # import a *TokenizerFast symbol, transparently fall back to the non-Fast symbol", and
        # a missing *Tokenizer resolves through the converter mapping
        served=(("transformers", ("TokenizerFast", "Tokenizer"), "5.0"),),
    ),
    Lib(
        "huggingface-hub",
        ("huggingface_hub",),
        (
            "huggingface_hub",
            "huggingface_hub.utils",
            "huggingface_hub.file_download",
            "huggingface_hub.constants",
            "huggingface_hub.hf_api",
            "huggingface_hub.errors",
            "huggingface_hub.utils._errors",
            "huggingface_hub.serialization",
        ),
        repo="huggingface/huggingface_hub",
        since="0.10",
    ),
    Lib(
        "diffusers",
        ("diffusers",),
        (
            "diffusers",
            "diffusers.utils",
            "diffusers.models",
            "diffusers.pipelines",
            "diffusers.schedulers",
            "diffusers.models.attention_processor",
            "diffusers.utils.torch_utils",
        ),
        repo="huggingface/diffusers",
        since="0.10",
    ),
    Lib(
        "accelerate",
        ("accelerate",),
        ("accelerate", "accelerate.utils", "accelerate.state", "accelerate.accelerator"),
        repo="huggingface/accelerate",
    ),
    Lib(
        "peft",
        ("peft",),
        ("peft", "peft.utils", "peft.tuners", "peft.tuners.lora", "peft.peft_model"),
        repo="huggingface/peft",
    ),
    Lib(
        "trl",
        ("trl",),
        ("trl", "trl.trainer", "trl.core", "trl.models", "trl.trainer.utils"),
        repo="huggingface/trl",
    ),
    Lib(
        "datasets",
        ("datasets",),
        ("datasets", "datasets.utils", "datasets.features", "datasets.load"),
        repo="huggingface/datasets",
        tag=r"v?(?P<v>[0-9]+\.[0-9]+\.[0-9]+)",
        since="1.0",
    ),
    Lib(
        "tokenizers",
        ("tokenizers",),
        (
            "tokenizers",
            "tokenizers.processors",
            "tokenizers.pre_tokenizers",
            "tokenizers.models",
            "tokenizers.decoders",
            "tokenizers.normalizers",
        ),
        repo="huggingface/tokenizers",
        tag=r"(?:python-)?v(?P<v>[0-9]+(?:\.[0-9]+)+)",
        roots=("bindings/python/py_src/{pkg}",),
    ),
    Lib(
        "numpy",
        ("numpy",),
        # numpy's own namespace is built at import time (star imports of generated __all__,
        # __getattr__ tables of expired aliases): its removals are curated in
        # packages/import_names.toml instead; the module paths and these submodules are read
        (
            "numpy.lib",
            "numpy.linalg",
            "numpy.random",
            "numpy.typing",
            "numpy.exceptions",
            "numpy.compat",
        ),
        repo="numpy/numpy",
        since="1.16",
    ),
    Lib(
        "scipy",
        ("scipy",),
        (
            "scipy",
            "scipy.linalg",
            "scipy.special",
            "scipy.stats",
            "scipy.signal",
            "scipy.sparse",
            "scipy.optimize",
            "scipy.integrate",
            "scipy.interpolate",
            "scipy.ndimage",
            "scipy.misc",
            "scipy.spatial",
        ),
        repo="scipy/scipy",
        since="1.2",
    ),
    Lib(
        "setuptools",
        ("setuptools", "pkg_resources"),
        ("setuptools", "pkg_resources", "setuptools.command", "setuptools.dist"),
        repo="pypa/setuptools",
        since="50",
    ),
    Lib(
        "torch",
        ("torch",),
        (
            "torch",
            "torch.utils",
            "torch.utils.data",
            "torch.distributed",
            "torch.nn",
            "torch.nn.functional",
            "torch.cuda",
            "torch.amp",
            "torch.library",
            "torch.utils.checkpoint",
            "torch.utils.cpp_extension",
            "torch.utils._pytree",
            "torch.compiler",
            "torch.nn.attention",
            "torch.distributed.fsdp",
            "torch.distributed.tensor",
            "torch.distributed.device_mesh",
            "torch.cuda.amp",
            "torch.optim.lr_scheduler",
            "torch.overrides",
            "torch.types",
        ),
    ),
    Lib(
        "torchvision",
        ("torchvision",),
        (
            "torchvision",
            "torchvision.transforms",
            "torchvision.transforms.functional",
            "torchvision.models",
            "torchvision.ops",
            "torchvision.io",
            "torchvision.datasets",
        ),
    ),
    Lib(
        "pydantic",
        ("pydantic",),
        ("pydantic", "pydantic.fields", "pydantic.main", "pydantic.types", "pydantic.config"),
        repo="pydantic/pydantic",
        since="1.8",
    ),
    Lib(
        "typing-extensions",
        ("typing_extensions",),
        ("typing_extensions",),
        repo="python/typing_extensions",
        since="4.0",
    ),
    Lib(
        "protobuf",
        ("google.protobuf",),
        (
            "google.protobuf",
            "google.protobuf.message",
            "google.protobuf.descriptor",
            "google.protobuf.internal.builder",
            "google.protobuf.json_format",
            "google.protobuf.runtime_version",
        ),
        repo="protocolbuffers/protobuf",
        # v3.19.x-v3.20.x, then v21.x on; other tags name other languages' packages
        tag=r"v(?P<v>3\.(?:19|20)\.[0-9]+|(?:2[1-9]|[3-9][0-9])\.[0-9]+(?:\.[0-9]+)?)",
        roots=("python/google/protobuf",),
        version_of=_protobuf,
    ),
    Lib(
        "jax",
        ("jax",),
        ("jax", "jax.numpy", "jax.lax", "jax.random", "jax.tree_util", "jax.experimental"),
        repo="jax-ml/jax",
        tag=r"jax-v(?P<v>[0-9]+(?:\.[0-9]+)+)",
        since="0.4.0",
    ),
    Lib(
        "urllib3",
        ("urllib3",),
        ("urllib3", "urllib3.util", "urllib3.util.retry", "urllib3.contrib", "urllib3.exceptions"),
        repo="urllib3/urllib3",
        since="1.25",
    ),
    Lib(
        "packaging",
        ("packaging",),
        ("packaging", "packaging.version", "packaging.specifiers", "packaging.tags"),
        repo="pypa/packaging",
        since="20.0",
    ),
    Lib(
        "pillow",
        ("PIL",),
        ("PIL", "PIL.Image", "PIL.ImageFont", "PIL.ImageDraw"),
        repo="python-pillow/Pillow",
        tag=r"(?P<v>[0-9]+\.[0-9]+\.[0-9]+)",
        since="7.0",
    ),
    Lib(
        "scikit-learn",
        ("sklearn",),
        ("sklearn", "sklearn.utils", "sklearn.metrics", "sklearn.model_selection"),
    ),
    Lib(
        "timm",
        ("timm",),
        ("timm", "timm.models", "timm.layers", "timm.data", "timm.models.layers"),
        repo="huggingface/pytorch-image-models",
        since="0.4",
    ),
    Lib("einops", ("einops",), ("einops", "einops.layers"), repo="arogozhnikov/einops"),
    # vLLM's repository is too big to mirror: its wheels (slimmed to their .py files), the
    # first and the newest release of each minor series from 0.2 on, every 0.4 release; the
    # modules RL frameworks (verl, OpenRLHF) and serving layers import
    Lib(
        "vllm",
        ("vllm",),
        (
            "vllm",
            "vllm.utils",
            "vllm.envs",
            "vllm.config",
            "vllm.sampling_params",
            "vllm.outputs",
            "vllm.inputs",
            "vllm.distributed",
            "vllm.distributed.parallel_state",
            "vllm.engine.arg_utils",
            "vllm.engine.llm_engine",
            "vllm.entrypoints.llm",
            "vllm.model_executor",
            "vllm.model_executor.model_loader",
            "vllm.lora.request",
            "vllm.worker.worker_base",
            "vllm.transformers_utils.tokenizer",
        ),
        since="0.2",
    ),
)


# --------------------------------------------------------------------------------------------
# sources: a release's files (path -> a key that names the content) and their text


class Source:
    """The releases of one library and each release's files."""

    where: str = ""

    def releases(self) -> list[tuple[Version, str]]:
        raise NotImplementedError

    def files(self, ref: str, prefixes: Iterable[str]) -> dict[str, str]:
        raise NotImplementedError

    def read(self, ref: str, path: str, key: str) -> str:
        raise NotImplementedError

    def close(self) -> None:
        pass


def _release(text: str) -> Version | None:
    try:
        version = Version(text)
    except InvalidVersion:
        return None
    return None if version.is_prerelease or version.is_devrelease else version


class GitSource(Source):
    """A bare git mirror: releases are its tags, files come through one `git cat-file`."""

    def __init__(self, git_dir: Path, lib: Lib) -> None:
        self.git_dir = git_dir
        self.lib = lib
        self.where = f"https://github.com/{lib.repo} (git tags)"
        self._batch: subprocess.Popen[bytes] | None = None

    def _git(self, *args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(self.git_dir), *args],
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        )
        return done.stdout

    def releases(self) -> list[tuple[Version, str]]:
        pattern = re.compile(self.lib.tag + r"$")
        found: dict[Version, str] = {}
        for tag in self._git("tag").split():
            m = pattern.match(tag)
            if m is None:
                continue
            text = m.group("v")
            version = _release(self.lib.version_of(text) if self.lib.version_of else text)
            if version is not None and version >= Version(self.lib.since):
                found.setdefault(version, tag)
        return sorted(found.items())

    def files(self, ref: str, prefixes: Iterable[str]) -> dict[str, str]:
        out = self._git("ls-tree", "-r", ref, "--", *prefixes)
        files = {}
        for row in out.splitlines():
            meta, _, path = row.partition("\t")
            parts = meta.split()
            if len(parts) == 3 and parts[1] == "blob":
                files[path] = parts[2]
        return files

    def read(self, ref: str, path: str, key: str) -> str:
        if self._batch is None:
            self._batch = subprocess.Popen(
                ["git", "-C", str(self.git_dir), "cat-file", "--batch"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
        assert self._batch.stdin is not None and self._batch.stdout is not None
        self._batch.stdin.write(key.encode() + b"\n")
        self._batch.stdin.flush()
        header = self._batch.stdout.readline().split()
        if len(header) < 3 or header[1] != b"blob":
            return ""
        data = self._batch.stdout.read(int(header[2]) + 1)[:-1]
        return data.decode("utf-8", "replace")

    def close(self) -> None:
        if self._batch is not None:
            self._batch.kill()
            self._batch.wait(timeout=10)


class WheelSource(Source):
    """A folder of wheels, one per release (the newest patch of each minor series)."""

    def __init__(self, folder: Path, lib: Lib) -> None:
        self.folder = folder
        self.lib = lib
        self.where = f"the release wheels of {lib.distribution} (the package index's files)"
        self._zips: dict[str, zipfile.ZipFile] = {}

    def releases(self) -> list[tuple[Version, str]]:
        found: dict[Version, str] = {}
        for wheel in sorted(self.folder.glob("*.whl")):
            version = _release(wheel.name.split("-")[1])
            if version is not None:
                found.setdefault(version, wheel.name)
        return sorted(found.items())

    def _zip(self, ref: str) -> zipfile.ZipFile:
        if ref not in self._zips:
            self._zips[ref] = zipfile.ZipFile(self.folder / ref)
        return self._zips[ref]

    def files(self, ref: str, prefixes: Iterable[str]) -> dict[str, str]:
        heads = tuple(p.rstrip("/") + "/" for p in prefixes) + tuple(p + ".py" for p in prefixes)
        return {
            info.filename: f"{info.CRC:08x}{info.file_size}"
            for info in self._zip(ref).infolist()
            if info.filename.startswith(heads)
        }

    def read(self, ref: str, path: str, key: str) -> str:
        return self._zip(ref).read(path).decode("utf-8", "replace")

    def close(self) -> None:
        for z in self._zips.values():
            z.close()


# --------------------------------------------------------------------------------------------
# reading one module's exported names


def _strings(node: ast.expr) -> list[str]:
    """The string constants of a list/tuple/set literal (others ignored)."""
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [
            e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
        ]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _strings(node.left) + _strings(node.right)
    return []


def _lazy_table(node: ast.expr) -> str | None:
    """The lazy table a subscript or name refers to (``_import_structure["x"]``)."""
    if isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Name) and node.id in LAZY_TABLES:
        return node.id
    return None


@dataclass
class Parsed:
    """What one module file states: its names, its star imports and whether it lists __all__."""

    names: set[str] = field(default_factory=set)
    all_names: set[str] = field(default_factory=set)
    has_all: bool = False
    stars: list[tuple[int, str | None]] = field(default_factory=list)  # (level, module)
    submodules: set[str] = field(default_factory=set)  # the lazy tables' keys


def parse_module(text: str) -> Parsed | None:
    """The names a module's own top level binds (never its function/class bodies), or None
    when the text does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    out = Parsed()
    _walk(tree.body, out)
    if "__getattr__" in out.names:
        # a module-level __getattr__ serves names the module does not bind (deprecated
        # aliases, lazy attributes), listed as strings in its body or in the module's tables:
        # a name still spelled there is not counted as removed (the removal is left unknown)
        out.names.update(_served(tree.body))
    return out


def _served(body: list[ast.stmt]) -> set[str]:
    """Identifier strings of a module's top-level tables and of its ``__getattr__``."""
    found: set[str] = set()
    for node in body:
        values: list[ast.AST] = []
        if isinstance(node, ast.FunctionDef) and node.name == "__getattr__":
            values = [node]
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr)):
            values = [node.value] if node.value is not None else []
        elif isinstance(node, (ast.If, ast.Try)):
            found |= _served(node.body) | _served(node.orelse)
        for value in values:
            found.update(
                c.value
                for c in ast.walk(value)
                if isinstance(c, ast.Constant)
                and isinstance(c.value, str)
                and c.value.isidentifier()
            )
    return found


def _walk(body: list[ast.stmt], out: Parsed) -> None:
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.names.add(node.name)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                _assign(target, node.value, out)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            _assign(node.target, node.value, out)
        elif isinstance(node, ast.AugAssign):
            if isinstance(node.target, ast.Name) and node.target.id == "__all__":
                out.has_all = True
                out.all_names.update(_strings(node.value))
            elif _lazy_table(node.target):
                out.names.update(_strings(node.value))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                out.names.add(alias.asname or alias.name.split(".", 1)[0])
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name == "*":
                    out.stars.append((node.level, node.module))
                else:
                    out.names.add(alias.asname or alias.name)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            _call(node.value, out)
        elif isinstance(node, ast.If):
            _walk(node.body, out)
            _walk(node.orelse, out)
        elif isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
            _walk(node.body, out)  # type: ignore[attr-defined]
            for handler in node.handlers:  # type: ignore[attr-defined]
                _walk(handler.body, out)
            _walk(node.orelse, out)  # type: ignore[attr-defined]
            _walk(node.finalbody, out)  # type: ignore[attr-defined]
        elif isinstance(node, ast.With):
            _walk(node.body, out)


def _assign(target: ast.expr, value: ast.expr, out: Parsed) -> None:
    if isinstance(target, ast.Name):
        if target.id == "__all__":
            out.has_all = True
            out.all_names.update(_strings(value))
            return
        if target.id in LAZY_TABLES and isinstance(value, ast.Dict):
            for key, names in zip(value.keys, value.values, strict=True):
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    out.submodules.add(key.value)
                out.names.update(_strings(names))
            return
        out.names.add(target.id)
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            if isinstance(element, ast.Name):
                out.names.add(element.id)
    elif isinstance(target, ast.Subscript) and _lazy_table(target):
        if isinstance(target.slice, ast.Constant) and isinstance(target.slice.value, str):
            out.submodules.add(target.slice.value)
        out.names.update(_strings(value))


def _call(call: ast.Call, out: Parsed) -> None:
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in ("extend", "append", "update"):
        return
    if isinstance(func.value, ast.Name) and func.value.id == "__all__":
        out.has_all = True
        for arg in call.args:
            out.all_names.update(_strings(arg))
    elif _lazy_table(func.value):
        for arg in call.args:
            out.names.update(_strings(arg))


def public(names: Iterable[str]) -> set[str]:
    return {n for n in names if n and not n.startswith("_") and n.isidentifier()}


# --------------------------------------------------------------------------------------------
# one release


class Release:
    """One release's files of a library: module paths and each module's exported names."""

    def __init__(self, source: Source, ref: str, lib: Lib, cache: dict[str, Parsed | None]):
        self.source, self.ref, self.lib, self.cache = source, ref, lib, cache
        self.quick = QUICK
        self.root: dict[str, str] = {}  # package -> its folder in the tree (or file stem)
        self.files: dict[str, str] = {}
        for pkg in lib.packages:
            candidates = [r.format(pkg=pkg.replace(".", "/")) for r in lib.roots]
            listed = source.files(ref, [*candidates, *(c + ".py" for c in candidates)])
            for cand in candidates:
                if f"{cand}/__init__.py" in listed or f"{cand}.py" in listed:
                    self.root[pkg] = cand
                    self.files.update(
                        {
                            p: k
                            for p, k in listed.items()
                            if p == f"{cand}.py" or p.startswith(cand + "/")
                        }
                    )
                    break

    def module_file(self, module: str) -> str | None:
        for pkg, root in self.root.items():
            if module != pkg and not module.startswith(pkg + "."):
                continue
            rest = module[len(pkg) :].lstrip(".").replace(".", "/")
            base = f"{root}/{rest}" if rest else root
            for path in (f"{base}/__init__.py", f"{base}.py"):
                if path in self.files:
                    return path
        return None

    def modules(self) -> set[str]:
        found = set()
        for pkg, root in self.root.items():
            for path in self.files:
                if path == f"{root}.py":
                    found.add(pkg)
                    continue
                if not path.startswith(root + "/") or not path.endswith((".py", ".pyx")):
                    continue
                parts = path[len(root) + 1 :].rsplit(".", 1)[0].split("/")
                if parts[-1] == "__init__":
                    parts = parts[:-1]
                if any(
                    p in SKIPPED_PARTS
                    or not p.isidentifier()
                    or p.endswith("_test")
                    or p.startswith("test_")
                    for p in parts
                ):
                    continue
                dotted = [*pkg.split("."), *parts]
                if len(dotted) <= DEPTH + pkg.count("."):
                    found.add(".".join(dotted))
        return found

    def parsed(self, path: str) -> Parsed | None:
        key = self.files[path]
        if key not in self.cache:
            self.cache[key] = parse_module(self.source.read(self.ref, path, key))
        return self.cache[key]

    def quick_all(self, path: str) -> set[str] | None:
        """A module's literal ``__all__`` read without parsing the whole file (a star import
        of a big modeling file needs only that); None when it is not one plain literal."""
        key = "all:" + self.files[path]
        if key not in self.quick:
            text = self.source.read(self.ref, path, self.files[path])
            found = _ALL.findall(text)
            value: set[str] | None = None
            if len(found) == 1 and "__all__ +" not in text and "__all__." not in text:
                try:
                    literal = ast.literal_eval(found[0])
                except (ValueError, SyntaxError):
                    literal = None
                if isinstance(literal, (list, tuple)):
                    value = public(str(n) for n in literal)
            self.quick[key] = value
        return self.quick[key]

    def exports(self, module: str, depth: int = 0) -> set[str] | None:
        """The names ``from module import X`` finds (None: no such module or unparsable)."""
        path = self.module_file(module)
        if path is None:
            return None
        parsed = self.parsed(path)
        if parsed is None:
            return None
        names = set(parsed.names) | parsed.all_names | parsed.submodules
        if depth < 4:
            is_package = path.endswith("__init__.py")
            for level, target in parsed.stars:
                names |= self.star(module, is_package, level, target, depth)
        return public(names)

    def star(
        self, module: str, is_package: bool, level: int, target: str | None, depth: int
    ) -> set[str]:
        if level == 0:
            dotted = target or ""
        else:
            base = module.split(".")
            if not is_package:
                base = base[:-1]
            base = base[: len(base) - (level - 1)] if level > 1 else base
            dotted = ".".join(base + ([target] if target else []))
        path = self.module_file(dotted)
        if path is None:
            return set()
        quick = self.quick_all(path)
        if quick is not None:
            return quick
        parsed = self.parsed(path)
        if parsed is None:
            return set()
        if parsed.has_all and parsed.all_names:
            return public(parsed.all_names)
        return self.exports(dotted, depth + 1) or set()


# --------------------------------------------------------------------------------------------
# spans and output


def spans(present: list[bool], versions: list[str]) -> str:
    """``"A.."`` / ``"A..L"`` spans of the releases that have a name, joined by ", "."""
    out, start = [], None
    for index, here in enumerate(present):
        if here and start is None:
            start = index
        if not here and start is not None:
            out.append(f"{versions[start]}..{versions[index - 1]}")
            start = None
    if start is not None:
        out.append(f"{versions[start]}..")
    return ", ".join(out)


def _key(text: str) -> str:
    return text if re.fullmatch(r"[A-Za-z0-9_-]+", text) else '"' + text.replace('"', '\\"') + '"'


@dataclass
class Scanned:
    lib: Lib
    where: str
    versions: list[str]
    modules: dict[str, str]  # module path -> spans
    names: dict[str, dict[str, str]]  # module -> name -> spans


def scan(lib: Lib, source: Source) -> Scanned | None:
    releases = source.releases()
    if not releases:
        return None
    cache: dict[str, Parsed | None] = {}
    versions = [str(v) for v, _ in releases]
    module_sets: list[set[str]] = []
    exports: list[dict[str, set[str] | None]] = []
    for version, ref in releases:
        release = Release(source, ref, lib, cache)
        module_sets.append(release.modules())
        exports.append({m: release.exports(m) for m in lib.modules})
        print(f"  {lib.distribution} {version}: {len(module_sets[-1])} modules", file=sys.stderr)
    every = set().union(*module_sets)
    modules = {
        m: spans([m in s for s in module_sets], versions)
        for m in sorted(every)
        if not all(m in s for s in module_sets)
    }
    names: dict[str, dict[str, str]] = {}
    for module in lib.modules:
        # only the releases where the module exists and parsed: its absence is the module's
        seen = [(i, e[module]) for i, e in enumerate(exports) if e[module] is not None]
        if len(seen) < 2:
            continue
        sub_versions = [versions[i] for i, _ in seen]
        sets = [s for _, s in seen if s is not None]
        union = set().union(*sets)
        for served_module, suffixes, since in lib.served:
            if served_module != module:
                continue
            extra = {n for n in union if n.endswith(suffixes)}
            sets = [
                s | extra if Version(v) >= Version(since) else s
                for s, v in zip(sets, sub_versions, strict=True)
            ]
        changed = {
            n: spans([n in s for s in sets], sub_versions)
            for n in sorted(union)
            if not all(n in s for s in sets)
        }
        if changed:
            names[module] = changed
    return Scanned(lib, source.where, versions, modules, names)


def render(scanned: list[Scanned]) -> str:
    lines = [
        "# Generated by scripts/gen_python_names.py from each library's own source history: do not",
        "# edit. For each release (a git tag, or a wheel; rc/dev/alpha/beta skipped) the public",
        "# modules' exported names are read with ast, never imported, and the module paths listed.",
        "# Only names and modules whose presence changed over the scanned releases are here. A span",
        '# "A.." means present from release A on (A the first scanned release: present since at',
        '# least A); "A..L" means present from A through L, and the release after L in `releases`',
        "# is the first without it. Read lazily by PY150/PY151 (matrix/python_names.py).",
        "",
    ]
    for item in scanned:
        lib = item.lib
        lines += [
            "[[library]]",
            f'distribution = "{lib.distribution}"',
            "packages = [" + ", ".join(f'"{p}"' for p in lib.packages) + "]",
            f'source = "{item.where}: {len(item.versions)} releases {item.versions[0]} .. '
            f"{item.versions[-1]}, "
            f'read with ast by scripts/gen_python_names.py"',
            "releases = [" + ", ".join(f'"{v}"' for v in item.versions) + "]",
            "",
            "[library.modules]",
            *(f'{_key(m)} = "{s}"' for m, s in item.modules.items()),
            "",
        ]
        for module, names in item.names.items():
            lines.append(f"[library.names.{_key(module)}]")
            lines += [f'{_key(n)} = "{s}"' for n, s in names.items()]
            lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def _blocks(text: str) -> list[str]:
    """A generated file's [[library]] blocks, each with its tables."""
    parts = text.split("[[library]]\n")
    return ["[[library]]\n" + p for p in parts[1:]]


def source_for(lib: Lib, mirrors: Path, wheels: Path) -> Source | None:
    if lib.repo is not None:
        git_dir = mirrors / lib.repo.replace("/", "+") / "repo"
        if git_dir.is_dir():
            return GitSource(git_dir, lib)
    folder = wheels / lib.distribution
    if folder.is_dir() and any(folder.glob("*.whl")):
        return WheelSource(folder, lib)
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirrors", default="/work/.mirror", type=Path)
    parser.add_argument("--wheels", default="/tmp/python_names_wheels", type=Path)
    parser.add_argument("--only", action="append", default=[])
    parser.add_argument("--out", default=OUT, type=Path)
    args = parser.parse_args(argv)
    scanned = []
    for lib in LIBS:
        if args.only and lib.distribution not in args.only:
            continue
        source = source_for(lib, args.mirrors, args.wheels)
        if source is None:
            print(f"{lib.distribution}: no mirror or wheels, left out", file=sys.stderr)
            continue
        try:
            item = scan(lib, source)
        finally:
            source.close()
        if item is not None:
            scanned.append(item)
    text = render(scanned)
    if args.only and args.out.is_file():  # keep the libraries not scanned this time
        kept = [
            block
            for block in _blocks(args.out.read_text(encoding="utf-8"))
            if not any(f'distribution = "{d}"' in block for d in args.only)
        ]
        text = text.rstrip("\n") + "\n\n" + "\n".join(kept) if kept else text
    args.out.write_text(text.rstrip("\n") + "\n", encoding="utf-8")
    print(f"wrote {args.out} ({args.out.stat().st_size} bytes, {len(scanned)} libraries)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
