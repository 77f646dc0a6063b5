"""TOR104 with the build a companion states it was compiled for: xformers.info prints the torch
build of its extensions ("built for: PyTorch 2.2.0+cu121 ... (you have 2.2.0+cpu)"); the
installed torch must be that build, its CUDA variant included, and the fix names it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from envcheck.engine import evaluate
from envcheck.ingest.sources import load_sources
from envcheck.rules import all_rules
from tests.builtin_matrix import builtin_matrix
from tests.conftest import CliResult

MATRIX = builtin_matrix()
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


def test_a_log_naming_the_xformers_build_gives_the_pinned_xformers(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    # vllm-project/vllm#13116: the newest xformers (built for 2.6.0+cu124) under vLLM 0.7.2's
    # torch 2.5.1; the log gives no xformers version, only the build it was compiled for
    log, spec = tmp_path / "job.log", tmp_path / "stack.toml"
    log.write_text(
        "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
        "    PyTorch 2.6.0+cu124 with CUDA None (you have 2.5.1+cu121)\n"
        "    Python  3.11.0 (you have 3.11.5)\n"
    )
    spec.write_text(
        '[python]\nversion = "3.11.5"\n[packages]\nvllm = "0.7.2"\ntorch = "2.5.1+cu121"\n'
    )
    result = cli("triage", str(log), "--spec", str(spec), "--json")
    assert result.returncode == 1, result.stderr
    data = result.json()["data"]
    assert {"fact": "xformers_torch", "value": "2.6.0+cu124", "line": 2} in [
        {k: f[k] for k in ("fact", "value", "line")} for f in data["facts"]
    ]
    tor104 = next(c for m in data["matches"] for c in m["causes"] if c["code"] == "TOR104")
    assert tor104["verdict"] == "confirmed"
    [finding] = tor104["findings"]
    assert "built for torch 2.6.0+cu124" in finding["message"]
    assert finding["fix"]["commands"] == ["pip install xformers==0.0.28.post3"]
