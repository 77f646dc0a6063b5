"""Generate matrices/generated/importers.toml: what each release of an IMPORTING package requires
of the libraries it imports, read from the package's own source history.

For each release (a git tag; rc/dev/alpha/beta skipped) of a package that imports the stack's
libraries (peft imports transformers, sentence-transformers imports huggingface_hub, ...):

- its declared requirements on those libraries: ``install_requires`` of setup.py (a list
  literal, or a module-level name bound to one, read with ``ast``, never run), else
  ``[project] dependencies`` of pyproject.toml, else the requirements file setup.py reads;
- which names it imports from them (``from transformers import EncoderDecoderCache``) and which
  of their modules it imports, where the library's own names-by-release table
  (generated/python_names.toml) records that name or module as added or removed by a release.
  Imports inside ``try:`` (an ImportError fallback) or under ``if`` (a version or availability
  guard) cannot fail the import and are not counted.

Each fact is written as the spans of the package's releases that have it (``"A.."`` from A on,
``"A..L"`` A through L). PY150/PY151 read it to name the release of the importer that fits the
installed library (matrix/python_names.py).

    python scripts/gen_importers.py [--mirrors /work/.mirror] [--only DIST]
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gen_python_names import GitSource, Lib, spans

from envcheck.matrix.python_names import parse as parse_names

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "matrices" / "generated" / "importers.toml"
NAMES = ROOT / "matrices" / "generated" / "python_names.toml"
if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

# the libraries whose bounds an importer's release declares (canonical names)
REQUIRED = frozenset(
    {
        "torch",
        "torchvision",
        "torchaudio",
        "transformers",
        "tokenizers",
        "accelerate",
        "peft",
        "trl",
        "datasets",
        "huggingface-hub",
        "diffusers",
        "numpy",
        "safetensors",
        "bitsandbytes",
        "sentence-transformers",
        "pydantic",
        "protobuf",
        "scipy",
        "triton",
        "setuptools",
    }
)
REQ_FILES = (
    "requirements/requirements.txt",
    "requirements/pytorch/base.txt",
    "requirements/base.txt",
    "requirements.txt",
)


@dataclass(frozen=True)
class Importer:
    distribution: str
    repo: str
    packages: tuple[str, ...]
    since: str
    roots: tuple[str, ...] = ("src/{pkg}", "{pkg}")


IMPORTERS: tuple[Importer, ...] = (
    Importer("peft", "huggingface/peft", ("peft",), "0.2"),
    Importer("accelerate", "huggingface/accelerate", ("accelerate",), "0.10"),
    Importer("trl", "huggingface/trl", ("trl",), "0.4"),
    Importer(
        "sentence-transformers",
        "UKPLab/sentence-transformers",
        ("sentence_transformers",),
        "2.0",
    ),
    Importer("diffusers", "huggingface/diffusers", ("diffusers",), "0.10"),
    Importer("optimum", "huggingface/optimum", ("optimum",), "1.5"),
    Importer("deepspeed", "deepspeedai/DeepSpeed", ("deepspeed",), "0.8"),
    Importer("bitsandbytes", "bitsandbytes-foundation/bitsandbytes", ("bitsandbytes",), "0.37"),
    Importer("auto-gptq", "AutoGPTQ/AutoGPTQ", ("auto_gptq",), "0.2"),
    Importer(
        "lightning",
        "Lightning-AI/pytorch-lightning",
        ("lightning", "pytorch_lightning", "lightning_fabric"),
        "2.0",
    ),
)


# --------------------------------------------------------------------------------------------
# declared requirements


def _strings(node: ast.AST) -> list[str] | None:
    if isinstance(node, (ast.List, ast.Tuple)):
        out = [
            e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
        ]
        return out
    return None


def setup_requires(text: str) -> list[str] | None:
    """setup.py's install_requires as literal strings; None when it is not a literal list (or
    a name bound to one at module level)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    bound: dict[str, list[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            found = _strings(node.value)
            if isinstance(target, ast.Name) and found is not None:
                bound[target.id] = found
    # diffusers/transformers: install_requires = [deps["torch"], ...] over a `_deps` list
    table = {}
    for row in bound.get("_deps", []):
        try:
            table[Requirement(row).name] = row
        except InvalidRequirement:
            continue
    lists: dict[str, ast.expr] = {
        n.targets[0].id: n.value
        for n in tree.body
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)
    }
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call):
            continue
        for kw in call.keywords:
            if kw.arg != "install_requires":
                continue
            value = kw.value
            if (  # list(install_requires)
                isinstance(value, ast.Call)
                and isinstance(value.func, ast.Name)
                and value.func.id in {"list", "tuple", "sorted"}
                and len(value.args) == 1
            ):
                value = value.args[0]
            if isinstance(value, ast.Name) and value.id in lists:
                value = lists[value.id]
            found = _strings(value)
            if found:
                return found
            if isinstance(value, (ast.List, ast.Tuple)) and table:
                return [
                    table[e.slice.value]
                    for e in value.elts
                    if isinstance(e, ast.Subscript)
                    and isinstance(e.slice, ast.Constant)
                    and e.slice.value in table
                ]
    return None


def pyproject_requires(text: str) -> list[str] | None:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None
    deps = data.get("project", {}).get("dependencies")
    return [str(d) for d in deps] if isinstance(deps, list) else None


def file_requires(text: str) -> list[str]:
    return [
        line.split("#", 1)[0].strip()
        for line in text.splitlines()
        if line.strip() and not line.strip().startswith(("#", "-"))
    ]


def requirements(rows: list[str]) -> dict[str, str]:
    """canonical name -> specifier text ("" for no bound) of the tracked libraries."""
    out: dict[str, str] = {}
    for row in rows:
        try:
            req = Requirement(row)
        except InvalidRequirement:
            continue
        name = canonicalize_name(req.name)
        if name in REQUIRED and name not in out and not req.extras:
            if req.marker is not None and "extra" in str(req.marker):
                continue
            out[name] = str(req.specifier)
    return out


# --------------------------------------------------------------------------------------------
# imports


_GUARDS = (ast.Try, ast.If)
if sys.version_info >= (3, 11):
    _GUARDS = (ast.Try, ast.TryStar, ast.If)


def imports(text: str, tops: frozenset[str]) -> set[tuple[str, str | None]]:
    """(module, name) of ``from module import name`` and (module, None) of ``import module`` for
    modules under ``tops``, outside try/if blocks."""
    if not any(t in text for t in tops):
        return set()
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return set()
    out: set[tuple[str, str | None]] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _GUARDS):
                continue
            if isinstance(child, ast.ImportFrom) and child.module and not child.level:
                if child.module.split(".")[0] in tops:
                    out.add((child.module, None))
                    out.update((child.module, a.name) for a in child.names)
            elif isinstance(child, ast.Import):
                out.update((a.name, None) for a in child.names if a.name.split(".")[0] in tops)
            visit(child)

    visit(tree)
    return out


# --------------------------------------------------------------------------------------------


@dataclass
class Scanned:
    importer: Importer
    where: str
    versions: list[str]
    requires: dict[str, dict[str, str]] = field(default_factory=dict)  # lib -> spec -> spans
    names: dict[str, dict[str, str]] = field(default_factory=dict)  # module -> name -> spans
    modules: dict[str, str] = field(default_factory=dict)  # module -> spans


def scan(
    imp: Importer, mirrors: Path, tracked: dict[str, set[str]], paths: set[str]
) -> Scanned | None:
    git_dir = mirrors / imp.repo.replace("/", "+") / "repo"
    if not git_dir.is_dir():
        print(f"{imp.distribution}: no mirror at {git_dir}", file=sys.stderr)
        return None
    source = GitSource(
        git_dir, Lib(imp.distribution, imp.packages, (), repo=imp.repo, since=imp.since)
    )
    releases = source.releases()
    own = {p.split(".")[0] for p in imp.packages}
    tops = frozenset(m.split(".")[0] for m in [*tracked, *paths]) - own
    per_release_req: list[dict[str, str]] = []
    per_release_imp: list[set[tuple[str, str | None]]] = []
    cache: dict[str, set[tuple[str, str | None]]] = {}
    kept: list[str] = []
    for version, tag in releases:
        top_files = source.files(tag, ["setup.py", "pyproject.toml", *REQ_FILES])
        rows = None
        if "setup.py" in top_files:
            rows = setup_requires(source.read(tag, "setup.py", top_files["setup.py"]))
        if rows is None and "pyproject.toml" in top_files:
            rows = pyproject_requires(
                source.read(tag, "pyproject.toml", top_files["pyproject.toml"])
            )
        if rows is None:
            rows = next(
                (
                    file_requires(source.read(tag, f, top_files[f]))
                    for f in REQ_FILES
                    if f in top_files
                ),
                None,
            )
        prefixes = [r.format(pkg=p) for p in imp.packages for r in imp.roots]
        files = source.files(tag, prefixes)
        found: set[tuple[str, str | None]] = set()
        for path, key in files.items():
            if not path.endswith(".py") or any(
                part in {"tests", "test", "examples", "benchmarks", "_vendor"}
                for part in path.split("/")
            ):
                continue
            if key not in cache:
                cache[key] = imports(source.read(tag, path, key), tops)
            found |= cache[key]
        per_release_req.append(requirements(rows or []))
        per_release_imp.append(found)
        kept.append(str(version))
    source.close()
    if not kept:
        return None
    out = Scanned(imp, f"https://github.com/{imp.repo} (git tags)", kept)
    libs = sorted({lib for r in per_release_req for lib in r})
    for lib in libs:
        specs = sorted({r[lib] for r in per_release_req if lib in r})
        out.requires[lib] = {
            s: spans([r.get(lib) == s for r in per_release_req], kept) for s in specs
        }
    seen = set().union(*per_release_imp)
    for module, name in sorted(seen, key=lambda p: (p[0], p[1] or "")):
        present = [(module, name) in r for r in per_release_imp]
        if name is None:
            if module in paths:
                out.modules[module] = spans(present, kept)
        elif name in tracked.get(module, ()):
            out.names.setdefault(module, {})[name] = spans(present, kept)
    return out


def _key(text: str) -> str:
    return text if re.fullmatch(r"[A-Za-z0-9_-]+", text) else '"' + text.replace('"', '\\"') + '"'


HEADER = """\
# Generated by scripts/gen_importers.py from each importing package's own source history: do
# not edit. For each release (a git tag; rc/dev/alpha/beta skipped): [importer.requires] the
# package's declared bounds on the stack's libraries (setup.py install_requires read with ast,
# else pyproject's [project] dependencies, else its requirements file; "" = no bound), as
# bound -> the spans of its releases that declare it; [importer.names] / [importer.modules]
# the names and modules it imports (outside try/if blocks) from libraries whose own
# names-by-release table (python_names.toml) records them as added or removed. A span "A.."
# means from release A on; "A..L" A through L (the release after L in `releases` is the first
# without it). Read lazily by PY150/PY151 (matrix/python_names.py).
"""


def render(scanned: list[Scanned]) -> str:
    out = [HEADER]
    for s in scanned:
        imp = s.importer
        out.append("[[importer]]")
        out.append(f'distribution = "{imp.distribution}"')
        out.append("packages = [" + ", ".join(f'"{p}"' for p in imp.packages) + "]")
        out.append(
            f'source = "{s.where}: {len(s.versions)} releases {s.versions[0]} .. {s.versions[-1]}, '
            'setup.py/pyproject.toml and import statements read with ast by scripts/gen_importers.py"'
        )
        out.append("releases = [" + ", ".join(f'"{v}"' for v in s.versions) + "]")
        out.append("")
        for lib, specs in s.requires.items():
            out.append(f"[importer.requires.{_key(lib)}]")
            out.extend(f'"{spec}" = "{text}"' for spec, text in specs.items())
            out.append("")
        if s.modules:
            out.append("[importer.modules]")
            out.extend(f'"{m}" = "{t}"' for m, t in s.modules.items())
            out.append("")
        for module, names in s.names.items():
            out.append(f'[importer.names."{module}"]')
            out.extend(f'{_key(n)} = "{t}"' for n, t in names.items())
            out.append("")
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--only", action="append", default=[])
    parser.add_argument("--output", type=Path, default=OUT)
    args = parser.parse_args(argv)
    libraries = parse_names(NAMES.read_text(encoding="utf-8"), str(NAMES))
    tracked: dict[str, set[str]] = {}
    paths: set[str] = set()
    for lib in libraries:
        for module, names in lib.names.items():
            tracked.setdefault(module, set()).update(names)
        paths.update(lib.modules)
    scanned = []
    for imp in IMPORTERS:
        if args.only and imp.distribution not in args.only:
            continue
        got = scan(imp, args.mirrors, tracked, paths)
        if got is not None:
            print(
                f"{imp.distribution}: {len(got.versions)} releases, {len(got.requires)} bounds, "
                f"{sum(len(n) for n in got.names.values())} names, {len(got.modules)} modules",
                file=sys.stderr,
            )
            scanned.append(got)
    args.output.write_text(render(scanned), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
