"""The names-by-release table: scripts/gen_python_names.py on a staged git repository with
real-format package files and release tags, its TOML read back by matrix/python_names.py, the
lookups PY150/PY151 use, and the lazy load (the matrix holds only the file's path)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from packaging.version import Version

from envcheck.errors import MatrixError
from envcheck.matrix.python_names import parse, read

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))

import gen_python_names as gen  # noqa: E402

INIT_1 = '''\
"""toylib."""
from typing import TYPE_CHECKING

from .core import *
from .helpers import old_helper, shared as shared_alias

__version__ = "1.0.0"

_import_structure = {"models.bert": ["BertModel"], "utils": []}
_import_structure["models.gpt"] = ["GPTModel", "GPTConfig"]

if TYPE_CHECKING:
    from .models.bert import BertModel
else:
    import sys
'''

INIT_2 = '''\
"""toylib."""
from .core import *
from .helpers import new_helper, shared as shared_alias

__version__ = "1.1.0"

_import_structure = {"models.bert": ["BertModel"], "utils": []}
_import_structure["models.gpt"] = ["GPTModel", "GPTConfig"]
_import_structure["models.llama"] = ["LlamaModel"]
_import_structure["models.gpt"].extend(["GPTForCausalLM"])
'''

CORE_1 = '__all__ = ["ndarray", "float_"]\nndarray = object\nfloat_ = float\n'
CORE_2 = '__all__ = ["ndarray"]\nndarray = object\n'


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), *args],
        check=True,
        capture_output=True,
        env={
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.invalid",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.invalid",
            "HOME": str(repo),
            "PATH": "/usr/bin:/bin",
        },
        timeout=60,
    )


def _write(root: Path, files: dict[str, str]) -> None:
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


@pytest.fixture(scope="module")
def mirror(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bare mirror of a library with releases v1.0.0, v1.1.0 and a v1.2.0rc1 (skipped)."""
    work = tmp_path_factory.mktemp("toylib")
    _git(work, "init", "-q")
    _write(
        work,
        {
            "src/toylib/__init__.py": INIT_1,
            "src/toylib/core.py": CORE_1,
            "src/toylib/helpers.py": "def old_helper(): ...\ndef shared(): ...\n",
            "src/toylib/legacy/__init__.py": "X = 1\n",
            "src/toylib/tests/test_x.py": "",
        },
    )
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", "1.0")
    _git(work, "tag", "v1.0.0")
    (work / "src/toylib/legacy/__init__.py").unlink()
    _write(
        work,
        {
            "src/toylib/__init__.py": INIT_2,
            "src/toylib/core.py": CORE_2,
            "src/toylib/helpers.py": "def new_helper(): ...\ndef shared(): ...\n",
            "src/toylib/fast/__init__.py": "",
        },
    )
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", "1.1")
    _git(work, "tag", "v1.1.0")
    _write(work, {"src/toylib/__init__.py": INIT_2 + "def rc_only(): ...\n"})
    _git(work, "commit", "-q", "-am", "rc")
    _git(work, "tag", "v1.2.0rc1")
    bare = tmp_path_factory.mktemp("mirror") / "repo"
    subprocess.run(
        ["git", "clone", "-q", "--bare", str(work), str(bare)],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return bare


LIB = gen.Lib("toylib", ("toylib",), ("toylib",), repo="example/toylib")


def _scanned(mirror: Path) -> gen.Scanned:
    source = gen.GitSource(mirror, LIB)
    try:
        scanned = gen.scan(LIB, source)
    finally:
        source.close()
    assert scanned is not None
    return scanned


def test_generator_reads_names_and_modules_that_changed_between_tags(mirror: Path) -> None:
    scanned = _scanned(mirror)
    assert scanned.versions == ["1.0.0", "1.1.0"]  # the rc tag is skipped
    names = scanned.names["toylib"]
    assert names["old_helper"] == "1.0.0..1.0.0"  # removed in 1.1.0
    assert names["new_helper"] == "1.1.0.."
    assert names["float_"] == "1.0.0..1.0.0"  # through `from .core import *` and __all__
    assert names["LlamaModel"] == "1.1.0.."  # a lazy table's subscript assignment
    assert names["GPTForCausalLM"] == "1.1.0.."  # ... and its .extend()
    for unchanged in ("ndarray", "BertModel", "GPTModel", "shared_alias"):
        assert unchanged not in names
    assert "rc_only" not in names
    assert scanned.modules["toylib.legacy"] == "1.0.0..1.0.0"
    assert scanned.modules["toylib.fast"] == "1.1.0.."
    assert not any("tests" in m for m in scanned.modules)
    assert "toylib.core" not in scanned.modules  # present in both


def test_names_a_lazy_loader_serves_are_never_counted_as_removed(mirror: Path) -> None:
    """A library whose lazy loader serves names by suffix from a release on (transformers 5's
    *TokenizerFast fallback): old_helper is served from 1.1.0, new_helper unaffected."""
    lib = gen.Lib(
        "toylib",
        ("toylib",),
        ("toylib",),
        repo="example/toylib",
        served=(("toylib", ("old_helper",), "1.1.0"),),
    )
    source = gen.GitSource(mirror, lib)
    try:
        scanned = gen.scan(lib, source)
    finally:
        source.close()
    assert scanned is not None
    assert "old_helper" not in scanned.names["toylib"]
    assert scanned.names["toylib"]["new_helper"] == "1.1.0.."


def test_generated_toml_reads_back_into_the_lookups(mirror: Path, tmp_path: Path) -> None:
    text = gen.render([_scanned(mirror)])
    path = tmp_path / "generated" / "python_names.toml"
    path.parent.mkdir()
    path.write_text(text)
    table = read((str(path),))
    removed = table.name("toylib", "old_helper")
    assert removed is not None and removed.removed() is not None
    span = removed.removed()
    assert span is not None and span.last == Version("1.0.0") and span.gone == Version("1.1.0")
    assert removed.has(Version("1.0.0")) is True
    assert removed.has(Version("1.1.0")) is False
    added = table.name("toylib", "new_helper")
    assert added is not None and added.added() is not None
    assert added.next_added(Version("1.0.0")) is not None
    assert table.name("toylib", "ndarray") is None  # never changed
    assert table.name("otherlib", "x") is None
    module = table.module("toylib.legacy.sub.deeper")  # its deepest changed parent
    assert module is not None and module.module == "toylib.legacy"
    assert module.removed() is not None
    assert "https://github.com/example/toylib (git tags)" in module.source


def test_quick_all_and_full_parse_agree_on_a_literal_all() -> None:
    parsed = gen.parse_module(CORE_1)
    assert parsed is not None and parsed.all_names == {"ndarray", "float_"}
    assert gen.parse_module("def broken(:\n") is None


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[[library]]\ndistribution = 'x'\n", "missing key"),
        (
            "[[library]]\ndistribution='x'\npackages=['x']\nsource='s'\nreleases=['2.0', '1.0']\n",
            "ascending",
        ),
        ("[[library]\n", "invalid TOML"),
    ],
)
def test_a_malformed_table_is_one_clear_error(text: str, problem: str) -> None:
    with pytest.raises(MatrixError, match=problem):
        parse(text, "python_names.toml")


def test_a_bad_span_names_the_entry() -> None:
    text = (
        "[[library]]\ndistribution='x'\npackages=['x']\nsource='s'\nreleases=['1.0', '2.0']\n"
        "[library.names.x]\nfoo = 'one..two'\n"
    )
    table = parse(text, "t.toml")
    from envcheck.matrix.python_names import PythonNames

    with pytest.raises(MatrixError, match=r"x: x\.foo"):
        PythonNames(libraries=table).name("x", "foo")


def test_the_shipped_table_is_loaded_lazily_and_knows_removals() -> None:
    from envcheck.matrix_validate import load

    matrix = load(env={})
    assert matrix.python_names_files, "generated/python_names.toml is shipped"
    assert not any(f.endswith("python_names.toml") for f in matrix.files)
    hub = matrix.python_name("huggingface_hub", "cached_download")
    assert hub is not None
    span = hub.removed()
    assert span is not None and span.gone == Version("0.26.0") and span.last == Version("0.25.2")
