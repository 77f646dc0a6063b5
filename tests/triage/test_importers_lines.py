"""PY150/PY151 with what each release of the IMPORTING package imports and requires
(generated/importers.toml, read from its own git tags): the importer's release that fits the
installed library, first where the traceback shows the importer (in any of the forms Python,
pytest, IPython and Colab print a frame), after the library's pin where it does not."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from envcheck.rules.node.import_releases import short
from tests.builtin_matrix import builtin_matrix
from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text

MATRIX = builtin_matrix()
SITE = "/opt/conda/envs/job/lib/python3.10/site-packages"


def _log(tmp_path: Path, *lines: str) -> Path:
    log = tmp_path / "job.log"
    log.write_text("\n".join(lines) + "\n")
    return log


def _node(tmp_path: Path, **versions: str) -> Path:
    """A saved report whose (complete) package list holds ``versions``."""
    from envcheck.ingest.spec import load_spec
    from envcheck.model.report import Distribution, PackagesInfo
    from envcheck.model.section import Section

    spec = tmp_path / "spec.toml"
    spec.write_text("[packages]\n")
    report = load_spec(str(spec))
    packages = PackagesInfo(
        distributions=tuple(
            Distribution(name=k.replace("_", "-"), version=v) for k, v in versions.items()
        )
    )
    saved = tmp_path / "node.json"
    saved.write_text(
        json.dumps(report.with_sections(packages=Section.ok(packages, source="t")).to_dict())
    )
    return saved


def _began(importer: str, module: str, name: str | None) -> tuple[str, str]:
    """(first release importing it, the release before) from the importer's table."""
    rows = MATRIX.python_importer(importer)
    assert rows is not None
    spans = rows.imports(module, name)
    assert spans
    before = [r for r in rows.releases if r < spans[0].first][-1]
    return short(spans[0].first), str(before)


def test_the_importer_a_traceback_shows_goes_back_before_it_began_importing_the_name(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    first, before = _began("peft", "transformers", "EncoderDecoderCache")
    log = _log(
        tmp_path,
        f'  File "{SITE}/peft/peft_model.py", line 37, in <module>',
        "    from transformers import Cache, DynamicCache, EncoderDecoderCache, PreTrainedModel",
        "ImportError: cannot import name 'EncoderDecoderCache' from 'transformers' "
        f"({SITE}/transformers/__init__.py)",
    )
    cause = causes(cli, log)["PY150"]
    text = fix_text(cause)
    (finding,) = cause["findings"]
    assert finding["fix"]["summary"].startswith(f"peft {first} began importing")
    assert finding["fix"]["commands"][0] == f"pip install 'peft<{first}'"
    assert f"pip install peft=={before}" in text
    assert 'pip install "transformers>=' in text  # the library's side after it


def test_a_colab_frame_names_the_importer_too(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    first, _ = _began("peft", "transformers", "EncoderDecoderCache")
    log = _log(
        tmp_path,
        "[/usr/local/lib/python3.12/dist-packages/peft/peft_model.py](https://localhost:8080/#)"
        " in <module>",
        "     37 from torch.nn import BCEWithLogitsLoss, CrossEntropyLoss, MSELoss",
        "---> 38 from transformers import Cache, DynamicCache, EncoderDecoderCache, PreTrainedModel",
        "",
        "ImportError: cannot import name 'EncoderDecoderCache' from 'transformers' "
        "(/usr/local/lib/python3.12/dist-packages/transformers/__init__.py)",
    )
    assert f"pip install 'peft<{first}'" in fix_text(causes(cli, log)["PY150"])


def test_a_removed_name_upgrades_the_importer_to_the_release_that_stopped_importing_it(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """pytest's frame form; huggingface_hub removed cached_download (a curated removal)."""
    rows = MATRIX.python_importer("sentence-transformers")
    assert rows is not None
    spans = rows.imports("huggingface_hub", "cached_download")
    assert spans and spans[-1].gone is not None
    log = _log(
        tmp_path,
        f"{SITE}/sentence_transformers/SentenceTransformer.py:12: in <module>",
        "    from huggingface_hub import HfApi, HfFolder, Repository, hf_hub_url, cached_download",
        "E   ImportError: cannot import name 'cached_download' from 'huggingface_hub' "
        f"({SITE}/huggingface_hub/__init__.py)",
    )
    cause = causes(cli, log)["PY150"]
    (finding,) = cause["findings"]
    gone = short(spans[-1].gone)
    assert finding["fix"]["summary"].startswith(f"sentence-transformers {gone} stopped importing")
    assert f"pip install --upgrade 'sentence-transformers>={gone}'" in fix_text(cause)
    assert "huggingface_hub<0.26" in fix_text(cause)


def test_an_importer_the_traceback_does_not_show_is_named_from_the_node_s_packages(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    first, before = _began("peft", "transformers.modeling_layers", None)
    log = _log(
        tmp_path,
        "RuntimeError: Failed to import transformers.trainer because of the following error "
        "(look up to see its traceback):",
        "No module named 'transformers.modeling_layers'",
    )
    node = _node(tmp_path, transformers="4.51.3", peft=first)
    cause = causes(cli, log, "--report", str(node))["PY151"]
    summary = cause["findings"][0]["fix"]["summary"]
    assert summary.startswith("Install transformers")  # the library first: no importer shown
    assert f"if it is peft that imports it: peft {first} began importing" in summary
    assert f"pip install peft=={before}" in fix_text(cause)
    # a complete package list (pip freeze) without peft: peft is not the importer
    freeze = tmp_path / "freeze.txt"
    freeze.write_text("accelerate==1.0.0\ntorch==2.5.1\ntransformers==4.51.3\n")
    assert "peft" not in fix_text(causes(cli, log, "--from", str(freeze))["PY151"])
    freeze.write_text("peft==" + first + "\ntorch==2.5.1\ntransformers==4.51.3\n")
    assert f"pip install peft=={before}" in fix_text(
        causes(cli, log, "--from", str(freeze))["PY151"]
    )


def test_the_bound_the_importer_s_release_declares_pins_the_library(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """A name with no release history: the importer's own setup.py bound decides."""
    assert MATRIX.python_name("transformers", "NoSuchName") is None
    rows = MATRIX.python_importer("sentence-transformers")
    assert rows is not None
    release = next(r for r in rows.releases if str(r) == "2.3.0")
    bound = rows.bound("transformers", release)
    assert bound is not None and not bound.contains("4.30.0")
    log = _log(
        tmp_path,
        f'  File "{SITE}/sentence_transformers/models/Transformer.py", line 4, in <module>',
        "    from transformers import NoSuchName",
        "ImportError: cannot import name 'NoSuchName' from 'transformers' "
        f"({SITE}/transformers/__init__.py)",
    )
    node = _node(tmp_path, transformers="4.30.0", sentence_transformers="2.3.0")
    text = fix_text(causes(cli, log, "--report", str(node))["PY150"])
    assert f"pip install 'transformers{bound}'" in text


def test_fitz_is_installed_from_pymupdf_not_the_index_s_fitz(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _log(tmp_path, "    import fitz", "ModuleNotFoundError: No module named 'fitz'")
    cause = causes(cli, log)["PY151"]
    assert cause["findings"][0]["fix"]["commands"] == ["pip install pymupdf"]
    assert "pip uninstall fitz" in fix_text(cause)


def test_without_a_traceback_the_installed_importers_declared_bounds_pin_the_library(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """What `pip check` would say, from the importers' own setup.py: a pip freeze only."""
    rows = MATRIX.python_importer("sentence-transformers")
    assert rows is not None
    bound = rows.bound("transformers", next(r for r in rows.releases if str(r) == "2.3.0"))
    log = _log(tmp_path, "ImportError: cannot import name 'NoSuchName' from 'transformers'")
    freeze = tmp_path / "freeze.txt"
    freeze.write_text("sentence-transformers==2.3.0\ntorch==2.1.0\ntransformers==4.30.0\n")
    cause = causes(cli, log, "--from", str(freeze))["PY150"]
    assert "sentence-transformers requires" in cause["findings"][0]["message"]
    assert f"pip install 'transformers{bound}'" in fix_text(cause)
    freeze.write_text("sentence-transformers==2.3.0\ntorch==2.1.0\ntransformers==4.40.0\n")
    assert "sentence-transformers requires" not in fix_text(
        causes(cli, log, "--from", str(freeze))["PY150"]
    )


def test_a_removal_names_the_last_release_the_index_lists_before_it(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """The last release before NumPy 2.0 from the index's own release list (not a git tag)."""
    from packaging.version import Version

    listed = [
        c.version
        for c in MATRIX.generated.companion_metadata
        if c.package == "numpy" and not c.yanked and not c.version.is_prerelease
    ]
    last = max(v for v in listed if v < Version("2.0"))
    log = _log(
        tmp_path,
        "AttributeError: `np.float_` was removed in the NumPy 2.0 release. Use `np.float64` "
        "instead.",
    )
    cause = causes(cli, log)["PY150"]
    assert f"pip install numpy=={last}" in fix_text(cause)
    assert cause["findings"][0]["fix"]["commands"][0] == "pip install 'numpy<2'"


def test_a_removed_module_names_the_importer_s_release_that_stopped_importing_it(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """torch 2.0 removed torch._six (a curated removal); DeepSpeed's own tags say when it
    stopped importing it."""
    rows = MATRIX.python_importer("deepspeed")
    assert rows is not None
    spans = rows.imports("torch._six", None)
    assert spans and spans[-1].gone is not None
    log = _log(
        tmp_path,
        f'  File "{SITE}/deepspeed/runtime/utils.py", line 19, in <module>',
        "    from torch._six import inf",
        "ModuleNotFoundError: No module named 'torch._six'",
    )
    cause = causes(cli, log)["PY151"]
    gone = short(spans[-1].gone)
    assert cause["findings"][0]["fix"]["commands"][0] == (
        f"pip install --upgrade 'deepspeed>={gone}'"
    )
    assert "pip install 'torch<2.0'" in fix_text(cause)
