"""The fixes for an API a release removed, in the form threads run them: pydantic 2's refusals
of pydantic 1 code pin pydantic 1; a curated removal whose importer's fixed release is known
upgrades that importer first (deepspeed for torch's elastic `log`); NumPy 2's `numpy.core`
shim without a name pins NumPy 1; a NumPy 1.x extension's `_ARRAY_API not found` is NumPy 2
(PKG104) whatever the package."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from tests.triage.from_log import causes as _causes
from tests.triage.from_log import fix_text as _fix
from tests.triage.from_log import log_file, saved_node

# --- pydantic 2 refusing pydantic 1 code ----------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "PydanticImportError: `pydantic:parse_raw_as` has been removed in V2.",
        "pydantic.errors.PydanticImportError: `pydantic.utils:ValueItems` has been removed in V2.",
        "pydantic.errors.PydanticUserError: The `field` and `config` parameters are not "
        "available in Pydantic V2, please use the `info` parameter instead.",
        "pydantic.errors.PydanticUserError: `const` is removed, use `Literal` instead",
    ],
)
def test_pydantic_v2_refusing_v1_code_pins_pydantic_1(
    tmp_path: Path, cli: Callable[..., CliResult], line: str
) -> None:
    py150 = _causes(cli, log_file(tmp_path, line))["PY150"]
    assert py150["verdict"] == "confirmed"
    text = _fix(py150)
    assert "pip install 'pydantic<2'" in text
    assert "pydantic.v1" in text


def test_pydantic_removed_name_is_not_the_cause_under_pydantic_1(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(tmp_path, "PydanticImportError: `pydantic:parse_raw_as` has been removed in V2.")
    saved = saved_node(tmp_path, pydantic="1.10.13")
    assert _causes(cli, log, "--report", str(saved))["PY150"]["verdict"] != "confirmed"


def test_pydantic_basesettings_names_pydantic_settings_and_the_pin(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "pydantic.errors.PydanticImportError: `BaseSettings` has been moved to the "
        "`pydantic-settings` package. See https://docs.pydantic.dev/2.3/migration/"
        "#basesettings-has-moved-to-pydantic-settings for more details.",
    )
    py150 = _causes(cli, log)["PY150"]
    assert py150["verdict"] == "confirmed"
    assert "pydantic_settings.BaseSettings" in py150["findings"][0]["message"]
    assert "pip install 'pydantic<2.0'" in _fix(py150)


# --- a removal whose importer's fixed release is known --------------------------------------


def test_torch_elastic_log_upgrades_deepspeed_first(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        '  File "/usr/lib/python3.10/site-packages/deepspeed/elasticity/elastic_agent.py", '
        "line 9, in <module>",
        "    from torch.distributed.elastic.agent.server.api import log, _get_socket_with_port",
        "ImportError: cannot import name 'log' from 'torch.distributed.elastic.agent.server.api' "
        "(/usr/lib/python3.10/site-packages/torch/distributed/elastic/agent/server/api.py)",
    )
    py150 = _causes(cli, log)["PY150"]
    commands = py150["findings"][0]["fix"]["commands"]
    assert commands[0] == "pip install 'deepspeed>=0.14.4'"
    assert 'pip install "torch<2.4"' in _fix(py150)


def test_numpy_core_numeric_name_pins_numpy_1(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: cannot import name 'ComplexWarning' from 'numpy.core.numeric' "
        "(/usr/lib/python3.11/site-packages/numpy/core/numeric.py)",
    )
    text = _fix(_causes(cli, log)["PY150"])
    assert "pip install 'numpy<2" in text
    assert "upgrade numpy" not in text.lower()


# --- a NumPy 1.x extension under NumPy 2 ----------------------------------------------------


def test_array_api_not_found_is_numpy2_under_a_numpy1_module(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        '  File "/opt/venv/lib/python3.11/site-packages/kornia/__init__.py", line 8, in <module>',
        "AttributeError: _ARRAY_API not found",
    )
    pkg104 = _causes(cli, log)["PKG104"]
    assert pkg104["verdict"] == "confirmed"
    assert "pip install 'numpy<2'" in _fix(pkg104)
    assert "kornia" in _fix(pkg104)


def test_array_api_not_found_under_numpy_1_is_not_numpy2(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(tmp_path, "AttributeError: _ARRAY_API not found")
    saved = saved_node(tmp_path, numpy="1.26.4")
    assert _causes(cli, log, "--report", str(saved))["PKG104"]["verdict"] != "confirmed"


# --- pyOpenSSL under a newer cryptography ---------------------------------------------------


def test_lib_symbol_missing_upgrades_pyopenssl_and_pins_cryptography_from_its_version(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(tmp_path, "AttributeError: module 'lib' has no attribute 'SSL_ST_INIT'")
    saved = saved_node(tmp_path, pyopenssl="20.0.1", cryptography="38.0.1")
    py150 = _causes(cli, log, "--report", str(saved))["PY150"]
    assert py150["verdict"] == "confirmed"
    text = _fix(py150)
    assert "pip install --upgrade pyopenssl" in text
    assert 'pip install "cryptography<38"' in text
    assert "upgrade lib" not in text
