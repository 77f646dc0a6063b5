"""Loading checks on real shared objects built with gcc: DT_NEEDED resolved as ld.so does
(RUNPATH with $ORIGIN, LD_LIBRARY_PATH, RPATH), missing and shadowed libraries, symbol version
needs against the copy that loads, torch symbols checked against what torch's libraries
define; results cached per file."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from envcheck.binaries.elf import read_elf
from envcheck.binaries.ldcache import parse_ld_cache
from envcheck.binaries.scan import scan
from envcheck.probes.context import ProbeContext
from tests.binaries.elfbuild import build_so, record

EXT = "_C.cpython-311-x86_64-linux-gnu.so"


def _node(tmp_path: Path, site: Path | None = None) -> tuple[Path, Path]:
    """A site-packages with a torch-like lib, a CUDA-like wheel library, and an extension
    that needs them; returns (site, the system directory on LD_LIBRARY_PATH)."""
    site = site or tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    # torch's libc10.so defines SetDevice(signed char) (torch 2.5's signature), not (int)
    c10 = build_so(
        site / "torch" / "lib" / "libc10.so",
        "void _ZN3c104cuda9SetDeviceEa(signed char d) { (void)d; }\n"
        "int _ZN3c1010TensorImpl4sizeEv(void) { return 0; }",
        soname="libc10.so",
    )
    record(site, "torch", "2.5.1", [c10])
    # the wheel's library, and a system copy of the same soname that LD_LIBRARY_PATH names
    blas = build_so(
        site / "nvidia" / "cublas" / "lib" / "libfakeblas.so.12",
        "int gemm(void){return 1;}",
        soname="libfakeblas.so.12",
    )
    record(site, "nvidia_fakeblas_cu12", "12.4.5.8", [blas])
    system = tmp_path / "usr-local-cuda" / "lib64"
    build_so(system / "libfakeblas.so.12", "int gemm(void){return 2;}", soname="libfakeblas.so.12")
    # a helper library built with version DEP_2.0, replaced at run time by one defining DEP_1.0
    build_dir = tmp_path / "build"
    dep_new = build_so(
        build_dir / "libdep.so.1",
        "int dep(void){return 1;}",
        soname="libdep.so.1",
        version_script="DEP_1.0 { }; DEP_2.0 { global: dep; local: *; };",
    )
    missing = build_so(
        build_dir / "libgone.so.3", "int gone(void){return 3;}", soname="libgone.so.3"
    )
    ext = build_so(
        site / "myext" / EXT,
        "extern void _ZN3c104cuda9SetDeviceEi(int);\n"
        "extern int _ZN3c1010TensorImpl4sizeEv(void);\n"
        "extern int gemm(void); extern int dep(void); extern int gone(void);\n"
        "int run(void) { _ZN3c104cuda9SetDeviceEi(0); return gemm() + dep() + gone()"
        " + _ZN3c1010TensorImpl4sizeEv(); }",
        libs=(c10, blas, dep_new, missing),
        runpath="$ORIGIN/../nvidia/cublas/lib:$ORIGIN/../myext_libs",
    )
    build_so(
        site / "myext_libs" / "libdep.so.1",
        "int dep(void){return 1;}",
        soname="libdep.so.1",
        version_script="DEP_1.0 { global: dep; local: *; };",
    )
    record(site, "myext", "1.0", [ext], requires=("torch>=2.4",))
    return site, system


def _ctx(tmp_path: Path, **env: str) -> ProbeContext:
    return ProbeContext(env={"HOME": str(tmp_path / "home"), **env})


def test_read_elf_gives_needs_runpath_and_versions(tmp_path: Path) -> None:
    site, _ = _node(tmp_path)
    facts = read_elf(
        site / "myext" / EXT, lambda needed: True, lambda name: name.startswith("_ZN3c10")
    )
    assert {"libc10.so", "libfakeblas.so.12", "libdep.so.1", "libgone.so.3"} <= set(facts.needed)
    assert facts.runpath == ("$ORIGIN/../nvidia/cublas/lib", "$ORIGIN/../myext_libs")
    assert facts.rpath == ()
    assert facts.version_needs["libdep.so.1"] == ("DEP_2.0",)
    assert set(facts.undefined) == {"_ZN3c104cuda9SetDeviceEi", "_ZN3c1010TensorImpl4sizeEv"}


def test_scan_finds_missing_shadowed_version_and_torch_symbol(tmp_path: Path) -> None:
    site, system = _node(tmp_path)
    info = scan(_ctx(tmp_path, LD_LIBRARY_PATH=str(system)), [str(site)], "x86_64")
    ext = next(f for f in info.files if f.path.endswith(EXT))
    assert ext.distribution == "myext" and ext.extension
    needs = {n.name: n for n in ext.needs}
    # not found anywhere the loader looks
    assert needs["libgone.so.3"].path is None
    # RUNPATH lets LD_LIBRARY_PATH win: the system copy shadows the wheel's
    blas = needs["libfakeblas.so.12"]
    assert blas.path == str(system / "libfakeblas.so.12") and blas.via == "LD_LIBRARY_PATH"
    assert blas.meant == str(site / "nvidia" / "cublas" / "lib" / "libfakeblas.so.12")
    # found through RUNPATH $ORIGIN, but that copy lacks the version the extension needs
    dep = needs["libdep.so.1"]
    assert dep.via == "RUNPATH" and dep.lacking == ("DEP_2.0",) and dep.has_max == "DEP_1.0"
    # torch's lib defines TensorImpl::size but SetDevice only for signed char
    assert ext.torch_missing == ("_ZN3c104cuda9SetDeviceEi",)
    assert ext.torch_checked == 2
    # libc10.so is loaded by `import torch` first: found, no problem reported for it
    assert "libc10.so" not in needs


def test_without_ld_library_path_the_wheel_copy_loads(tmp_path: Path) -> None:
    site, _ = _node(tmp_path)
    info = scan(_ctx(tmp_path), [str(site)], "x86_64")
    ext = next(f for f in info.files if f.path.endswith(EXT))
    assert "libfakeblas.so.12" not in {n.name for n in ext.needs}


def test_rpath_wins_over_ld_library_path(tmp_path: Path) -> None:
    site, system = _node(tmp_path)
    blas = site / "nvidia" / "cublas" / "lib" / "libfakeblas.so.12"
    other = build_so(
        site / "other" / "_o.abi3.so",
        "extern int gemm(void); int o(void){return gemm();}",
        libs=(blas,),
        rpath="$ORIGIN/../nvidia/cublas/lib",
    )
    record(site, "other", "1.0", [other])
    info = scan(_ctx(tmp_path, LD_LIBRARY_PATH=str(system)), [str(site)], "x86_64")
    assert not any(f.path.endswith("_o.abi3.so") for f in info.files)


def test_results_are_cached_per_file_as_json(tmp_path: Path) -> None:
    site, system = _node(tmp_path)
    ctx = _ctx(tmp_path, LD_LIBRARY_PATH=str(system))
    first = scan(ctx, [str(site)], "x86_64")
    assert first.from_cache == 0
    second = scan(ctx, [str(site)], "x86_64")
    assert second.from_cache == second.scanned and second.files == first.files
    cache = tmp_path / "home" / ".cache" / "envcheck" / "binaries-v3.json"
    assert cache.read_bytes().startswith(b"{")  # data only: JSON
    ext = site / "myext" / EXT
    os.utime(ext, ns=(ext.stat().st_atime_ns, ext.stat().st_mtime_ns + 10**9))
    third = scan(ctx, [str(site)], "x86_64")
    assert third.from_cache == third.scanned - 1


def test_a_damaged_cache_reads_as_empty(tmp_path: Path) -> None:
    site, _ = _node(tmp_path)
    cache_dir = tmp_path / "home" / ".cache" / "envcheck"
    cache_dir.mkdir(parents=True, mode=0o700)
    (cache_dir / "binaries-v3.json").write_text('{"format": 1, "files": {"x": [1, 2')
    info = scan(_ctx(tmp_path), [str(site)], "x86_64")
    assert info.from_cache == 0 and info.scanned == 3  # torch, the wheel, the extension


def test_a_truncated_elf_is_an_error_entry_not_a_crash(tmp_path: Path) -> None:
    site, _ = _node(tmp_path)
    broken = site / "myext" / "_broken.abi3.so"
    broken.write_bytes(b"\x7fELF\x02\x01\x01" + b"\0" * 9)
    record(site, "broken", "1.0", [broken])
    info = scan(_ctx(tmp_path), [str(site)], "x86_64")
    entry = next(f for f in info.files if f.path == str(broken))
    assert entry.error


def test_ld_so_cache_matches_ldconfig() -> None:
    cache = Path("/etc/ld.so.cache")
    ldconfig = shutil.which("ldconfig") or "/sbin/ldconfig"
    if not cache.is_file() or not Path(ldconfig).exists():
        pytest.skip("no ld.so.cache / ldconfig here")
    table = parse_ld_cache(cache.read_bytes())
    out = subprocess.run(
        [ldconfig, "-p"], check=True, capture_output=True, text=True, timeout=30
    ).stdout
    listed = {}
    for line in out.splitlines():
        if "=>" in line:
            name = line.strip().split(" ", 1)[0]
            listed.setdefault(name, []).append(line.rsplit("=> ", 1)[1].strip())
    assert table and {k: sorted(v) for k, v in table.items()} == {
        k: sorted(v) for k, v in listed.items()
    }


def test_a_fifo_named_in_a_record_is_not_opened(tmp_path: Path) -> None:
    site, _ = _node(tmp_path)
    fifo = site / "myext" / "_pipe.abi3.so"
    os.mkfifo(fifo)
    record(site, "piped", "1.0", [site / "myext" / EXT])
    rows = (site / "piped-1.0.dist-info" / "RECORD").read_text()
    (site / "piped-1.0.dist-info" / "RECORD").write_text(rows + "myext/_pipe.abi3.so,,\n")
    info = scan(_ctx(tmp_path), [str(site)], "x86_64")  # returns: the FIFO is never opened
    assert not any(f.path == str(fifo) for f in info.files)


def test_outside_the_gpu_stack_only_files_with_gpu_code_are_read(tmp_path: Path) -> None:
    from tests.binaries.elfbuild import add_fatbin, cubin, fatbin

    site, _ = _node(tmp_path)
    # a kernel package that states no dependency (sgl-kernel's wheels require nothing)
    kernels = build_so(site / "kern" / "common_ops.abi3.so", "int op(void) { return 1; }")
    add_fatbin(kernels, fatbin(cubin(90), cubin(100)))
    record(site, "kern", "0.3.0", [kernels])
    plain = build_so(site / "plainpkg" / "_speedups.abi3.so", "int f(void) { return 0; }")
    record(site, "plainpkg", "1.0", [plain])
    dists = [
        ("torch", ()),
        ("nvidia_fakeblas_cu12", ()),
        ("myext", ("torch>=2.4",)),
        ("kern", ()),
        ("plainpkg", ()),
    ]
    info = scan(_ctx(tmp_path), [str(site)], "x86_64", dists)
    kern = next(f for f in info.files if f.path == str(kernels))
    assert kern.distribution == "kern" and kern.kernels is not None
    assert kern.kernels.sass == (90, 100)
    assert info.scanned == 4  # torch, the wheel, the extension, kern: not plainpkg
    again = scan(_ctx(tmp_path), [str(site)], "x86_64", dists)
    assert again.files == info.files and again.from_cache == again.scanned


def _reference_on_disk(root: Path, directory: str, name: str) -> str | None:
    """The loader's file test as it was written before the per-run listings: a stat each."""
    candidate = Path(directory) / name
    staged = (
        candidate
        if root == Path("/") or not candidate.is_absolute()
        else root / str(candidate).lstrip("/")
    )
    return str(candidate) if staged.is_file() else None


def test_listed_lookups_answer_as_a_stat_each(tmp_path: Path) -> None:
    """Misses are answered from one listing per directory and answers are kept for the run:
    the same result as stat'ing each candidate, for files, links to files, dangling links,
    directories named like a library, missing directories, a staged root and odd spellings."""
    from envcheck.binaries.ldcache import Loader

    root = tmp_path / "root"
    lib = root / "opt" / "lib"
    lib.mkdir(parents=True)
    (lib / "libreal.so.1").write_bytes(b"x")
    (lib / "liblink.so.1").symlink_to(lib / "libreal.so.1")
    (lib / "libdangling.so.1").symlink_to(lib / "libnothere.so.1")
    (lib / "libdir.so.1").mkdir()
    (root / "usr" / "lib").mkdir(parents=True)
    (root / "usr" / "lib" / "libsys.so.2").write_bytes(b"x")
    names = ["libreal.so.1", "liblink.so.1", "libdangling.so.1", "libdir.so.1", "libsys.so.2"]
    dirs = ["/opt/lib", "/opt/lib/", "//opt//lib", "/opt/./lib", "/opt/x/../lib", "/usr/lib"]
    dirs += ["/missing", "/opt/lib/libreal.so.1", ""]
    loader = Loader(root=root)
    for _ in range(2):  # the second round is answered from the run's memory
        for directory in dirs:
            for name in [*names, "sub/libreal.so.1", ".", "libreal.so.1/", "opt/lib/libreal.so.1"]:
                expected = _reference_on_disk(root, directory, name)
                assert loader._on_disk(directory, name) == expected, (directory, name)
    # a library installed after a run is found by the next one (a new Loader, new listings)
    (lib / "libnew.so.3").write_bytes(b"x")
    assert loader._on_disk("/opt/lib", "libnew.so.3") is None  # this run listed /opt/lib
    assert Loader(root=root)._on_disk("/opt/lib", "libnew.so.3") == "/opt/lib/libnew.so.3"


def test_a_replaced_library_is_read_again(tmp_path: Path) -> None:
    """The per-file facts are keyed by size, mtime and inode: a library rebuilt in place (a
    new version script) is read again, and the version it lacks now is reported."""
    site, _ = _node(tmp_path)
    ctx = _ctx(tmp_path)
    scan(ctx, [str(site)], "x86_64")
    build_so(
        site / "myext_libs" / "libdep.so.1",
        "int dep(void){return 1;}",
        soname="libdep.so.1",
        version_script="DEP_1.0 { }; DEP_2.0 { global: dep; local: *; };",
    )
    again = scan(ctx, [str(site)], "x86_64")
    ext = next(f for f in again.files if f.path.endswith(EXT))
    assert "libdep.so.1" not in {n.name for n in ext.needs}  # it defines DEP_2.0 now
