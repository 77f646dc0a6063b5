"""What people paste about the host's container engine and its NVIDIA runtime, read into the
system section's ``container_engine`` (and the facts of the host ``docker info`` also states):

- ``docker info`` (docker/cli cli/command/system/info.go prints the server's fields as
  `` Server Version: 24.0.5``, `` Runtimes: io.containerd.runc.v2 nvidia runc``, `` Default
  Runtime: runc``, `` Cgroup Driver: systemd``, `` Cgroup Version: 2``, `` Kernel Version:``,
  `` Operating System:``, `` Architecture:``, `` CPUs:``, `` Total Memory: 62.7GiB``, and the
  daemon's ``WARNING: No swap limit support`` lines; older releases print them unindented):
  the runtimes the *running* daemon has;
- ``/etc/docker/daemon.json`` (moby's daemon configuration: ``"runtimes": {"nvidia": {"path":
  "nvidia-container-runtime", ...}}``, ``"default-runtime": "nvidia"``): what the daemon
  reads when it starts; a runtime configured there that ``docker info`` lacks is a daemon
  not restarted since (https://github.com/Leon-Sander/Local-Multimodal-AI-Chat/issues/31);
- the NVIDIA Container Toolkit's versions: ``nvidia-ctk --version`` (``NVIDIA Container
  Toolkit CLI version 1.17.3``, https://github.com/NVIDIA/nvidia-container-toolkit/issues/1011),
  ``nvidia-container-toolkit -version`` (``NVIDIA Container Runtime Hook version 1.11.0``,
  https://github.com/NVIDIA/nvidia-docker/issues/1671), ``nvidia-container-runtime
  --version`` (``NVIDIA Container Runtime version 1.14.3``) and ``nvidia-container-cli -V``
  (``version: 1.0.6`` then ``build date:``, https://github.com/NVIDIA/nvidia-docker/issues/1088;
  ``cli-version: 1.14.0`` / ``lib-version: 1.14.0`` in newer releases,
  https://github.com/NVIDIA/nvidia-container-toolkit/issues/106);
- the toolkit's ``/etc/nvidia-container-runtime/config.toml`` (NVIDIA/nvidia-container-toolkit
  internal/config: ``[nvidia-container-cli]`` ... ``no-cgroups = true``; a commented
  ``#no-cgroups = false`` is the default, false): ``no-cgroups = true`` is for rootless
  containers only; a rootful container then gets no device cgroup rules for the GPUs
  (https://github.com/NVIDIA/nvidia-container-toolkit/issues/381).

Every pattern is anchored and bounded (no nested repetition); a section is at most
:data:`_MAX_LINES` lines.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from envcheck.ingest.common import FormatError, Source, blank, parse_os
from envcheck.ingest.sizes import size_bytes
from envcheck.model.report import ContainerEngine, NodeReport, SystemInfo
from envcheck.model.section import Section

DOCKER_INFO = "docker info"
DAEMON_JSON = "/etc/docker/daemon.json"
TOOLKIT_VERSION = "NVIDIA Container Toolkit version"
TOOLKIT_CONFIG = "nvidia-container-runtime config.toml"

_MAX_LINES = 400
_DAEMON_LINES = 150  # a daemon.json is short; bounds the brace count on a log's JSON

# -- docker info ---------------------------------------------------------------------------------

# keys only docker info prints (a start): the server's runtime, cgroup and storage fields
_DOCKER_START = re.compile(
    r"^\s{0,4}(?:Server Version|Runtimes|Default Runtime|Cgroup Driver|Cgroup Version|"
    r"Storage Driver|Docker Root Dir|Live Restore Enabled|Init Binary|containerd version|"
    r"runc version|Logging Driver):[ \t]"
)
_DOCKER_WARNING = re.compile(
    r"^\s*WARNING: (?:No [\w .-]{1,60} support|daemon is not using the default seccomp profile|"
    r"bridge-nf-call-ip6?tables is disabled|IPv4 forwarding is disabled|API is accessible)"
)
_DOCKER_HEAD = re.compile(r"^\s?(?:Client|Server)(?:: Docker Engine - Community)?:\s*$")
_DOCKER_LINE = re.compile(r"^\s{0,8}[A-Za-z][\w .()/-]{0,40}:(?:[ \t].{0,400})?$|^\s{1,10}\S")
_FIELD = re.compile(r"^\s{0,4}(?P<key>[A-Za-z][\w ()-]{0,40}?):[ \t]+(?P<value>\S.{0,400}?)\s*$")


def find_docker_info(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    """docker info's output: from a server field it alone prints (or its Client:/Server:
    heading, or a daemon WARNING line) while its lines go on."""
    line = lines[i]
    if _DOCKER_HEAD.match(line):
        follow = i + 1 < len(lines) and bool(_DOCKER_LINE.match(lines[i + 1]))
        if not follow:
            return None
    elif not (_DOCKER_START.match(line) or _DOCKER_WARNING.match(line)):
        return None
    end = i + 1
    limit = min(len(lines), i + _MAX_LINES)
    while end < limit and end not in stops:
        current = lines[end]
        if _DOCKER_LINE.match(current) or _DOCKER_WARNING.match(current):
            end += 1
        elif not current.strip() and end + 1 < limit and end + 1 not in stops:
            nxt = lines[end + 1]
            if _DOCKER_WARNING.match(nxt) or _DOCKER_START.match(nxt) or _DOCKER_HEAD.match(nxt):
                end += 1
            else:
                break
        else:
            break
    return i, end


def _docker_fields(text: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    for line in text.splitlines():
        found = _FIELD.match(line)
        if found:
            fields.setdefault(found["key"].strip(), found["value"])
    return fields


def parse_docker_info(source: Source) -> NodeReport:
    fields = _docker_fields(source.text)
    warnings = tuple(
        dict.fromkeys(
            line.strip().removeprefix("WARNING: ")
            for line in source.text.splitlines()
            if _DOCKER_WARNING.match(line)
        )
    )
    rootless = _rootless(source.text)
    runtimes = fields.get("Runtimes")
    default = fields.get("Default Runtime")
    cgroup = fields.get("Cgroup Version", "")
    engine = ContainerEngine(
        server_version=fields.get("Server Version"),
        runtimes=tuple(runtimes.split()) if runtimes else None,
        default_runtime=default.split()[0] if default else None,
        cgroup_driver=fields.get("Cgroup Driver"),
        cgroup_version=int(cgroup) if cgroup in ("1", "2") else None,
        rootless=rootless,
        warnings=warnings,
    )
    if engine == ContainerEngine(warnings=warnings) and not warnings:
        raise FormatError(f"{DOCKER_INFO}: no Runtimes, Cgroup or Server Version line")
    pretty = fields.get("Operating System")
    os_id, os_version = parse_os(pretty) if pretty else (None, None)
    cpus = fields.get("CPUs", "")
    memory = size_bytes(fields.get("Total Memory", ""))
    arch = fields.get("Architecture")
    info = SystemInfo(
        os_id=os_id,
        os_version=os_version,
        os_pretty=pretty,
        kernel=(fields.get("Kernel Version") or "").split(" ")[0] or None,
        arch=arch if arch and re.fullmatch(r"[\w-]{2,20}", arch) else None,
        cpu_count=int(cpus) if cpus.isdigit() else None,
        memory_total_bytes=memory,
        container_engine=engine,
    )
    said = [_runtime_note(engine)]
    if engine.cgroup_version is not None:
        said.append(
            f"the host runs cgroup v{engine.cgroup_version} "
            f"({engine.cgroup_driver or 'driver not stated'} cgroup driver)"
        )
    if pretty and "Docker Desktop" in pretty:
        said.append("Docker Desktop: the kernel, OS and memory are its VM's, not the host's")
    notes = tuple(s for s in said if s)
    return blank(source, DOCKER_INFO).with_sections(
        system=Section.ok(info, source=DOCKER_INFO, notes=notes)
    )


_SECURITY = re.compile(r"^\s{0,4}Security Options:\s*$")
_OPTION = re.compile(r"^\s{2,12}(?P<name>[\w.=-]{1,40})\s*$")
_SUBFIELD = re.compile(r"^\s{3,12}[A-Z][\w ]{0,30}:")


def _rootless(text: str) -> bool | None:
    """Whether docker info's Security Options list 'rootless'; None without that list."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if _SECURITY.match(line):
            names = []
            for follow in lines[i + 1 : i + 16]:
                found = _OPTION.match(follow)
                if found is not None:
                    names.append(found["name"])
                elif not _SUBFIELD.match(follow):  # '   Profile: builtin' belongs to seccomp
                    break
            return "rootless" in names
    return None


def _runtime_note(engine: ContainerEngine) -> str:
    if engine.runtimes is None:
        return ""
    has = "nvidia" in engine.runtimes
    text = (
        f"the running Docker daemon has the runtimes {', '.join(engine.runtimes)}"
        f" ({'with' if has else 'no'} nvidia runtime)"
    )
    if engine.default_runtime:
        text += f"; default runtime {engine.default_runtime}"
    return text


# -- /etc/docker/daemon.json --------------------------------------------------------------------

_DAEMON_KEYS = (
    "runtimes",
    "default-runtime",
    "exec-opts",
    "log-driver",
    "log-opts",
    "data-root",
    "registry-mirrors",
    "insecure-registries",
    "features",
    "storage-driver",
    "default-shm-size",
    "live-restore",
    "cgroup-parent",
    "node-generic-resources",
    "dns",
    "bip",
    "graph",
)
_DAEMON_KEY = re.compile(r"^\s*\{?\s*\"(?P<key>[a-z][a-z-]{1,30})\"\s*:")
_OPEN = re.compile(r"^\s{0,2}\{\s*(?:\"[a-z][a-z-]{1,30}\"\s*:.*)?$")  # a top-level brace
# a runtime entry as JSON text: "name": { ... "path": (when the text is not valid JSON)
_RUNTIME_ENTRY = re.compile(
    r"\"(?P<name>[\w.-]{1,40})\"\s*:\s*\{[^{}\"]{0,40}\"(?:path|runtimeArgs|args)\""
)
_DEFAULT_ENTRY = re.compile(r"\"default-runtime\"\s*:\s*\"(?P<name>[\w.-]{1,40})\"")


def find_daemon_json(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    """A JSON object whose keys are dockerd's: from its opening brace to the brace that
    closes it (counted over the lines, at most :data:`_MAX_LINES`)."""
    if not _OPEN.match(lines[i]):
        return None
    depth = 0
    keyed = False
    limit = min(len(lines), i + _DAEMON_LINES)
    for end in range(i, limit):
        if end in stops and end > i:
            return None
        line = lines[end]
        key = _DAEMON_KEY.match(line)
        if key and key["key"] in _DAEMON_KEYS and depth <= 1:
            keyed = True
        depth += line.count("{") - line.count("}")
        if depth <= 0 and ("}" in line or end > i):
            nxt = _DAEMON_KEY.match(lines[end + 1]) if end + 1 < limit else None
            if nxt is not None and nxt["key"] in _DAEMON_KEYS:
                depth = 1  # a brace too many as pasted: the object goes on
                continue
            return (i, end + 1) if keyed else None
    return None


def parse_daemon_json(source: Source) -> NodeReport:
    text = source.text
    configured: tuple[str, ...] | None = None
    default: str | None = None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        data = None
    if isinstance(data, dict):
        runtimes = data.get("runtimes")
        configured = tuple(runtimes) if isinstance(runtimes, dict) else ()
        value = data.get("default-runtime")
        default = value if isinstance(value, str) else None
        if not any(k in data for k in _DAEMON_KEYS):
            raise FormatError(f"{DAEMON_JSON}: none of dockerd's keys")
    else:  # as pasted: a trailing comma, a brace too many; read the two keys as text
        if not any(f'"{k}"' in text for k in _DAEMON_KEYS):
            raise FormatError(f"{DAEMON_JSON}: not JSON and none of dockerd's keys")
        configured = tuple(dict.fromkeys(m["name"] for m in _RUNTIME_ENTRY.finditer(text)))
        found = _DEFAULT_ENTRY.search(text)
        default = found["name"] if found else None
    engine = ContainerEngine(configured_runtimes=configured, configured_default_runtime=default)
    said = (
        f"daemon.json configures {'the runtimes ' + ', '.join(configured) if configured else 'no runtime'}"
        + (f", default-runtime {default}" if default else "")
        + " (read when the Docker daemon starts)"
    )
    return blank(source, DAEMON_JSON).with_sections(
        system=Section.ok(SystemInfo(container_engine=engine), source=DAEMON_JSON, notes=(said,))
    )


# -- the NVIDIA Container Toolkit's version ------------------------------------------------------

_TOOLKIT_LINE = re.compile(
    r"^\s*NVIDIA Container (?:Toolkit CLI|Runtime Hook|Runtime) version "
    r"(?P<version>[0-9]+\.[0-9]+\.[0-9]+(?:-[\w.]{1,20})?)\s*$"
)
_CLI_VERSION = re.compile(r"^\s*(?:cli-)?version: (?P<version>[0-9]+\.[0-9]+\.[0-9]+)\s*$")
_CLI_BUILD = re.compile(r"^\s*(?:lib-version|build (?:date|revision|compiler|platform|flags)): ")
_TOOLKIT_MORE = re.compile(r"^\s*(?:commit: [0-9a-f]{7,40}|spec: \S+)\s*$")


def find_toolkit_version(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    line = lines[i]
    if _TOOLKIT_LINE.match(line):
        end = i + 1
        while end < min(len(lines), i + 4) and end not in stops and _TOOLKIT_MORE.match(lines[end]):
            end += 1
        return i, end
    if _CLI_VERSION.match(line) and i + 1 < len(lines) and _CLI_BUILD.match(lines[i + 1]):
        end = i + 1
        while end < min(len(lines), i + 8) and end not in stops and _CLI_BUILD.match(lines[end]):
            end += 1
        return i, end
    return None


def parse_toolkit_version(source: Source) -> NodeReport:
    version = None
    for line in source.text.splitlines():
        found = _TOOLKIT_LINE.match(line) or _CLI_VERSION.match(line)
        if found:
            version = found["version"]
            break
    if version is None:
        raise FormatError(f"{TOOLKIT_VERSION}: no 'version X.Y.Z' line")
    engine = ContainerEngine(toolkit_version=version)
    said = f"NVIDIA Container Toolkit {version} installed on the host"
    return blank(source, TOOLKIT_VERSION).with_sections(
        system=Section.ok(
            SystemInfo(container_engine=engine), source=TOOLKIT_VERSION, notes=(said,)
        )
    )


# -- the toolkit's config.toml ------------------------------------------------------------------

_CONFIG_START = re.compile(
    r"^\s*(?:#\s*)?(?:disable-require|swarm-resource|accept-nvidia-visible-devices[\w-]{0,30}|"
    r"supported-driver-capabilities|no-cgroups)\s*=|^\s*\[nvidia-container-(?:cli|runtime)[\w.\"-]{0,60}\]\s*$"
)
_CONFIG_LINE = re.compile(
    r"^\s*(?:#.{0,400}|\[[\w.\"-]{1,80}\]|[\w.-]{1,60}\s*=.{0,400}|\"[^\"]{0,200}\",?|\])\s*$"
)
_NO_CGROUPS = re.compile(r"^\s*no-cgroups\s*=\s*(?P<value>true|false)\s*(?:#.*)?$", re.MULTILINE)
_CLI_TABLE = re.compile(r"^\s*\[nvidia-container-cli\]\s*$", re.MULTILINE)


def find_toolkit_config(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    if not _CONFIG_START.match(lines[i]):
        return None
    end = i + 1
    limit = min(len(lines), i + _MAX_LINES)
    while end < limit and end not in stops:
        current = lines[end]
        if _CONFIG_LINE.match(current) or (
            not current.strip() and end + 1 < limit and _CONFIG_LINE.match(lines[end + 1])
        ):
            end += 1
        else:
            break
    return (i, end) if end > i + 1 else None


def parse_toolkit_config(source: Source) -> NodeReport:
    found = _NO_CGROUPS.search(source.text)
    if found is not None:
        no_cgroups: bool | None = found["value"] == "true"
        said = f"config.toml sets no-cgroups = {found['value']}"
    elif _CLI_TABLE.search(source.text):
        no_cgroups = False
        said = "config.toml leaves no-cgroups unset or commented out (false, the default)"
    else:
        raise FormatError(f"{TOOLKIT_CONFIG}: no [nvidia-container-cli] table or no-cgroups key")
    if no_cgroups:
        said += (
            ": the container's device cgroup gets no rules for the GPUs, right only for "
            "rootless containers"
        )
    engine = ContainerEngine(no_cgroups=no_cgroups)
    return blank(source, TOOLKIT_CONFIG).with_sections(
        system=Section.ok(SystemInfo(container_engine=engine), source=TOOLKIT_CONFIG, notes=(said,))
    )


PARSERS = {
    "docker-info": (DOCKER_INFO, parse_docker_info),
    "daemon-json": (DAEMON_JSON, parse_daemon_json),
    "toolkit-version": (TOOLKIT_VERSION, parse_toolkit_version),
    "toolkit-config": (TOOLKIT_CONFIG, parse_toolkit_config),
}
# before modinfo's reader, which would take nvidia-container-cli -V's 'version:' line
EARLY_FINDERS = (("toolkit-version", find_toolkit_version),)
FINDERS = (
    ("docker-info", find_docker_info),
    ("daemon-json", find_daemon_json),
    ("toolkit-config", find_toolkit_config),
)
