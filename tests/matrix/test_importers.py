"""What each release of an importing package requires and imports: scripts/gen_importers.py on
a staged git repository with real-format setup.py / pyproject.toml files and release tags, its
TOML read back by matrix/python_names.py, and the lookups PY150/PY151 use."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from envcheck.errors import MatrixError
from envcheck.matrix.python_names import parse_tables, read

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))

import gen_importers as gen  # noqa: E402

SETUP_1 = """\
from setuptools import setup
setup(
    name="toyimp",
    version="1.0.0",
    install_requires=["transformers>=1.0", "numpy", "requests"],
)
"""

PYPROJECT_2 = """\
[project]
name = "toyimp"
version = "1.1.0"
dependencies = ["transformers>=1.1,<2", "numpy>=1.17", "accelerate[torch]>=0.2"]
"""

# diffusers' form: install_requires built from a `_deps` table, passed through list(...)
SETUP_3 = """\
import re
from setuptools import setup
_deps = ["transformers>=1.2", "numpy>=1.20", "torch>=2.0"]
deps = {b: a for a, b in (re.findall(r"^(([^!=<>~ ]+)(?:[!=<>~ ].*)?$)", x)[0] for x in _deps)}
install_requires = [deps["transformers"], deps["numpy"]]
setup(name="toyimp", version="1.2.0", install_requires=list(install_requires))
"""

CODE_1 = """\
from transformers import OldName, Kept
import transformers.legacy
"""

CODE_2 = """\
from transformers import NewName, Kept
try:
    from transformers import Guarded
except ImportError:
    Guarded = None
if False:
    from transformers import UnderIf


def later():
    from transformers.utils import helper
"""


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), *args],
        check=True,
        capture_output=True,
        timeout=60,
        env={
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.com",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.com",
            "HOME": str(repo),
            "PATH": "/usr/bin:/bin",
        },
    )


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.fixture(scope="module")
def mirrors(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("toyimp")
    _git(work, "init", "-q")
    _write(work, {"setup.py": SETUP_1, "src/toyimp/__init__.py": CODE_1})
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", "1.0")
    _git(work, "tag", "v1.0.0")
    (work / "setup.py").unlink()
    _write(work, {"pyproject.toml": PYPROJECT_2, "src/toyimp/__init__.py": CODE_2})
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", "1.1")
    _git(work, "tag", "v1.1.0")
    _write(work, {"setup.py": SETUP_3, "tests/test_x.py": "from transformers import OldName\n"})
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", "1.2")
    _git(work, "tag", "v1.2.0")
    _git(work, "tag", "v1.3.0rc1")
    root = tmp_path_factory.mktemp("mirrors")
    bare = root / "example+toyimp" / "repo"
    subprocess.run(
        ["git", "clone", "-q", "--bare", str(work), str(bare)],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return root


TRACKED = {"transformers": {"OldName", "NewName", "Kept", "Guarded", "UnderIf"}}
PATHS = {"transformers.legacy", "transformers.utils"}
TOY = gen.Importer("toyimp", "example/toyimp", ("toyimp",), "1.0")


def test_generator_reads_declared_bounds_from_setup_py_pyproject_and_a_deps_table(
    mirrors: Path,
) -> None:
    scanned = gen.scan(TOY, mirrors, TRACKED, PATHS)
    assert scanned is not None
    assert scanned.versions == ["1.0.0", "1.1.0", "1.2.0"]  # the rc tag skipped
    assert scanned.requires["transformers"] == {
        ">=1.0": "1.0.0..1.0.0",
        "<2,>=1.1": "1.1.0..1.1.0",
        ">=1.2": "1.2.0..",
    }
    assert scanned.requires["numpy"] == {
        "": "1.0.0..1.0.0",
        ">=1.17": "1.1.0..1.1.0",
        ">=1.20": "1.2.0..",
    }
    assert "requests" not in scanned.requires  # not a library of the stack
    assert "accelerate" not in scanned.requires  # only with an extra


def test_generator_counts_only_imports_that_can_fail(mirrors: Path) -> None:
    scanned = gen.scan(TOY, mirrors, TRACKED, PATHS)
    assert scanned is not None
    names = scanned.names["transformers"]
    assert names["OldName"] == "1.0.0..1.0.0"  # tests/ of 1.2.0 do not count
    assert names["NewName"] == "1.1.0.."
    assert names["Kept"] == "1.0.0.."
    assert "Guarded" not in names and "UnderIf" not in names  # try/except, if
    assert scanned.modules["transformers.legacy"] == "1.0.0..1.0.0"
    assert scanned.modules["transformers.utils"] == "1.1.0.."  # a function-level import counts


def test_generated_toml_reads_back_into_the_lookups(mirrors: Path, tmp_path: Path) -> None:
    scanned = gen.scan(TOY, mirrors, TRACKED, PATHS)
    assert scanned is not None
    path = tmp_path / "importers.toml"
    path.write_text(gen.render([scanned]))
    names = read((str(path),))
    rows = names.importer("ToyImp")
    assert rows is not None and rows.releases[-1] == Version("1.2.0")
    assert "https://github.com/example/toyimp (git tags)" in rows.source
    spans = rows.imports("transformers", "OldName")
    assert spans is not None and spans[0].gone == Version("1.1.0")
    assert rows.imports("transformers", "Missing") is None
    assert rows.bound("transformers", Version("1.1.0")) == SpecifierSet("<2,>=1.1")
    assert rows.bound("transformers", Version("0.9")) is None  # not a release scanned
    assert rows.accepting("transformers", Version("1.1.5")) == [Version("1.0.0"), Version("1.1.0")]
    assert [i.distribution for i in names.importing("transformers", "NewName")] == ["toyimp"]
    assert names.importing("transformers.utils", None) == (rows,)


@pytest.mark.parametrize(
    ("text", "key", "message"),
    [
        ('[[importer]]\ndistribution = "x"\n', "importer[0]", "missing key"),
        (
            '[[importer]]\ndistribution = "x"\npackages = ["x"]\nsource = "s"\n'
            'releases = ["1.0"]\n[importer.requires.torch]\n">=2,,<" = "1.0.."\n',
            "importer[0]",
            "invalid entry",
        ),
        (
            '[[importer]]\ndistribution = "x"\npackages = ["x"]\nsource = "s"\n'
            'releases = ["1.1", "1.0"]\n',
            "importer[0]",
            "ascending",
        ),
        ("importer = 3\n", None, "array of tables"),
    ],
)
def test_a_wrong_shape_names_the_file_and_the_key(text: str, key: str | None, message: str) -> None:
    with pytest.raises(MatrixError) as caught:
        parse_tables(text, "importers.toml")
    assert caught.value.where == "importers.toml"
    assert caught.value.key == key
    assert message in caught.value.message


def test_a_wrong_span_is_refused_when_read() -> None:
    text = (
        '[[importer]]\ndistribution = "x"\npackages = ["x"]\nsource = "s"\nreleases = ["1.0"]\n'
        '[importer.names."y"]\nZ = "one..two"\n'
    )
    with pytest.raises(MatrixError, match="invalid span"):
        parse_tables(text, "importers.toml")


def test_matrix_validate_reads_the_lazy_tables(tmp_path: Path) -> None:
    """`envcheck matrix validate` reports a broken importers.toml (read lazily elsewhere)."""
    from dataclasses import replace

    from envcheck.matrix_validate import load, validate

    matrix = load(env={})
    assert any(p.endswith("importers.toml") for p in matrix.python_names_files)
    assert not [p for p in validate(matrix) if "importers.toml" in p.where]
    bad = tmp_path / "importers.toml"
    bad.write_text('[[importer]]\ndistribution = "x"\n')
    problems = validate(replace(matrix, python_names_files=(str(bad),)))
    assert [(p.where, p.key) for p in problems if p.where == str(bad)] == [
        (str(bad), "importer[0]")
    ]
