"""Defects a new user met (issue: fits the tools people already run), each with the behaviour
that replaces it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cli

FIXTURES = Path(__file__).parent.parent / "fixtures"


def test_refresh_dry_run_needs_no_output_in_an_installed_package(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`matrix refresh --dry-run` writes nothing, so an installed package (no pyproject.toml
    beside its matrix) compares with its built-in files instead of asking for --output."""
    from envcheck.cli import matrix_refresh
    from envcheck.errors import UsageError
    from envcheck.matrix import load

    installed = tmp_path / "site-packages" / "envcheck" / "matrices"
    installed.mkdir(parents=True)
    monkeypatch.setattr(load, "builtin_dir", lambda: installed)
    assert matrix_refresh._output(None, dry_run=True) == installed / load.GENERATED_DIR
    with pytest.raises(UsageError, match="give --output DIR"):
        matrix_refresh._output(None)


def test_refresh_does_not_say_it_kept_a_file_that_does_not_exist(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from envcheck.cli.matrix_refresh import _text
    from envcheck.matrix.refresh import PackageResult

    missing = tmp_path / "overlay" / "vllm.toml"
    kept = tmp_path / "ray.toml"
    kept.write_text("")
    result = SimpleNamespace(
        packages=[PackageResult("vllm", str(missing)), PackageResult("ray", str(kept))],
        counters={"requests": 0, "retries": 0, "not_modified": 0, "cache_hits": 0, "bytes": 0},
        seconds=0.0,
    )
    choice = SimpleNamespace(urls=("http://127.0.0.1:1/simple",), origin="--index-url")
    text = _text(result, choice, SimpleNamespace(dry_run=False))
    assert f"kept {missing}" not in text
    assert f"nothing to write ({missing} does not exist)" in text
    assert f"kept {kept}" in text


def test_tor110_does_not_fire_when_collect_env_could_not_collect_the_gpus() -> None:
    """'GPU models and configuration: Could not collect' is a failed query (the GPUs are
    unknown), not a text that leaves GPUs unsaid."""
    dump = FIXTURES / "ingest" / "collect_env_torch2.13_cpu.txt"
    assert "GPU models and configuration: Could not collect" in dump.read_text()
    res = run_cli("check", "--from", str(dump), "--json", "--verbose")
    data = res.json()["data"]
    assert "TOR110" not in [f["code"] for f in data["findings"]]
    (skip,) = [s for s in data["skipped"] if s["code"] == "TOR110"]
    assert "could not collect the GPU list" in skip["reason"]


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("installed tokenizers=0.19.1", True),
        ("pip install tokenizers==0.19.1 keyring==25.0", True),
        ("HF_TOKEN=hf_abcdefgh", False),
        ("api_key=sk-123", False),
        ("authToken=abc", False),
    ],
)
def test_a_package_pin_is_not_a_secret(text: str, kept: bool) -> None:
    from envcheck.redact import REDACTED, redact_text

    assert (redact_text(text) == text) is kept
    assert (REDACTED in redact_text(text)) is not kept


def test_triage_fix_text_has_no_placeholders_nor_a_lone_reference_command(
    tmp_path: Path,
) -> None:
    """NET101's fix names `ray start` in its prose: it stays there, and no bare `$ ray start`
    follows; CUD122/CUD123 read whole and list their pip command apart."""
    log = tmp_path / "job.log"
    log.write_text(
        "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, "
        "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600123 "
        "milliseconds before timing out.\n"
    )
    res = run_cli("triage", str(log), "--no-probe")
    assert res.returncode == 1, res.stderr
    assert "(below)" not in res.stdout
    assert "$ ray start" not in res.stdout
    text = " ".join(res.stdout.split())
    assert "on every node, before `ray start`." in text
    assert "Install NCCL 2.29.3 or newer: `pip install nvidia-nccl-cu13==2.30.7`" in text
    assert "$ pip install nvidia-nccl-cu12==2.30.7" in text
    causes = {
        c["code"]: c
        for m in run_cli("triage", str(log), "--no-probe", "--json").json()["data"]["matches"]
        for c in m["causes"]
    }
    assert causes["CUD122"]["fix"]["commands"] == ["pip install nvidia-nccl-cu13==2.30.7"]
    assert causes["NET101"]["fix"]["commands"] == []


def test_a_ray_oom_kill_by_the_jobs_own_workers_gets_rays_advice() -> None:
    """The kill report's memory figures are from while the job ran (its top users are the
    job's own ray::WorkerDict actors): the fix is Ray's, not "free memory before the job"."""
    log = FIXTURES / "triage" / "ray_oom_own_workers.log"
    res = run_cli("triage", str(log), "--no-probe", "--json")
    assert res.returncode == 1, res.stderr
    causes = [c for m in res.json()["data"]["matches"] for c in m["causes"]]
    (ray106,) = [c for c in causes if c["code"] == "RAY106" and c["findings"]][:1]
    summary = ray106["findings"][0]["fix"]["summary"]
    assert "Free memory before the job starts" not in summary
    assert "fewer workers/actors" in summary and "RAY_memory_usage_threshold" in summary
    assert not any("ray stop --force" in c for c in ray106["fix"]["commands"])


PROXIED = """\
[gpu]
driver = "535.104.05"
models = ["NVIDIA H20", "NVIDIA H20"]
[python]
version = "3.10.12"
[packages]
torch = "2.4.0+cu121"
ray = "2.40.0"
[env]
https_proxy = "http://proxy.corp.example:3128"
no_proxy = "localhost,.corp.example"
[network]
hostname_resolves_to = "127.0.1.1"
interfaces = [{ name = "eth0", ipv4 = "192.0.2.5", ipv6 = ["fd00::2/64", "fe80::1/64"], up = true }]
"""


def test_redact_hides_ipv6_proxy_hosts_and_fix_commands_but_keeps_loopback(
    tmp_path: Path,
) -> None:
    spec = tmp_path / "node.toml"
    spec.write_text(PROXIED)
    res = run_cli("check", "--spec", str(spec), "--redact", "--json")
    assert res.returncode == 1, res.stderr
    for hidden in ("proxy.corp.example", "corp.example", "192.0.2", "fd00::2"):
        assert hidden not in res.stdout, hidden
    findings = {f["code"]: f for f in res.json()["data"]["findings"]}
    # the fix command carries the same pseudonyms as the message
    net105 = findings["NET105"]
    (command,) = net105["fix"]["commands"]
    assert "no_proxy=" in command and "ip-" in command
    masked = command.split("no_proxy=")[1].split(",")[2]
    assert masked in net105["message"] or masked.startswith("ip-")
    # loopback and link-local stay readable: NET103 still says what is wrong
    assert "resolves to 127.0.1.1: Gloo binds loopback" in findings["NET103"]["message"]
    text = run_cli("check", "--spec", str(spec), "--redact").stdout
    assert "192.0.2" not in text and "corp.example" not in text


def test_probe_redact_masks_compressed_ipv6() -> None:
    from envcheck.redact import mask_addresses

    assert "fd00::2" not in mask_addresses("eth0 192.0.2.2/24, fd00::2/64, fe80::fc:ff:fe00:1/64")
    assert mask_addresses("lo 127.0.0.1/8, ::1/128") == "lo 127.0.0.1/8, ::1/128"
    assert mask_addresses("at 10:30:45") == "at 10:30:45"
    res = run_cli("probe", "--redact")
    assert res.returncode == 0
    import re

    for token in re.findall(r"[0-9A-Fa-f:]*::[0-9A-Fa-f:]+", res.stdout):
        import ipaddress

        address = ipaddress.IPv6Address(token)
        assert address.is_loopback or address.is_link_local, token
