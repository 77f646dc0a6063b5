from __future__ import annotations

import os
import subprocess
import sys

from envcheck.model.section import Status
from envcheck.probes.context import ProbeContext
from envcheck.probes.python_env import (
    find_distributions,
    interpreter_facts,
    probe_packages,
    probe_python,
)
from tests.distfactory import make_dist, make_egg_info, make_fake_torch


def test_distributions_duplicates_and_broken(tmp_path):
    user_site = tmp_path / "user-site"
    venv_site = tmp_path / "venv-site"
    make_dist(user_site, "numpy", "2.1.0", installer="pip")
    make_dist(venv_site, "numpy", "1.26.4", installer="uv")
    make_dist(venv_site, "vllm", "0.6.3", requires=("torch==2.4.0", "numpy<2.0.0"))
    make_dist(venv_site, "ghost", None)  # METADATA without Version
    make_dist(venv_site, "hollow", "1.0", metadata=False)  # dist-info without METADATA
    make_egg_info(venv_site, "legacy_pkg", "0.3", requires=("six>=1.0",))
    section = probe_packages({"sys_path": [str(user_site), str(venv_site)]})
    assert section.status is Status.OK
    data = section.data
    numpy = data.get("numpy")
    assert (numpy.version, numpy.installer, numpy.location) == ("2.1.0", "pip", str(user_site))
    dupes = data.duplicates()
    assert [d.version for d in dupes["numpy"]] == ["2.1.0", "1.26.4"]
    assert data.get("vllm").requires == ("torch==2.4.0", "numpy<2.0.0")
    assert data.get("legacy-pkg").requires == ("six>=1.0",)
    reasons = sorted(b.reason for b in data.broken)
    assert reasons == ["METADATA of ghost has no Version", "no METADATA file"]
    assert data.search_path == (str(user_site), str(venv_site))


def test_probe_python_current_interpreter():
    facts = interpreter_facts(ProbeContext())
    section = probe_python(facts)
    info = section.data
    assert info.version == ".".join(map(str, sys.version_info[:3]))
    assert info.markers["python_version"] == f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert info.markers["sys_platform"] == sys.platform
    assert info.executable == sys.executable
    import sysconfig

    include = sysconfig.get_path("include")
    assert info.headers == os.path.isfile(os.path.join(include, "Python.h"))


def test_markers_match_packaging():
    from packaging.markers import default_environment

    facts = interpreter_facts(ProbeContext())
    assert facts["markers"] == dict(default_environment())


def test_other_interpreter_via_python_flag(tmp_path):
    venv = tmp_path / "other-env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next((venv / "lib").glob("python3*/site-packages"))
    make_fake_torch(site, "2.5.1", "12.4")
    make_dist(site, "ray", "2.40.0")
    ctx = ProbeContext(python=str(venv / "bin" / "python"), env={"PATH": "/usr/bin:/bin"})
    facts = interpreter_facts(ctx)
    python = probe_python(facts).data
    assert python.env_kind == "venv" and python.env_name == "other-env"
    assert python.prefix == str(venv)
    packages = probe_packages(facts).data
    assert packages.version("ray") == "2.40.0"
    assert packages.version("torch") == "2.5.1"
    assert packages.get("packaging") is None  # this process's packages are not the other env's


def test_other_interpreter_that_fails(tmp_path):
    bad = tmp_path / "python"
    bad.write_text("#!/bin/sh\necho 'not python' >&2\nexit 3\n")
    bad.chmod(0o755)
    facts = interpreter_facts(ProbeContext(python=str(bad)))
    assert isinstance(facts, str) and "exited with 3: not python" in facts
    assert probe_python(facts).status is Status.ERROR
    assert probe_packages(facts).status is Status.ERROR


def test_conda_env_detection(tmp_path):
    prefix = tmp_path / "envs" / "zero"
    (prefix / "conda-meta").mkdir(parents=True)
    facts = {
        "version": "3.9.19",
        "prefix": str(prefix),
        "base_prefix": str(prefix),
        "conda_env": "zero",
        "conda_prefix": str(prefix),
        "markers": {},
        "sys_path": [],
    }
    info = probe_python(facts).data
    assert (info.env_kind, info.env_name) == ("conda", "zero")


def _by_importlib(search_path: list[str]) -> list[str]:
    from importlib import metadata

    return [str(d._path) for d in metadata.distributions(path=search_path)]  # type: ignore[attr-defined]


def test_distributions_are_found_as_importlib_metadata_finds_them(tmp_path, monkeypatch):
    """The directory scan lists the same metadata directories in the same order as
    importlib.metadata, on the real installed layout of this interpreter (venv, editable
    installs, the user site) and on staged odd layouts: names that normalise alike (grouped
    at the first one's place), upper-case suffixes, an egg-info file, an egg directory on the
    path, a missing entry and the current directory ("")."""
    real = [p for p in sys.path if os.path.isdir(p)]
    found = find_distributions(real)
    assert found is not None and len(found) > 5
    assert [str(p) for p in found] == _by_importlib(real)

    site = tmp_path / "site"
    make_dist(site, "Foo.Bar", "1.0")
    make_dist(site, "zeta", "1.0")
    make_dist(site, "foo_bar", "2.0")
    make_egg_info(site, "legacy_pkg", "0.3", requires=("six>=1.0",))
    (site / "Shout-1.0.DIST-INFO").mkdir()
    (site / "single_file-0.1.egg-info").write_text("Metadata-Version: 1.0\nName: single-file\n")
    (site / "not_metadata").mkdir()
    egg = tmp_path / "Old_Pkg-1.0-py3.egg"
    (egg / "EGG-INFO").mkdir(parents=True)
    (egg / "EGG-INFO" / "PKG-INFO").write_text(
        "Metadata-Version: 1.1\nName: Old-Pkg\nVersion: 1.0\n"
    )
    monkeypatch.chdir(site)
    paths = [str(site), str(egg), str(tmp_path / "missing"), ""]
    found = find_distributions(paths)
    assert found is not None
    assert [str(p) for p in found] == _by_importlib(paths)
    names = [p.name for p in found if p.parent == site]
    foo = [i for i, n in enumerate(names) if n.lower().startswith("foo")]
    assert len(foo) == 2 and foo[1] == foo[0] + 1  # grouped, whatever the listing order
    packages = probe_packages({"sys_path": paths}).data
    assert packages.get("old-pkg").version == "1.0"
    assert packages.get("legacy-pkg").requires == ("six>=1.0",)


def test_a_zip_on_the_path_is_read_by_importlib_metadata(tmp_path):
    import zipfile

    archive = tmp_path / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr(
            "zipped-1.2.dist-info/METADATA", "Metadata-Version: 2.1\nName: zipped\nVersion: 1.2\n"
        )
    assert find_distributions([str(archive)]) is None
    packages = probe_packages({"sys_path": [str(archive)]}).data
    assert packages.get("zipped").version == "1.2"
