"""``nvidia-smi -q -x`` read as a dump (``ingest/nvidia_smi_xml.py``): the whole file, a paste
cut short, and a text whose only XML is an entity declaration."""

from __future__ import annotations

from pathlib import Path

import pytest

from envcheck.ingest.common import FormatError, Source, read_source
from envcheck.ingest.detect import parse
from envcheck.ingest.nvidia_smi_xml import parse as parse_xml

FIXTURE = Path(__file__).parent.parent / "fixtures" / "ingest" / "nvidia_smi_q_x.xml"


def _source(text: str) -> Source:
    path = FIXTURE.parent / "nvidia_smi_q_x.xml"
    return Source(name=str(path), text=text)


def test_the_whole_xml_states_driver_cuda_and_gpus() -> None:
    report = parse(read_source(str(FIXTURE)))
    info = report.gpu.data
    assert info is not None
    assert (info.driver_version, info.cuda_driver_version) == ("550.54.15", "12.4")
    assert info.gpus is not None and [g.name for g in info.gpus] == ["NVIDIA H100 80GB HBM3"] * 2
    assert [g.persistence_mode for g in info.gpus] == [True, False]
    assert [g.memory_used_mib for g in info.gpus] == [4, 512]


def test_a_paste_cut_short_is_read_as_far_as_it_goes() -> None:
    text = FIXTURE.read_text().split("<fb_memory_usage>")[0]
    info = parse_xml(_source(text)).gpu.data
    assert info is not None and info.driver_version == "550.54.15"
    assert info.gpus is not None and info.gpus[0].name == "NVIDIA H100 80GB HBM3"
    assert info.gpus[0].memory_total_mib is None


def test_an_xml_without_facts_is_refused() -> None:
    with pytest.raises(FormatError):
        parse_xml(_source('<!DOCTYPE x [<!ENTITY a "b">]>\n<nvidia_smi_log>\n</nvidia_smi_log>\n'))
