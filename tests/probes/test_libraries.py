from __future__ import annotations

import os

from envcheck.probes.libraries import library_version, probe_libraries


def _lib(directory, real, *links):
    directory.mkdir(parents=True, exist_ok=True)
    (directory / real).write_bytes(b"\x7fELF")
    for link in links:
        os.symlink(real, directory / link)


def test_cuda_libraries_on_ld_library_path(stage, tmp_path):
    cuda = tmp_path / "usr/local/cuda-12.1/lib64"
    _lib(cuda, "libcublas.so.12.1.3.1", "libcublas.so.12", "libcublas.so")
    _lib(cuda, "libcublasLt.so.12.1.3.1", "libcublasLt.so.12")
    _lib(cuda, "libnvJitLink.so.12.1.105", "libnvJitLink.so.12")
    _lib(cuda, "libcudart.so.12.1.105", "libcudart.so.12")
    _lib(cuda, "libcufft.so.11.0.2.54", "libcufft.so.11")  # not one that shadows torch's loaders
    env = {"LD_LIBRARY_PATH": f"{cuda}::/does/not/exist", "LD_PRELOAD": ""}
    info = probe_libraries(stage.ctx(env=env)).data
    found = {lib.name: lib.version for lib in info.cuda_libraries}
    assert found == {
        "libcublas": "12.1.3.1",
        "libcublasLt": "12.1.3.1",
        "libnvJitLink": "12.1.105",
        "libcudart": "12.1.105",
    }
    assert info.ld_library_path == (str(cuda), "/does/not/exist")
    assert all(lib.via == "LD_LIBRARY_PATH" for lib in info.cuda_libraries)


def test_ld_preload(stage, tmp_path):
    _lib(tmp_path / "nccl", "libnccl.so.2.18.3", "libnccl.so.2")
    env = {"LD_PRELOAD": f"{tmp_path}/nccl/libnccl.so.2 /usr/lib/libjemalloc.so.2"}
    libs = probe_libraries(stage.ctx(env=env)).data.cuda_libraries
    assert [(lib.name, lib.version, lib.via) for lib in libs] == [
        ("libnccl", "2.18.3", "LD_PRELOAD")
    ]


def test_library_version_from_name_only():
    assert library_version("/nowhere/libcudnn.so.8.9.2") == ("libcudnn", "8.9.2")
    assert library_version("/nowhere/libcudnn_ops_infer.so.8") is None
    assert library_version("/nowhere/libfoo.so.1") is None
