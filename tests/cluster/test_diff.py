"""Drift detection on saved reports: the drift table and the cluster (CLU) rules."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest

from envcheck.cluster.diff import Comparison, compare
from envcheck.matrix.model import Matrix
from envcheck.model.cluster import Member, NodeFailure
from envcheck.model.finding import Finding, Severity
from envcheck.model.report import Interface, NodeReport
from envcheck.rules import all_rules
from envcheck.rules.base import Rule
from tests.builtin_matrix import builtin_matrix
from tests.cluster.factory import A100, RTX4090, cluster, node


@pytest.fixture(scope="module")
def matrix() -> Matrix:
    return builtin_matrix()


@pytest.fixture(scope="module")
def rules(matrix: Matrix) -> list[Rule]:
    return all_rules(matrix)


def run(
    reports: Sequence[NodeReport],
    matrix: Matrix,
    rules: list[Rule],
    *,
    addresses: Sequence[str | None] | None = None,
    failures: Sequence[NodeFailure] = (),
) -> Comparison:
    members = [
        Member(r.node, address=(addresses[i] if addresses else None)) for i, r in enumerate(reports)
    ]
    return compare(members, reports, matrix, rules, failures=failures)


def clu(result: Comparison, code: str) -> list[Finding]:
    return [f for f in result.cluster_result.findings if f.code == code]


def row(result: Comparison, fact: str) -> dict[str, list[str]]:
    found = [r for r in result.drift if r.fact == fact]
    assert len(found) == 1, [r.fact for r in result.drift]
    return {v.value: list(v.nodes) for v in found[0].values}


def test_identical_nodes_have_no_drift_and_no_cluster_findings(matrix, rules) -> None:
    result = run(cluster(5), matrix, rules)
    assert result.drift == ()
    assert result.cluster_result.findings == ()
    assert result.node_result.rules_run > 40  # node rules ran on every report too
    assert {f.node for f in result.node_result.findings} <= {r.node for r in cluster(5)}


def test_ray_patch_versions_differ_is_an_error_naming_the_odd_node(matrix, rules) -> None:
    reports = cluster(4)
    reports[2] = node("node-002", packages={"ray": "2.9.2"})
    result = run(reports, matrix, rules)
    [finding] = clu(result, "CLU101")
    assert finding.severity is Severity.ERROR
    assert "2.9.2 on node-002" in finding.message and "3 nodes have 2.9.3" in finding.message
    assert finding.evidence["odd_nodes"] == ["node-002"]
    assert finding.fix is not None and "pip install ray==2.9.3" in finding.fix.commands
    assert row(result, "package:ray") == {
        "2.9.3": ["node-000", "node-001", "node-003"],
        "2.9.2": ["node-002"],
    }


@pytest.mark.parametrize(
    ("pythons", "relax", "severity"),
    [
        (("3.10.12", "3.10.12", "3.10.14"), False, Severity.ERROR),
        (("3.10.12", "3.10.12", "3.10.14"), True, Severity.WARNING),
        (("3.10.12", "3.11.9", "3.10.12"), True, Severity.ERROR),  # minor differs: never relaxed
    ],
)
def test_python_versions_must_match_to_the_patch_level(
    matrix, rules, pythons, relax, severity
) -> None:
    env = {"RAY_DEFAULT_PYTHON_VERSION_MATCH_LEVEL": "minor"} if relax else {}
    reports = [node(f"n{i}", python=v, env=env) for i, v in enumerate(pythons)]
    [finding] = clu(run(reports, matrix, rules), "CLU102")
    assert finding.severity is severity
    odd = next(f"n{i}" for i, v in enumerate(pythons) if pythons.count(v) == 1)
    assert odd in finding.message


def test_one_node_with_another_torch_build_is_a_warning_naming_it(matrix, rules) -> None:
    reports = cluster(6)
    reports[4] = node("node-004", packages={"torch": "2.4.0+cu124"})
    result = run(reports, matrix, rules)
    found = clu(result, "CLU103")
    torch = next(f for f in found if f.message.startswith("torch differs"))
    assert torch.severity is Severity.WARNING
    assert (
        "2.4.0+cu124 on node-004" in torch.message and "5 nodes have 2.4.0+cu121" in torch.message
    )
    assert torch.evidence["odd_nodes"] == ["node-004"]
    variant = next(f for f in found if f.message.startswith("torch CUDA variant differs"))
    assert "cu124 on node-004" in variant.message
    assert row(result, "torch_variant") == {
        "cu121": [f"node-00{i}" for i in (0, 1, 2, 3, 5)],
        "cu124": ["node-004"],
    }


@pytest.mark.parametrize(
    ("package", "odd"),
    [
        ("nvidia-nccl-cu12", "2.21.5"),
        ("nvidia-cublas-cu12", "12.3.4.1"),
        ("vllm", "0.6.4"),
        ("numpy", "2.1.0"),
        ("flash-attn", "2.6.3"),
    ],
)
def test_stack_wheels_that_differ_are_named(matrix, rules, package, odd) -> None:
    reports = cluster(3)
    reports[0] = node("node-000", packages={package: odd})
    found = clu(run(reports, matrix, rules), "CLU103")
    assert len(found) == 1, [f.message for f in found]
    assert odd in found[0].message and "node-000" in found[0].message


def test_4090_next_to_a100_is_the_heterogeneous_gpu_finding(matrix, rules) -> None:
    reports = [node("train-a", gpu=A100), node("train-b", gpu=A100), node("sim-c", gpu=RTX4090)]
    result = run(reports, matrix, rules)
    [finding] = clu(result, "CLU105")
    assert finding.severity is Severity.WARNING
    assert "sm_80 (Ampere)" in finding.message and "sm_89 (Ada" in finding.message
    assert "RTX 4090" in finding.message and "A100" in finding.message
    assert "FSDP" in finding.message and "vLLM" in finding.message
    assert row(result, "gpu_models")[f"{RTX4090} x8"] == ["sim-c"]


def test_same_architecture_other_memory_is_info_and_cpu_nodes_are_left_out(matrix, rules) -> None:
    reports = [node("a", gpu=A100), node("b", gpu=A100, gpus=4), node("head", gpu=None)]
    assert clu(run(reports, matrix, rules), "CLU105") == []  # counts differ, models do not
    small = node("c", gpu="NVIDIA A100-SXM4-40GB")
    small_gpus = tuple(replace(g, memory_total_mib=40960) for g in small.gpu.data.gpus)  # type: ignore[union-attr]
    small = replace(small, gpu=replace(small.gpu, data=replace(small.gpu.data, gpus=small_gpus)))  # type: ignore[arg-type]
    [finding] = clu(run([*reports, small], matrix, rules), "CLU105")
    assert finding.severity is Severity.INFO and "c" in finding.message


def test_driver_branches_differ(matrix, rules) -> None:
    reports = [node("a"), node("b"), node("c", driver="535.104.05")]
    [finding] = clu(run(reports, matrix, rules), "CLU104")
    assert "R535 on c" in finding.message and "2 nodes have R550" in finding.message


def test_socket_ifname_set_on_some_nodes_only(matrix, rules) -> None:
    env = {"GLOO_SOCKET_IFNAME": "eth0"}
    reports = [node("a", env=env), node("b", env=env), node("c")]
    [finding] = clu(run(reports, matrix, rules), "CLU106")
    assert "GLOO_SOCKET_IFNAME=eth0 on a, b; unset on c" in finding.message
    assert finding.fix is not None and finding.fix.commands == ("export GLOO_SOCKET_IFNAME=eth0",)


def test_socket_ifname_naming_an_interface_some_nodes_lack(matrix, rules) -> None:
    env = {"GLOO_SOCKET_IFNAME": "ens1f0", "NCCL_SOCKET_IFNAME": "ens1"}
    reports = [
        node("a", env=env, iface="ens1f0"),
        node("b", env=env, iface="ens1f0"),
        node("d", env=env, iface="eth0"),
    ]
    found = clu(run(reports, matrix, rules), "CLU107")
    assert [f.evidence["variable"] for f in found] == ["GLOO_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME"]
    assert all(f.evidence["missing_on"] == ["d"] for f in found)
    assert all(f.severity is Severity.ERROR for f in found)
    assert clu(run(reports[:2], matrix, rules), "CLU107") == []


def test_addresses_in_different_subnets_and_public_next_to_private(matrix, rules) -> None:
    reports = [
        node("a", address="10.0.0.5/24"),
        node("b", address="10.0.0.6/24"),
        node("c", address="3.120.4.17/24"),
    ]
    [finding] = clu(run(reports, matrix, rules), "CLU108")
    assert "public next to private" in finding.message
    assert "3.120.4.0/24 (public) on c" in finding.message


def test_ray_addresses_take_precedence_and_shared_addresses_are_an_error(matrix, rules) -> None:
    docker = Interface(name="docker0", state="up", ipv4=("172.17.0.1/16",), kind="bridge")
    reports = [node(n, extra_interfaces=(docker,)) for n in ("a", "b")]
    result = run(reports, matrix, rules, addresses=["172.17.0.1", "172.17.0.1"])
    [finding] = clu(result, "CLU108")
    assert finding.severity is Severity.ERROR and "172.17.0.1" in finding.message
    # the same host seen twice (a local multi-node Ray cluster) is not a problem
    same_host = [node("x", hostname="vm"), node("y", hostname="vm")]
    assert clu(run(same_host, matrix, rules, addresses=["10.0.0.5", "10.0.0.5"]), "CLU108") == []


def test_unreachable_nodes_become_clu100_errors(matrix, rules) -> None:
    failure = NodeFailure(
        "node-9", "no answer within 30 s (the task was cancelled)", "abc", "10.0.0.9", "timeout"
    )
    result = run(cluster(2), matrix, rules, failures=[failure])
    [finding] = clu(result, "CLU100")
    assert finding.node == "node-9" and finding.severity is Severity.ERROR
    assert "no answer within 30 s" in finding.message


def test_two_hundred_identical_nodes_and_two_odd_ones_read_as_one_line_each(matrix, rules) -> None:
    reports = cluster(202)
    reports[17] = replace(node("x", packages={"ray": "2.9.2"}), node="node-017")
    reports[42] = replace(node("x", packages={"ray": "2.9.2"}), node="node-042")
    result = run(reports, matrix, rules)
    ray = next(r for r in result.drift if r.fact == "package:ray")
    assert [(v.value, v.count) for v in ray.values] == [("2.9.3", 200), ("2.9.2", 2)]
    assert ray.odd_nodes() == ("node-017", "node-042")
    [finding] = clu(result, "CLU101")
    assert "2.9.2 on node-017, node-042; 200 nodes have 2.9.3" in finding.message


def test_other_packages_that_differ_are_drift_rows_after_the_curated_ones(matrix, rules) -> None:
    reports = [node("a"), node("b", packages={"transformers": "4.46.0", "deepspeed": "0.15.0"})]
    facts = [r.fact for r in run(reports, matrix, rules).drift]
    assert facts == ["package:deepspeed", "package:transformers"]


def test_unknown_facts_never_make_a_fact_differ(matrix, rules) -> None:
    from envcheck.model.section import Section

    blind = replace(node("c"), packages=Section.error("metadata unreadable"))
    result = run([node("a"), node("b"), blind], matrix, rules)
    assert clu(result, "CLU101") == [] and clu(result, "CLU103") == []
    assert not any(r.fact == "package:ray" for r in result.drift)


def test_cluster_rules_are_skipped_with_a_reason_for_one_node(matrix, rules) -> None:
    result = run([node("only")], matrix, rules)
    reasons = {s.code: s.reason for s in result.cluster_result.skipped}
    assert "comparing needs two" in reasons["CLU101"]


def test_redacted_reports_compare_without_addresses(matrix, rules) -> None:
    from envcheck.model.scrub import anonymize

    reports = [anonymize(node(n, packages={"ray": v})) for n, v in (("a", "2.9.3"), ("b", "2.9.2"))]
    result = run(reports, matrix, rules, addresses=["ip-1234abcd", "ip-99999999"])
    assert result.errors == ()
    assert [f.code for f in clu(result, "CLU101")] == ["CLU101"]
    assert "CLU108" in {s.code for s in result.cluster_result.skipped}
