"""A pasted issue text that holds several tools' output: each section read by its own parser.

Users paste what they ran, one after another, between prose and log lines, in Markdown fences
or after ``$ `` prompts: an ``nvidia-smi`` screen, ``python -m torch.utils.collect_env``,
``pip list`` / ``pip freeze``, ``conda list``, ``nvcc --version``, ``uname -a``,
``cat /etc/os-release``, ``ldd`` output, ``ray status``. :func:`split` finds where each section
starts and ends by its own markers (the banner and table borders of nvidia-smi, pip's dashed
rule, conda's header, a run of ``name==version`` lines, ...); fences and prompt lines end a
section. Each section is parsed by its format's parser, the lines outside every section by
the prose reader (``loose``), and the reports merge in a fixed order (collect_env first, then
nvidia-smi, the package lists, the system outputs, the prose last): the first source that
states a fact gives it, and a conflict is noted (``merge``).

The report's origin says what was read and where (``dump.txt (nvidia-smi lines 3-14 + pip list
lines 18-60 + text)``) and what was skipped (ldd's and ray status' output, which state no node
fact envcheck reads; a section its parser refused, with the reason). Nothing readable at all is
one error line (``FormatError``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from envcheck.ingest import (
    bitsandbytes_report,
    collect_env,
    conda,
    container_text,
    cuda_failures,
    driver_dumps,
    driver_listings,
    driver_offers,
    driver_text,
    driver_tools,
    gpu_tables,
    headerless_rows,
    jetson,
    loose,
    node_labels,
    nvidia_smi,
    pip,
    shell_values,
    system_text,
    toolkit_files,
    vllm_env,
)
from envcheck.ingest.common import FormatError, NoFactsError, Source
from envcheck.ingest.merge import merge
from envcheck.model.report import NodeReport, Origin

# kind -> (label, parser); None: recognised, states no node fact envcheck reads
_PARSERS: dict[str, tuple[str, Callable[[Source], NodeReport] | None]] = {
    "collect-env": ("collect_env", collect_env.parse),
    "vllm-env": (vllm_env.VLLM_LABEL, vllm_env.parse_vllm),
    "nvidia-smi": ("nvidia-smi", nvidia_smi.parse_screen),
    "nvidia-smi-q": ("nvidia-smi -q", nvidia_smi.parse_query),
    "nvidia-smi-csv": ("nvidia-smi --query-gpu", nvidia_smi.parse_csv),
    "nvidia-smi-failed": ("nvidia-smi (failed)", nvidia_smi.parse_failure),
    "nvidia-proc": (driver_text.PROC, driver_text.parse_proc),
    "container-cli": (driver_text.CONTAINER_CLI, driver_text.parse_container_cli),
    "modinfo": (driver_text.MODINFO, driver_text.parse_modinfo),
    "driver-packages": (driver_text.PACKAGES, driver_text.parse_packages),
    "lspci": (driver_text.LSPCI, driver_text.parse_lspci),
    "kernel-log": (driver_text.KERNEL_LOG, driver_text.parse_kernel_log),
    "device-query": (driver_tools.DEVICE_QUERY, driver_tools.parse_device_query),
    "dkms": (driver_tools.DKMS, driver_tools.parse_dkms),
    "apt-driver": (driver_tools.APT, driver_tools.parse_apt),
    "ubuntu-drivers": (driver_tools.UBUNTU_DRIVERS, driver_tools.parse_ubuntu_drivers),
    "no-driver": (driver_tools.NO_DRIVER, driver_tools.parse_no_driver),
    "cuda-failure": (cuda_failures.CUDA_FAILURE, cuda_failures.parse),
    "smi-rows": (headerless_rows.SMI_ROWS, headerless_rows.parse_smi_rows),
    "pip-legacy": (headerless_rows.PIP_LEGACY, headerless_rows.parse_pip_legacy),
    "redhat-release": (headerless_rows.REDHAT_RELEASE, headerless_rows.parse_redhat),
    "conda-info": (headerless_rows.CONDA_INFO, headerless_rows.parse_conda_info),
    "torch-config": (headerless_rows.TORCH_CONFIG, headerless_rows.parse_torch_config),
    "cuda-dirs": (headerless_rows.CUDA_DIRS, headerless_rows.parse_cuda_dirs),
    "device-files": (driver_listings.DEVICE_FILES, driver_listings.parse_device_files),
    "sb-state": (driver_listings.SB_STATE, driver_listings.parse_sb_state),
    "ld-cache": (driver_listings.LD_CACHE, driver_listings.parse_ld_cache),
    "prime-select": (driver_listings.PRIME, driver_listings.parse_prime),
    "bitsandbytes": (bitsandbytes_report.BITSANDBYTES, bitsandbytes_report.parse),
    **driver_dumps.PARSERS,
    "node-labels": (node_labels.LABELS, node_labels.parse),
    "nvidia-smi-topo": (gpu_tables.TOPO, gpu_tables.parse_topo),
    "dcgmi-discovery": (gpu_tables.DCGMI, gpu_tables.parse_dcgmi),
    "torch-init": (driver_offers.TORCH_INIT, driver_offers.parse_torch_init),
    "ubuntu-offers": (driver_offers.UBUNTU_LIST, driver_offers.parse_offers),
    "jetson-release": (jetson.JETSON_RELEASE, jetson.parse_jetson_release),
    "tegra-release": (jetson.TEGRA_RELEASE, jetson.parse_tegra_release),
    "tegrastats": (jetson.TEGRASTATS, jetson.parse_tegrastats),
    "cuda-version-txt": (toolkit_files.VERSION_TXT, toolkit_files.parse_version_txt),
    "cuda-version-json": (toolkit_files.VERSION_JSON, toolkit_files.parse_version_json),
    "cudnn-header": (toolkit_files.CUDNN_HEADER, toolkit_files.parse_cudnn_header),
    "no-nvcc": (toolkit_files.NO_NVCC, toolkit_files.parse_no_nvcc),
    "usr-src": (driver_offers.USR_SRC, driver_offers.parse_usr_src),
    "pip-list": ("pip list", pip.parse_list),
    "pip-freeze": ("pip freeze", pip.parse_freeze),
    "conda-list": ("conda list", conda.parse_list),
    "os-release": (system_text.OS_RELEASE, system_text.parse_os_release),
    "lsb-release": (system_text.LSB, system_text.parse_lsb),
    "uname": (system_text.UNAME, system_text.parse_uname),
    "lscpu": (system_text.LSCPU, system_text.parse_lscpu),
    "proc-version": (system_text.PROC_VERSION, system_text.parse_proc_version),
    "nvcc": (system_text.NVCC, system_text.parse_nvcc),
    **container_text.PARSERS,
    **shell_values.PARSERS,
    "ldd": (shell_values.LDD, shell_values.parse_ldd),
    "ray-status": ("ray status", None),
}
# sections that, alone in a text, its format's own detection reads whole (as before this reader)
_WHOLE_FORMATS = {
    "collect-env",
    "nvidia-smi",
    "nvidia-smi-q",
    "nvidia-smi-csv",
    "pip-list",
    "pip-freeze",
    "conda-list",
}
# merge order: the fuller report first (it wins conflicts), the prose last
_ORDER = list(_PARSERS)

_FENCE = re.compile(r"^\s*(?:```|~~~)")
_PROMPT = re.compile(
    r"^\s*(?:\([^)]*\)\s*)?"
    r"(?:[\w.-]+@[\w.-]+(?::[^\s$#]*)?\s*[$#]|\$|>>>|PS [A-Za-z]:\\[^>]*>|[A-Za-z]:\\[^>]*>)"
    r"(?:\s+(?P<command>.*)|\s*)$"
)
_INSTALL = re.compile(
    r"^(?:sudo\s+)?(?:python3?\s+-m\s+)?(?:pip3?|uv pip|conda|mamba|apt(?:-get)?)\s+install\b"
)
_DATE = re.compile(r"^\s*(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)\s+\w{3}\s+\d+\s+[\d:]+\s+\d{4}\s*$")
_RULE = re.compile(r"^\s*-+(?:\s+-+)+\s*$")
_LIST_ROW = re.compile(r"^\s*[A-Za-z0-9][A-Za-z0-9._-]*\s+[0-9]\S*(?:\s+\S.*)?$")
_CONDA_HEAD = re.compile(r"^\s*#\s*(?:packages in environment at|Name\s+Version\s+Build)")
_CONDA_ROW = re.compile(r"^\s*[A-Za-z0-9_][A-Za-z0-9._+-]*\s+\S+(?:\s+\S+){0,2}\s*$")
_LDD = re.compile(
    r"^\s*(?:\S+\.so(?:\.[0-9]+)*\s+=>\s+(?:not found|\S+)|/\S*ld-linux\S*|linux-vdso\.so)"
)
_RAY = re.compile(r"^=+ (?:Autoscaler status|Cluster status)")
_COLLECT = re.compile(r"^\s*(?:Collecting environment information|PyTorch version\s*:)")


@dataclass(frozen=True)
class Part:
    kind: str
    start: int  # first line, 0-based
    end: int  # one past the last line

    @property
    def where(self) -> str:
        return (
            f"line {self.start + 1}"
            if self.end - self.start == 1
            else f"lines {self.start + 1}-{self.end}"
        )


def _blank_or(lines: Sequence[str], i: int, ok: Callable[[str], bool]) -> bool:
    """Line i is ok, or blank with an ok line right after it."""
    if ok(lines[i]):
        return True
    return not lines[i].strip() and i + 1 < len(lines) and ok(lines[i + 1])


def _while(lines: Sequence[str], i: int, stops: set[int], ok: Callable[[str], bool]) -> int:
    while i < len(lines) and i not in stops and _blank_or(lines, i, ok):
        i += 1
    return i


def _table_line(line: str) -> bool:
    return line.strip().startswith(("|", "+"))


def _smi(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    if not nvidia_smi.looks_like_screen(lines[i]):
        return None
    start = i
    while (
        start > 0
        and start - 1 not in stops
        and (_table_line(lines[start - 1]) or _DATE.match(lines[start - 1]))
    ):
        start -= 1
    if not _table_line(lines[i]):
        return start, i + 1  # "nvidia-smi: NVIDIA-SMI 450.51.05  Driver Version: ..." in prose
    return start, _while(lines, i + 1, stops, _table_line)


def _smi_q(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    if "NVSMI LOG" not in lines[i]:
        return None

    def ok(line: str) -> bool:
        return line.startswith((" ", "\t", "GPU ", "=")) or " : " in line or not line.strip()

    end = i + 1
    while end < len(lines) and end not in stops and ok(lines[end]):
        end += 1
    return i, end


def _csv(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    if "," not in lines[i] or nvidia_smi.csv_header(lines[i].strip()) is None:
        return None
    commas = lines[i].count(",")
    return i, _while(lines, i + 1, stops, lambda line: line.count(",") == commas)


def _smi_failed(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    if not nvidia_smi.FAILURE.search(lines[i]):
        return None
    end = i + 1
    follows = end < len(lines) and end not in stops
    if follows and ("NVML library version" in lines[end] or lines[end].strip().startswith("Make")):
        end += 1
    return i, end


def _proc(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    if not driver_text.PROC_LINE.search(lines[i]):
        return None
    has_gcc = i + 1 < len(lines) and i + 1 not in stops and "GCC version" in lines[i + 1]
    return i, i + 2 if has_gcc else i + 1


_CLI_ANY = re.compile(r"^\s*[A-Za-z][\w .()/-]*:\s*\S*")


def _container_cli(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    if not re.match(r"^\s*NVRM version:\s+[0-9]", lines[i]):
        return None
    return i, _while(lines, i + 1, stops, lambda line: bool(_CLI_ANY.match(line)))


def _lspci(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    if not driver_text.LSPCI_LINE.match(lines[i]):
        return None
    return i, _while(lines, i + 1, stops, lambda line: bool(driver_text.LSPCI_ANY.match(line)))


_DMESG = re.compile(r"^\s*\[\s*[0-9]+\.[0-9]+\]|^\s+NVRM: ")


def _kernel_log(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    """The NVIDIA module's kernel log lines, and the dmesg lines between them."""
    if not driver_text.nvrm_line(lines[i]):
        return None

    def ok(line: str) -> bool:
        return bool(driver_text.nvrm_line(line) or _DMESG.match(line))

    return i, _while(lines, i + 1, stops, ok)


def _device_query(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    if not driver_tools.DEVICE_QUERY_START.match(lines[i]):
        return None
    return i, _while(
        lines, i + 1, stops, lambda line: bool(driver_tools.DEVICE_QUERY_LINE.match(line))
    )


def _apt_driver(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    """apt's line about an NVIDIA driver package, within apt's other output."""
    if not driver_tools.APT_LINE.search(lines[i]):
        return None
    return i, i + 1


def _no_driver(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    """The shell's or modprobe's line that the driver is missing, and the install hints the
    shell prints after it (command-not-found's 'sudo apt install nvidia-utils-535 ...')."""
    if not driver_tools.NO_DRIVER_LINE.search(lines[i]):
        return None

    def ok(line: str) -> bool:
        return bool(
            re.match(r"^\s*(?:sudo apt install \S+|See '|Try: )", line)
        ) or line.rstrip().endswith("can be installed with:")

    return i, _while(lines, i + 1, stops, ok)


def _pip_list(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    if not (
        re.match(r"^\s*Package\s+Version\b", lines[i])
        and i + 1 < len(lines)
        and _RULE.match(lines[i + 1])
    ):
        return None
    end = i + 2
    while end < len(lines) and end not in stops and _LIST_ROW.match(lines[end]):
        end += 1
    return i, end


def _conda(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    if not _CONDA_HEAD.match(lines[i]):
        return None

    def ok(line: str) -> bool:
        return line.lstrip().startswith("#") or bool(_CONDA_ROW.match(line))

    return i, _while(lines, i + 1, stops, ok)


def _freeze_line(line: str) -> bool:
    return pip.is_freeze_line(line) and not line.lstrip().startswith("[")


def _freeze(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    if not _freeze_line(lines[i]):
        return None

    def ok(line: str) -> bool:
        return _freeze_line(line) or line.lstrip().startswith("#")

    end = _while(lines, i + 1, stops, ok)
    if sum(1 for line in lines[i:end] if _freeze_line(line)) < 2:
        return None  # one "torch==2.1.0" in prose is the prose reader's
    return i, end


def _run(
    pattern: re.Pattern[str],
) -> Callable[[Sequence[str], int, set[int]], tuple[int, int] | None]:
    def find(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
        if not pattern.match(lines[i]):
            return None
        return i, _while(lines, i + 1, stops, lambda line: bool(pattern.match(line)))

    return find


# the lines `nvcc --version` prints after its first: the copyright, the build date, the
# release and the build tag; a line of another shape ends the section (`nvidia-smi` pasted
# right after it without a prompt)
_NVCC_REST = re.compile(
    r"\s*(?:Copyright \(c\)|Built on |Cuda compilation tools|Build cuda_|nvcc: NVIDIA)"
)


def _nvcc(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    if not system_text.NVCC_FIRST.match(lines[i]):
        return None
    end = i + 1
    while end < min(len(lines), i + 5) and end not in stops:
        if not _NVCC_REST.match(lines[end]):
            break
        end += 1
        if lines[end - 1].startswith("Build "):
            break
    return i, end


def _ray(lines: Sequence[str], i: int, stops: set[int]) -> tuple[int, int] | None:
    if not _RAY.match(lines[i]):
        return None
    end = i + 1
    while (
        end < len(lines)
        and end not in stops
        and not (not lines[end].strip() and end + 1 < len(lines) and not lines[end + 1].strip())
    ):
        end += 1
    return i, end


_FINDERS: tuple[
    tuple[str, Callable[[Sequence[str], int, set[int]], tuple[int, int] | None]], ...
] = (
    *container_text.EARLY_FINDERS,
    *driver_dumps.EARLY_FINDERS,
    ("nvidia-smi", _smi),
    ("nvidia-smi-q", _smi_q),
    ("nvidia-smi-csv", _csv),
    ("nvidia-smi-failed", _smi_failed),
    ("nvidia-proc", _proc),
    ("container-cli", _container_cli),
    ("modinfo", _run(driver_text.MODINFO_LINE)),
    ("driver-packages", _run(driver_text.PACKAGE_LINE)),
    ("lspci", _lspci),
    ("kernel-log", _kernel_log),
    ("device-query", _device_query),
    ("device-files", driver_listings.find_device_files),
    ("sb-state", driver_listings.find_sb_state),
    ("ld-cache", driver_listings.find_ld_cache),
    ("prime-select", driver_listings.find_prime),
    ("bitsandbytes", bitsandbytes_report.find),
    *driver_dumps.FINDERS,
    *container_text.FINDERS,
    ("node-labels", node_labels.find),
    ("nvidia-smi-topo", gpu_tables.find_topo),
    ("dcgmi-discovery", gpu_tables.find_dcgmi),
    ("torch-init", driver_offers.find_torch_init),
    ("ubuntu-offers", driver_offers.find_offers),
    ("jetson-release", jetson.find_jetson_release),
    ("tegra-release", jetson.find_tegra_release),
    ("tegrastats", jetson.find_tegrastats),
    ("cuda-version-txt", toolkit_files.find_version_txt),
    ("cuda-version-json", toolkit_files.find_version_json),
    ("cudnn-header", toolkit_files.find_cudnn_header),
    ("no-nvcc", toolkit_files.find_no_nvcc),
    ("usr-src", driver_offers.find_usr_src),
    ("dkms", _run(driver_tools.DKMS_LINE)),
    ("apt-driver", _apt_driver),
    ("ubuntu-drivers", _run(driver_tools.UBUNTU_DRIVERS_LINE)),
    ("no-driver", _no_driver),
    ("cuda-failure", cuda_failures.find),
    ("smi-rows", headerless_rows.find_smi_rows),
    ("pip-legacy", headerless_rows.find_pip_legacy),
    ("redhat-release", headerless_rows.find_redhat),
    ("conda-info", headerless_rows.find_conda_info),
    ("torch-config", headerless_rows.find_torch_config),
    ("cuda-dirs", headerless_rows.find_cuda_dirs),
    ("pip-list", _pip_list),
    ("conda-list", _conda),
    ("pip-freeze", _freeze),
    ("os-release", _run(system_text.OS_RELEASE_LINE)),
    ("lsb-release", _run(system_text.LSB_LINE)),
    ("uname", _run(system_text.UNAME_LINE)),
    ("lscpu", system_text.find_lscpu),
    ("proc-version", _run(system_text.PROC_VERSION_LINE)),
    ("nvcc", _nvcc),
    *shell_values.FINDERS,
    ("ldd", _run(_LDD)),
    ("ray-status", _ray),
)


# sections torch's and vLLM's collect_env print themselves (lscpu under 'CPU:', vLLM's 'GPU
# Topology:', the NCCL_* lines of vLLM's 'Environment Variables:', which lists only some and
# leaves the environment unknown): inside such a report they are its own lines, not a section
_COLLECT_PARTS = {"lscpu", "nvidia-smi-topo", "env-listing"}


def boundaries(original: str) -> set[int]:
    """Lines that end any section: Markdown fences and shell / Python prompts."""
    return {
        i
        for i, line in enumerate(original.splitlines())
        if _FENCE.match(line) or _PROMPT.match(line)
    }


def _empty_output(lines: Sequence[str], i: int, stops: set[int]) -> str | None:
    """A prompt whose command's empty output states a fact (``$ lsmod | grep nvidia`` and
    nothing before the next prompt, fence or the end): the section that says so."""
    prompt = _PROMPT.match(lines[i])
    kind = driver_dumps.empty_output_kind(prompt.group("command") or "") if prompt else None
    if kind is None:
        return None
    j = i + 1
    while j < len(lines) and j not in stops and not lines[j].strip():
        j += 1
    return kind if j >= len(lines) or j in stops else None


def split(text: str, stops: set[int] | None = None) -> list[Part]:
    """The sections of the text that a fixed format's parser reads, in order."""
    lines = text[: loose.MAX_TEXT].splitlines()  # as the prose reader: a paste is far smaller
    stops = stops or set()
    parts: list[Part] = []
    i = 0
    collect: int | None = None  # where a collect_env report started
    while i < len(lines):
        if i in stops or not lines[i].strip():
            kind = _empty_output(lines, i, stops) if i in stops and collect is None else None
            if kind is not None:
                parts.append(Part(kind, i, i + 1))
            i += 1
            continue
        found = None
        for kind, finder in _FINDERS:
            if collect is not None and kind in _COLLECT_PARTS:
                continue
            span = finder(lines, i, stops)
            if span is not None:
                found = Part(kind, span[0], max(span[1], i + 1))
                break
        if found is None and collect is None and _COLLECT.match(lines[i]):
            collect = i
        if found is not None:
            if collect is not None:  # a collect_env runs up to the next section
                parts.append(Part("collect-env", collect, found.start))
                collect = None
            if parts and found.start < parts[-1].end:
                found = dataclasses.replace(found, start=parts[-1].end)
            parts.append(found)
            i = found.end
            continue
        if collect is not None and i in stops:
            parts.append(Part("collect-env", collect, i))
            collect = None
        i += 1
    if collect is not None:
        parts.append(Part("collect-env", collect, len(lines)))
    return [p for p in parts if p.end > p.start]


def _collect_kind(text: str) -> str | None:
    if not collect_env.looks_like(text):
        return None
    return "vllm-env" if re.search(r"^\s*vLLM Version\s*:", text, re.MULTILINE) else "collect-env"


def _prose(lines: list[str], parts: Sequence[Part], stops: set[int]) -> str:
    """The lines no section holds (blank where a section was, so line numbers hold), without
    install commands (what someone ran, not what is installed)."""
    kept = list(lines)
    for part in parts:
        for i in range(part.start, part.end):
            kept[i] = ""
    for i in stops:
        if i < len(kept):
            prompt = _PROMPT.match(kept[i])
            if prompt and _INSTALL.match((prompt.group("command") or "").strip()):
                kept[i] = ""
    return "\n".join(kept)


def r_is_ok_smi(read: Sequence[tuple[int, NodeReport, str]]) -> bool:
    """A working nvidia-smi screen is in the text too (then the failure was an earlier state)."""
    return any(r.gpu.is_ok and r.gpu.source == "nvidia-smi" for _, r, _ in read)


def mixed(text: str, stops: set[int]) -> list[Part] | None:
    """The sections when the text holds more than one readable thing (two sections, or a
    section and prose that states facts), else None (one format: read it whole)."""
    parts = split(text, stops)
    if not parts:
        return None
    if len(parts) >= 2 or parts[0].kind not in _WHOLE_FORMATS:
        return parts
    prose = _prose(text.splitlines(), parts, stops)
    return parts if loose.facts_stated(prose) else None


def parse(source: Source, stops: set[int], parts: Sequence[Part] | None = None) -> NodeReport:
    """Every readable section of a pasted text as one report (see the module's docstring)."""
    lines = source.text.splitlines()
    if parts is None:
        parts = split(source.text, stops)
    read: list[tuple[int, NodeReport, str]] = []
    skipped: list[str] = []
    for part in parts:
        text = "\n".join(lines[part.start : part.end])
        kind = part.kind
        if kind == "collect-env":
            kind = _collect_kind(text) or kind
        label, parser = _PARSERS[kind]
        if parser is None:
            skipped.append(f"{label} ({part.where}: states no node fact envcheck reads)")
            continue
        piece = Source(name=f"{source.name} {part.where}", text=text)
        try:
            report = parser(piece)
        except FormatError as exc:
            skipped.append(f"{label} ({part.where}: {exc.message})")
            continue
        except (ValueError, IndexError, KeyError, TypeError) as exc:  # a parser's blind spot
            skipped.append(f"{label} ({part.where}: not understood: {type(exc).__name__})")
            continue
        read.append((_ORDER.index(kind), report, f"{label} {part.where}"))
    prose = _prose(lines, parts, stops)
    if loose.facts_stated(prose):
        report = loose.parse(Source(name=f"{source.name} text", text=prose))
        read.append((len(_ORDER), report, "text outside them"))
    if not read:
        what = f"; skipped: {'; '.join(skipped)}" if skipped else ""
        raise NoFactsError(f"no environment fact found in any section of the text{what}")
    read.sort(key=lambda r: r[0])
    merged = merge([r for _, r, _ in read])
    failed = [
        r.gpu.reason
        for _, r, _ in read
        if r.gpu.reason
        and ("nvidia-smi" in r.gpu.reason or (r.gpu.source == driver_text.KERNEL_LOG))
    ]
    if merged.gpu.is_ok and failed and not r_is_ok_smi(read):
        # another section gave the driver; what nvidia-smi said stays stated
        gpu = dataclasses.replace(merged.gpu, notes=(*merged.gpu.notes, *failed))
        merged = merged.with_sections(gpu=gpu)
    detail = f"{source.name} (pasted: {' + '.join(w for _, _, w in read)}"
    detail += f"; skipped: {'; '.join(skipped)})" if skipped else ")"
    return dataclasses.replace(
        merged, node=source.stem, origin=Origin(kind="ingested", detail=detail)
    )


def parse_sections(source: Source, kinds: frozenset[str]) -> NodeReport | None:
    """Only the sections of the given kinds, each by its own parser, merged; None when the
    text holds none that parses. The prose around them is not read (a log's lines are too often
    about something else)."""
    stops = boundaries(source.text)
    lines = source.text.splitlines()
    read: list[tuple[int, NodeReport]] = []
    for part in split(source.text, stops):
        if part.kind not in kinds:
            continue
        parser = _PARSERS[part.kind][1]
        if parser is None:
            continue
        piece = Source(
            name=f"{source.name} {part.where}", text="\n".join(lines[part.start : part.end])
        )
        try:
            read.append((_ORDER.index(part.kind), parser(piece)))
        except (FormatError, ValueError, IndexError, KeyError, TypeError):
            continue
    if not read:
        return None
    read.sort(key=lambda r: r[0])
    return merge([r for _, r in read])
