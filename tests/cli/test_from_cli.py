"""`envcheck check --from`: as a user runs it, including stdin, several sources, --spec, and
inputs that are not reports at all."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from tests.conftest import run_cli

INGEST = Path(__file__).parent.parent / "fixtures" / "ingest"
TINYZERO = str(INGEST / "collect_env_tinyzero_h20.txt")


def test_tinyzero_collect_env_yields_the_cublas_error() -> None:
    res = run_cli("check", "--from", TINYZERO, "--json")
    assert res.returncode == 1, res.stderr
    env = res.json()
    assert env["command"] == "check" and env["status"] == "findings"
    cud102 = [f for f in env["data"]["findings"] if f["code"] == "CUD102"]
    assert len(cud102) == 1
    assert cud102[0]["severity"] == "error"
    assert "NVIDIA H20 x8" in cud102[0]["message"]
    assert cud102[0]["fix"]["commands"] == ["pip install nvidia-cublas-cu12==12.3.4.1"]
    report = env["data"]["reports"][0]
    assert report["origin"]["kind"] == "ingested"
    assert "vLLM collect_env" in report["origin"]["detail"]


def test_pip_freeze_from_stdin() -> None:
    text = "torch==2.2.2\nnvidia-cublas-cu12==12.1.3.1\nnumpy==2.0.1\n"
    res = run_cli("check", "--from", "-", "--json", stdin=text)
    assert res.returncode == 1, res.stderr
    codes = {f["code"] for f in res.json()["data"]["findings"]}
    assert "PKG103" in codes  # numpy 2 with torch < 2.3
    # the GPU is unknown: CUD102 does not guess, it says what reports name
    cud102 = [f for f in res.json()["data"]["findings"] if f["code"] == "CUD102"]
    assert cud102 and cud102[0]["severity"] == "warning"


def test_sources_combine_into_one_node() -> None:
    freeze = "torch==2.4.0\nnvidia-cublas-cu12==12.1.3.1\nnumpy==1.26.4\n"
    res = run_cli(
        "check",
        "--from",
        "-",
        "--from",
        str(INGEST / "nvidia_smi_535_h20.txt"),
        "--json",
        stdin=freeze,
    )
    assert res.returncode == 1, res.stderr
    env = res.json()
    assert len(env["data"]["reports"]) == 1
    report = env["data"]["reports"][0]
    assert "<stdin> (pip freeze) + " in report["origin"]["detail"]
    assert report["gpu"]["data"]["driver_version"] == "535.161.08"
    cud102 = [f for f in env["data"]["findings"] if f["code"] == "CUD102"]
    assert cud102[0]["severity"] == "error"  # H20 from nvidia-smi, cuBLAS from pip


def test_from_with_spec_for_hardware(tmp_path: Path) -> None:
    spec = tmp_path / "hw.toml"
    spec.write_text('[gpu]\ndriver = "535.104.05"\nmodels = ["NVIDIA H20"]\n', encoding="utf-8")
    freeze = tmp_path / "freeze.txt"
    freeze.write_text("torch==2.4.0\nnvidia-cublas-cu12==12.1.3.1\n", encoding="utf-8")
    res = run_cli("check", "--from", str(freeze), "--spec", str(spec), "--json")
    assert res.returncode == 1, res.stderr
    report = res.json()["data"]["reports"][0]
    assert report["gpu"]["data"]["driver_version"] == "535.104.05"
    assert any(
        f["code"] == "CUD102" and f["severity"] == "error" for f in res.json()["data"]["findings"]
    )


def test_forced_format(tmp_path: Path) -> None:
    odd = tmp_path / "reqs.txt"
    odd.write_text("# my pins\ntorch==2.13.0+cpu\n", encoding="utf-8")
    res = run_cli("check", "--from", str(odd), "--from-format", "uv-pip-freeze", "--json")
    assert res.returncode == 0, res.stderr
    assert "(uv pip freeze)" in res.json()["data"]["reports"][0]["origin"]["detail"]


def test_utf16_pip_freeze(tmp_path: Path) -> None:
    # PowerShell's `pip freeze > f` writes UTF-16 with a byte order mark
    path = tmp_path / "freeze16.txt"
    path.write_bytes(codecs.BOM_UTF16_LE + "numpy==1.26.4\r\ntorch==2.4.0\r\n".encode("utf-16-le"))
    res = run_cli("check", "--from", str(path), "--json")
    assert res.returncode in (0, 1), res.stderr
    pkgs = res.json()["data"]["reports"][0]["packages"]["data"]["distributions"]
    assert {d["name"]: d["version"] for d in pkgs} == {"numpy": "1.26.4", "torch": "2.4.0"}


BAD_INPUTS = [
    ("binary", b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 8, "binary data"),
    ("prose", b"Hello,\nthis is a letter, not a report.\n", "format not recognised"),
    ("empty", b"", "empty"),
    (
        "truncated collect_env",
        b"Collecting environment information...\nPyTorch vers",
        "format not recognised",
    ),
    ("report json", b'{"schema": 1, "node": "a"}', "--report"),
    ("json garbage", b"[1, 2, 3]", "format not recognised"),
]


@pytest.mark.parametrize(("label", "data", "message"), BAD_INPUTS, ids=[b[0] for b in BAD_INPUTS])
def test_bad_inputs_one_line_exit_2(tmp_path: Path, label: str, data: bytes, message: str) -> None:
    path = tmp_path / "input.txt"
    path.write_bytes(data)
    res = run_cli("check", "--from", str(path))
    assert res.returncode == 2
    assert res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("envcheck: error: ")
    assert message in lines[0]
    assert "Traceback" not in res.stderr


def test_mixed_encoding_collect_env_parses(tmp_path: Path) -> None:
    data = (INGEST / "collect_env_torch2.3_h20.txt").read_bytes()
    data = data.replace(b"Model name:", b"Mod\xe8le name:")  # a latin-1 byte in the CPU block
    path = tmp_path / "ce.txt"
    path.write_bytes(data)
    res = run_cli("check", "--from", str(path), "--json")
    assert res.returncode in (0, 1), res.stderr
    report = res.json()["data"]["reports"][0]
    assert report["torch"]["data"]["version"] == "2.3.0+cu121"
    assert any("UTF-8" in n for n in report["packages"]["notes"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--from", "a", "--report", "b"], "alternatives"),
        (["--from-format", "pip-freeze"], "--from-format needs --from"),
        (["--from", "-", "--from", "-"], "only once"),
        (
            [
                "--from",
                "a",
                "--from",
                "b",
                "--from-format",
                "pip-freeze",
                "--from-format",
                "conda-list",
                "--from-format",
                "pip-list",
            ],
            "once per --from",
        ),
        (["--from", "a", "--from-format", "docx"], "unknown format"),
        (["--from", "/nonexistent/file"], "no such file"),
    ],
)
def test_usage_errors(args: list[str], message: str) -> None:
    res = run_cli("check", *args, stdin="")
    assert res.returncode == 2
    assert message in res.stderr
    assert "Traceback" not in res.stderr


def test_partial_package_list_skips_instead_of_guessing() -> None:
    # collect_env lists only packages matching its patterns: verl may be installed
    res = run_cli("check", "--from", TINYZERO, "--json")
    skipped = {s["code"]: s["reason"] for s in res.json()["data"]["skipped"]}
    assert "verl is not in the package list, which is partial" in skipped["VLM105"]
