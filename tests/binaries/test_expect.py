"""--expect and the settings file's ``expect``: what is read, and one clear error otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest

from envcheck.errors import InputError
from envcheck.model.expect import parse_expect
from envcheck.settings import find_settings


@pytest.mark.parametrize(
    ("text", "count", "model", "driver", "no_gpu"),
    [
        ("8x H100, driver>=550", 8, "H100", "550", False),
        ("4 x A100-80GB", 4, "A100-80GB", None, False),
        ("gpus=2", 2, None, None, False),
        ("H200", None, "H200", None, False),
        ("driver>=535.129.03", None, None, "535.129.03", False),
        ("no-gpu", None, None, None, True),
        ("0", None, None, None, True),
    ],
)
def test_expectations_read(text, count, model, driver, no_gpu) -> None:
    want = parse_expect(text)
    assert (want.gpu_count, want.gpu_model, want.min_driver, want.no_gpu) == (
        count,
        model,
        driver,
        no_gpu,
    )


@pytest.mark.parametrize("text", ["", "8x H1=00", "driver>550x", "no-gpu, 8x H100", "gpus=x"])
def test_bad_expectations_name_the_clause(text) -> None:
    with pytest.raises(InputError) as err:
        parse_expect(text)
    assert "--expect" in str(err.value)


def test_settings_expect_is_checked_where_it_is_written(tmp_path: Path) -> None:
    (tmp_path / "envcheck.toml").write_text('expect = "8x H100"\n')
    assert find_settings(tmp_path).expect == "8x H100"
    (tmp_path / "envcheck.toml").write_text('ignore = []\nexpect = "8 of them"\n')
    with pytest.raises(InputError) as err:
        find_settings(tmp_path)
    assert "envcheck.toml:2" in str(err.value) and "8 of them" in str(err.value)


def test_diff_checks_every_saved_node_against_the_expectation(cli, tmp_path: Path) -> None:
    import json

    cases = Path(__file__).parents[1] / "rules" / "cases" / "DRV171"
    for name in ("good", "bad"):
        data = json.loads((cases / f"{name}.json").read_text())
        data["expect"] = {"status": "unavailable", "reason": "not given"}
        data["node"] = f"node-{name}"
        (tmp_path / f"{name}.json").write_text(json.dumps(data))
    plain = cli("diff", str(tmp_path), "--json")
    assert not [f for f in plain.json()["data"]["findings"] if f["code"] == "DRV171"]
    result = cli("diff", str(tmp_path), "--expect", "8x H100", "--json")
    assert result.returncode == 1
    flagged = [f for f in result.json()["data"]["findings"] if f["code"] == "DRV171"]
    assert [f["node"] for f in flagged] == ["node-bad"]
