from __future__ import annotations

import os
from pathlib import Path

import pytest

from envcheck.model.report import UNLIMITED
from envcheck.probes.system import (
    detect_container,
    parse_limits,
    parse_meminfo,
    parse_os_release,
    probe_system,
)


def test_os_release_real_files():
    from tests.conftest import FIXTURES

    ubuntu = parse_os_release((FIXTURES / "system" / "ubuntu2204-os-release").read_text())
    assert (ubuntu["ID"], ubuntu["VERSION_ID"], ubuntu["PRETTY_NAME"]) == (
        "ubuntu",
        "22.04",
        "Ubuntu 22.04.4 LTS",
    )
    debian = parse_os_release((FIXTURES / "system" / "debian12-os-release").read_text())
    assert debian["ID"] == "debian" and debian["VERSION_ID"] == "12"


def test_meminfo_in_bytes():
    values = parse_meminfo(
        "MemTotal:       24684092 kB\nMemAvailable:   24382820 kB\nHugePages_Total:       0\n"
    )
    assert values == {
        "MemTotal": 24684092 * 1024,
        "MemAvailable": 24382820 * 1024,
        "HugePages_Total": 0,
    }


def test_limits_real_format():
    from tests.conftest import FIXTURES

    limits = parse_limits((FIXTURES / "system" / "limits").read_text())
    assert set(limits) == {"nofile", "memlock", "stack", "as"}
    assert limits["as"].soft == UNLIMITED
    text = (
        "Limit                     Soft Limit           Hard Limit           Units     \n"
        "Max stack size            8388608              unlimited            bytes     \n"
        "Max open files            1024                 1048576              files     \n"
        "Max locked memory         unlimited            unlimited            bytes     \n"
        "Max address space         17179869184          unlimited            bytes     \n"
    )
    limits = parse_limits(text)
    assert (limits["as"].soft, limits["as"].hard) == (17179869184, UNLIMITED)
    assert limits["stack"].soft == 8388608 and limits["stack"].hard == UNLIMITED
    assert (limits["nofile"].soft, limits["nofile"].hard) == (1024, 1048576)
    assert limits["memlock"].soft == UNLIMITED


def _stage_common(stage):
    stage.copy_fixture("ubuntu2204-os-release", "/etc/os-release")
    stage.copy_fixture("meminfo", "/proc/meminfo")
    stage.copy_fixture("limits", "/proc/self/limits")
    stage.write("/proc/sys/kernel/osrelease", "5.15.0-105-generic\n")


def test_cgroup_v2_limits(stage):
    _stage_common(stage)
    stage.write("/proc/self/cgroup", "0::/\n")
    stage.write("/sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n")
    stage.write("/sys/fs/cgroup/memory.max", "68719476736\n")
    stage.write("/sys/fs/cgroup/cpu.max", "800000 100000\n")
    info = probe_system(stage.ctx()).data
    assert info.os_id == "ubuntu" and info.os_version == "22.04"
    assert info.kernel == "5.15.0-105-generic"
    assert info.cgroup.version == 2
    assert info.cgroup.memory_limit_bytes == 64 * 1024**3
    assert info.cgroup.cpu_limit == 8.0
    assert info.memory_total_bytes == 24684092 * 1024


def test_cgroup_v2_unlimited(stage):
    _stage_common(stage)
    stage.write("/proc/self/cgroup", "0::/user.slice/user-1000.slice/session-3.scope\n")
    stage.write("/sys/fs/cgroup/cgroup.controllers", "memory\n")
    stage.write("/sys/fs/cgroup/user.slice/user-1000.slice/session-3.scope/memory.max", "max\n")
    stage.write("/sys/fs/cgroup/user.slice/user-1000.slice/session-3.scope/cpu.max", "max 100000\n")
    cgroup = probe_system(stage.ctx()).data.cgroup
    assert (cgroup.version, cgroup.memory_limit_bytes, cgroup.cpu_limit) == (2, None, None)


def test_cgroup_v1_own_path(stage):
    _stage_common(stage)
    stage.copy_fixture("cgroup-v1-hybrid", "/proc/self/cgroup")
    own = stage.root / "proc/self/cgroup"
    mem_path = next(
        line.split(":", 2)[2] for line in own.read_text().splitlines() if ":memory:" in line
    )
    stage.write(f"/sys/fs/cgroup/memory{mem_path}/memory.limit_in_bytes", "17179869184\n")
    stage.write("/sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n")
    stage.write("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n")
    stage.write("/sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n")
    cgroup = probe_system(stage.ctx()).data.cgroup
    assert cgroup.version == 1
    assert cgroup.memory_limit_bytes == 16 * 1024**3
    assert cgroup.cpu_limit is None


def test_cgroup_v1_no_limit_is_none(stage):
    _stage_common(stage)
    stage.write("/proc/self/cgroup", "4:memory:/\n1:cpu,cpuacct:/\n")
    stage.write("/sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n")
    stage.write("/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "400000\n")
    cgroup = probe_system(stage.ctx()).data.cgroup
    assert cgroup.memory_limit_bytes is None


@pytest.mark.parametrize(
    ("files", "env", "kind"),
    [
        ({"/.dockerenv": ""}, {}, "docker"),
        ({"/run/.containerenv": ""}, {}, "podman"),
        ({}, {"KUBERNETES_SERVICE_HOST": "10.96.0.1"}, "kubernetes"),
        ({"/proc/1/cgroup": "0::/kubepods/burstable/pod1234/abcd\n"}, {}, "kubernetes"),
        ({"/proc/1/cgroup": "12:memory:/docker/3f2a\n"}, {}, "docker"),
        ({"/proc/1/cgroup": "0::/init.scope\n"}, {}, "none"),
    ],
)
def test_container_detection(stage, files, env, kind):
    for path, text in files.items():
        stage.write(path, text)
    assert detect_container(stage.ctx(env=env))[0] == kind


def test_nvcc_reported_as_toolkit(stage, tmp_path):
    _stage_common(stage)
    stage.executable(
        "nvcc",
        "#!/bin/sh\ncat <<'EOF'\nnvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2023 NVIDIA Corporation\n"
        "Built on Tue_Feb__7_19:32:13_PST_2023\nCuda compilation tools, release 12.1, V12.1.66\n"
        "Build cuda_12.1.r12.1/compiler.32415258_0\nEOF\n",
    )
    nvcc = probe_system(stage.ctx()).data.nvcc
    assert nvcc.version == "12.1"
    assert nvcc.nvcc_path == str(stage.bin / "nvcc")


def test_no_nvcc(stage):
    _stage_common(stage)
    info = probe_system(stage.ctx(env={"PATH": str(stage.bin)})).data
    assert info.nvcc is None


def test_missing_proc_files_are_unknown_not_errors(stage):
    info = probe_system(stage.ctx()).data
    assert info.os_id is None and info.memory_total_bytes is None and info.kernel is None
    assert info.cgroup is None and info.ulimits == {}


def test_which_finds_what_shutil_finds(tmp_path: Path) -> None:
    import shutil

    from envcheck.probes.run import _which

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "tool").write_text("")  # not executable
    (tmp_path / "b" / "tool").write_text("#!/bin/sh\n")
    (tmp_path / "b" / "tool").chmod(0o755)
    (tmp_path / "b" / "folder").mkdir()
    path = os.pathsep.join([str(tmp_path / "a"), str(tmp_path / "b"), str(tmp_path / "a")])
    for command in ("tool", "folder", "missing", str(tmp_path / "b" / "tool"), "b/tool"):
        assert _which(command, path) == shutil.which(command, path=path), command
