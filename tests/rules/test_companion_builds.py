"""TOR104 with the build a companion states it was compiled for: xformers.info prints the torch
build of its extensions ("built for: PyTorch 2.2.0+cu121 ... (you have 2.2.0+cpu)"); the
installed torch must be that build, its CUDA variant included, and the fix names it."""

from __future__ import annotations

from pathlib import Path

from envcheck.engine import evaluate
from envcheck.ingest.sources import load_sources
from envcheck.matrix.load import load
from envcheck.rules import all_rules

MATRIX = load(env={})
TOR104 = [r for r in all_rules(MATRIX) if r.code == "TOR104"]

# as pasted in facebookresearch/xformers#982
INFO = """python -m xformers.info
WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:
    PyTorch 2.2.0+cu121 with CUDA 1201 (you have {torch})
    Python  3.11.7 (you have 3.11.0)
  Please reinstall xformers (see https://github.com/facebookresearch/xformers#installing-xformers)
xFormers 0.0.25.dev741
memory_efficient_attention.cutlassF:               unavailable
"""


def _findings(tmp_path: Path, torch: str) -> list[object]:
    path = tmp_path / "info.txt"
    path.write_text(INFO.format(torch=torch))
    report = load_sources([str(path)], [], None)
    return list(evaluate(report, MATRIX, TOR104).findings)


def test_a_cpu_torch_under_a_cu121_xformers_is_named_with_the_cu121_build(tmp_path: Path) -> None:
    [finding] = _findings(tmp_path, "2.2.0+cpu")
    assert "built for torch 2.2.0+cu121" in finding.message  # type: ignore[attr-defined]
    fix = finding.fix  # type: ignore[attr-defined]
    assert fix.summary.startswith("Install torch 2.2.0+cu121")
    assert list(fix.commands) == [
        "pip install --force-reinstall torch==2.2.0 --index-url https://download.pytorch.org/whl/cu121"
    ]


def test_the_build_it_was_compiled_for_passes(tmp_path: Path) -> None:
    # (the rest of the list is unknown in this text: TOR104 says so rather than pass it)
    assert _findings(tmp_path, "2.2.0+cu121") == []
