"""A libstdc++ the process has already loaded (a conda environment's, mapped by an earlier
import) is the one every later extension gets, whatever its search path finds: read from
/proc/self/maps (staged, in the kernel's format) when envcheck inspects its own interpreter.
gcc-built stand-ins for libstdc++ with GLIBCXX version definitions."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from envcheck.binaries.scan import ALREADY_LOADED, scan
from tests.binaries.elfbuild import build_so, record

EXT = "_C.cpython-311-x86_64-linux-gnu.so"
GLIBCXX = [f"GLIBCXX_3.4.{n}" for n in range(20, 33)]


def _libstdcxx(path: Path, newest: int) -> Path:
    """A libstdc++.so.6 defining GLIBCXX_3.4.20 .. GLIBCXX_3.4.<newest>."""
    names = [v for v in GLIBCXX if int(v.rsplit(".", 1)[1]) <= newest]
    script = " ".join(f"{v} {{ }};" for v in names[:-1])
    script += f" {names[-1]} {{ global: cxx; local: *; }};"
    return build_so(
        path, "int cxx(void){return 6;}", soname="libstdc++.so.6", version_script=script
    )


def _maps(conda_lib: str) -> str:
    """/proc/self/maps of a Python that has mapped conda's libstdc++ (and libc, itself)."""
    return (
        "55d0c5a00000-55d0c5a2c000 r--p 00000000 08:01 1311 /opt/conda/bin/python3.11\n"
        f"7f3a1c000000-7f3a1c09a000 r--p 00000000 08:01 4242 {conda_lib}\n"
        f"7f3a1c09a000-7f3a1c1ab000 r-xp 0009a000 08:01 4242 {conda_lib}\n"
        "7f3a1d000000-7f3a1d028000 r--p 00000000 08:01 99 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
        "7f3a1e000000-7f3a1e021000 rw-p 00000000 00:00 0 [heap]\n"
        "7ffd2a000000-7ffd2a021000 rw-p 00000000 00:00 0 [stack]\n"
        "7f3a1f000000-7f3a1f001000 r--p 00000000 08:01 7 /tmp/gone.so (deleted)\n"
    )


def _node(stage, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    # the system's libstdc++ is new enough; conda's (already mapped) is not
    system = stage.mkdir("/usr/lib/x86_64-linux-gnu")
    _libstdcxx(system / "libstdc++.so.6", 32)
    conda = stage.mkdir("/opt/conda/lib")
    _libstdcxx(conda / "libstdc++.so.6.0.29", 29)
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    built = _libstdcxx(tmp_path / "build" / "libstdc++.so.6", 30)  # what the wheel was built on
    ext = build_so(
        site / "cxxops" / EXT, "extern int cxx(void); int run(void){return cxx();}", libs=(built,)
    )
    record(site, "cxxops", "1.0", [ext], requires=("torch>=2.4",))
    return site


def test_an_already_loaded_libstdcxx_is_the_one_checked(stage, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    site = _node(stage, tmp_path)
    stage.write("/proc/self/maps", _maps("/opt/conda/lib/libstdc++.so.6.0.29"))
    info = scan(stage.ctx(), [str(site)], "x86_64")
    ext = next(f for f in info.files if f.path.endswith(EXT))
    need = next(n for n in ext.needs if n.name == "libstdc++.so.6")
    assert need.path == "/opt/conda/lib/libstdc++.so.6.0.29" and need.via == ALREADY_LOADED
    assert need.lacking == ("GLIBCXX_3.4.30",) and need.has_max == "GLIBCXX_3.4.29"


def test_without_the_mapping_the_system_copy_loads_and_satisfies(stage, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    site = _node(stage, tmp_path)
    stage.write("/proc/self/maps", _maps("/opt/conda/lib/libother.so.1"))
    info = scan(stage.ctx(), [str(site)], "x86_64")
    assert not any(f.path.endswith(EXT) for f in info.files)  # no problem: nothing reported


def test_another_interpreters_files_are_not_judged_by_this_process(stage, tmp_path) -> None:  # type: ignore[no-untyped-def]
    site = _node(stage, tmp_path)
    stage.write("/proc/self/maps", _maps("/opt/conda/lib/libstdc++.so.6.0.29"))
    ctx = replace(stage.ctx(), python="/other/env/bin/python")
    info = scan(ctx, [str(site)], "x86_64")
    assert not any(f.path.endswith(EXT) for f in info.files)


def test_the_rule_names_the_loaded_copy(stage, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from envcheck.facts.node import Facts
    from envcheck.matrix.load import load
    from envcheck.model.report import NodeReport
    from envcheck.model.section import Section
    from envcheck.rules.node.binaries_load import version_missing

    site = _node(stage, tmp_path)
    stage.write("/proc/self/maps", _maps("/opt/conda/lib/libstdc++.so.6.0.29"))
    info = scan(stage.ctx(), [str(site)], "x86_64")
    report = NodeReport(
        node="n", envcheck_version="0", created_at="", binaries=Section.ok(info, source="elf")
    )
    hits = list(version_missing(Facts(report, load())))
    assert len(hits) == 1
    assert "already loaded by the process" in hits[0].message
    assert "GLIBCXX_3.4.30" in hits[0].message and "/opt/conda/lib" in hits[0].message
