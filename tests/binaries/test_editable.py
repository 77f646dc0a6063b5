"""Editable installs keep their extension modules in the source tree, where no RECORD lists
them: PEP 660's direct_url.json (``dir_info.editable``) and setuptools' strict-mode finder,
and `setup.py develop`'s .egg-link, each written as the installers write them; the objects are
gcc-built, one with a fatbin. The finder is read, never run."""

from __future__ import annotations

import json
from pathlib import Path

from envcheck.binaries.editable import editable_sources, shared_objects
from envcheck.binaries.scan import scan
from envcheck.probes.context import ProbeContext
from tests.binaries.elfbuild import add_fatbin, build_so, cubin, fatbin

EXT = "_C.cpython-311-x86_64-linux-gnu.so"


def _source(tmp_path: Path, name: str) -> Path:
    """A project checkout after `build_ext --inplace`: the extension beside the Python code
    (needing a library nothing ships), a stale copy under build/, a .git directory."""
    project = tmp_path / "src" / name
    gone = build_so(tmp_path / "libs" / "libgone.so.3", "int gone(void){return 3;}",
                    soname="libgone.so.3")  # fmt: skip
    ext = build_so(
        project / name / EXT,
        "extern int gone(void); int run(void) { return gone(); }",
        libs=(gone,),
    )
    add_fatbin(ext, fatbin(cubin(80), cubin(90)))
    (project / name / "__init__.py").write_text("")
    stale = project / "build" / "lib.linux-x86_64-cpython-311" / name
    stale.mkdir(parents=True)
    (stale / EXT).write_bytes(ext.read_bytes())
    (project / ".git").mkdir()
    (project / ".git" / "libhidden.so").write_bytes(b"\x7fELF")
    return project


def _site(tmp_path: Path) -> Path:
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    return site


def _pep660(site: Path, project: Path, dist: str) -> None:
    info = site / f"{dist}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    (info / "direct_url.json").write_text(
        json.dumps({"url": project.as_uri(), "dir_info": {"editable": True}})
    )
    (site / f"__editable__.{dist}-0.1.pth").write_text(f"{project}\n")
    (info / "RECORD").write_text(
        f"__editable__.{dist}-0.1.pth,,\n{info.name}/direct_url.json,,\n{info.name}/RECORD,,\n"
    )


def _check(site: Path, tmp_path: Path, dist: str, name: str) -> None:
    info = scan(ProbeContext(env={"HOME": str(tmp_path / "home")}), [str(site)], "x86_64")
    found = [f for f in info.files if f.path.endswith(EXT)]
    assert [f.path for f in found] == [str(tmp_path / "src" / name / name / EXT)]
    ext = found[0]
    assert ext.distribution == dist and ext.extension
    assert ext.kernels is not None and ext.kernels.sass == (80, 90)
    assert [n.name for n in ext.needs if n.path is None] == ["libgone.so.3"]


def test_pep_660_editable_install(tmp_path: Path) -> None:
    project = _source(tmp_path, "myops")
    site = _site(tmp_path)
    _pep660(site, project, "myops")
    _check(site, tmp_path, "myops", "myops")


def test_setup_py_develop_egg_link(tmp_path: Path) -> None:
    project = _source(tmp_path, "legacy_ops")
    site = _site(tmp_path)
    (site / "legacy-ops.egg-link").write_text(f"{project}\n.")
    (site / "easy-install.pth").write_text(f"{project}\n")
    _check(site, tmp_path, "legacy-ops", "legacy_ops")


def test_strict_finder_is_read_not_run(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    project = _source(tmp_path, "strict_ops")
    site = _site(tmp_path)
    monkeypatch.chdir(tmp_path)
    # setuptools' finder: a module whose MAPPING names the package directory; it runs code
    (site / "__editable___strict_ops_0_1_finder.py").write_text(
        "import os\nos.mkdir('pwned')\n"
        f"MAPPING: dict = {{}}\nMAPPING = {{'strict_ops': {str(project / 'strict_ops')!r}}}\n"
        "NAMESPACES = {}\n"
    )
    assert list(editable_sources(site)) == [(project / "strict_ops", "strict_ops")]
    _check(site, tmp_path, "strict_ops", "strict_ops")
    assert not (tmp_path / "pwned").exists()


def test_a_non_editable_direct_url_and_hostile_files_add_nothing(tmp_path: Path) -> None:
    site = _site(tmp_path)
    project = _source(tmp_path, "pinned")
    info = site / "pinned-1.0.dist-info"
    info.mkdir()
    (info / "direct_url.json").write_text(
        json.dumps({"url": project.as_uri(), "dir_info": {"editable": False}})
    )
    (site / "x-1.0.dist-info").mkdir()
    (site / "x-1.0.dist-info" / "direct_url.json").write_text("{" * 100_000)
    (site / "remote.egg-link").write_text("relative/path\n")
    (site / "__editable___bad_1_0_finder.py").write_text("MAPPING = {'a': __import__('os')}\n")
    assert list(editable_sources(site)) == []


def test_the_walk_passes_over_build_and_hidden_directories(tmp_path: Path) -> None:
    project = _source(tmp_path, "walked")
    assert list(shared_objects(project)) == [project / "walked" / EXT]
