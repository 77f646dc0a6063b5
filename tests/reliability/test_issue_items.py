"""Every minimal reproduction listed in issue 10, as a test through the command line: exit 2
with one line naming what is wrong (and where), or the secret kept out of every output."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from tests.conftest import cli_env, run_cli
from tests.reliability.helpers import report_data, saved_report
from tests.specs import TINYZERO

SECRET = "S3CRETPW"


def _report(**changes: object) -> str:
    data = report_data()
    data.update(changes)
    return json.dumps(data)


def _envelope(body: dict[str, object]) -> str:
    return json.dumps(
        {"schema": 1, "command": "cluster", "status": "ok", "exit_code": 0, "data": body}
    )


GOOD = json.dumps(report_data())
SPEC_HEAD = TINYZERO.split("[system]")[0]

# (files to write, argv ({d} is the directory), words the one stderr line must hold)
CASES = [
    (
        {"s.toml": "[system]\nmemory_gib = nan\n"},
        ["check", "--spec", "{d}/s.toml"],
        "s.toml:2: key 'system.memory_gib': must be a finite number, got nan",
    ),
    (
        {"s.toml": "[system]\nshm_gib = inf\n"},
        ["check", "--spec", "{d}/s.toml"],
        "key 'system.shm_gib': must be a finite number",
    ),
    (
        {"s.toml": "[system]\nmemory_limit_gib = 1e300\n"},
        ["check", "--spec", "{d}/s.toml"],
        "key 'system.memory_limit_gib': must be >= 0 and <= 1073741824",
    ),
    (
        {"s.toml": "[system]\nmemory_gib = 1e400\n"},
        ["check", "--spec", "{d}/s.toml"],
        "must be a finite number",
    ),
    (
        {"s.toml": '[system]\nos = " "\n'},
        ["check", "--spec", "{d}/s.toml"],
        "key 'system.os': is blank",
    ),
    (
        {"s.toml": "[system]\ncpus = -4\n"},
        ["check", "--spec", "{d}/s.toml"],
        "key 'system.cpus': must be >= 1",
    ),
    (
        {"s.toml": '[[network.interfaces]]\nname = "eth0"\nmtu = -1\n'},
        ["check", "--spec", "{d}/s.toml"],
        "key 'network.interfaces[0].mtu': must be >= 68",
    ),
    (
        {"r.json": _envelope({"reports": {"a": 1}})},
        ["check", "--report", "{d}/r.json"],
        "key 'data.reports': JSON envelope holds no list of reports",
    ),
    ({"r.json": "[" * 2000}, ["check", "--report", "{d}/r.json"], "nested too deeply"),
    ({"r.json": "[" * 2000}, ["diff", "{d}/r.json"], "nested too deeply"),
    ({"r.json": "[" * 2000}, ["check", "--from", "{d}/r.json"], "r.json"),
    (
        {"r.json": _report(node="\\ud800").replace("\\\\ud800", "\\ud800")},
        ["check", "--report", "{d}/r.json"],
        "lone UTF-16 surrogate",
    ),
    (
        {"a.json": GOOD, "b.json": _report(schema=True)},
        ["diff", "{d}/a.json", "{d}/b.json"],
        "b.json: key 'schema': unsupported report schema True",
    ),
    (
        {"a.json": GOOD, "b.json": _report(gpu={"status": ["ok"]})},
        ["diff", "{d}/a.json", "{d}/b.json"],
        "b.json: key 'gpu.status'",
    ),
    (
        {"a.json": GOOD, "b.json": _envelope({"reports": [report_data()], "unreachable": 5})},
        ["diff", "{d}/a.json", "{d}/b.json"],
        "key 'data.unreachable': expected a list",
    ),
    ({"s.toml": TINYZERO}, ["probe", "--timeout", "nan"], "argument --timeout: must be a finite"),
    (
        {"s.toml": TINYZERO},
        ["check", "--spec", "{d}/s.toml", "--timeout", "inf"],
        "argument --timeout: must be a finite",
    ),
    ({"s.toml": TINYZERO}, ["check", "--spec", "{d}/s.toml", "-o", ""], "-o: empty file name"),
    (
        {"s.toml": TINYZERO},
        ["check", "--spec", "{d}/s.toml", "-o", "/proc/x.json"],
        "kernel file system",
    ),
    (
        {"s.toml": TINYZERO},
        ["check", "--spec", "{d}/s.toml", "-o", "{d}/" + "n" * 300],
        "file name longer than 255 bytes",
    ),
    (
        {"s.toml": TINYZERO},
        ["check", "--spec", "{d}/s.toml", "--bogus"],
        "unrecognized arguments: --bogus",
    ),
    ({"s.toml": TINYZERO}, ["check", "--severity", "fatal"], "argument --severity"),
    (
        {},
        ["lock", "--python", "3.11", "--gpu", "NVIDIA H100 x99999999999"],
        "the count must be >= 1 and <= 1024",
    ),
    ({}, ["lock", "--python", "3.11", "--gpu", "NVIDIA H100 x0"], "the count must be >= 1"),
    ({}, ["lock", "--python", "3.11", "--gpu", "NVIDIA H100 x-1"], "the count must be >= 1"),
]


@pytest.mark.parametrize(
    ("files", "argv", "words"), CASES, ids=[" ".join(c[1])[:60] for c in CASES]
)
def test_bad_input_is_one_line_exit_2(
    tmp_path: Path, files: dict[str, str], argv: list[str], words: str
) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8", errors="surrogatepass")
    result = run_cli(*[a.replace("{d}", str(tmp_path)) for a in argv])
    assert result.returncode == 2, (result.returncode, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("envcheck: error: "), lines
    assert words in lines[0]
    assert "Traceback" not in result.stderr


def test_invalid_gzip_is_exit_2(tmp_path: Path) -> None:
    packed = gzip.compress(b"RuntimeError: CUDA error: no kernel image is available\n" * 50)
    (tmp_path / "job.log.gz").write_bytes(packed[:10] + b"\x07" * 8 + packed[18:])
    for engine in ("re", "auto"):
        result = run_cli("triage", str(tmp_path / "job.log.gz"), "--no-probe", "--engine", engine)
        assert result.returncode == 2, result.stderr
        assert result.stderr.splitlines() == [
            line for line in result.stderr.splitlines() if line.startswith("envcheck: error: ")
        ]


def test_report_loaded_again_is_redacted_in_every_format(tmp_path: Path) -> None:
    path = saved_report(
        tmp_path, env={"HF_TOKEN": f"hf_{SECRET}", "https_proxy": f"http://bob:p@{SECRET}@proxy"}
    )
    log = tmp_path / "job.log"
    log.write_text("RuntimeError: CUDA error: no kernel image is available for execution\n")
    for argv in (
        ["check", "--report", str(path), "--json", "-o", str(tmp_path / "out.json")],
        ["check", "--report", str(path), "--markdown", "--verbose"],
        ["triage", str(log), "--report", str(path), "--json"],
        ["probe", "--json"],
    ):
        result = run_cli(*argv, env=cli_env(HF_TOKEN=f"hf_{SECRET}"))
        assert SECRET not in result.stdout + result.stderr, argv
    assert SECRET not in (tmp_path / "out.json").read_text()


def test_refresh_hides_index_credentials(index_server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    index_server.serve_fixtures()
    url = index_server.index.replace("http://", f"http://alice:{SECRET}@")
    result = run_cli(
        "matrix",
        "refresh",
        "--index-url",
        url,
        "--packages",
        "ray",
        "--dry-run",
        "--cache-dir",
        str(tmp_path / "cache"),
        "--timeout",
        "5",
    )
    assert SECRET not in result.stdout + result.stderr
    assert "<redacted>@" in result.stdout + result.stderr


def test_show_hides_url_template_credentials(tmp_path: Path) -> None:
    overlay = tmp_path / "site"
    overlay.mkdir()
    (overlay / "index.toml").write_text(
        "[[torch_index]]\n"
        f'url_template = "https://alice:{SECRET}@mirror.corp/whl/{{variant}}"\n'
        'source = "site mirror"\n'
    )
    for fmt in ([], ["--json"]):
        result = run_cli("matrix", "show", "torch", "2.4.0", "--matrix", str(overlay), *fmt)
        assert result.returncode == 0, result.stderr
        assert SECRET not in result.stdout + result.stderr
        assert "mirror.corp" in result.stdout


OVERLAY = """\
[[known_bad]]
code = "{code}"
id = "site-torch"
title = "t"
severity = "error"
message = "{message}"
symptom = "s"
cause = "c"
source = "https://example.org/x"
[known_bad.when]
packages = {{ torch = ">=2.0" }}

[[signature]]
id = "site-sig"
pattern = "{pattern}"
meaning = "m"
causes = [{causes}]
source = "https://example.org/y"
"""


@pytest.mark.parametrize(
    ("fields", "line", "words"),
    [
        ({"code": "TOR101"}, 2, "TOR101 is already a built-in rule"),
        ({"message": "bad {pkg"}, 6, "is not a valid message template"),
        ({"pattern": "ERR(a+)+$"}, 15, "nests a repetition inside a repetition"),
        ({"pattern": "(a|aa)+ failed"}, 15, "nests a repetition inside a repetition"),
        ({"causes": '"ZZZ999"'}, 17, "ZZZ999 is not a rule code"),
        ({"pattern": "(?i)site error"}, 15, "inline flags"),
    ],
)
def test_overlays_validate_and_load_agree(
    tmp_path: Path, fields: dict[str, str], line: int, words: str
) -> None:
    values = {
        "code": "SITE101",
        "message": "ok",
        "pattern": "SITE_ERROR [0-9]+",
        "causes": '"CUD102"',
        **fields,
    }
    overlay = tmp_path / "site"
    overlay.mkdir()
    (overlay / "site.toml").write_text(OVERLAY.format(**values))
    (tmp_path / "s.toml").write_text(TINYZERO)
    (tmp_path / "job.log").write_text("ERR" + "a" * 80 + "!\n")
    where = f"{overlay / 'site.toml'}:{line}"
    validate = run_cli("matrix", "validate", str(overlay))
    assert validate.returncode == 2 and where in validate.stderr and words in validate.stderr
    for argv in (
        ["check", "--matrix", str(overlay), "--spec", str(tmp_path / "s.toml")],
        ["triage", "--matrix", str(overlay), str(tmp_path / "job.log"), "--no-probe"],
    ):
        result = run_cli(*argv, timeout=60)  # the catastrophic pattern must not hang triage
        assert result.returncode == 2
        assert result.stderr.startswith(f"envcheck: error: {where}") and words in result.stderr


def test_a_good_overlay_still_loads(tmp_path: Path) -> None:
    overlay = tmp_path / "site"
    overlay.mkdir()
    values = {
        "code": "SITE101",
        "message": "torch {pkg[torch]}",
        "pattern": r"SITE_ERROR ([0-9]+\\.)+[0-9]+",
        "causes": '"CUD102"',
    }
    (overlay / "site.toml").write_text(OVERLAY.format(**values))
    (tmp_path / "s.toml").write_text(TINYZERO)
    assert run_cli("matrix", "validate", str(overlay)).returncode == 0
    result = run_cli("check", "--matrix", str(overlay), "--spec", str(tmp_path / "s.toml"))
    assert result.returncode in (0, 1), result.stderr
