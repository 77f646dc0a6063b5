"""Dumps of the host's container engine and bare shell values, read for their facts instead of
refused (exit 2): ``docker info``, ``/etc/docker/daemon.json``, the NVIDIA Container Toolkit's
version and config.toml, ``echo $LD_LIBRARY_PATH``, ``uname -r``, ``ulimit -a``, ``df -h
/dev/shm``, ``free -h``; and the DRV103 / DRV151 causes they decide. Formats as pasted in the
public threads named at each (or the tool's own output)."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

import pytest

from envcheck.ingest.common import Source
from envcheck.ingest.detect import parse
from envcheck.model.report import UNLIMITED, NodeReport
from tests.conftest import run_cli

# NVIDIA/nvidia-container-toolkit#115 (docker info as pasted, trimmed)
DOCKER_INFO = """\
docker info:
Client:
 Context:    default
 Debug Mode: false

Server:
 Containers: 2
  Running: 0
 Server Version: 20.10.21
 Storage Driver: overlay2
  Backing Filesystem: extfs
 Logging Driver: json-file
 Cgroup Driver: cgroupfs
 Cgroup Version: 2
 Plugins:
  Volume: local
 Swarm: inactive
 Runtimes: io.containerd.runc.v2 io.containerd.runtime.v1.linux nvidia runc
 Default Runtime: runc
 Init Binary: docker-init
 Kernel Version: 5.15.0-83-generic
 Operating System: Ubuntu 22.04.3 LTS
 OSType: linux
 Architecture: x86_64
 CPUs: 64
 Total Memory: 376.5GiB
 Name: inspur-gpu-01
"""

# Leon-Sander/Local-Multimodal-AI-Chat#31
DAEMON_AND_INFO = """\
here is my daemon file snippet :
 {
  "runtimes": {
    "nvidia": {
      "path": "nvidia-container-runtime",
      "runtimeArgs": []
    }
  },
  "default-runtime": "nvidia"
}

paramubuntu@LAPTOP-AF3LO3NQ:~$ docker info | grep -i runtime
WARNING: No blkio throttle.read_bps_device support
WARNING: daemon is not using the default seccomp profile
 Runtimes: io.containerd.runc.v2 runc
 Default Runtime: runc
"""

# NVIDIA/nvidia-docker#542: daemon.json as pasted, with a brace too many (not JSON)
DAEMON_BROKEN = """\
{
    "registry-mirrors": ["https://mirror.example"],
    "insecure-registries" : [ "10.142.55.199:5006"] },
    "graph": "/data/dockerdata",
    "runtimes": {
        "nvidia": {
            "path": "/usr/bin/nvidia-container-runtime",
            "runtimeArgs": []
        }
    }
}
"""

CTK = "NVIDIA Container Toolkit CLI version 1.17.3\ncommit: 53b24618a542025b108239fe602e66e912b7d6e2\n"
# NVIDIA/nvidia-docker#1088
CLI_V = """\
version: 1.0.6
build date: 2019-09-25T12:30+00:00
build revision: 8510a4b460fc9d4cb9ab759c0f9afcfe1979a2fb
build compiler: x86_64-pc-linux-gnu-gcc 8.3.0
build platform: x86_64
"""

# NVIDIA/deepops#824 (the toolkit's config.toml on Ubuntu)
# NVIDIA/nvidia-container-toolkit#106
CLI_V_NEW = """\
nvidia-container-cli -V
cli-version: 1.14.0
lib-version: 1.14.0
build date: 2023-08-29T15:25+00:00
build revision: 6a24508dff6cb36841114ff4c1287cd29ded72af
"""

CONFIG = """\
disable-require = false
#swarm-resource = "DOCKER_RESOURCE_GPU"
#accept-nvidia-visible-devices-envvar-when-unprivileged = true
#accept-nvidia-visible-devices-as-volume-mounts = false

[nvidia-container-cli]
no-cgroups = true
#root = "/run/nvidia/driver"
#path = "/usr/bin/nvidia-container-cli"
environment = []
#debug = "/var/log/nvidia-container-toolkit.log"
#ldcache = "/etc/ld.so.cache"
load-kmods = true
#user = "root:video"
ldconfig = "@/sbin/ldconfig.real"

[nvidia-container-runtime]
#debug = "/var/log/nvidia-container-runtime.log"
"""

ULIMIT = """\
core file size          (blocks, -c) 0
data seg size           (kbytes, -d) unlimited
max locked memory       (kbytes, -l) 64
max memory size         (kbytes, -m) unlimited
open files                      (-n) 1024
POSIX message queues     (bytes, -q) 819200
stack size              (kbytes, -s) 8192
virtual memory          (kbytes, -v) unlimited
"""

DF_SHM = """\
Filesystem      Size  Used Avail Use% Mounted on
shm              64M     0   64M   0% /dev/shm
"""

FREE = """\
               total        used        free      shared  buff/cache   available
Mem:           503Gi        21Gi       470Gi       1.0Gi        11Gi       479Gi
Swap:          8.0Gi          0B       8.0Gi
"""


def read(text: str) -> NodeReport:
    return parse(Source(name="dump.txt", text=text))


def test_docker_info_states_runtimes_cgroup_and_host() -> None:
    report = read(DOCKER_INFO)
    system = report.system.data
    assert system is not None and system.container_engine is not None
    engine = system.container_engine
    assert engine.runtimes == (
        "io.containerd.runc.v2",
        "io.containerd.runtime.v1.linux",
        "nvidia",
        "runc",
    )
    assert engine.default_runtime == "runc"
    assert (engine.cgroup_version, engine.cgroup_driver) == (2, "cgroupfs")
    assert engine.server_version == "20.10.21"
    assert system.kernel == "5.15.0-83-generic"
    assert system.os_pretty == "Ubuntu 22.04.3 LTS" and system.cpu_count == 64
    assert system.memory_total_bytes == int(376.5 * 1024**3)
    assert report.system.notes and "with nvidia runtime" in report.system.notes[0]


def test_daemon_json_and_docker_info_merge() -> None:
    engine = read(DAEMON_AND_INFO).system.data.container_engine  # type: ignore[union-attr]
    assert engine is not None
    assert engine.configured_runtimes == ("nvidia",)
    assert engine.configured_default_runtime == "nvidia"
    assert engine.runtimes == ("io.containerd.runc.v2", "runc")
    assert engine.warnings[-1] == "daemon is not using the default seccomp profile"


def test_daemon_json_that_is_not_json_is_read_as_text() -> None:
    engine = read(DAEMON_BROKEN).system.data.container_engine  # type: ignore[union-attr]
    assert engine is not None and engine.configured_runtimes == ("nvidia",)


@pytest.mark.parametrize(
    ("text", "version"), [(CTK, "1.17.3"), (CLI_V, "1.0.6"), (CLI_V_NEW, "1.14.0")]
)
def test_toolkit_version(text: str, version: str) -> None:
    engine = read(text).system.data.container_engine  # type: ignore[union-attr]
    assert engine is not None and engine.toolkit_version == version


def test_toolkit_config_no_cgroups() -> None:
    engine = read(CONFIG).system.data.container_engine  # type: ignore[union-attr]
    assert engine is not None and engine.no_cgroups is True
    commented = CONFIG.replace("no-cgroups = true", "#no-cgroups = false")
    engine = read(commented).system.data.container_engine  # type: ignore[union-attr]
    assert engine is not None and engine.no_cgroups is False


def test_ld_library_path_echo() -> None:
    text = "$ echo $LD_LIBRARY_PATH\n/opt/conda/lib:/usr/local/cuda-11.8/lib64:/usr/lib/x86_64-linux-gnu\n"
    report = read(text)
    assert report.libraries.data is not None
    assert report.libraries.data.ld_library_path == (
        "/opt/conda/lib",
        "/usr/local/cuda-11.8/lib64",
        "/usr/lib/x86_64-linux-gnu",
    )
    assert report.env.data is not None and "LD_LIBRARY_PATH" in report.env.data.variables


def test_path_echo_is_not_the_library_path() -> None:
    with pytest.raises(Exception, match=r"format not recognised|no environment fact"):
        read("/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n")


@pytest.mark.parametrize(
    "release",
    ["5.15.0-91-generic", "6.16.12-200.fc42.x86_64", "5.15.133.1-microsoft-standard-WSL2"],
)
def test_uname_r(release: str) -> None:
    system = read(f"{release}\n").system.data
    assert system is not None and system.kernel == release


def test_a_version_number_is_not_a_kernel_release() -> None:
    with pytest.raises(Exception, match=r"format not recognised|no environment fact"):
        read("2.1.0-rc1\n")


def test_ulimit_a() -> None:
    system = read(ULIMIT).system.data
    assert system is not None
    assert system.ulimits["nofile"].soft == 1024
    assert system.ulimits["memlock"].soft == 64 * 1024
    assert system.ulimits["stack"].soft == 8192 * 1024
    assert system.ulimits["as"].soft == UNLIMITED


def test_df_dev_shm_is_dockers_default() -> None:
    storage = read(DF_SHM).storage.data
    assert storage is not None
    shm = storage.by_role("dev_shm")
    assert shm is not None and shm.total_bytes == 64 * 1024**2


def test_free_h() -> None:
    system = read(FREE).system.data
    assert system is not None
    assert system.memory_total_bytes == 503 * 1024**3
    assert system.memory_available_bytes == 479 * 1024**3


def test_free_without_units_names_what_it_lacks() -> None:
    text = FREE.replace("503Gi", "515000").replace("21Gi", "21000")
    with pytest.raises(Exception, match="without a unit"):
        read(text)


@pytest.mark.parametrize("text", [DOCKER_INFO, DAEMON_AND_INFO, CTK, CONFIG, ULIMIT, DF_SHM, FREE])
def test_a_dump_alone_is_context_not_bad_input(tmp_path: Path, text: str) -> None:
    dump = tmp_path / "dump.txt"
    dump.write_text(text)
    result = run_cli("check", "--from", str(dump))
    assert result.returncode in (0, 1), result.stderr


def test_restart_when_daemon_json_has_the_runtime_docker_info_lacks(tmp_path: Path) -> None:
    log = tmp_path / "log.txt"
    log.write_text("Error response from daemon: unknown or invalid runtime name: nvidia\n")
    dump = tmp_path / "dump.txt"
    dump.write_text(DAEMON_AND_INFO)
    result = run_cli("triage", str(log), "--from", str(dump))
    code, out = result.returncode, result.stdout
    assert code == 1
    assert "has not been restarted" in out and "sudo systemctl restart docker" in out


def test_no_runtime_registered(tmp_path: Path) -> None:
    log = tmp_path / "log.txt"
    log.write_text(
        'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].\n'
    )
    dump = tmp_path / "dump.txt"
    dump.write_text(" Runtimes: io.containerd.runc.v2 runc\n Default Runtime: runc\n")
    result = run_cli("triage", str(log), "--from", str(dump))
    code, out = result.returncode, result.stdout
    assert code == 1 and "nvidia-ctk runtime configure --runtime=docker" in out


def test_nvml_unknown_error_with_no_cgroups(tmp_path: Path) -> None:
    log = tmp_path / "log.txt"
    log.write_text("Failed to initialize NVML: Unknown Error\n")
    dump = tmp_path / "dump.txt"
    dump.write_text(DOCKER_INFO + "\n" + CONFIG)
    result = run_cli("triage", str(log), "--from", str(dump))
    code, out = result.returncode, result.stdout
    assert code == 1 and "no-cgroups = false" in out and "cgroup v2" in out


def test_parsers_are_linear_on_hostile_lines() -> None:
    hostile = "\n".join(
        [
            " Runtimes: " + "a " * 5000,
            "{" + '"runtimes": {' * 300,
            "/a:" * 20000,
            "1" * 20000 + "-x",
        ]
    )
    start = time.monotonic()
    with contextlib.suppress(Exception):  # refusing is fine; hanging is not
        read(hostile)
    assert time.monotonic() - start < 5


def test_ldd_not_found_is_a_missing_library() -> None:
    text = (
        "$ ldd $(which python)\n"
        "\tlinux-vdso.so.1 (0x00007ffd6a5f2000)\n"
        "\tlibcudart.so.11.0 => not found\n"
        "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f0b1c255000)\n"
    )
    libraries = read(text).libraries.data
    assert libraries is not None and libraries.missing == ("libcudart.so.11.0",)


def test_docker_info_pasted_in_the_log_decides_drv103(tmp_path: Path) -> None:
    log = tmp_path / "log.txt"
    log.write_text(
        "$ docker run --gpus all nvidia/cuda:12.2.0-base-ubuntu22.04 nvidia-smi\n"
        'docker: Error response from daemon: could not select device driver "" with '
        "capabilities: [[gpu]].\n"
        "$ docker info | grep -i runtime\n"
        " Runtimes: io.containerd.runc.v2 runc\n"
        " Default Runtime: runc\n"
    )
    result = run_cli("triage", "--no-probe", str(log))
    assert result.returncode == 1
    assert "the running daemon has only" in result.stdout


def test_summary_names_the_container_engine(tmp_path: Path) -> None:
    dump = tmp_path / "dump.txt"
    dump.write_text(DOCKER_INFO + "\n" + CONFIG)
    result = run_cli("check", "--from", str(dump))
    assert "cgroup v2" in result.stdout and "no-cgroups = true" in result.stdout


def test_unreadable_text_names_its_first_line(tmp_path: Path) -> None:
    dump = tmp_path / "notes.txt"
    dump.write_text("\n\nsee the attached screenshot, token=abc123secret\n")
    result = run_cli("check", "--from", str(dump))
    assert result.returncode == 2
    assert "line 3 not understood: 'see the attached screenshot" in result.stderr
    assert "abc123secret" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_rootless_docker_keeps_no_cgroups(tmp_path: Path) -> None:
    """docker info's Security Options list 'rootless': no-cgroups = true is its right
    setting, not the cause of NVML's Unknown Error."""
    info = DOCKER_INFO.replace(
        " Kernel Version:",
        " Security Options:\n  seccomp\n   Profile: builtin\n  rootless\n  cgroupns\n Kernel Version:",
    )
    engine = read(info).system.data.container_engine  # type: ignore[union-attr]
    assert engine is not None and engine.rootless is True
    assert read(DOCKER_INFO).system.data.container_engine.rootless is None  # type: ignore[union-attr]
    log = tmp_path / "log.txt"
    log.write_text("Failed to initialize NVML: Unknown Error\n")
    dump = tmp_path / "dump.txt"
    dump.write_text(info + "\n" + CONFIG)
    result = run_cli("triage", str(log), "--from", str(dump))
    assert "sets no-cgroups = true" not in result.stdout
