"""SYS246: a model hub the node cannot reach, the fix by what the line shows
(matrices/signatures/model_hub.toml, rules/node/model_hub.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file

Cli = Callable[..., CliResult]

_TIMEOUT = (
    "urllib3.exceptions.MaxRetryError: HTTPSConnectionPool(host='huggingface.co', port=443): Max "
    "retries exceeded with url: /x/config.json (Caused by ConnectTimeoutError(<x>, 'Connection "
    "to huggingface.co timed out. (connect timeout=10)'))"
)
_TLS = (
    "requests.exceptions.SSLError: HTTPSConnectionPool(host='huggingface.co', port=443): Max "
    "retries exceeded with url: /x/vocab.txt (Caused by SSLError(SSLCertVerificationError(1, "
    "'[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: self signed certificate in "
    "certificate chain (_ssl.c:992)')))"
)


@pytest.mark.parametrize(
    ("line", "first"),
    [
        (_TIMEOUT, "HTTPS_PROXY"),
        (_TLS, "SSL_CERT_FILE"),
        (
            "huggingface_hub.utils._errors.LocalEntryNotFoundError: An error happened while "
            "trying to locate the file on the Hub and we cannot find the requested files in the "
            "local cache. Please check your connection and try again",
            "HTTPS_PROXY",
        ),
    ],
)
def test_the_line_picks_the_first_step(cli: Cli, tmp_path: Path, line: str, first: str) -> None:
    cause = causes(cli, log_file(tmp_path, line))["SYS246"]
    assert cause["verdict"] == "confirmed"
    (finding,) = cause["findings"]
    assert first in finding["fix"]["commands"][0]
    assert "HF_HUB_OFFLINE=1" in fix_text(cause)


def test_the_host_is_named(cli: Cli, tmp_path: Path) -> None:
    cause = causes(cli, log_file(tmp_path, _TIMEOUT))["SYS246"]
    assert "huggingface.co" in cause["findings"][0]["message"]


def test_pip_tls_failure_gets_the_ca_bundle_and_the_proxy(cli: Cli, tmp_path: Path) -> None:
    line = (
        "WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) "
        "after connection broken by 'SSLError(SSLCertVerificationError(1, '[SSL: "
        "CERTIFICATE_VERIFY_FAILED] certificate verify failed: self signed certificate in "
        "certificate chain (_ssl.c:1006)'))': /simple/torch/"
    )
    text = fix_text(causes(cli, log_file(tmp_path, line))["SYS246"])
    assert "SSL_CERT_FILE" in text and "HTTPS_PROXY" in text


def test_a_non_hub_host_is_not_sent_to_hub_offline_mode(cli: Cli, tmp_path: Path) -> None:
    line = (
        "urllib3.exceptions.MaxRetryError: HTTPSConnectionPool(host='github.com', port=443): Max "
        "retries exceeded with url: /x.pth (Caused by NewConnectionError('<x>: Failed to "
        "establish a new connection: [Errno 101] Network is unreachable'))"
    )
    cause = causes(cli, log_file(tmp_path, line))["SYS246"]
    text = fix_text(cause)
    assert "github.com" in text and "HTTPS_PROXY" in text and "HF_HUB_OFFLINE" not in text
