from __future__ import annotations

import os
import subprocess
import sys

from envcheck.model.section import Status
from envcheck.probes.context import ProbeContext
from envcheck.probes.python_env import interpreter_facts, probe_packages, probe_python
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
