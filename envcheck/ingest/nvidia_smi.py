"""``nvidia-smi`` text: the default screen, ``nvidia-smi -q`` and ``--query-gpu ... --format=csv``.

They describe the driver and the GPUs only. The banner's "CUDA Version" is the newest CUDA the
driver supports (not a toolkit, not torch's CUDA). The default screen truncates long GPU names
("NVIDIA A100-SXM..."): a note says so; the matrix still matches them by their model token.
The CSV form needs its header line (``--format=csv``, not ``csv,noheader``) to know the columns.
"""

from __future__ import annotations

import re
from dataclasses import replace

from envcheck.ingest.common import FormatError, Source, blank, valid_version
from envcheck.model.report import Gpu, GpuInfo, NodeReport
from envcheck.model.section import QUERY_FAILED, STATED_ABSENT, Section, Status

_BANNER = re.compile(
    r"NVIDIA-SMI\s+(\S+)\s+Driver Version:\s*(\S+)(?:\s+CUDA Version:\s*(\S+))?", re.IGNORECASE
)
_ROW = re.compile(
    r"^\|\s*(\d+)\s+(.+?)\s+(On|Off|WDDM|TCC|N/A)\s*\|\s*([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d)"
)
_MEMORY = re.compile(r"(\d+)\s*MiB\s*/\s*(\d+)\s*MiB")
_PROCESS = re.compile(
    r"^\|\s*(\d+)\s+(?:\S+\s+\S+\s+)?(\d+)\s+(?:C|G|C\+G|M|M\+C)\s+.*?(\d+)\s*MiB\s*\|$"
)


def looks_like_screen(text: str) -> bool:
    return _BANNER.search(text[:20_000]) is not None


def _info(
    driver: str | None, cuda: str | None, gpus: list[Gpu], via: str, notes: list[str]
) -> Section[GpuInfo]:
    info = GpuInfo(
        driver_version=valid_version(driver),
        cuda_driver_version=valid_version(cuda),
        driver_source=via,
        gpus=tuple(gpus),
        gpus_reason=None,
    )
    return Section.ok(info, source=via, notes=tuple(notes))


def parse_screen(source: Source) -> NodeReport:
    """The default ``nvidia-smi`` screen (driver 4xx to 5xx layouts)."""
    banner = _BANNER.search(source.text)
    if banner is None:
        raise FormatError(
            "format not recognised as nvidia-smi: no 'NVIDIA-SMI ... Driver Version' banner"
        )
    lines = source.text.splitlines()
    gpus: list[Gpu] = []
    notes: list[str] = list(source.notes)
    processes: dict[int, list[int]] = {}
    in_processes = False
    no_processes = False
    for i, line in enumerate(lines):
        if "Processes:" in line:
            in_processes = True
            continue
        if in_processes:
            if "No running processes found" in line:
                no_processes = True
            proc = _PROCESS.match(line.strip())
            if proc:
                processes.setdefault(int(proc.group(1)), []).append(int(proc.group(3)))
            continue
        row = _ROW.match(line.strip())
        if row is None:
            continue
        name = row.group(2).strip()
        if name.endswith("..."):
            notes.append(f"nvidia-smi truncated GPU {row.group(1)}'s name: {name!r}")
        memory = _MEMORY.search(lines[i + 1]) if i + 1 < len(lines) else None
        gpus.append(
            Gpu(
                index=int(row.group(1)),
                name=name,
                memory_used_mib=int(memory.group(1)) if memory else None,
                memory_total_mib=int(memory.group(2)) if memory else None,
                persistence_mode={"On": True, "Off": False}.get(row.group(3)),
            )
        )
    if in_processes:
        gpus = [
            replace(
                g,
                process_count=len(processes.get(g.index, [])),
                process_memory_mib=sum(processes.get(g.index, [])),
            )
            if processes or no_processes
            else g
            for g in gpus
        ]
    else:
        notes.append("the Processes table is not in the text: GPU processes unknown")
    report = blank(source, "nvidia-smi")
    section = _info(banner.group(2), banner.group(3), gpus, "nvidia-smi", notes)
    if not gpus and section.data is not None:
        # the banner alone (quoted in prose, or the table cut off): the GPUs are unknown, not
        # absent (with no GPU nvidia-smi prints 'No devices were found', not its table)
        reason = "the nvidia-smi text has its banner but no GPU rows"
        section = Section.ok(
            replace(section.data, gpus=None, gpus_reason=reason),
            source=section.source,
            notes=(*section.notes, reason),
        )
    return report.with_sections(gpu=section)


def _q_value(raw: str) -> tuple[str, str] | None:
    r"""'    Key : value' as (key, value), or None without a colon: what the pattern
    ``^(\s*)([^:]+?)\s*:\s*(.*?)\s*$`` took, split in linear time (that pattern took minutes
    on a long line of spaces)."""
    before, colon, after = raw.partition(":")
    if not colon or not before:
        return None
    return before.strip() or before[-1], after.strip()


# the top-level keys of `nvidia-smi -q` (and a GPU block's first ones): where a paste whose
# line breaks were lost (an unfenced paste in an issue renders as one line) is broken again
_Q_KEYS = re.compile(
    r"\s+(?=(?:Timestamp|Driver Version|CUDA Version|Attached GPUs|Product Name|Product Brand"
    r"|Product Architecture|Display Mode|Persistence Mode|Addressing Mode|MIG Mode"
    r"|Driver Model|Serial Number|GPU UUID|VBIOS Version)\s+:\s)"
    r"|\s+(?=GPU [0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9]\s)"
)


def unfolded_query(text: str) -> str:
    """``nvidia-smi -q`` text with its line breaks back where a line holds several of its
    'Key : value' pairs (the paste lost them); other text as it is."""
    lines = []
    for line in text.splitlines():
        if line.count(" : ") >= 2 and _Q_KEYS.search(line):
            lines.extend(_Q_KEYS.split(line))
        else:
            lines.append(line)
    return "\n".join(lines)


def parse_query(source: Source) -> NodeReport:
    """``nvidia-smi -q``: '==============NVSMI LOG==============', then 'Key : value' lines with
    one indented block per GPU ('GPU 00000000:08:00.0'); a paste that lost its line breaks is
    broken again at the keys first (the GPU blocks' nesting is lost with them)."""
    source = replace(source, text=unfolded_query(source.text))
    driver = cuda = None
    gpus: list[Gpu] = []
    notes: list[str] = list(source.notes)
    current: dict[str, object] | None = None
    block: str | None = None
    block_indent = 0

    def finish() -> None:
        if current is not None:
            gpus.append(Gpu(index=len(gpus), **current))  # type: ignore[arg-type]

    for raw in source.text.splitlines():
        if not raw.strip():
            continue
        if re.match(r"^GPU [0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:", raw):
            finish()
            current, block = {}, None
            continue
        match = _q_value(raw)
        indent = len(raw) - len(raw.lstrip())
        if match is None:
            if current is not None:
                block, block_indent = raw.strip(), indent
                if block == "Processes":
                    current["process_count"], current["process_memory_mib"] = 0, 0
            continue
        key, value = match
        if key == "Driver Version" and driver is None:
            driver = value
        elif key == "CUDA Version" and cuda is None:
            cuda = value
        if current is None and key == "Product Name":  # a fragment copied from inside a block
            current, block = {}, None
        if current is None:
            continue
        if block is not None and indent <= block_indent:
            block = None
        if block is None and key == "Product Name":
            current["name"] = value
        elif block is None and key == "Persistence Mode":
            current["persistence_mode"] = {"Enabled": True, "Disabled": False}.get(value)
        elif block == "FB Memory Usage" and key in ("Total", "Used"):
            number = re.match(r"(\d+)", value)
            if number:
                field = "memory_total_mib" if key == "Total" else "memory_used_mib"
                current[field] = int(number.group(1))
        elif block is None and key == "Processes" and value == "None":
            current["process_count"], current["process_memory_mib"] = 0, 0
        elif block == "Processes" and key == "Process ID":
            current["process_count"] = int(current.get("process_count") or 0) + 1  # type: ignore[call-overload]
        elif block == "Processes" and key == "Used GPU Memory":
            number = re.match(r"(\d+)", value)
            used = int(number.group(1)) if number else 0
            current["process_memory_mib"] = int(current.get("process_memory_mib") or 0) + used  # type: ignore[call-overload]
    finish()
    if driver is None and cuda is None and not gpus:
        raise FormatError(
            "format not recognised as nvidia-smi -q: no 'Driver Version', 'CUDA Version' or "
            "'Product Name' line"
        )
    if driver is None:
        notes.append("nvidia-smi -q (a part of it): the driver version is not in the part pasted")
    report = blank(source, "nvidia-smi -q")
    section = _info(driver, cuda, gpus, "nvidia-smi -q", notes)
    if not gpus and not re.search(r"^\s*Attached GPUs\s*:", source.text, re.MULTILINE):
        # a grep of it ('nvidia-smi -q | grep -i version'): no GPU block, and no count of them
        assert section.data is not None
        unknown = replace(
            section.data, gpus=None, gpus_reason="the part of nvidia-smi -q pasted has no GPU block"
        )
        section = replace(section, data=unknown)
    return report.with_sections(gpu=section)


CSV_FIELDS = {
    "index": "index",
    "name": "name",
    "gpu_name": "name",
    "driver_version": "driver",
    "memory.total": "memory_total_mib",
    "memory.used": "memory_used_mib",
    "compute_cap": "compute_capability",
    "persistence_mode": "persistence_mode",
}


def _unit_cut(cell: str) -> str:
    r"""'memory.total [MiB]' -> 'memory.total' (from the first '[' when the cell ends with ']'),
    as ``re.sub(r"\s*\[.*\]$", "", cell)`` did, in linear time."""
    start = cell.find("[")
    return cell[:start].rstrip() if start >= 0 and cell.endswith("]") else cell


def csv_header(line: str) -> list[str] | None:
    """Column keys of a --query-gpu CSV header ('memory.total [MiB]' -> 'memory.total')."""
    cells = [_unit_cut(c.strip()) for c in line.split(",")]
    if "name" in cells or "gpu_name" in cells:
        known = [c for c in cells if c in CSV_FIELDS or c in ("pci.bus_id", "uuid", "count")]
        if len(known) >= 2:
            return cells
    return None


def parse_csv(source: Source) -> NodeReport:
    lines = [line for line in source.text.splitlines() if line.strip()]
    header = csv_header(lines[0]) if lines else None
    if header is None:
        raise FormatError(
            "format not recognised as nvidia-smi --query-gpu CSV: the header line is missing "
            "(use --format=csv, not csv,noheader)"
        )
    gpus: list[Gpu] = []
    drivers: set[str] = set()
    for row_number, line in enumerate(lines[1:]):
        cells = [c.strip() for c in line.split(",")]
        if len(cells) != len(header):
            raise FormatError(
                f"row {row_number + 1} has {len(cells)} cells, the header {len(header)}",
                where=f"{source.name}:{row_number + 2}",
            )
        values: dict[str, object] = {}
        for column, cell in zip(header, cells, strict=True):
            target = CSV_FIELDS.get(column)
            if target is None or cell in ("[N/A]", "N/A", "[Not Supported]"):
                continue
            if target == "driver":
                drivers.add(cell)
            elif target == "index":
                values["index"] = int(cell) if cell.isdigit() else row_number
            elif target.startswith("memory"):
                number = re.match(r"(\d+)", cell)
                if number:
                    values[target] = int(number.group(1))
            elif target == "persistence_mode":
                values[target] = {"Enabled": True, "Disabled": False}.get(cell)
            elif target == "compute_capability":
                values[target] = valid_version(cell)
            else:
                values[target] = cell
        values.setdefault("index", row_number)
        gpus.append(Gpu(**values))  # type: ignore[arg-type]
    notes = list(source.notes)
    if len(drivers) > 1:
        notes.append(f"rows name different drivers: {', '.join(sorted(drivers))}")
    report = blank(source, "nvidia-smi --query-gpu")
    driver = sorted(drivers)[0] if drivers else None
    section = _info(driver, None, gpus, "nvidia-smi --query-gpu", notes)
    return report.with_sections(gpu=section)


# what nvidia-smi prints instead of its screen when NVML cannot start (strings of the nvidia-smi
# 535.309.01 binary; nvmlErrorString's text after 'Failed to initialize NVML: ')
FAILURE = re.compile(
    r"(?i:NVIDIA-SMI has failed because it couldn.t communicate with (?:the )?NVIDIA driver)"
    r"|Failed to initialize NVML: .+|NVIDIA-SMI couldn't find libnvidia-ml\S*"
    r"|^\s*No devices were found\s*$"
    # the rest of nvidia-smi's and the container runtime's NVML failures (signatures/driver.toml
    # nvml-failure, from the nvidia-smi binary's strings and libnvidia-container)
    r"|Unable to determine the device handle for (?i:gpu) ?\S+: .+"
    r"|Unable to communicate with GPU because it is insufficiently powered\b.*"
    r"|A GPU reset must occur before this GPU can be used again\b.*"
    r"|The NVIDIA kernel module detected an issue with GPU interrupts\b.*"
    r"|Mismatch in versions between nvidia-smi and NVML\b.*"
    r"|nvidia-smi: error while loading shared libraries: libnvidia-ml\S*"
    r"|nvidia-container-cli: initialization error: .+"
)
# what says no driver is reachable at all (else: the driver is there, its query failed)
_ABSENT = re.compile(r"couldn|libnvidia-ml|driver not loaded")
_NVML_LIBRARY = re.compile(r"NVML library version: ([0-9]+\.[0-9]+(?:\.[0-9]+)?)")


def parse_failure(source: Source) -> NodeReport:
    """nvidia-smi's failure output: the driver is not reachable (the kernel module not loaded,
    NVML's library missing) or not usable (``Driver/library version mismatch``, whose next line
    names the user-space library's version), or it enumerates no GPU (``No devices were
    found``). What it states becomes the GPU section: no GPU visible, or the query failed."""
    found = next(filter(None, map(FAILURE.search, source.text.splitlines())), None)
    if found is None:
        raise FormatError("format not recognised as nvidia-smi's failure output")
    said = found.group(0).strip()
    library = _NVML_LIBRARY.search(source.text)
    label = "nvidia-smi (failed)"
    report = blank(source, label)
    if said.startswith("No devices were found"):
        # zero GPUs, and a failure: the driver answered but none of the node's GPUs came up
        # (the errors table's nvidia-smi entry names why), which DRV151 reads from the note
        info = GpuInfo(driver_source=label, gpus=(), gpus_reason=f"nvidia-smi: {said}")
        note = f"nvidia-smi failed: {said}"
        return report.with_sections(gpu=Section.ok(info, source=label, notes=(note,)))
    # the whole message, as nvidia-smi printed it (a paste may wrap it): the errors table
    # matches its text
    whole = " ".join(line.strip() for line in source.text.splitlines() if line.strip())[:400]
    whole = whole.replace("\u2018", "'").replace("\u2019", "'")  # retyped quotes
    if _ABSENT.search(said):
        reason = f"nvidia-smi found no usable NVIDIA driver: {whole}"
        notes: tuple[str, ...] = (STATED_ABSENT,)
    else:
        version = f" (the user-space NVML library is {library.group(1)})" if library else ""
        reason = f"nvidia-smi failed: {said}{version}"
        notes = (QUERY_FAILED,)
    return report.with_sections(
        gpu=Section(Status.UNAVAILABLE, reason=reason, source=label, notes=notes)
    )
