"""An nvidia-smi screen saved on Windows as UTF-16 without its byte order mark (every other
byte NUL) is read as text, as triage reads such a log, not refused as binary data; NUL bytes in
UTF-8 text still are."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_cli

SCREEN = """\
+---------------------------------------------------------------------------------------+
| NVIDIA-SMI 536.23                 Driver Version: 536.23       CUDA Version: 12.2     |
|-----------------------------------------+----------------------+----------------------+
| GPU  Name                     TCC/WDDM  | Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |
|=========================================+======================+======================|
|   0  NVIDIA GeForce RTX 3060 ...  WDDM  | 00000000:01:00.0 Off |                  N/A |
| N/A   45C    P8              10W /  80W |      0MiB /  6144MiB |      0%      Default |
+-----------------------------------------+----------------------+----------------------+
"""


def test_utf16_without_a_byte_order_mark(tmp_path: Path) -> None:
    dump = tmp_path / "nvidia-smi.txt"
    dump.write_bytes(SCREEN.replace("\n", "\r\n").encode("utf-16-le"))
    result = run_cli("check", "--from", str(dump), "--json")
    assert result.returncode in (0, 1), result.stderr
    gpu = result.json()["data"]["reports"][0]["gpu"]["data"]
    assert gpu["driver_version"] == "536.23" and gpu["cuda_driver_version"] == "12.2"


def test_nul_bytes_in_utf8_text_are_still_binary(tmp_path: Path) -> None:
    dump = tmp_path / "dump.bin"
    dump.write_bytes(b"NVIDIA-SMI 535.104.05\x00\x00\x00\x07\x08 Driver Version: 535.104.05\n")
    result = run_cli("check", "--from", str(dump))
    assert result.returncode == 2
    assert "binary data" in result.stderr
