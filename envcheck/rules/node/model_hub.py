"""A model hub the node cannot reach (matrices/signatures/model_hub.toml): compute nodes without
internet access, a network that needs the site's proxy, a proxy that re-signs TLS with the
organisation's CA. Only a log states it; the line shows which, and the fix follows."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Action, Fix, Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual

_HOST = lazy(r"host='(?P<host>[^']+)'|connect to '(?:https?://)?(?P<url_host>[^/']+)")
_TLS = lazy(r"CERTIFICATE_VERIFY_FAILED|SSLError")

PROXY = manual(
    "export HTTPS_PROXY=http://<proxy>:<port> https_proxy=http://<proxy>:<port>  "
    "(the site's proxy, in the job script before python)"
)
OFFLINE = manual(
    "huggingface-cli download <repo id>  (on a node with internet, into a shared HF_HOME), "
    "then export HF_HUB_OFFLINE=1 in the job"
)
MIRROR = manual("export HF_ENDPOINT=<the mirror's URL>  (where the site runs a Hub mirror)")
CA = manual(
    "export SSL_CERT_FILE=<org CA bundle.pem> REQUESTS_CA_BUNDLE=<org CA bundle.pem>  "
    "(the organisation's CA, which its proxy signs with)"
)


@rule("SYS246", "model-hub-unreachable", Severity.WARNING)
def model_hub_unreachable(facts: Facts) -> Iterable[Hit]:
    """A model hub the node cannot reach: no internet, the site's proxy, TLS interception

    ## What it checks
    Only a log states it: transformers' `We couldn't connect to 'https://huggingface.co' to
    load this file`, huggingface_hub's `cannot find the requested files in the local cache`,
    urllib3's `HTTPSConnectionPool(host=...): Max retries exceeded ... (Caused by
    ConnectTimeoutError / NewConnectionError / ProxyError)`, and `CERTIFICATE_VERIFY_FAILED`.

    ## Why it matters
    Training and serving jobs download weights and tokenizers at start-up. Cluster compute
    nodes often have no internet access, company networks send HTTPS through a proxy, and
    such proxies re-sign TLS with the company's CA, which Python's CA bundle does not hold: the
    job fails before its first step, with the files absent from the cache.

    ## Example
    `AutoModel.from_pretrained("bert-base-uncased")` on a Slurm compute node without internet:
    `OSError: We couldn't connect to 'https://huggingface.co' to load this file`.

    ## Fix
    The site's proxy (`export HTTPS_PROXY=http://<proxy>:<port>` and `https_proxy`); on nodes
    without internet, download on one that has it (`huggingface-cli download <repo>` into a
    shared `HF_HOME`) and run with `HF_HUB_OFFLINE=1`; a mirror the site runs,
    `HF_ENDPOINT=<url>`. TLS refused: point `SSL_CERT_FILE` / `REQUESTS_CA_BUNDLE` at the
    organisation's CA bundle.

    ## References
    - https://huggingface.co/docs/huggingface_hub/package_reference/environment_variables
    - https://huggingface.co/docs/transformers/installation#offline-mode
    - https://github.com/huggingface/transformers/issues/10067
    - https://github.com/huggingface/huggingface_hub/issues/2222
    """
    raise Skip("only a log states that a download could not reach its host", "log.network")


def _host(text: str) -> str:
    found = _HOST.search(text)
    if found is None:
        return ""
    return found.group("host") or found.group("url_host") or ""


def _fix(tls: bool, host: str) -> Fix:
    where = host or "the hub"
    actions: tuple[Action, ...]
    if host and "huggingface" not in host and "hf-" not in host:
        # another host (a package index, torch hub's GitHub, a dataset server): the proxy and
        # the CA bundle apply to any HTTPS client; the Hub's offline mode and mirror do not
        summary = (
            f"This node cannot reach {host}"
            + (" (its TLS was re-signed)" if tls else "")
            + ": set the site's proxy (export HTTPS_PROXY and https_proxy)"
            + (
                ", point SSL_CERT_FILE / REQUESTS_CA_BUNDLE at the organisation's CA bundle"
                if tls
                else ""
            )
            + ", or fetch the files on a machine that can and copy them here"
        )
        actions = (CA, PROXY) if tls else (PROXY,)
        return fix(summary, "manual", *actions, manual(f"curl -sSI https://{host}"))
    if tls:
        summary = (
            f"The HTTPS connection to {where} was intercepted (a proxy re-signing TLS): point "
            "SSL_CERT_FILE and REQUESTS_CA_BUNDLE at the organisation's CA bundle and set the "
            "site's proxy, HTTPS_PROXY; or download on another machine and run with "
            "HF_HUB_OFFLINE=1"
        )
        actions = (CA, PROXY, OFFLINE)
    else:
        summary = (
            f"This node cannot reach {where}: set the site's proxy (export HTTPS_PROXY and "
            "https_proxy); on compute nodes without internet, download the files where there "
            "is (huggingface-cli download into a shared HF_HOME) and run with HF_HUB_OFFLINE=1; "
            "or use the site's mirror (HF_ENDPOINT)"
        )
        actions = (PROXY, OFFLINE, MIRROR)
    return fix(summary, "manual", *actions, manual(f"curl -sSI https://{host or 'huggingface.co'}"))


@from_log("SYS246")
def model_hub_unreachable_in_log(facts: Facts, line: LogLine) -> Hit:
    """TLS refused: the CA bundle first; otherwise the proxy, offline mode, a mirror."""
    host = _host(line.text)
    tls = bool(_TLS.search(line.text))
    what = "refused the server's certificate" if tls else "could not reach the host"
    named = f" ({host})" if host else ""
    return Hit(
        f"A download {what}{named} (line {line.line}) and the files are not in the cache",
        evidence={"line": line.line, **({"host": host} if host else {})},
        fix=_fix(tls, host),
        severity=Severity.ERROR,
    )
