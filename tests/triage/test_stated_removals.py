"""Removals a line states or the matrix records, read for their pin (PY150): JAX's own
`X was removed in JAX vN` message, NumPy 2.0's removed type aliases (np.bool8), jax 0.3.16's
tree_multimap, importlib-metadata 5.0's EntryPoints.get as gym's registration reads it,
transformers 4.39's top_k_top_p_filtering for any importer, a line whose closing quote was lost."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file, saved_node


def test_jax_message_pins_the_release_before_it(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "AttributeError: jax.core.pp_eqn was removed in JAX v0.4.34.",
    )
    found = causes(cli, log)["PY150"]
    assert found["verdict"] == "confirmed"
    assert "jax<0.4.34" in fix_text(found)
    assert "jax.core.pp_eqn" in str(found)


def test_jax_message_names_the_replacement(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    log = log_file(
        tmp_path,
        "AttributeError: jax.tree_map was removed in JAX v0.6.0: use jax.tree.map (jax v0.4.25 "
        "or newer) or jax.tree_util.tree_map (any JAX version).",
    )
    found = causes(cli, log)["PY150"]
    assert "jax<0.6.0" in fix_text(found)
    assert "jax.tree.map" in fix_text(found)


def test_older_installed_jax_rules_the_stated_removal_out(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(tmp_path, "AttributeError: jax.tree_map was removed in JAX v0.6.0")
    node = saved_node(tmp_path, jax="0.4.30")
    found = causes(cli, log, "--report", str(node)).get("PY150")
    assert found is None or found["verdict"] != "confirmed"


def test_numpy_bool8_pins_numpy_1(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    log = log_file(tmp_path, "AttributeError: module 'numpy' has no attribute 'bool8'")
    found = causes(cli, log)["PY150"]
    assert found["verdict"] == "confirmed"
    assert "numpy<2.0" in fix_text(found)


def test_jax_tree_multimap_pins_0_3_15(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    log = log_file(tmp_path, "AttributeError: module 'jax' has no attribute 'tree_multimap'")
    assert "jax<0.3.16" in fix_text(causes(cli, log)["PY150"])


def test_entry_points_get_pins_importlib_metadata_4(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        '  File "/lib/python3.7/site-packages/gym/envs/registration.py", line 250, in '
        "load_env_plugins\n    for plugin in metadata.entry_points().get(entry_point, []):\n"
        "AttributeError: 'EntryPoints' object has no attribute 'get'",
    )
    found = causes(cli, log)["PY150"]
    assert found["verdict"] == "confirmed"
    assert "importlib_metadata<5.0" in fix_text(found)


def test_top_k_top_p_filtering_is_also_a_transformers_removal(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "from histogpt.helpers.inference import generate\n"
        "ImportError: cannot import name 'top_k_top_p_filtering' from 'transformers'",
    )
    found = causes(cli, log)
    assert found["PKG110"]["verdict"] == "confirmed"
    assert found["PY150"]["verdict"] == "confirmed"
    assert "transformers==4.38.2" in fix_text(found["PY150"])


def test_lost_closing_quote_still_names_the_removal(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(tmp_path, "AttributeError: module 'networkx' has no attribute 'to_numpy_matrix")
    assert "networkx<3.0" in fix_text(causes(cli, log)["PY150"])


def test_keyword_line_from_rendered_markdown(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    log = log_file(
        tmp_path,
        "TypeError:Accelerator.init got an unexpected keyword argument 'dispatch batches'",
    )
    found = causes(cli, log)["PY160"]
    assert found["verdict"] == "confirmed"
    assert "accelerate==0.34.2" in fix_text(found)
