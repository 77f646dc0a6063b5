"""PY150/PY151 with the names-by-release table (generated/python_names.toml, read from the
libraries' own tags): the exact pin for a name a release added or removed, the installed
version choosing the direction, the importer a traceback shows named as the other side."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from packaging.version import Version

from envcheck.rules.node.import_releases import short
from tests.builtin_matrix import builtin_matrix
from tests.conftest import CliResult
from tests.triage.from_log import causes as _causes
from tests.triage.from_log import fix_text as _fix
from tests.triage.from_log import log_file, saved_node

MATRIX = builtin_matrix()


def test_short_drops_trailing_zero_components_only() -> None:
    assert short(Version("2.0.0")) == "2"
    assert short(Version("0.26.0")) == "0.26"
    assert short(Version("4.40.0")) == "4.40"
    assert short(Version("0.25.2")) == "0.25.2"
    assert short(Version("1.10")) == "1.10"


def test_a_name_a_release_removed_pins_below_it_and_names_the_last_release(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """pydantic 2.0 removed pydantic.fields.ModelField (read from pydantic's own tags)."""
    log = log_file(
        tmp_path,
        '  File "/opt/venv/lib/python3.10/site-packages/pydantic_numpy/dtype.py", line 9, in '
        "<module>",
        "    from pydantic.fields import ModelField",
        "ImportError: cannot import name 'ModelField' from 'pydantic.fields' "
        "(/opt/venv/lib/python3.10/site-packages/pydantic/fields.py)",
    )
    history = MATRIX.python_name("pydantic.fields", "ModelField")
    assert history is not None
    span = history.removed()
    assert span is not None and span.gone == Version("2.0")
    py150 = _causes(cli, log)["PY150"]
    assert py150["verdict"] == "confirmed"
    (finding,) = py150["findings"]
    assert "pydantic 2.0 removed 'ModelField' in pydantic.fields" in finding["message"]
    assert "pydantic-numpy" in finding["message"]  # the importer, from the traceback
    text = _fix(py150)
    assert 'pip install "pydantic<2"' in text
    assert f"pip install pydantic=={span.last}" in text
    assert "pip install -U pydantic-numpy" in text


def test_a_name_a_release_added_pins_that_release(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(tmp_path, "ImportError: cannot import name 'GRPOConfig' from 'trl'")
    py150 = _causes(cli, log)["PY150"]
    text = _fix(py150)
    assert 'pip install "trl>=0.14"' in text  # trl v0.14.0 added GRPOConfig
    assert "pip install -U trl" in text
    assert "trl 0.14.0 added 'GRPOConfig' in trl" in py150["findings"][0]["message"]


def test_the_installed_version_chooses_the_direction(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """A name diffusers dropped and a later release brought back (its own tags): with a release
    of the gap installed, the way forward first, the way back after."""
    history = MATRIX.python_name("diffusers.utils", "is_safetensors_available")
    assert history is not None and len(history.spans) == 2
    gap = history.spans[0]
    assert gap.gone is not None and gap.last is not None
    log = log_file(
        tmp_path,
        "ImportError: cannot import name 'is_safetensors_available' from 'diffusers.utils' "
        "(/opt/venv/lib/python3.10/site-packages/diffusers/utils/__init__.py)",
    )
    saved = saved_node(tmp_path, diffusers=str(gap.gone))
    py150 = _causes(cli, log, "--report", str(saved))["PY150"]
    text = _fix(py150)
    upgrade = history.next_added(gap.gone)
    assert upgrade is not None
    forward = f'pip install "diffusers>={short(upgrade.first)}"'
    back = f'pip install "diffusers<{short(gap.gone)}"'
    assert forward in text and back in text
    assert text.index(forward) < text.index(back)
    assert f"diffusers=={gap.last}" in text
    assert "brought it back" in py150["findings"][0]["message"]


def test_the_installed_release_having_the_name_leaves_the_table_out(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """trl 0.15 has GRPOConfig: the table does not explain the failure, the generic reading
    (another cause: a shadowing file, a broken install) stays."""
    log = log_file(tmp_path, "ImportError: cannot import name 'GRPOConfig' from 'trl'")
    saved = saved_node(tmp_path, trl="0.15.2")
    text = _fix(_causes(cli, log, "--report", str(saved))["PY150"])
    assert "trl>=0.14" not in text
    assert "pip check" in text


def test_a_submodule_imported_by_from_import_is_found_in_the_module_table(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """`from google.protobuf import runtime_version` imports a module that protobuf added."""
    history = MATRIX.python_module("google.protobuf.runtime_version")
    assert history is not None and history.added() is not None
    log = log_file(
        tmp_path,
        "ImportError: cannot import name 'runtime_version' from 'google.protobuf' "
        "(/app/.venv/lib/python3.12/site-packages/google/protobuf/__init__.py)",
    )
    text = _fix(_causes(cli, log)["PY150"])
    added = history.added()
    assert added is not None
    assert f'pip install "protobuf>={short(added.first)}"' in text


def test_no_module_named_a_submodule_a_release_added(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """numpy._core (a NumPy 2 pickle read by NumPy 1.x): the release that added it, not the
    compiled-part reading of a private submodule."""
    history = MATRIX.python_module("numpy._core.multiarray")
    assert history is not None
    log = log_file(
        tmp_path,
        "    results_dict = pickle.load(f)",
        "ModuleNotFoundError: No module named 'numpy._core.multiarray'",
    )
    saved = saved_node(tmp_path, numpy="1.24.4")
    py151 = _causes(cli, log, "--report", str(saved))["PY151"]
    text = _fix(py151)
    added = history.next_added(Version("1.24.4"))
    assert added is not None
    assert f'pip install "numpy>={short(added.first)}"' in text
    assert "compiled part" not in py151["findings"][0]["message"]


def test_no_module_named_a_submodule_a_release_removed(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    history = MATRIX.python_module("pkg_resources.extern")
    assert history is not None
    span = history.removed()
    assert span is not None and span.gone is not None
    log = log_file(tmp_path, "ModuleNotFoundError: No module named 'pkg_resources.extern'")
    text = _fix(_causes(cli, log)["PY151"])
    assert f'pip install "setuptools<{short(span.gone)}"' in text
    assert f"setuptools=={span.last}" in text


def test_hand_facts_stay_first(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    """cached_download: the curated [[import_name]] entry (its note names the thread's pin)."""
    log = log_file(
        tmp_path, "ImportError: cannot import name 'cached_download' from 'huggingface_hub'"
    )
    text = _fix(_causes(cli, log)["PY150"])
    assert 'pip install "huggingface_hub<0.26"' in text
    assert "0.25.2" in text


def test_a_removed_submodule_names_the_importer_from_the_traceback(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """torchvision 0.17 removed transforms.functional_tensor (its wheels); basicsr's frame is
    the innermost above the line: it is the other side of the skew."""
    history = MATRIX.python_module("torchvision.transforms.functional_tensor")
    assert history is not None
    span = history.removed()
    assert span is not None and span.gone is not None
    log = log_file(
        tmp_path,
        "Traceback (most recent call last):",
        '  File "/opt/venv/lib/python3.10/site-packages/basicsr/data/degradations.py", line 8, '
        "in <module>",
        "    from torchvision.transforms.functional_tensor import rgb_to_grayscale",
        "ModuleNotFoundError: No module named 'torchvision.transforms.functional_tensor'",
    )
    py151 = _causes(cli, log)["PY151"]
    text = _fix(py151)
    assert f'pip install "torchvision<{short(span.gone)}"' in text
    assert f"torchvision=={span.last}" in text
    assert "pip install -U basicsr" in text
    assert "basicsr was written for torchvision" in py151["findings"][0]["message"]


def test_a_curated_removal_names_the_importer_the_traceback_shows(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """torch._six (gone in torch 2.0) imported by deepspeed: the fix names deepspeed and its
    upgrade beside the pin of torch; without the frame, the importer is not asserted: the pin
    of torch comes first and the known importers (generated/importers.toml) follow only as
    conditions ("if it is deepspeed that imports it")."""
    site = "/opt/conda/lib/python3.10/site-packages"
    log = log_file(
        tmp_path,
        f'  File "{site}/deepspeed/runtime/utils.py", line 18, in <module>',
        "    from torch._six import inf",
        "ModuleNotFoundError: No module named 'torch._six'",
    )
    cause = _causes(cli, log)["PY151"]
    assert cause["verdict"] == "confirmed"
    text = _fix(cause)
    assert "pip install -U deepspeed" in text
    assert "torch<2.0" in text
    bare = tmp_path / "bare.log"
    bare.write_text("ModuleNotFoundError: No module named 'torch._six'\n")
    bare_cause = _causes(cli, bare)["PY151"]
    assert bare_cause["findings"][0]["fix"]["commands"][0] == "pip install 'torch<2.0'"
    assert "Upgrade the package that imports torch._six" in _fix(bare_cause)
    assert "Known importers: if it is deepspeed that imports it" in _fix(bare_cause)


def test_a_curated_name_removal_names_the_importer_s_upgrade(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    site = "/opt/conda/lib/python3.10/site-packages"
    log = log_file(
        tmp_path,
        f'  File "{site}/diffusers/utils/dynamic_modules_utils.py", line 28, in <module>',
        "    from huggingface_hub import cached_download, hf_hub_download, model_info",
        "ImportError: cannot import name 'cached_download' from 'huggingface_hub' "
        f"({site}/huggingface_hub/__init__.py)",
    )
    text = _fix(_causes(cli, log)["PY150"])
    assert "huggingface_hub<0.26" in text
    assert "pip install -U diffusers" in text


def test_a_name_missing_in_an_earlier_gap_names_both_ways_out_of_the_gap(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """transformers 4.37.0 dropped SampleOutput from transformers.generation.utils, 4.37.2 brought
    it back and 5.0 removed it again: with no installed release stated, the gap is named too."""
    log = log_file(
        tmp_path,
        "ImportError: cannot import name 'SampleOutput' from 'transformers.generation.utils' "
        "(/opt/venv/lib/python3.11/site-packages/transformers/generation/utils.py)",
    )
    text = _fix(_causes(cli, log)["PY150"])
    assert "pip install transformers==4.57.6" in text
    assert "transformers >= 4.37, < 4.37.2 lack it too" in text
    assert "pip install transformers==4.36.2" in text
    # the installed release chooses the direction: 4.37.1 is in the gap
    node = saved_node(tmp_path, transformers="4.37.1")
    text = _fix(_causes(cli, log, "--report", str(node))["PY150"])
    assert "4.36.2" in text
    assert "lack it too" not in text
