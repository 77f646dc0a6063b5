"""Defects a new user met (issue: fits the tools people already run), each with the behaviour
that replaces it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builtin_matrix import builtin_matrix
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


def test_net103_has_one_severity_across_a_cluster() -> None:
    """Both nodes' hostnames resolve to loopback; one node shows multi-node settings (MASTER_ADDR)
    and the other none: in a cluster of two the finding is as severe on both."""
    from dataclasses import replace

    from envcheck.cluster.diff import compare
    from envcheck.model.cluster import Member
    from envcheck.model.finding import Severity
    from envcheck.rules import all_rules
    from tests.cluster.factory import node

    reports = []
    for name, env in (("head", {"MASTER_ADDR": "10.0.0.2"}), ("worker", {})):
        report = node(name, env=env, address=f"10.0.0.{len(reports) + 2}/24")
        net = report.network.data
        assert net is not None
        loopback = replace(net, hostname_addresses=("127.0.1.1",))
        reports.append(replace(report, network=replace(report.network, data=loopback)))
    matrix = builtin_matrix()
    result = compare([Member(r.node) for r in reports], reports, matrix, all_rules(matrix))
    net103 = [f for f in result.node_result.findings if f.code == "NET103"]
    assert sorted(f.node for f in net103) == ["head", "worker"]
    assert {f.severity for f in net103} == {Severity.ERROR}


LOCK_HEADER = """\
# Generated by envcheck 0.1.0 (envcheck lock). Review before use.
# Target: Python 3.11; x86_64, glibc 2.35; driver 550.54.15; NVIDIA H20 x8
"""


def test_lock_diff_reads_the_target_from_the_headers_and_leads_with_what_matters(
    tmp_path: Path,
) -> None:
    others = [f"pkg{i:03d}" for i in range(100)]
    old = tmp_path / "old.lock"
    new = tmp_path / "new.lock"
    old.write_text(
        LOCK_HEADER
        + "".join(f"{n}==1.0\n" for n in others)
        + "torch==2.4.0\nvllm==0.6.3\ntransformers==4.45.0\n"
    )
    new.write_text(
        LOCK_HEADER
        + "".join(f"{n}==1.1\n" for n in others)
        + "torch==2.5.1\nvllm==0.6.4\ntransformers==4.46.0\n"
    )
    res = run_cli("lock", "diff", str(old), str(new))
    assert res.returncode in (0, 1), res.stderr
    assert "Python is unknown" not in res.stderr
    lines = res.stdout.splitlines()
    assert lines[2:6] == [
        "packages that matter for the GPU stack:",
        "~ torch 2.4.0 -> 2.5.1 (up)",
        "~ vllm 0.6.3 -> 0.6.4 (up)",
        "~ transformers 4.45.0 -> 4.46.0 (up)",
    ]
    assert lines[6] == "other packages (100):"
    from envcheck.commands.lock_diff import stated_target

    assert stated_target(str(new)) == {
        "python": "3.11",
        "arch": "x86_64",
        "glibc": "2.35",
        "driver": "550.54.15",
        "gpus": ("NVIDIA H20 x8",),
    }


def test_lock_diff_help_is_its_own() -> None:
    res = run_cli("lock", "diff", "--help")
    assert res.returncode == 0
    assert res.stdout.startswith("usage: envcheck lock diff OLD NEW")
    assert "--upgrade-package" not in res.stdout  # lock's own options are not listed


def test_piped_tables_keep_their_values_whole(tmp_path: Path) -> None:
    """Piped (no terminal), a table is printed at its natural width: no 'addres' or 'Pyth'."""
    import json

    from tests.conftest import cli_env

    saved = tmp_path / "reports"
    saved.mkdir()
    assert run_cli("probe", "-o", str(saved / "a.json")).returncode == 0
    other = json.loads((saved / "a.json").read_text())
    other["node"] = "node-b"
    other["python"]["data"]["version"] = "3.12.1"
    (saved / "b.json").write_text(json.dumps(other))
    res = run_cli("diff", str(saved), env=cli_env(COLUMNS="40"))
    header = next(line for line in res.stdout.splitlines() if line.strip().startswith("node"))
    assert header.split() == ["node", "address", "GPUs", "Python", "torch", "ray", "answered"]
    assert "3.12.1" in res.stdout


def test_ray105_names_rays_cap_when_the_cap_sets_the_store(tmp_path: Path) -> None:
    from tests.specs import TINYZERO

    spec = tmp_path / "node.toml"
    spec.write_text(TINYZERO)  # 1024 GiB of memory: 30% is above Ray's 200 GB cap
    data = run_cli("check", "--spec", str(spec), "--json").json()["data"]
    (ray105,) = [f for f in data["findings"] if f["code"] == "RAY105"]
    assert "186.3 GiB (its cap of 200 GB, below 30% of 1024.0 GiB)" in ray105["message"]


def test_matrix_show_torch_separates_pins_from_ranges() -> None:
    data = run_cli("matrix", "show", "torch", "2.7.0", "--json").json()["data"]["related"]
    assert "0.9.0" in data["vllm_releases_pinning_it"]
    assert "0.1.4" not in data["vllm_releases_pinning_it"]  # it requires torch>=2.0.0 only
    assert "0.1.4" in data["vllm_releases_allowing_it"]


def test_matrix_show_prints_pins_as_requirements() -> None:
    res = run_cli("matrix", "show", "torch", "2.3.0")
    assert res.returncode == 0
    assert "= ==" not in res.stdout
    assert "nvidia-cuda-runtime-cu12==12.1.105" in res.stdout


def test_python_2_is_named_as_an_unsupported_interpreter(tmp_path: Path) -> None:
    """A fake python2.7 on disk answering the version query as Python 2.7 does (the query is
    valid Python 2: no -I, no print(*...))."""
    fake = tmp_path / "python2.7"
    fake.write_text(
        '#!/bin/sh\nfor a in "$@"; do [ "$a" = -I ] && { echo "Unknown option: -I" >&2; exit 2; }; '
        'done\necho "envcheck-python-check 2 7"\n'
    )
    fake.chmod(0o755)
    res = run_cli("check", "--python", str(fake))
    assert res.returncode == 2
    assert "is Python 2.7, a Python interpreter envcheck does not support" in res.stderr
    assert "is not a Python interpreter" not in res.stderr


def test_api_check_names_its_own_severity_argument(tmp_path: Path) -> None:
    import envcheck
    from envcheck.errors import UsageError

    spec = tmp_path / "node.toml"
    spec.write_text('[python]\nversion = "3.11.9"\n')
    with pytest.raises(UsageError, match=r"^severity must be one of") as caught:
        envcheck.check(str(spec), severity="fatal")  # type: ignore[arg-type]
    assert "fail_on" not in str(caught.value)


def test_top_level_help_lists_exit_4() -> None:
    res = run_cli("--help")
    assert "4 the package index could not be reached" in " ".join(res.stdout.split())


def test_readme_example_counts_the_rules_check_runs() -> None:
    import re

    from envcheck.matrix_validate import load
    from envcheck.rules import node_rules

    readme = (Path(__file__).parents[2] / "README.md").read_text()
    counts = {int(n) for n in re.findall(r"envcheck: \d+ error\(s\).*?; (\d+) rules,", readme)}
    ran = len(node_rules(load([]), (), ()))
    assert counts == {ran}, (
        f"README's example summary says {counts} rules; `envcheck check` runs {ran}: "
        "rerun the example (envcheck check --spec stack.toml) and update README.md"
    )
