"""Environment facts from text as people paste it, when no fixed format matches.

Covers the ``- Key: value`` reports of ``transformers env`` / ``transformers-cli env``,
``accelerate env`` and ``llamafactory-cli env``; ``ds_report``'s dotted ``key ..... value``
lines; the Isaac Sim / Isaac Lab issue templates (``### GPU Name`` headings with the value on the
next line); ``pip show`` blocks; table rows of ``pip list`` / ``conda list`` without their headers
(``pip list | grep torch`` fragments); ``name==version`` lines (a freeze that starts with
``python=3.10.12``); and prose ("NVIDIA driver 550.90.07", "torch 2.7.0+cu118", "Python
3.12.13", "Cuda compilation tools, release 12.3, V12.3.107"). Labels are matched case-blind
with markdown (``**``, backticks, list dashes), full-width colons and missing colons tolerated.

Every fact is kept as written; what is not stated stays unknown, and the report's notes say
which of the usual facts the text did not state. A text that states none is not recognised. An Isaac Sim issue template's
``Isaac Sim Version`` field also says the job runs Isaac Sim (``workload.runs``), even when
its value is "Unable to install".
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from envcheck.ingest.common import (
    Source,
    blank,
    major_minor,
    markers,
    parse_os,
    torch_section,
    valid_version,
)
from envcheck.ingest.conda import CONDA_TO_PIP, torch_cuda
from envcheck.ingest.driver_dumps import windows_driver
from envcheck.model.report import (
    Distribution,
    Gpu,
    GpuInfo,
    NodeReport,
    PackagesInfo,
    PythonInfo,
    SystemInfo,
    Toolkit,
    WorkloadInfo,
)
from envcheck.model.section import Section

LABEL = "pasted environment text"
_VERSION = (
    r"[0-9]+(?:\.[0-9]+)+(?:[.-]?(?:a|b|rc|post|dev)[0-9]*)*(?:\.dev[0-9]+)?(?:\+[A-Za-z0-9_.]+)?"
)
# a search starts only where a run of digits (or of name characters) starts: the first match
# is the same, found in linear time instead of once from every character of a long run
_VER = re.compile(rf"(?<![0-9]){_VERSION}")
_NAME = r"[A-Za-z][A-Za-z0-9._-]*"
_RUN_START = r"(?<![A-Za-z0-9._-])[0-9._-]*"  # a name's run, up to the name's first letter
_EXPR = re.compile(rf"{_RUN_START}({_NAME})\.__version__\)?$")
_PAIR = re.compile(rf"{_RUN_START}({_NAME})\s+({_VERSION})")
_KV = re.compile(r"^(?P<key>[^:=]{1,60}?)\s*(?:[:=]|\.{3,})\s*(?P<value>.*)$")
_NOCOLON = re.compile(rf"^(?P<key>[A-Za-z][A-Za-z ()/_`?.-]{{1,40}}?)\s+(?P<value>{_VERSION}\b.*)$")
_ROW = re.compile(rf"^(?P<name>{_NAME})\s+(?P<version>{_VERSION})(?:\s+\S+){{0,3}}\s*$")
_PIN = re.compile(
    rf"^(?P<name>{_NAME})(?:\[[^\]]*\])?\s*==?\s*(?P<version>{_VERSION})(?:=\S+)?\s*$"
)
_GPU_LISTED = re.compile(r"GPU [0-9]+: (.+?) \((?:UUID: )?GPU-[^)]*\)")
_GPU_LINE = re.compile(r"^GPU (\d+):\s*(.+?)(?:\s*\(UUID: [^)]*\))?\s*$")
_NVCC = re.compile(r"release (\d+\.\d+), V(\d+\.\d+\.\d+)")
_GLIBC = re.compile(r"(?:with-glibc|glibc-|glibc )(\d+\.\d+)")
_SPECIFIC = (
    # xformers.info: "PyTorch 2.2.0+cu121 with CUDA 1201 (you have 2.2.0+cpu)"
    (re.compile(rf"PyTorch {_VERSION} with CUDA [0-9]+ \(you have ({_VERSION})\)"), "torch"),
    (re.compile(rf"Python\s+{_VERSION} \(you have ({_VERSION})\)"), "python"),
    # ... and the torch build that xFormers wheel was compiled against
    (
        re.compile(rf"PyTorch ({_VERSION}) with CUDA [0-9]+ \(you have {_VERSION}\)"),
        "xformers_torch",
    ),
    (re.compile(rf"\bIsaac Sim:?\s+({_VERSION})"), "pkg:isaacsim"),
    (re.compile(rf"\bIsaac Lab:?\s+v?({_VERSION})"), "pkg:isaaclab"),
    (re.compile(rf"\bxFormers\s+({_VERSION})"), "pkg:xformers"),
    # ComfyUI: "Device: cuda:0 Tesla T4 : cudaMallocAsync"
    (re.compile(r"^Device: cuda:[0-9]+ (.+?) : "), "gpu"),
)
_PROSE = {
    "driver": re.compile(r"\b[Dd]river(?: [Vv]ersion)?:?\s+([0-9]{3}\.[0-9]+(?:\.[0-9]+)?)\b"),
    "python": re.compile(r"\bPython:?\s+(3\.[0-9]+(?:\.[0-9]+)?)\b"),
    "torch": re.compile(
        rf"\b(?:torch|PyTorch)(?:\.__version__)?\s*(?:==|=|:)?\s*['\"]?({_VERSION})", re.IGNORECASE
    ),
}
# label (normalised) -> fact
_LABELS: dict[str, str] = {
    "python version": "python",
    "python": "python",
    "pytorch version": "torch",
    "pytorch version (gpu?)": "torch",
    "torch version": "torch",
    "torch": "torch",
    "pytorch": "torch",
    "torch.__version__": "torch",
    "pytorch_version": "torch",
    "driver": "driver",
    "driver version": "driver",
    "nvidia driver": "driver",
    "nvidia driver version": "driver",
    "gpu driver": "driver",
    "gpu driver version": "driver",
    "gpu driver and cuda versions": "driver",
    # NVIDIA/open-gpu-kernel-modules' issue form: the module's version is the driver's
    "nvidia open gpu kernel modules version": "driver_release",
    "nvidia driver version (nvidia-smi)": "driver_release",
    "hardware: gpu": "gpu",
    "kernel release": "kernel",
    "kernel version": "kernel",
    "linux kernel": "kernel",
    "kernel": "kernel",
    "gpu": "gpu",
    "gpus": "gpu",
    "gpu type": "gpu",
    "gpu name": "gpu",
    "gpu model": "gpu",
    "gpu models": "gpu",
    "gpu models and configuration": "gpu",
    "second gpu": "gpu",
    "graphics card": "gpu",
    "nvcc version": "nvcc",
    "torch cuda version": "torch_cuda",
    "cuda used to build pytorch": "torch_cuda",
    "cuda toolkit": "nvcc",
    "os": "os",
    "operating system": "os",
    "operating system (os)": "os",
    "operating system and version": "os",
    "os version": "os",
    "platform": "platform",
    "libc version": "platform",
    "isaac sim version": "pkg:isaacsim",
    "isaac sim": "pkg:isaacsim",
    "isaac lab version": "pkg:isaaclab",
    "isaac lab": "pkg:isaaclab",
    "deepspeed info": "pkg:deepspeed",
    "huggingface_hub version": "pkg:huggingface-hub",
}
_NOT_PACKAGES = {
    "python",
    "cuda",
    "cudnn",
    "nvcc",
    "driver",
    "os",
    "gcc",
    "cmake",
    "clang",
    "libc",
    "nccl",
    "gpu",
    "cpu",
    "kernel",
    "ubuntu",
    "debian",
    "centos",
    "windows",
    "linux",
    "version",
    "release",
    "total",
    "rocm",
    "hip",
    "commit",
    "code",
    "model",
    "step",
    "steps",
    "python3",
    "nvrm",
    "architecture",
}


def _clean(line: str) -> str:
    """A line without markdown decoration: list dashes, bold, backticks, heading marks."""
    line = line.replace("：", ":").replace("\u3000", " ").strip()
    cells = line.split("|")
    if len(cells) == 4 and not cells[0].strip() and not cells[3].strip():
        line = f"{cells[1].strip()}: {cells[2].strip()}"  # a Markdown table's "| key | value |"
    line = re.sub(r"^(?:[-*+•]\s+|\d+\.\s+)", "", line)
    return line.replace("**", "").replace("`", "").strip()


def _label(key: str) -> str:
    return re.sub(r"\s+", " ", key.strip().strip("#").strip().lower())


@dataclass
class _Harvest:
    values: dict[str, str] = field(default_factory=dict)
    gpus: list[str] = field(default_factory=list)
    packages: list[Distribution] = field(default_factory=list)
    lines: dict[str, int] = field(default_factory=dict)  # fact -> the line it was read from
    runs: list[str] = field(default_factory=list)  # what an issue template says the job runs
    line: int = 0  # the line being read

    def set(self, fact: str, value: str) -> None:
        if fact not in self.values:
            self.values[fact] = value
            self.lines[fact] = self.line

    def at(self, source: Source, *facts: str) -> tuple[str, ...]:
        found = [f"{f} line {self.lines[f]}" for f in facts if f in self.lines]
        return (f"read from {source.name}: {', '.join(found)}",) if found else ()

    def package(self, name: str, version: str) -> None:
        if name.lower() in ("python", "python3"):  # "python=3.10.12" heading a freeze
            self.set("python", version)
            return
        if (
            name.lower() in _NOT_PACKAGES
            or valid_version(version.split("+", maxsplit=1)[0]) is None
        ):
            return
        self.packages.append(Distribution(name=CONDA_TO_PIP.get(name, name), version=version))


def _first_version(value: str) -> str | None:
    found = _VER.search(value)
    return found.group(0) if found else None


def _gpu_name(value: str) -> str | None:
    value = re.sub(r"^[0-9]+\s*[x×]\s*", "", value.strip())  # "2x A6000", "8 x H100"
    name = re.split(r"\s*[(,;]|\s+x\s*\d| node\b|\s+:\s", value, maxsplit=1)[0]
    name = name.strip().strip("*").strip()
    if not name or name.lower() in ("n/a", "none", "unknown") or not re.search(r"\d", name):
        return None
    return name


def _assign(h: _Harvest, fact: str, value: str) -> None:
    value = value.strip().strip("'\"")
    if fact == "gpu":
        listed = _GPU_LISTED.findall(value)  # nvidia-smi -L, one GPU or several on the line
        if listed:
            for name in listed:
                h.gpus.append(name)
            h.lines.setdefault("gpu", h.line)
            return
        name = _gpu_name(value)
        if name:
            h.gpus.append(name)
            h.lines.setdefault("gpu", h.line)
    elif fact == "driver" and (windows := windows_driver(value)) is not None:
        h.set("driver", windows)  # Windows' own number (dxdiag, Device Manager)
    elif fact == "driver_release":  # only a driver-shaped version (a kernel is often typed here)
        release = _DRIVER_RELEASE.search(value)
        if release:
            h.set("driver", release.group(0))
    elif fact in ("python", "torch", "driver", "torch_cuda", "xformers_torch"):
        version = _first_version(value)
        if version:
            h.set(fact, version)
    elif fact == "nvcc":
        nvcc = _NVCC.search(value)
        version = nvcc.group(2) if nvcc else _first_version(value)
        if version:
            h.set("nvcc", version)
    elif fact == "os":
        if re.search(r"\d", value) or _ROLLING_OS.fullmatch(value):
            h.set("os", re.sub(r"\s*\(.*$", "", value))
    elif fact == "kernel":
        release = _KERNEL_RELEASE.search(value)
        if release:
            h.set("kernel", release.group(0))
    elif fact == "platform":
        glibc = _GLIBC.search(value)
        if glibc:
            h.set("glibc", glibc.group(1))
    elif fact.startswith("pkg:"):
        version = _first_version(value)
        if version:
            h.package(fact[4:], version)
        name = fact[4:]
        # "Isaac Sim Version: Unable to install": the job runs Isaac Sim, release unknown
        if name in _TEMPLATE_RUNS and name not in h.runs and not _NOT_USED.fullmatch(value):
            h.runs.append(name)
            h.lines.setdefault("runs", h.line)


# an NVIDIA driver release (535.54.03, 570.86.16, 550.90)
_DRIVER_RELEASE = re.compile(r"(?<![\w.-])[0-9]{3}\.[0-9]{2,3}(?:\.[0-9]{2})?(?![\w.-])")
# a kernel release as uname -r prints it (6.8.0-31-generic, 6.4.1-arch2-1, 5.14.0-362.el9.x86_64)
_KERNEL_RELEASE = re.compile(r"\b[2-9]\.[0-9]+\.[0-9]+(?:[-+.][\w.+-]*)?")
# distributions without a version number of their own
_ROLLING_OS = re.compile(
    r"(?i)(?:arch linux|manjaro(?: linux)?|gentoo|void linux|opensuse tumbleweed|endeavouros|nixos unstable)"
)


# the issue templates' "Isaac Sim Version" field names what the job runs even when its value
# is no version ("Unable to install"); "N/A" or "none" says it does not run it
_TEMPLATE_RUNS = ("isaacsim",)
_NOT_USED = re.compile(r"(?i)\W*(?:n/?a|none|no|not used|not applicable)?\W*")


def _package_label(label: str) -> str | None:
    """'transformers version' -> 'transformers' (a one-word name before 'version')."""
    found = re.fullmatch(rf"({_NAME}) version(?: \(.*\))?", label)
    if found is None:
        return None
    name = found.group(1)
    return "torch" if name == "pytorch" else name


MAX_TEXT = 2_000_000  # characters read: a pasted environment is far smaller; a log is not one


# 'Key: value' segments several to a line: "OS: Ubuntu 20.04; GPU: 2x A6000; Driver: 515.65.01"
_SEGMENT_SPLIT = re.compile(r"\s*;\s*|\s+\|\s+|\s+/\s+")
_SEGMENT_KEY = re.compile(r"^\s*(?P<key>[A-Za-z][A-Za-z0-9 ._()-]{0,40}?)\s*:\s*\S")


def _segments(text: str) -> Iterator[tuple[int, str]]:
    """Each line with its number; a line of several labelled segments ('OS: ...; GPU: ...')
    as one line per segment (same number), when two or more segments carry a label the reader
    knows."""
    for number, raw in enumerate(text.splitlines(), 1):
        parts = _SEGMENT_SPLIT.split(raw.strip()) if ":" in raw else []
        labelled = [
            p for p in parts if (key := _SEGMENT_KEY.match(p)) and _label(key["key"]) in _LABELS
        ]
        if len(parts) >= 2 and len(labelled) >= 2:
            for part in parts:
                yield number, part
        else:
            yield number, raw


def harvest(text: str) -> _Harvest:
    h = _Harvest()
    text = text[:MAX_TEXT]
    heading: str | None = None  # an issue-template heading waiting for its value
    expr: str | None = None  # ">>> torch.__version__": the value is on the next line
    bare: str | None = None  # a package name alone on its line, its version on the next
    show_name: str | None = None
    for number, raw in _segments(text):
        h.line = number
        line = _clean(raw)
        if not line or set(line) <= set("-=|+ "):
            continue
        if raw.lstrip().startswith("#"):
            heading = _label(line)
            if heading in _LABELS or _package_label(heading):
                continue
            heading = None
        if heading is not None:
            fact = _LABELS.get(heading) or f"pkg:{_package_label(heading)}"
            _assign(h, fact, line)
            heading = None
            continue
        value_only = line.strip("'\"")
        if expr is not None and _VER.fullmatch(value_only):
            h.package(expr, value_only)
            if expr == "torch":
                h.set("torch", value_only)
        found_expr = _EXPR.search(line)
        expr = found_expr.group(1) if found_expr else None
        if bare is not None and _VER.fullmatch(line):
            h.package(bare, line)
            if bare == "torch":
                h.set("torch", line)
            bare = None
            continue
        bare = line if re.fullmatch(r"[a-z][a-z0-9._-]*", line) else None
        for regex, fact in _SPECIFIC:
            found = regex.search(line)
            if found:
                _assign(h, fact, found.group(1))
        gpu_line = _GPU_LINE.match(line)
        if gpu_line:
            h.gpus.append(gpu_line.group(2))
            continue
        nvcc = _NVCC.search(line)
        if nvcc:
            h.set("nvcc", nvcc.group(2))
        glibc = _GLIBC.search(line)
        if glibc:
            h.set("glibc", glibc.group(1))
        if show_name and line.lower().startswith("version:"):
            h.package(show_name, line.split(":", 1)[1].strip())
            show_name = None
            continue
        if line.startswith("Name:"):
            show_name = line.split(":", 1)[1].strip() or None
            continue
        pin = _PIN.match(line)
        if pin:
            h.package(pin.group("name"), pin.group("version"))
            continue
        row = _ROW.match(line)
        if row and not line.lower().startswith(("python ", "cuda ")):
            h.package(row.group("name"), row.group("version"))
            build = line.split()[2:3]
            if CONDA_TO_PIP.get(row.group("name")) == "torch" and build:
                h.set("torch_build", build[0])
            continue
        kv = _KV.match(line) or _NOCOLON.match(line)
        if kv:
            label = _label(kv.group("key"))
            value = kv.group("value")
            known = _LABELS.get(label)
            if known is not None:
                if value.strip():
                    _assign(h, known, value)
                else:
                    heading = label  # the value is on the next line
                continue
            pkg = _package_label(label)
            if pkg is not None:
                version = _first_version(value)
                if version:
                    h.package(pkg, version)
                continue
            pairs = rf"{_NAME}\s+{_VERSION}"
            if label.endswith("packages") or (
                "compiled" not in label and re.fullmatch(rf"{pairs}(?:\s*,\s*{pairs})*\s*", value)
            ):
                for pair in _PAIR.finditer(value):
                    h.package(pair.group(1), pair.group(2))
            if re.fullmatch(r"[a-z][a-z0-9._-]*", label) and _VER.fullmatch(value.strip()):
                h.package(label, value.strip())  # "numpy:   1.18.1" (PyTorch Lightning's report)
                continue
        for fact, regex in _PROSE.items():
            found = regex.search(line)
            if found and fact not in h.values:
                h.set(fact, found.group(1))
        if not h.gpus:
            mention = re.search(
                r"\b((?:NVIDIA )?(?:GeForce )?(?:RTX ?(?:PRO )?[0-9]{4}|GTX ?[0-9]{3,4})"
                r"(?: ?Ti)?(?: SUPER)?(?: Laptop GPU)?"
                r"|(?:NVIDIA )?(?:Tesla )?(?:[AH]100|H200|V100|P100|T4|L4|L40S?|K80)"
                r"(?:[ -](?:SXM[0-9]?|PCIe|[0-9]{2}GB))*|(?:NVIDIA )?(?:RTX )?A[0-9]{4})\b",
                line,
            )
            lowered = line.lower()
            # a model named beside the driver, an architecture or the word GPU, or alone on its
            # line: not any word in a sentence that looks like one
            named = mention is not None and (
                "driver" in lowered
                or "sm_" in lowered
                or "gpu" in lowered
                or mention.group(1) == line.strip().rstrip(".")
            )
            if mention and named:
                h.gpus.append(mention.group(1))
    return h


def facts_stated(text: str) -> int:
    h = harvest(text)
    return len(h.values) + len(h.gpus) + len(h.packages)


def parse(source: Source, label: str = LABEL) -> NodeReport:
    from envcheck.ingest.common import FormatError, dedupe

    h = harvest(source.text)
    if not (h.values or h.gpus or h.packages):
        raise FormatError("no environment fact found (no versions, GPU or driver)")
    report = blank(source, label)
    values = h.values
    torch_version = values.get("torch")
    dists = list(dedupe(h.packages))
    if torch_version:  # a labelled torch version beats a "torch X" row elsewhere
        dists = [Distribution(name="torch", version=torch_version)] + [
            d for d in dists if d.key != "torch"
        ]
    built_for = values.get("xformers_torch")
    if built_for:
        # xformers.info states the torch build its extensions were compiled for: that build is
        # what it needs (TOR104 compares it with the installed torch, variant included)
        dists = [
            dataclasses.replace(d, requires=(*d.requires, f"torch=={built_for}"))
            if d.key == "xformers"
            else d
            for d in dists
        ]
    packages = (
        PackagesInfo(
            distributions=tuple(dists),
            partial="pasted text names only some packages",
        )
        if dists
        else None
    )
    missing = [
        what
        for what, known in (
            ("Python version", "python" in values),
            ("torch version", packages is not None and packages.get("torch") is not None),
            ("GPU", bool(h.gpus)),
            ("driver version", "driver" in values),
            ("package list", len(dists) > 2),
        )
        if not known
    ]
    note: tuple[str, ...] = (
        (f"partial: the text does not state {', '.join(missing)}",) if missing else ()
    )
    if len(source.text) > MAX_TEXT:
        note += (f"only the first {MAX_TEXT:,} characters were read",)
    sections: dict[str, Section[Any]] = {}
    if packages is not None:
        sections["packages"] = Section.ok(packages, source=label, notes=note)
        cuda, cuda_known = major_minor(values.get("torch_cuda")), "torch_cuda" in values
        if values.get("torch_build"):
            cuda, cuda_known = torch_cuda(values["torch_build"])
        torch = torch_section(
            packages, label, version=torch_version, cuda=cuda, cuda_known=cuda_known
        )
        if torch.is_ok:
            sections["torch"] = dataclasses.replace(
                torch, notes=(*torch.notes, *h.at(source, "torch", "torch_cuda", "torch_build"))
            )
    python = values.get("python")
    if python and valid_version(python):
        sections["python"] = Section.ok(
            PythonInfo(version=python, markers=markers(python, None)),
            source=label,
            notes=h.at(source, "python"),
        )
    if h.gpus or "driver" in values:
        gpus = tuple(Gpu(index=i, name=n) for i, n in enumerate(h.gpus))
        sections["gpu"] = Section.ok(
            GpuInfo(
                driver_version=valid_version(values.get("driver")),
                driver_source=label,
                gpus=gpus or None,
                gpus_reason=None if gpus else "the text names no GPU",
            ),
            source=label,
            notes=(*(note if packages is None else ()), *h.at(source, "driver", "gpu")),
        )
    if h.runs:
        sections["workload"] = Section.ok(
            WorkloadInfo(runs=tuple(h.runs)), source=label, notes=h.at(source, "runs")
        )
    os_pretty = values.get("os")
    nvcc = values.get("nvcc")
    if os_pretty or values.get("glibc") or nvcc or values.get("kernel"):
        os_id, os_version = parse_os(os_pretty)
        sections["system"] = Section.ok(
            SystemInfo(
                os_id=os_id,
                os_version=os_version,
                os_pretty=os_pretty,
                kernel=values.get("kernel"),
                glibc=values.get("glibc"),
                nvcc=Toolkit(nvcc_path="nvcc (per the pasted text)", version=major_minor(nvcc))
                if nvcc
                else None,
            ),
            source=label,
            notes=h.at(source, "os", "kernel", "glibc", "nvcc"),
        )
    return report.with_sections(**sections)
