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
