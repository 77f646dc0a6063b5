"""The graphics probe on a staged root: ICD and EGL vendor manifests, libEGL_nvidia, and the
/dev/dri render nodes this user cannot open (EGL renders through them)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from envcheck.probes.graphics import probe_graphics


def test_manifests_libraries_and_render_nodes(stage) -> None:
    stage.write("/usr/share/vulkan/icd.d/nvidia_icd.json", "{}")
    stage.write("/usr/share/glvnd/egl_vendor.d/10_nvidia.json", "{}")
    stage.write("/usr/lib/x86_64-linux-gnu/libEGL_nvidia.so.0", "")
    stage.write("/dev/dri/renderD128", "")
    stage.write("/dev/dri/card0", "")
    info = probe_graphics(stage.ctx(env={"NVIDIA_DRIVER_CAPABILITIES": "all"})).data
    assert info is not None
    assert info.vulkan_icds == ("/usr/share/vulkan/icd.d/nvidia_icd.json",)
    assert info.nvidia_vulkan and info.nvidia_egl
    assert info.render_nodes == ("/dev/dri/renderD128",)
    assert info.render_nodes_denied == ()
    assert info.driver_capabilities == "all"


@pytest.mark.skipif(os.geteuid() == 0, reason="root opens any file")
def test_a_render_node_this_user_cannot_open_is_listed(stage) -> None:
    node = stage.write("/dev/dri/renderD129", "")
    node.chmod(0o600)
    stage.write("/dev/dri/renderD128", "").chmod(0o000)
    info = probe_graphics(stage.ctx()).data
    assert info is not None
    assert info.render_nodes == ("/dev/dri/renderD128", "/dev/dri/renderD129")
    assert info.render_nodes_denied == ("/dev/dri/renderD128",)


def test_no_dri_directory_means_no_render_nodes(stage) -> None:
    info = probe_graphics(stage.ctx()).data
    assert info is not None
    assert (info.render_nodes, info.render_nodes_denied, info.vulkan_icds) == ((), (), ())


def test_directories_are_listed_as_pathlib_globs_them(tmp_path: Path) -> None:
    from envcheck.probes.graphics import _matching

    for name in (
        "a.json",
        "b.json.bak",
        ".hidden.json",
        "libEGL_nvidia.so.0",
        "libEGL.so",
        "libEGL_nvidia.so",
        "renderD128",
        "card0",
        "x[1].json",
    ):
        (tmp_path / name).write_text("")
    (tmp_path / "dir.json").mkdir()
    for pattern in ("*.json", "libEGL_nvidia.so*", "renderD*", "x[1].json", "*"):
        assert sorted(_matching(tmp_path, pattern)) == sorted(
            p.name for p in tmp_path.glob(pattern)
        ), pattern
