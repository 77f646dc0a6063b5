"""Several sources of one node: what fills what, who wins a conflict, and what the notes say."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from envcheck.errors import InputError
from envcheck.ingest.common import Source, decode, read_source
from envcheck.ingest.detect import FORMATS, detect, parse
from envcheck.ingest.merge import merge
from envcheck.ingest.spec import parse_spec, spec_to_report
from envcheck.model.report import NodeReport

INGEST = Path(__file__).parent.parent / "fixtures" / "ingest"


def load(name: str) -> NodeReport:
    return parse(read_source(str(INGEST / name)))


def test_unknown_sections_are_filled_and_sources_named() -> None:
    merged = merge([load("pip_freeze.txt"), load("nvidia_smi_535_h20.txt")])
    assert merged.origin.kind == "ingested"
    assert merged.packages.is_ok and merged.gpu.is_ok
    assert (
        merged.gpu.notes[0].startswith("from ") and "nvidia_smi_535_h20.txt" in merged.gpu.notes[0]
    )
    assert "pip_freeze.txt" in merged.packages.notes[0]
    assert not merged.python.is_ok  # nobody said
    assert merged.python.reason == "not in pip freeze; not in nvidia-smi"


def test_gpu_fields_merge_per_index() -> None:
    # collect_env names the GPUs; nvidia-smi adds memory, processes and the driver's CUDA
    a = load("collect_env_tinyzero_h20.txt")
    b = load("nvidia_smi_535_h20.txt")
    merged = merge([a, b])
    gpu = merged.gpu.data
    assert gpu is not None and gpu.gpus is not None
    assert gpu.cuda_driver_version == "12.2"
    assert len(gpu.gpus) == 8  # the first source's list
    assert gpu.gpus[0].memory_total_mib == 97871 and gpu.gpus[0].process_count == 1
    assert gpu.gpus[5].memory_total_mib is None  # nvidia-smi showed only two GPUs
    assert any("conflict: gpu.gpus (count) is 8" in n for n in merged.gpu.notes)


def test_conflicting_versions_first_wins_and_is_noted() -> None:
    a = parse(Source("a.txt", "torch==2.4.0\nnumpy==1.26.4\n"))
    b = parse(Source("b.txt", "torch==2.5.1\nray==2.40.0\n"))
    merged = merge([a, b])
    assert merged.packages.data is not None
    versions = {d.key: d.version for d in merged.packages.data.distributions}
    assert versions == {"torch": "2.4.0", "numpy": "1.26.4", "ray": "2.40.0"}
    assert any(
        "conflict: packages.torch is '2.4.0' in a.txt (pip freeze) but '2.5.1' in b.txt" in n
        for n in merged.packages.notes
    )


def test_complete_list_makes_partial_one_complete() -> None:
    merged = merge([load("collect_env_tinyzero_h20.txt"), parse(Source("f", "ray==2.40.0\n"))])
    assert merged.packages.data is not None and merged.packages.data.partial is None
    assert merged.torch.data is not None
    assert merged.torch.data.installed_cuda["nvidia-cublas-cu12"] == "12.1.3.1"


def test_truncated_gpu_name_yields_to_full_name() -> None:
    smi = load("nvidia_smi_470_a10g.txt")
    full = parse(
        Source(
            "q.csv",
            "index, name, memory.total [MiB]\n0, NVIDIA A10G, 22731 MiB\n1, NVIDIA A100-SXM4-80GB, 81251 MiB\n",
        )
    )
    merged = merge([smi, full])
    assert merged.gpu.data is not None and merged.gpu.data.gpus is not None
    assert merged.gpu.data.gpus[1].name == "NVIDIA A100-SXM4-80GB"
    assert not any("conflict" in n for n in merged.gpu.notes)


def test_spec_first_wins_over_text() -> None:
    spec = spec_to_report(parse_spec('[gpu]\ndriver = "550.54.15"\n', "hw.toml"), "hw.toml")
    merged = merge([spec, load("collect_env_tinyzero_h20.txt")])
    assert merged.gpu.data is not None
    assert merged.gpu.data.driver_version == "550.54.15"
    assert any("conflict: gpu.driver_version" in n for n in merged.gpu.notes)
    assert merged.node == "hw"
    assert merged.origin.detail is not None and merged.origin.detail.startswith("hw.toml + ")
    assert NodeReport.from_dict(merged.to_dict()) == merged


TEXT = st.one_of(
    st.text(max_size=400),
    st.lists(
        st.sampled_from(
            [
                "PyTorch version: 2.4.0+cu121",
                "CUDA used to build PyTorch: 12.1",
                "Is debug build: False",
                "GPU models and configuration: ",
                "GPU 0: NVIDIA H20",
                "GPU x: ",
                "Nvidia driver version: 535.x",
                "Versions of relevant libraries:",
                "[pip3] torch==",
                "[pip3] numpy==1.26.4",
                "[conda] pytorch 2.4.0 py3.9_cuda12.1 pytorch",
                "vLLM Version: 0.6.3",
                "| NVIDIA-SMI 535.161.08   Driver Version: 535.161.08   CUDA Version: 12.2 |",
                "|   0  NVIDIA H20   On  | 00000000:08:00.0 Off |   0 |",
                "| N/A 31C P0 72W / 500W | 81234MiB / 97871MiB | 0% Default |",
                "==============NVSMI LOG==============",
                "Driver Version : 535",
                "GPU 00000000:08:00.0",
                "    Product Name : NVIDIA H20",
                "index, name, memory.total [MiB]",
                "0, NVIDIA H20",
                "# packages in environment at /x:",
                "python 3.9.1 h_0",
                "dependencies:",
                "  - pip:",
                "      - torch==",
                "Package Version",
                "------- -------",
                "torch",
                "sglang: 0.4",
                "PyTorch: 2.4",
                "-e file:///x",
                "x @ file:///y-1.0-py3-none-any.whl",
                '[{"name": "a", "version": 1}]',
                "\x00",
            ]
        ),
        max_size=30,
    ).map("\n".join),
)


@settings(max_examples=300, deadline=None)
@given(text=TEXT, forced=st.sampled_from([None, *FORMATS]))
def test_hostile_text_never_raises_anything_but_input_errors(text: str, forced: str | None) -> None:
    try:
        source = decode(text.encode("utf-8", errors="surrogatepass"), "fuzz")
        report = parse(source, forced)
    except InputError as exc:
        assert str(exc).strip() and "\n" not in exc.one_line()
        return
    assert report.origin.kind == "ingested"
    NodeReport.from_dict(report.to_dict())
    detect(text)
