"""Hypothesis strategies for hostile inputs of every kind, and the commands that read them.

Each strategy draws a ``Case``: the files to write (name -> bytes), what to feed on standard
input, and the argv to run (``{dir}`` is the case's directory). Secrets (``harness.SECRET``) are
planted only where they are secrets: values of secret-looking names and URL user information.
"""

from __future__ import annotations

import gzip
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from hypothesis import strategies as st

from tests.fuzz.harness import SECRET
from tests.reliability.helpers import report_data
from tests.specs import TINYZERO

INGEST = Path(__file__).parent.parent / "fixtures" / "ingest"


@dataclass(frozen=True)
class Case:
    kind: str
    argv: tuple[str, ...]
    files: dict[str, bytes] = field(default_factory=dict)
    stdin: bytes = b""
    outputs: tuple[str, ...] = ()  # files the command may write (relative to the case dir)
    env: tuple[tuple[str, str], ...] = ()  # variables set for the run ({dir} replaced)
    modes: tuple[tuple[str, int], ...] = ()  # chmod after writing (relative path, mode)
    # the verdict (exit code, finding codes) must be that of the same argv with no settings
    # file and no cache (a corrupted cache is a miss; --isolated ignores the file)
    same_verdict: bool = False
    signal: tuple[int, float] | None = None  # (signal number, delay): see tests/fuzz/signals.py


# --- building blocks ------------------------------------------------------------------------

HOSTILE_NUMBERS = ["nan", "inf", "-inf", "1e300", "1e400", "-4", "-1", "0", "1e-400", "9" * 400]
HOSTILE_STRINGS = [
    "",
    " ",
    "\t",
    "{",
    "}",
    "{pkg",
    "x" * 5000,
    "\u00b7\u2014\u2026",
    "\\ud800",
    "NaN",
    "1.2.3.4.5.6",
    "../../etc/passwd",
    "/proc/self/mem",
]
SECRET_SHAPES = [
    ("HF_TOKEN", f"hf_{SECRET}"),
    ("WANDB_API_KEY", SECRET),
    ("HTTP_PROXY", f"alice:{SECRET}@proxy:3128"),
    ("https_proxy", f"http://bob:p@{SECRET}@proxy.corp:8080"),
    ("PIP_INDEX_URL", f"https://__token__:{SECRET}@pypi.corp/simple"),
    ("RAY_REDIS_PASSWORD", SECRET),
    ("NCCL_SOCKET_IFNAME", "eth0"),
]

SURROGATES: tuple[Literal["Cs"]] = ("Cs",)
text = st.text(
    alphabet=st.characters(exclude_categories=SURROGATES, max_codepoint=0x2FFF), max_size=40
)
scalar = st.one_of(
    st.sampled_from(HOSTILE_STRINGS),
    text,
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
)
json_value = st.recursive(
    scalar,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if value is None:
        return '""'
    escaped = str(value).replace("\\", "\\\\").replace('"', '\\"')
    escaped = "".join(c if c >= " " and c != "\x7f" else " " for c in escaped)
    return f'"{escaped}"'


@st.composite
def byte_mutation(draw: st.DrawFn, data: bytes) -> bytes:
    """Truncate, splice junk, prepend a BOM, or leave as is."""
    choice = draw(st.integers(0, 6))
    if choice == 0 or not data:
        return data
    if choice == 1:
        return data[: draw(st.integers(0, len(data)))]
    if choice == 2:
        at = draw(st.integers(0, len(data)))
        junk = draw(st.binary(max_size=20))
        return data[:at] + junk + data[at:]
    if choice == 3:
        return b"\xef\xbb\xbf" + data
    if choice == 4:
        return b"\xff\xfe" + data
    if choice == 5:
        return b"[" * draw(st.integers(500, 3000)) + data
    return data.replace(b"\n", b"\r\n")


# --- specs ------------------------------------------------------------------------------------

SPEC_KEYS = {
    "gpu": ["driver", "cuda", "models", "compute_capability"],
    "python": ["version", "implementation"],
    "system": [
        "os",
        "glibc",
        "cpus",
        "memory_gib",
        "memory_available_gib",
        "memory_limit_gib",
        "shm_gib",
        "in_container",
        "arch",
    ],
    "packages": ["torch", "vllm", "nvidia-cublas-cu12", "ray"],
}


@st.composite
def spec_text(draw: st.DrawFn) -> bytes:
    lines: list[str] = []
    if draw(st.booleans()):
        lines.append(TINYZERO.split("[env]")[0])
    else:
        for table, keys in SPEC_KEYS.items():
            if draw(st.booleans()):
                continue
            lines.append(f"[{table}]")
            for key in draw(st.lists(st.sampled_from(keys), max_size=4, unique=True)):
                raw = draw(st.one_of(st.sampled_from(HOSTILE_NUMBERS), st.just(None)))
                value = raw if raw is not None else _toml_value(draw(scalar))
                lines.append(f'"{key}" = {value}')
    lines.append("[env]")
    for name, value in draw(st.lists(st.sampled_from(SECRET_SHAPES), min_size=1, unique=True)):
        lines.append(f'{name} = "{value}"')
    if draw(st.booleans()):
        lines.append("[[network.interfaces]]")
        lines.append('name = "eth0"')
        lines.append(f"mtu = {draw(st.sampled_from([*HOSTILE_NUMBERS, '1500', '9000']))}")
    data = "\n".join(lines).encode()
    return draw(byte_mutation(data))


# --- reports and envelopes --------------------------------------------------------------------

PLANTED_ENV = {name: value for name, value in SECRET_SHAPES}


def _set_path(data: Any, path: list[str], value: Any) -> None:
    for key in path[:-1]:
        if not isinstance(data, dict):
            return
        data = data.setdefault(key, {})
    if isinstance(data, dict):
        data[path[-1]] = value


REPORT_PATHS = [
    ["schema"],
    ["node"],
    ["gpu"],
    ["gpu", "status"],
    ["gpu", "data", "gpus"],
    ["gpu", "data", "driver_version"],
    ["system", "data", "memory_total_bytes"],
    ["system", "data", "cpu_count"],
    ["storage", "data"],
    ["env", "data", "variables"],
    ["packages", "data", "distributions"],
    ["torch", "data", "version"],
    ["created_at"],
    ["origin"],
]


@st.composite
def report_json(draw: st.DrawFn) -> dict[str, Any]:
    data = report_data(**PLANTED_ENV)
    for _ in range(draw(st.integers(0, 3))):
        path = draw(st.sampled_from(REPORT_PATHS))
        value = draw(st.one_of(json_value, st.sampled_from([True, 1.0, "1", [], {}, ["ok"]])))
        _set_path(data, path, value)
    return data


def _dumps(data: Any) -> bytes:
    # allow_nan: a report may hold NaN/Infinity tokens (json.loads reads them)
    return json.dumps(data, allow_nan=True).encode("utf-8", errors="surrogatepass")


@st.composite
def report_bytes(draw: st.DrawFn) -> bytes:
    data = draw(report_json())
    kind = draw(st.integers(0, 4))
    if kind == 1:
        data = {
            "schema": 1,
            "command": "check",
            "status": "ok",
            "exit_code": 0,
            "data": {"reports": draw(st.sampled_from([[data], {"a": 1}, [], [1], None]))},
        }
    elif kind == 2:
        data = {
            "schema": 1,
            "command": "cluster",
            "status": "ok",
            "exit_code": 0,
            "data": {
                "reports": [data],
                "unreachable": draw(st.sampled_from([5, [{"node": [1]}], None, "x"])),
                "nodes": draw(st.sampled_from([[{"node": {}}], 3, None])),
            },
        }
    raw = _dumps(data)
    if kind == 3:
        raw = raw.replace(b'"node"', b'"node\\ud800"', 1)
    return draw(byte_mutation(raw))


# --- dumps (--from) ---------------------------------------------------------------------------

DUMPS = sorted(p for p in INGEST.iterdir() if p.suffix in (".txt", ".csv", ".json", ".yml"))


@st.composite
def dump_bytes(draw: st.DrawFn) -> bytes:
    path = draw(st.sampled_from(DUMPS))
    lines = path.read_bytes().splitlines(keepends=True)
    ops = draw(st.lists(st.integers(0, 3), max_size=4))
    for op in ops:
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        if op == 0:
            del lines[i]
        elif op == 1:
            lines.insert(i, lines[i] * draw(st.integers(1, 50)))
        elif op == 2:
            name, value = draw(st.sampled_from(SECRET_SHAPES))
            lines.insert(i, f"{name}={value}\n".encode())
        else:
            lines.insert(i, draw(st.binary(max_size=40)) + b"\n")
    return draw(byte_mutation(b"".join(lines)))


# --- logs (triage) ----------------------------------------------------------------------------

LOG_LINES = [
    "RuntimeError: CUDA error: no kernel image is available for execution on the device",
    "Fatal Python error: Floating point exception",
    "torch.cuda.OutOfMemoryError: CUDA out of memory.",
    "NCCL WARN Call to ibv_reg_mr failed",
    "ImportError: libcudnn.so.9: cannot open shared object file",
    "RuntimeError: CUBLAS_STATUS_INVALID_VALUE when calling cublasGemmEx",
    "ERR" + "a" * 80,
    "\x1b[31mred\x1b[0m",
    "x" * 3000,
]


@st.composite
def log_bytes(draw: st.DrawFn) -> bytes:
    lines = draw(st.lists(st.one_of(st.sampled_from(LOG_LINES), text), max_size=30))
    for name, value in draw(st.lists(st.sampled_from(SECRET_SHAPES), min_size=1, max_size=3)):
        form = draw(st.sampled_from(["{n}={v}", "export {n}={v}", "{n}: {v}", '"{n}": "{v}"']))
        lines.insert(draw(st.integers(0, len(lines))), form.format(n=name, v=value))
    data = "\n".join(lines).encode("utf-8", errors="replace")
    mode = draw(st.integers(0, 3))
    if mode == 1:
        return gzip.compress(data)
    if mode == 2:
        packed = gzip.compress(data)
        return packed[:10] + b"\x07" * 8 + packed[18:]  # an invalid deflate block
    return data


# --- overlays (matrix files) ------------------------------------------------------------------

PATTERNS = [
    "ERR(a+)+$",
    "(x+x+)+y",
    "(a|aa)+$",
    r"MY_SITE_ERROR \d+",
    r"(?i)error",
    r"\bword\b",
    "[unclosed",
    "ab",
    r"(\d+\.)+\d+ failed",
    "ok.*then",
]
CODES = ["TOR101", "ZZZ999", "SITE101", "CUD102", "bad", ""]
MESSAGES = ["plain", "bad {pkg", "{unknown}", "{pkg[torch]} on {gpu}", "}{", "{{escaped}}"]


@st.composite
def overlay_bytes(draw: st.DrawFn) -> bytes:
    parts: list[str] = []
    for _ in range(draw(st.integers(0, 2))):
        code = draw(st.sampled_from(CODES))
        parts.append(
            "\n".join(
                [
                    "[[known_bad]]",
                    f'code = "{code}"',
                    f'id = "site-{draw(st.integers(0, 9))}"',
                    'title = "t"',
                    f'severity = "{draw(st.sampled_from(["error", "warning", "fatal"]))}"',
                    f"message = {_toml_value(draw(st.sampled_from(MESSAGES)))}",
                    'symptom = "s"',
                    'cause = "c"',
                    'source = "https://example.org/x"',
                    "[known_bad.when]",
                    f"packages = {{ torch = {_toml_value(draw(st.sampled_from(['>=2.0', 'junk', ''])))} }}",
                ]
            )
        )
    for _ in range(draw(st.integers(0, 2))):
        causes = draw(st.lists(st.sampled_from(["CUD102", "ZZZ999", "TOR101"]), max_size=2))
        parts.append(
            "\n".join(
                [
                    "[[signature]]",
                    f'id = "{draw(st.sampled_from(["site-a", "site-b", "Bad Id"]))}"',
                    f"pattern = {_toml_value(draw(st.sampled_from(PATTERNS)))}",
                    'meaning = "m"',
                    f"causes = {_toml_value(causes)}",
                    'source = "https://example.org/y"',
                ]
            )
        )
    if draw(st.booleans()):
        parts.append(
            "[[torch_index]]\n"
            f'url_template = "https://alice:{SECRET}@mirror.corp/whl/{{variant}}"\n'
            'source = "site mirror"'
        )
    data = "\n\n".join(parts).encode()
    return draw(byte_mutation(data)) if draw(st.integers(0, 4)) == 0 else data


# --- the cases --------------------------------------------------------------------------------

FORMATS = st.sampled_from([(), ("--json",), ("--markdown",)])


@st.composite
def spec_case(draw: st.DrawFn) -> Case:
    fmt = draw(FORMATS)
    return Case(
        "spec", ("check", "--spec", "{dir}/node.toml", *fmt), {"node.toml": draw(spec_text())}
    )


@st.composite
def report_case(draw: st.DrawFn) -> Case:
    fmt = draw(FORMATS)
    how = draw(st.sampled_from(["file", "stdin", "triage"]))
    raw = draw(report_bytes())
    if how == "stdin":
        return Case("report", ("check", "--report", "-", *fmt), stdin=raw)
    if how == "triage":
        log = "\n".join(LOG_LINES[:3]).encode()
        return Case(
            "report",
            ("triage", "{dir}/job.log", "--report", "{dir}/r.json", *fmt),
            {"r.json": raw, "job.log": log},
        )
    return Case("report", ("check", "--report", "{dir}/r.json", *fmt), {"r.json": raw})


@st.composite
def diff_case(draw: st.DrawFn) -> Case:
    good = _dumps(report_data(**PLANTED_ENV))
    first = draw(st.sampled_from([good, draw(report_bytes())]))
    return Case(
        "diff",
        ("diff", "{dir}/a.json", "{dir}/b.json", *draw(FORMATS)),
        {"a.json": first, "b.json": draw(report_bytes())},
    )


@st.composite
def dump_case(draw: st.DrawFn) -> Case:
    return Case(
        "dump",
        ("check", "--from", "{dir}/dump.txt", *draw(FORMATS)),
        {"dump.txt": draw(dump_bytes())},
    )


@st.composite
def log_case(draw: st.DrawFn) -> Case:
    fmt = draw(FORMATS)
    data = draw(log_bytes())
    if draw(st.booleans()):
        return Case("log", ("triage", "-", "--no-probe", *fmt), stdin=data)
    return Case("log", ("triage", "{dir}/job.log", "--no-probe", *fmt), {"job.log": data})


@st.composite
def overlay_case(draw: st.DrawFn) -> Case:
    files = {
        "site/site.toml": draw(overlay_bytes()),
        "node.toml": TINYZERO.split("[env]")[0].encode(),
        "job.log": "\n".join(LOG_LINES).encode(),
    }
    argv = draw(
        st.sampled_from(
            [
                ("matrix", "validate", "{dir}/site"),
                ("matrix", "validate", "{dir}/site", "--json"),
                ("check", "--matrix", "{dir}/site", "--spec", "{dir}/node.toml"),
                ("triage", "--matrix", "{dir}/site", "{dir}/job.log", "--no-probe"),
                ("matrix", "show", "torch", "2.4.0", "--matrix", "{dir}/site"),
                ("matrix", "show", "torch", "2.4.0", "--matrix", "{dir}/site", "--json"),
            ]
        )
    )
    return Case("overlay", argv, files)


OPTION_VALUES = [*HOSTILE_NUMBERS, "5", "0.5", "", "abc", "86401", "1" * 30]
OUTPUT_TARGETS = [
    "",
    " ",
    "/proc/x.json",
    "/sys/x.json",
    "/nonexistent/x.json",
    "{dir}",
    "{dir}/" + "a" * 300,
    "{dir}/out.json",
    "/dev/full",
    "{dir}/node.toml",
]


@st.composite
def option_case(draw: st.DrawFn) -> Case:
    files = {"node.toml": TINYZERO.encode()}
    which = draw(st.integers(0, 2))
    if which == 0:
        value = draw(st.sampled_from(OPTION_VALUES))
        return Case("options", ("check", "--spec", "{dir}/node.toml", "--timeout", value), files)
    if which == 1:
        target = draw(st.sampled_from(OUTPUT_TARGETS))
        return Case(
            "options",
            ("check", "--spec", "{dir}/node.toml", "-o", target),
            files,
            outputs=("out.json",),
        )
    junk = draw(
        st.lists(
            st.sampled_from(
                [
                    "--bogus",
                    "--json",
                    "--markdown",
                    "-o",
                    "--severity",
                    "fatal",
                    "--select",
                    "ZZZ",
                    "x",
                ]
            ),
            max_size=3,
        )
    )
    return Case("options", ("check", "--spec", "{dir}/node.toml", *junk), files)


BASE = {
    "spec": spec_case,
    "report": report_case,
    "diff": diff_case,
    "dump": dump_case,
    "log": log_case,
    "overlay": overlay_case,
    "options": option_case,
}


def materialise(case: Case, directory: Path) -> tuple[list[str], list[Path]]:
    """Write the case's files under ``directory``; the argv and the output paths to watch."""
    for name, data in case.files.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    for name, mode in case.modes:
        (directory / name).chmod(mode)
    argv = [a.replace("{dir}", str(directory)) for a in case.argv]
    return argv, [directory / o for o in case.outputs]


def case_env(case: Case, directory: Path) -> dict[str, str]:
    return {k: v.replace("{dir}", str(directory)) for k, v in case.env}
