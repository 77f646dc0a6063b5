"""DRV101's fix names the conda install beside pip's when conda installed torch (conda list's
installer, or torch's files in a conda environment), in the pytorch channel's spelling for the
release: pytorch-cuda from 1.13, cudatoolkit before, nothing past the channel's last release."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envcheck.facts.node import Facts
from envcheck.matrix_validate import load
from envcheck.model.report import NodeReport
from envcheck.rules.node.driver import conda_form

CASE = Path(__file__).parent / "cases" / "DRV101" / "bad-conda.json"


def _facts(installer: str | None, location: str | None) -> Facts:
    data = json.loads(CASE.read_text())
    torch = data["packages"]["data"]["distributions"][0]
    assert torch["name"] == "torch"
    torch["installer"], torch["location"] = installer, location
    return Facts(NodeReport.from_dict(data), load([]))


@pytest.mark.parametrize(
    ("installer", "location", "release", "variant", "command"),
    [
        (
            "conda",
            None,
            "2.1.0",
            "cu118",
            "conda install pytorch==2.1.0 torchvision torchaudio pytorch-cuda=11.8 -c pytorch -c nvidia",
        ),
        (
            None,
            "/home/u/miniconda3/envs/ml/lib/python3.9/site-packages",
            "1.12.1",
            "cu113",
            "conda install pytorch==1.12.1 torchvision torchaudio cudatoolkit=11.3 -c pytorch -c conda-forge",
        ),
        (
            "conda",
            None,
            "1.7.1",
            "cu102",
            "conda install pytorch==1.7.1 torchvision torchaudio cudatoolkit=10.2 -c pytorch",
        ),
    ],
)
def test_conda_form_in_the_channels_spelling(
    installer: str | None, location: str | None, release: str, variant: str, command: str
) -> None:
    actions = conda_form(_facts(installer, location), release, variant)
    assert [a.text for a in actions] == [f"conda (torch came from conda): {command}"]


@pytest.mark.parametrize(
    ("installer", "location", "release", "variant"),
    [
        ("pip", "/opt/conda/lib/python3.10/site-packages", "2.1.0", "cu118"),
        (None, "/usr/local/lib/python3.10/dist-packages", "2.1.0", "cu118"),
        ("conda", None, "2.6.0", "cu124"),
        ("conda", None, "2.1.0", "cpu"),
    ],
)
def test_no_conda_form(
    installer: str | None, location: str | None, release: str, variant: str
) -> None:
    assert conda_form(_facts(installer, location), release, variant) == ()
