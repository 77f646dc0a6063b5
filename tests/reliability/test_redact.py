"""Redaction: every secret shape the fuzzer found, linear time, and every output boundary."""

from __future__ import annotations

import json
import time

import pytest

from envcheck.redact import REDACTED, redact_env, redact_text

SECRET = "S3CRETPW"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("HTTP_PROXY=alice:S3CRETPW@proxy:3128", f"HTTP_PROXY={REDACTED}@proxy:3128"),
        ("http://bob:p@S3CRETPW@proxy/x", f"http://{REDACTED}@proxy/x"),
        ("https://__token__:S3CRETPW@host/simple", f"https://{REDACTED}@host/simple"),
        ("export HF_TOKEN=S3CRETPW more", f"export HF_TOKEN={REDACTED} more"),
        ("HF_TOKEN='S3CRET PW'", f"HF_TOKEN='{REDACTED}'"),
        (
            '{"HF_TOKEN": "S3CRET\\"PW", "PATH": "/bin"}',
            f'{{"HF_TOKEN": "{REDACTED}", "PATH": "/bin"}}',
        ),
        ("{'WANDB_API_KEY': 'S3CRETPW'}", f"{{'WANDB_API_KEY': '{REDACTED}'}}"),
        ("WANDB_API_KEY: S3CRETPW", f"WANDB_API_KEY: {REDACTED}"),
        ("api_key: S3CRETPW", f"api_key: {REDACTED}"),
        ("--password=S3CRETPW", f"--password={REDACTED}"),
        # kept: not secrets
        ("git@github.com:org/repo.git", "git@github.com:org/repo.git"),
        ("mail bob@example.com", "mail bob@example.com"),
        ("the key: value", "the key: value"),
        ("HF_TOKEN=<redacted>", "HF_TOKEN=<redacted>"),
        ("https://host/simple", "https://host/simple"),
    ],
)
def test_shapes(text: str, expected: str) -> None:
    assert redact_text(text) == expected


def test_env_values_by_name_and_content() -> None:
    safe, hidden = redact_env(
        {"HF_TOKEN": "hf_x", "HTTP_PROXY": f"alice:{SECRET}@proxy:3128", "PATH": "/bin"}
    )
    assert safe == {"HF_TOKEN": REDACTED, "HTTP_PROXY": f"{REDACTED}@proxy:3128", "PATH": "/bin"}
    assert hidden == ("HF_TOKEN", "HTTP_PROXY")


HOSTILE = [
    "a" * 200_000,
    "a:" * 100_000,
    "@" * 200_000,
    "a:a@" * 50_000,
    "HTTP://" * 30_000,
    "x=TOKEN" * 30_000,
    "TOKEN" * 40_000 + "=",
    "a_TOKEN: " * 20_000,
    '"TOKEN":' * 25_000,
    "a://" * 50_000,
    'a="' * 60_000 + "TOKEN",
    "x:" + "a@" * 100_000,
]


@pytest.mark.parametrize("text", HOSTILE, ids=lambda t: t[:8])
def test_no_input_makes_redaction_quadratic(text: str) -> None:
    # a bound against hangs, not a benchmark: 200 kB took 25-31 s with the old pattern
    started = time.monotonic()
    redact_text(text)
    assert time.monotonic() - started < 2.0


def test_saved_report_is_redacted_again(tmp_path, cli) -> None:  # type: ignore[no-untyped-def]
    from tests.reliability.helpers import saved_report

    path = saved_report(tmp_path, env={"HF_TOKEN": "hf_" + SECRET, "HTTP_PROXY": f"a:{SECRET}@p:1"})
    for args in (
        ["check", "--report", str(path)],
        ["check", "--report", str(path), "--json"],
        ["check", "--report", str(path), "--markdown"],
        ["probe", "--help"],
        ["diff", str(path), str(path), "--json"],
    ):
        result = cli(*args)
        assert SECRET not in result.stdout + result.stderr, args


def test_triage_masks_secrets_in_echoed_lines(tmp_path, cli) -> None:  # type: ignore[no-untyped-def]
    log = tmp_path / "job.log"
    log.write_text(
        f"HF_TOKEN={SECRET} python train.py\n"
        f"export HTTP_PROXY=alice:{SECRET}@proxy:3128\n"
        "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    )
    for fmt in ([], ["--json"], ["--markdown"]):
        result = cli("triage", str(log), "--no-probe", *fmt)
        assert result.returncode in (0, 1), result.stderr
        assert SECRET not in result.stdout + result.stderr
    json.loads(cli("triage", str(log), "--no-probe", "--json").stdout)


# --redact: versions that look like IPv4 addresses are facts a pasted report needs; addresses
# are not. Both directions, on the strings envcheck and the tools it reads print.
VERSIONS_KEPT = [
    "pip install nvidia-cublas-cu12==12.1.3.1",
    "nvidia-cublas-cu12>=12.3.4.1",
    "nvidia-cublas-cu12          12.1.3.1",  # a `pip list` row
    "nvidia-cudnn-cu12 (9.1.0.70)",
    "cupy-cuda12x: 13.0.0.1",
    "nvidia_cublas_cu12-12.1.3.1-py3-none-manylinux1_x86_64.whl",
    "site-packages/nvidia_cufft_cu12-11.0.2.54.dist-info/METADATA",
    "/usr/lib/x86_64-linux-gnu/libcudnn.so.8.9.2.26",
    "| NVIDIA-SMI 535.104.05.01   Driver Version: 535.104.05.01   CUDA Version: 12.2 |",
    "Driver Version: 250.10.5.1",
    "CUDNN_VERSION=9.1.0.70",
    "NV_LIBCUBLAS_VERSION 12.1.3.1-1",
    "libcublas-12-1 12.1.3.1-1",
    '{"version": "12.1.3.1"}',
    "cuBLAS 12.1.3.1 crashes fp16/bf16 GEMMs on Hopper",
    "torch 2.4.0+cu121 with cublas 12.1.3.1+cu121",
    "build 1.2.3.4.5",
]
ADDRESSES_MASKED = [
    ("MASTER_ADDR=10.0.0.4", "10.0.0.4"),
    ("--master_addr 10.0.0.4 --master_port 29500", "10.0.0.4"),
    ("init_method=tcp://192.168.1.2:29500", "192.168.1.2"),
    ("NCCL INFO NET/Socket : Using [0]eth0:10.0.0.4<0>", "10.0.0.4"),
    ("2: inet 10.0.0.4/24 brd 10.0.0.255 scope global eth0", "10.0.0.4"),
    ("connect to 10.0.0.4:29500 failed: Connection refused.", "10.0.0.4"),
    ("no_proxy=10.0.0.4,10.0.0.5", "10.0.0.5"),
    ("allowed 10.0.0.1-10.0.0.9", "10.0.0.9"),
    ("allowed 10.0.0.1-10.0.0.9", "10.0.0.1"),
    ("peer at 10.0.0.4.", "10.0.0.4"),
    # a version on the line does not shield the address beside it
    ("nvidia-nccl-cu12==2.20.5.1 could not reach 10.0.0.4", "10.0.0.4"),
]


@pytest.mark.parametrize("text", VERSIONS_KEPT)
def test_redact_keeps_versions_that_look_like_addresses(text: str) -> None:
    from envcheck.redact import mask_addresses

    assert mask_addresses(text) == text


@pytest.mark.parametrize(("text", "address"), ADDRESSES_MASKED)
def test_redact_masks_real_addresses(text: str, address: str) -> None:
    from envcheck.redact import mask_addresses

    masked = mask_addresses(text)
    assert address not in masked
    assert "ip-" in masked


def test_mixed_line_keeps_the_version_and_masks_the_address() -> None:
    from envcheck.redact import mask_addresses

    masked = mask_addresses("nvidia-nccl-cu12==2.20.5.1 could not reach 10.0.0.4:29500")
    assert masked.startswith("nvidia-nccl-cu12==2.20.5.1 could not reach ip-")
    assert masked.endswith(":29500")


def test_known_versions_are_kept_in_prose_and_nowhere_else() -> None:
    from envcheck.redact import mask_addresses

    prose = "pip will note that torch pins 12.1.3.1."
    assert "12.1.3.1" not in mask_addresses(prose)  # bare in prose: no context of its own
    assert mask_addresses(prose, frozenset({"12.1.3.1"})) == prose
    assert "10.0.0.4" not in mask_addresses("host 10.0.0.4", frozenset({"12.1.3.1"}))


def test_masking_stays_linear_with_many_quads() -> None:
    from envcheck.redact import mask_addresses

    text = "nvidia-x-cu12==12.1.3.1 10.0.0.4 " * 20_000
    started = time.monotonic()
    masked = mask_addresses(text)
    assert time.monotonic() - started < 2.0
    assert masked.count("12.1.3.1") == 20_000 and "10.0.0.4" not in masked


REDACT_NODE = """\
[gpu]
driver = "535.104.05"
models = ["NVIDIA H20", "NVIDIA H20"]

[python]
version = "3.10.12"

[packages]
torch = "2.4.0+cu121"
"nvidia-cublas-cu12" = "12.1.3.1"

[system]
os = "Ubuntu 22.04"
glibc = "2.35"

[env]
MASTER_ADDR = "10.0.0.4"
NCCL_COMM_ID = "192.168.1.2:29500"
HF_TOKEN = "12.1.3.1"
CUDNN_VERSION = "9.1.0.70"
HTTPS_PROXY = "http://alice:S3CRETPW@10.0.0.9:3128"

[network]
interfaces = [{ name = "eth0", ipv4 = "10.0.0.5", up = true }]
"""


@pytest.mark.parametrize("fmt", [[], ["--json"], ["--markdown"]])
def test_check_redact_keeps_versions_masks_addresses_and_secrets(tmp_path, cli, fmt) -> None:  # type: ignore[no-untyped-def]
    spec = tmp_path / "node.toml"
    spec.write_text(REDACT_NODE)
    result = cli("check", "--spec", str(spec), "--redact", *fmt)
    assert result.returncode == 1, result.stderr  # CUD102: cuBLAS 12.1.3.1 on Hopper
    out = result.stdout
    # the versions the report and its fix need, the matrix's alternative in prose too
    assert "nvidia-cublas-cu12==12.3.4.1" in out
    assert "12.1.3.1" in out and "12.4.5.8" in out
    for address in ("10.0.0.4", "192.168.1.2", "10.0.0.5", "10.0.0.9"):
        assert address not in out, address
    assert SECRET not in out + result.stderr
    if fmt == ["--json"]:
        report = json.loads(out)["data"]["reports"][0]
        variables = report["env"]["data"]["variables"]
        assert variables["CUDNN_VERSION"] == "9.1.0.70"
        assert variables["HF_TOKEN"] == REDACTED  # a secret, even one that reads as a version
        assert variables["MASTER_ADDR"].startswith("ip-")
        assert variables["NCCL_COMM_ID"].startswith("ip-")


def test_check_without_redact_shows_the_addresses(tmp_path, cli) -> None:  # type: ignore[no-untyped-def]
    spec = tmp_path / "node.toml"
    spec.write_text(REDACT_NODE)
    out = cli("check", "--spec", str(spec), "--json").stdout
    assert "10.0.0.4" in out and SECRET not in out
