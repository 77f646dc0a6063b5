"""`envcheck diff` over real `envcheck probe -o` output, as a user runs it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli


@pytest.fixture(scope="module")
def probed(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("probe") / "me.json"
    result = run_cli("probe", "-o", str(out))
    assert result.returncode == 0, result.stderr
    return json.loads(out.read_text(encoding="utf-8"))


def write(path: Path, report: dict, *, node: str, ray: str | None = None) -> Path:
    data = json.loads(json.dumps(report))
    data["node"] = node
    if ray is not None:
        for dist in data["packages"]["data"]["distributions"]:
            if dist["name"].lower() == "ray":
                dist["version"] = ray
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_diff_finds_a_ray_patch_mismatch_between_saved_reports(
    probed: dict, tmp_path: Path
) -> None:
    a = write(tmp_path / "a.json", probed, node="node-a")
    b = write(tmp_path / "b.json", probed, node="node-b")
    c = write(tmp_path / "c.json", probed, node="node-c", ray="2.9.2")
    result = run_cli("diff", str(a), str(b), str(c), "--json")
    envelope = result.json()
    assert result.returncode == 1 and envelope["exit_code"] == 1
    assert envelope["command"] == "diff" and envelope["status"] == "findings"
    assert set(envelope) == {
        "schema",
        "command",
        "status",
        "exit_code",
        "data",
        "errors",
        "applied",
    }
    data = envelope["data"]
    assert {"nodes", "unreachable", "drift", "findings", "skipped", "collective", "summary"} <= set(
        data
    )
    assert "reports" not in data  # they are the input files
    [ray] = [row for row in data["drift"] if row["fact"] == "package:ray"]
    assert [v["nodes"] for v in ray["values"]] == [["node-a", "node-b"], ["node-c"]]
    [clu101] = [f for f in data["findings"] if f["code"] == "CLU101"]
    assert clu101["severity"] == "error" and "2.9.2 on node-c" in clu101["message"]
    assert data["summary"]["nodes"] == 3 and data["summary"]["drift"] >= 1


def test_diff_reads_directories_envelopes_and_names_duplicate_hosts(
    probed: dict, tmp_path: Path
) -> None:
    reports = tmp_path / "reports"
    reports.mkdir()
    write(reports / "n1.json", probed, node="same")
    write(reports / "n2.json", probed, node="same")
    check = run_cli("check", "--report", str(reports / "n1.json"), "--json")
    (tmp_path / "envelope.json").write_text(check.stdout, encoding="utf-8")
    result = run_cli("diff", str(reports), str(tmp_path / "envelope.json"), "--json")
    assert result.returncode in (0, 1), result.stderr
    nodes = [n["node"] for n in result.json()["data"]["nodes"]]
    assert nodes == ["same (n1.json)", "same (n2.json)", "same (envelope.json)"]
    assert result.json()["data"]["drift"] == []


def test_diff_table_output_shows_the_drift_table(probed: dict, tmp_path: Path) -> None:
    a = write(tmp_path / "a.json", probed, node="node-a")
    b = write(tmp_path / "b.json", probed, node="node-b", ray="2.9.2")
    result = run_cli("diff", str(a), str(b))
    assert result.returncode == 1
    assert "Drift: " in result.stdout and "2.9.2" in result.stdout and "CLU101" in result.stdout
    assert "envcheck: 2/2 node(s) checked" in result.stderr


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("{not json", ["bad.json", "not JSON"]),
        ('{"schema": 7, "node": "x"}', ["bad.json", "unsupported report schema 7"]),
        ('{"command": "check", "data": {"reports": []}}', ["bad.json", "holds no reports"]),
    ],
)
def test_a_bad_report_is_one_line_and_exit_2(
    probed: dict, tmp_path: Path, content: str, words: list[str]
) -> None:
    good = write(tmp_path / "good.json", probed, node="a")
    bad = tmp_path / "bad.json"
    bad.write_text(content, encoding="utf-8")
    result = run_cli("diff", str(good), str(bad))
    assert result.returncode == 2 and result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith("envcheck: error: ")
    for word in words:
        assert word in line


def test_a_directory_with_several_bad_files_names_them(probed: dict, tmp_path: Path) -> None:
    write(tmp_path / "a.json", probed, node="a")
    for name in ("x.json", "y.json", "z.json"):
        (tmp_path / name).write_text("[", encoding="utf-8")
    result = run_cli("diff", str(tmp_path), "--json")
    assert result.returncode == 2
    envelope = result.json()  # --json: the error is an envelope too
    assert (envelope["command"], envelope["status"], envelope["data"]) == ("diff", "error", None)
    [line] = result.stderr.splitlines()
    assert envelope["errors"] == [{"message": line.removeprefix("envcheck: error: ")}]
    assert "x.json" in line and "y.json" in line and "z.json" in line and "3 of 4 files" in line


def test_missing_file_and_empty_directory(tmp_path: Path) -> None:
    missing = run_cli("diff", str(tmp_path / "nope.json"))
    assert missing.returncode == 2 and "nope.json: no such file" in missing.stderr
    empty = run_cli("diff", str(tmp_path))
    assert empty.returncode == 2 and "no *.json reports" in empty.stderr
