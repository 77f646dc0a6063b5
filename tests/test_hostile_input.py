"""Random and hostile specs and matrix files: never a traceback; bad input is an InputError that
names the file and (when it has one) the line and key; accepted input runs through every rule."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from envcheck.engine import evaluate
from envcheck.errors import InputError, MatrixError, SpecError
from envcheck.ingest.spec import parse_spec, spec_to_report
from envcheck.matrix.load import parse_text
from envcheck.rules import all_rules
from tests.builtin_matrix import builtin_matrix

MATRIX = builtin_matrix()
RULES = all_rules(MATRIX)
ODD_VERSIONS = [
    "2.1.0a0+32f93b1",
    "12.3.4.1",
    "0.6.3.post1",
    "2.7.0a0+ecf3bae40a.nv25.02",
    "2.4.0+cu121",
    "1!2.0",
    "0.0.0+d02c707b.lx64.cp310",
    "2.14.0.dev20260101+cu132",
    "v1.2",
    "latest",
    "",
]
PACKAGES = [
    "torch",
    "vllm",
    "ray",
    "numpy",
    "flash-attn",
    "nvidia-cublas-cu12",
    "nvidia-nccl-cu12",
    "isaacsim",
    "omnigibson",
    "torchvision",
    "xformers",
    "pydantic",
    "transformers",
    "protobuf",
]
GPUS = [
    "NVIDIA H20",
    "NVIDIA H100 80GB HBM3",
    "NVIDIA GeForce RTX 5090",
    "Tesla V100-SXM2-32GB",
    "mystery GPU",
    "",
]

scalar = st.one_of(
    st.sampled_from(ODD_VERSIONS),
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.text(max_size=12),
)


def toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    text = str(value).replace("\\", "\\\\").replace('"', '\\"')
    text = re.sub(r"[\x00-\x1f\x7f]", "", text)
    return f'"{text}"'


TABLE_KEYS = {
    "gpu": ["driver", "cuda", "models", "compute_capability", "bogus"],
    "python": ["version", "implementation", "extra"],
    "packages": PACKAGES,
    "system": [
        "os",
        "glibc",
        "memory_gib",
        "memory_available_gib",
        "memory_limit_gib",
        "shm_gib",
        "in_container",
        "cpus",
        "arch",
    ],
    "env": [
        "LD_LIBRARY_PATH",
        "GLOO_SOCKET_IFNAME",
        "NCCL_SOCKET_IFNAME",
        "HF_TOKEN",
        "RAY_TMPDIR",
        "https_proxy",
    ],
    "network": ["hostname", "hostname_resolves_to"],
    "mystery": ["x"],
}


@st.composite
def spec_text(draw: st.DrawFn) -> str:
    lines = []
    for table in draw(st.lists(st.sampled_from(list(TABLE_KEYS)), unique=True, max_size=7)):
        lines.append(f"[{table}]")
        for key in draw(st.lists(st.sampled_from(TABLE_KEYS[table]), unique=True, max_size=5)):
            if key == "models":
                value: object = draw(st.lists(st.sampled_from(GPUS), max_size=3))
            elif key in ("version", "driver", "glibc", "cuda") or table == "packages":
                value = draw(st.one_of(st.sampled_from(ODD_VERSIONS), scalar))
            else:
                value = draw(scalar)
            lines.append(f'"{key}" = {toml_value(value)}')
    if draw(st.booleans()):
        lines.insert(
            draw(st.integers(0, len(lines))),
            draw(st.sampled_from(["[[", "= 3", 'x = "', "[gpu]\n[gpu]", "\x00"])),
        )
    return "\n".join(lines) + "\n"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec_text())
def test_hostile_specs(text):
    try:
        spec = parse_spec(text, "hostile.toml")
    except SpecError as err:
        assert err.where and err.where.startswith("hostile.toml")
        assert str(err).count("\n") == 0
        return
    result = evaluate(spec_to_report(spec, "hostile.toml"), MATRIX, RULES)
    assert result.errors == ()


MATRIX_TABLES = {
    "torch": {
        "version": ODD_VERSIONS,
        "python": [["3.11"], "3.11", [3.11]],
        "variants": [["cu121"], ["cuX"], "cu121"],
        "source": ["s", 1],
        "pins": [{"a": "==1"}, {"a": "=1"}, "x"],
    },
    "gpu": {
        "name": ["X"],
        "match": [["X"], "X", []],
        "compute_capability": ["9.0", "nine", 9.0],
        "architecture": ["A"],
        "source": ["s"],
    },
    "known_bad": {
        "code": ["SITE001", "x"],
        "id": ["i"],
        "title": ["t"],
        "severity": ["error", "fatal"],
        "message": ["{pkg[torch]}", "{", "{oops}"],
        "symptom": ["s"],
        "cause": ["c"],
        "source": ["s"],
        "when": [
            {"packages": {"torch": "<2"}},
            {"packages": {"torch": "<<2"}},
            {"gpu": {"min_count": "two"}},
            "x",
        ],
    },
    "constant": {"name": ["n"], "value": [1.0, "x", True], "source": ["s"]},
}


def _inline(value: object) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f'"{k}" = {_inline(v)}' for k, v in value.items()) + " }"
    return toml_value(value)


@st.composite
def matrix_text(draw: st.DrawFn) -> str:
    lines = []
    for table in draw(st.lists(st.sampled_from(list(MATRIX_TABLES)), max_size=4)):
        lines.append(f"[[{table}]]")
        for key, options in MATRIX_TABLES[table].items():
            if draw(st.integers(0, 5)) == 0:
                continue
            lines.append(f'"{key}" = {_inline(draw(st.sampled_from(options)))}')
        if draw(st.integers(0, 6)) == 0:
            lines.append('"unexpected" = 1')
    return "\n".join(lines) + "\n"


@settings(max_examples=300, deadline=None)
@given(matrix_text())
def test_hostile_matrix_files(text):
    try:
        parse_text(text, "site.toml")
    except MatrixError as err:
        assert isinstance(err, InputError)
        assert err.where.startswith("site.toml")
        assert str(err).count("\n") == 0


VALID_VERSIONS = [
    "2.1.0a0+32f93b1",
    "12.3.4.1",
    "0.6.3.post1",
    "2.7.0a0+ecf3bae40a.nv25.02",
    "2.4.0+cu121",
    "1!2.0",
    "0.0.0+d02c707b.lx64.cp310",
    "2.14.0.dev20260101+cu132",
    "2.4.0",
    "2.5.1",
    "0.6.3",
    "1.26.4",
    "2.1.0",
    "5.1.0.0",
    "4.5.0.0",
    "3.8.0",
    "2.40.0",
    "12.1.3.1",
]
DRIVERS = ["535.104.05", "470.182.03", "580.65.06", "595.45.04", "999.1", "1.0"]


@st.composite
def valid_spec_text(draw: st.DrawFn) -> str:
    """Specs that parse: right types, odd but valid versions, so every rule runs on them."""
    lines = ["[gpu]", f'driver = "{draw(st.sampled_from(DRIVERS))}"']
    lines.append(
        "models = "
        + toml_value(draw(st.lists(st.sampled_from([g for g in GPUS if g]), max_size=3)))
    )
    if draw(st.booleans()):
        lines.append(
            f'compute_capability = "{draw(st.sampled_from(["9.0", "12.0", "7.0", "3.5", "13.7"]))}"'
        )
    lines += [
        "[python]",
        f'version = "{draw(st.sampled_from(["3.9.0", "3.10.12", "3.11.9", "3.13.1", "3.15.0a1"]))}"',
    ]
    lines.append("[packages]")
    for name in draw(st.lists(st.sampled_from(PACKAGES), unique=True, max_size=10)):
        lines.append(f'"{name}" = "{draw(st.sampled_from(VALID_VERSIONS))}"')
    lines += [
        "[system]",
        f"memory_gib = {draw(st.floats(0, 4096))}",
        f"shm_gib = {draw(st.floats(0, 512))}",
    ]
    if draw(st.booleans()):
        size = draw(st.floats(0.001, 1000))
        lines.append(
            f'disks = [{{ path = "/tmp/ray", size_gib = {size}, free_gib = {draw(st.floats(0, size))} }}]'
        )
    lines += [
        "[env]",
        f'GLOO_SOCKET_IFNAME = "{draw(st.sampled_from(["eth0", "^lo", "=eth0", "", "eth0,eth1"]))}"',
    ]
    lines += [
        "[network]",
        f'hostname_resolves_to = "{draw(st.sampled_from(["127.0.1.1", "10.0.0.5", "::1"]))}"',
    ]
    lines.append(
        'interfaces = [{ name = "eth0", ipv4 = "10.0.0.5/24" }, { name = "docker0", ipv4 = "172.17.0.1" }]'
    )
    return "\n".join(lines) + "\n"


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(valid_spec_text())
def test_odd_but_valid_specs_run_every_rule(text):
    report = spec_to_report(parse_spec(text, "odd.toml"), "odd.toml")
    result = evaluate(report, MATRIX, RULES)
    assert result.errors == ()
    for finding in result.findings:
        assert finding.message and "?>" not in finding.message  # no unresolved placeholder
