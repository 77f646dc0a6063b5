"""Removals by a library release read from the lines users paste: pandas 2.0's DataFrame and
Series members by their instance AttributeError (`'DataFrame' object has no attribute
'append'`, PY150 from `[[import_name]]` "pandas.DataFrame.append"), module names pyarrow 21,
SciPy 1.17 and Keras removed, and urllib3 2 refusing an ssl module built with OpenSSL < 1.1.1
(PY164)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from envcheck.matrix.model import Matrix
from envcheck.matrix_validate import load
from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file, saved_node


@pytest.fixture(scope="module")
def matrix() -> Matrix:
    return load()


def test_dataframe_append_pins_pandas_1(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    log = log_file(
        tmp_path,
        'File "/venv/lib64/python3.11/site-packages/pandas/core/generic.py", line 5989, in '
        "__getattr__\n    return object.__getattribute__(self, name)\n"
        "AttributeError: 'DataFrame' object has no attribute 'append'. Did you mean: '_append'?",
    )
    found = causes(cli, log)["PY150"]
    assert found["verdict"] == "confirmed"
    assert "pip install 'pandas<2.0'" in fix_text(found)
    assert "pandas.concat" in str(found)


def test_pillow_and_matplotlib_members_pin_the_release_before(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    lines = {
        "AttributeError: 'ImageDraw' object has no attribute 'textsize'": "pillow<10",
        "AttributeError: 'FreeTypeFont' object has no attribute 'getsize'": "pillow<10",
        "AttributeError: 'FigureCanvasAgg' object has no attribute 'tostring_rgb'. Did you "
        "mean: 'tostring_argb'?": "matplotlib<3.10",
        "AttributeError: 'Legend' object has no attribute 'legendHandles'": "matplotlib<3.9",
    }
    for n, (line, pin) in enumerate(lines.items()):
        found = causes(cli, log_file(tmp_path, line, name=f"{n}.log"))["PY150"]
        assert found["verdict"] == "confirmed", line
        assert pin in fix_text(found), line


def test_installed_pandas_1_rules_the_removal_out(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(tmp_path, "AttributeError: 'Series' object has no attribute 'iteritems'")
    node = saved_node(tmp_path, pandas="1.5.3")
    found = causes(cli, log, "--report", str(node))["PY150"]
    assert found["verdict"] != "confirmed"


def test_a_member_no_release_removed_matches_nothing(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(tmp_path, "AttributeError: 'DataFrame' object has no attribute 'Age'")
    result = cli("triage", str(log), "--no-probe")
    assert result.returncode == 0, result.stderr


def test_the_pattern_names_exactly_the_recorded_members(matrix: Matrix) -> None:
    """The signature's classes and members are the `[[import_name]]` entries that record a
    member removed from a class (a capitalised component before the last)."""
    recorded = {
        tuple(e.module.split(".")[-2:])
        for e in matrix.import_names
        if e.removed_by and len(e.module.split(".")) > 2 and e.module.split(".")[-2][:1].isupper()
    }
    sig = next(s for s in matrix.signatures if s.id == "object-member-removed")
    alternations = re.findall(r"\(([A-Za-z_|]+)\)", sig.pattern)
    classes, members = (set(a.split("|")) for a in alternations)
    assert {c for c, _ in recorded} == classes
    assert {m for _, m in recorded} == members


def test_module_level_removals_pin_the_release_before(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    lines = {
        "AttributeError: module 'pyarrow' has no attribute 'PyExtensionType'. Did you mean: "
        "'ExtensionType'?": ("PY150", "pyarrow<21"),
        "AttributeError: module 'pandas' has no attribute 'Int64Index'": ("PY150", "pandas<2"),
        "ImportError: cannot import name 'sph_harm' from 'scipy.special' "
        "(/opt/conda/lib/python3.12/site-packages/scipy/special/__init__.py)": (
            "PY150",
            "scipy<1.17",
        ),
        "ModuleNotFoundError: No module named 'keras.engine'": ("PY151", "keras<2.13"),
        "AttributeError: module 'networkx' has no attribute 'from_numpy_matrix'": (
            "PY150",
            "networkx<3",
        ),
        "AttributeError: module 'matplotlib.cm' has no attribute 'get_cmap'": (
            "PY150",
            "matplotlib<3.9",
        ),
        "ImportError: cannot import name 'DEFAULT_CIPHERS' from 'urllib3.util.ssl_' "
        "(/usr/local/lib/python3.9/site-packages/urllib3/util/ssl_.py)": ("PY150", "urllib3<2"),
        "ImportError: cannot import name 'appengine' from 'requests.packages.urllib3.contrib' "
        "(/usr/local/lib/python3.9/site-packages/urllib3/contrib/__init__.py)": (
            "PY150",
            "urllib3<2",
        ),
        "ModuleNotFoundError: No module named 'keras.src.engine'": ("PY151", "keras<3"),
    }
    for n, (line, (code, pin)) in enumerate(lines.items()):
        found = causes(cli, log_file(tmp_path, line, name=f"{n}.log"))[code]
        assert found["verdict"] == "confirmed", line
        assert pin in fix_text(found), line


def test_urllib3_openssl_floor_pins_urllib3_1(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: urllib3 v2 only supports OpenSSL 1.1.1+, currently the 'ssl' module is "
        "compiled with 'OpenSSL 1.0.2k-fips  26 Jan 2017'. See: "
        "https://github.com/urllib3/urllib3/issues/2168",
    )
    found = causes(cli, log)["PY164"]
    assert found["verdict"] == "confirmed"
    assert "pip install 'urllib3<2'" in fix_text(found)
    assert "OpenSSL 1.0.2k-fips" in str(found)


def test_dynamic_cache_members_pin_transformers_before_their_removal(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    """A checkpoint's own model code (trust_remote_code) reading DynamicCache members that
    transformers 4.49 (get_max_length) and 4.54 (seen_tokens, get_usable_length) removed."""
    lines = {
        "AttributeError: 'DynamicCache' object has no attribute 'get_max_length'. Did you "
        "mean: 'get_seq_length'?": "transformers<4.49",
        "AttributeError: 'DynamicCache' object has no attribute 'seen_tokens'": (
            "transformers<4.54"
        ),
        "AttributeError: 'DynamicCache' object has no attribute 'get_usable_length'": (
            "transformers<4.54"
        ),
    }
    for n, (line, pin) in enumerate(lines.items()):
        found = causes(cli, log_file(tmp_path, line, name=f"{n}.log"))["PY150"]
        assert found["verdict"] == "confirmed", line
        assert pin in fix_text(found), line


def test_installed_transformers_before_the_removal_rules_it_out(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(tmp_path, "AttributeError: 'DynamicCache' object has no attribute 'seen_tokens'")
    node = saved_node(tmp_path, transformers="4.53.3")
    found = causes(cli, log, "--report", str(node))["PY150"]
    assert found["verdict"] != "confirmed"
