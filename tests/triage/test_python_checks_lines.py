"""The python family's lines that state their own facts: transformers' require_version (PKG101:
the range and the release found decide upgrade vs pin back, the checking package's upgrade
after), an interpreter older than the code's language features (PY140: the feature's first
Python from the matrix, the package from the traceback) and transformers' optional backends
(PY151: the library it names)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file, saved_node

SITE38 = "/root/miniconda3/envs/job/lib/python3.8/site-packages"
SITE310 = "/opt/conda/lib/python3.10/site-packages"


def test_require_version_newer_than_the_range_pins_back_and_upgrades_the_checker(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "Traceback (most recent call last):",
        f'  File "{SITE310}/transformers/dependency_versions_check.py", line 57, in <module>',
        "    require_version_core(deps[pkg])",
        f'  File "{SITE310}/transformers/utils/versions.py", line 44, in _compare_versions',
        "    raise ImportError(",
        "ImportError: tokenizers>=0.11.1,!=0.11.3,<0.14 is required for a normal functioning of "
        "this module, but found tokenizers==0.14.0.",
        "Try: `pip install transformers -U` or `pip install -e '.[dev]'` if you're working with "
        "git main",
    )
    found = causes(cli, log)["PKG101"]
    text = fix_text(found)
    assert found["verdict"] == "confirmed"
    assert "transformers's runtime check requires tokenizers>=0.11.1,!=0.11.3,<0.14" in str(found)
    assert "pip install 'tokenizers<0.14'" in text
    assert "pip install --upgrade transformers" in text
    assert text.index("tokenizers<0.14") < text.index("--upgrade transformers")


def test_require_version_checker_from_the_calling_frame(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        f'  File "{SITE310}/lmflow/pipeline/finetuner.py", line 90, in <module>',
        '    require_version("trl>=0.8.6,<=0.9.6")',
        f'  File "{SITE310}/transformers/utils/versions.py", line 111, in require_version',
        "ImportError: trl>=0.8.6,<=0.9.6 is required for a normal functioning of this module, "
        "but found trl==0.24.0.",
    )
    text = fix_text(causes(cli, log)["PKG101"])
    assert "pip install trl==0.9.6" in text  # the last release `<=0.9.6` accepts
    assert "pip install --upgrade lmflow" in text


def test_require_version_older_than_the_range_upgrades_it(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: accelerate>=0.21.0 is required for a normal functioning of this module, "
        "but found accelerate==0.20.3.",
    )
    found = causes(cli, log)["PKG101"]
    text = fix_text(found)
    assert "pip install --upgrade 'accelerate>=0.21.0'" in text
    assert "accelerate is older than the range" in str(found)


def test_require_version_inside_the_range_is_not_this_cause(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: peft>=0.5.0 is required for a normal functioning of this module, "
        "but found peft==0.6.0.",
    )
    assert causes(cli, log)["PKG101"]["verdict"] != "confirmed"


def test_builtin_generic_on_python_38_names_the_python_and_the_package(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "Traceback (most recent call last):",
        '  File "aaa.py", line 1, in <module>',
        "    from pyroute2 import IPRoute",
        f'  File "{SITE38}/pyroute2/common.py", line 90, in <module>',
        "    ns: dict[str, Any],",
        "TypeError: 'type' object is not subscriptable",
    )
    found = causes(cli, log)["PY140"]
    text = fix_text(found)
    assert found["verdict"] == "confirmed"
    assert "pyroute2's code uses a Python 3.9 feature" in str(found)
    assert "python=3.9" in text
    assert "pip install --upgrade pyroute2" in text


def test_union_operator_with_the_installed_release_offers_the_one_before(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        f'  File "{SITE38.replace("3.8", "3.9")}/opower/opower.py", line 40, in <module>',
        "    def f(x: str | None) -> None:",
        "TypeError: unsupported operand type(s) for |: 'type' and 'NoneType'",
    )
    node = saved_node(tmp_path, opower="0.0.30")
    found = causes(cli, log, "--report", str(node))["PY140"]
    text = fix_text(found)
    assert "Python 3.10 feature" in str(found)
    assert "python=3.10" in text
    assert "pip install 'opower<0.0.30'" in text


def test_new_feature_on_a_python_that_has_it_is_not_this_cause(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        f'  File "{SITE310}/mypkg/core.py", line 3, in <module>',
        "TypeError: 'type' object is not subscriptable",
    )
    assert causes(cli, log)["PY140"]["verdict"] != "confirmed"


def test_transformers_backend_names_the_distribution(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: ",
        "AlbertTokenizer requires the SentencePiece library but it was not found in your "
        "environment. Checkout the instructions on the",
    )
    found = causes(cli, log)["PY151"]
    assert found["verdict"] == "confirmed"
    assert "pip install sentencepiece" in fix_text(found)


def test_protobuf_getprototype_pins_below_the_removal_and_names_the_importer(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "Traceback (most recent call last):",
        '  File "/usr/local/lib/python3.11/site-packages/tensorflow/python/framework/x.py", '
        "line 3, in <module>",
        "AttributeError: 'MessageFactory' object has no attribute 'GetPrototype'",
    )
    found = causes(cli, log)["PY150"]
    text = fix_text(found)
    assert found["verdict"] == "confirmed"
    assert "protobuf 6.30 removed MessageFactory.GetPrototype" in str(found)
    assert "pip install 'protobuf<6.30'" in text
    assert "pip install -U tensorflow" in text


def test_relative_import_runs_the_file_as_a_module_of_its_package(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "Traceback (most recent call last):",
        '  File "/home/u/azua/run_experiment.py", line 29, in <module>',
        "    from . import models as amodels",
        "ImportError: attempted relative import with no known parent package",
    )
    found = causes(cli, log)["PY151"]
    assert found["verdict"] == "confirmed"
    assert "cd /home/u && python -m azua.run_experiment" in fix_text(found)


def test_relative_import_of_a_main_module_runs_the_package(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        '  File "contourtool\\__main__.py", line 10, in <module>',
        "    from . import main",
        "ImportError: attempted relative import with no known parent package",
    )
    assert "python -m contourtool" in fix_text(causes(cli, log)["PY151"])


def test_unknown_location_reinstalls_the_distribution_over_itself(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: cannot import name 'AutoModel' from 'transformers' (unknown location)",
    )
    node = saved_node(tmp_path, transformers="4.46.0")
    found = causes(cli, log, "--report", str(node))["PY150"]
    text = fix_text(found)
    assert "--force-reinstall --no-cache-dir transformers==4.46.0" in text
    assert "local directory named transformers" in text


def test_transformers_accelerate_guard_upgrades_to_the_floor_it_names(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: Using `low_cpu_mem_usage=True` or a `device_map` requires Accelerate: "
        "`pip install 'accelerate>=0.26.0'`",
    )
    found = causes(cli, log)["PY151"]
    assert found["verdict"] == "confirmed"
    assert "pip install --upgrade 'accelerate>=0.26.0'" in fix_text(found)


def test_unknown_location_of_an_unknown_module_renames_the_local_one_first(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        '  File "xxx/nt_tool/main_zh.py", line 3, in <module>',
        "ImportError: cannot import name 'convert_response' from 'parser' (unknown location)",
    )
    text = fix_text(causes(cli, log)["PY150"])
    assert text.startswith("Rename the local directory (or module) named parser")


def test_match_statement_in_a_package_on_python_38_needs_310(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "Traceback (most recent call last):",
        f'  File "{SITE38}/somepkg/core.py", line 10',
        "    match x:",
        "          ^",
        "SyntaxError: invalid syntax",
    )
    found = causes(cli, log)["PY140"]
    assert found["verdict"] == "confirmed"
    assert "python=3.10" in fix_text(found)
    assert "pip install --upgrade somepkg" in fix_text(found)


def test_unknown_syntax_in_a_package_stays_open_with_the_newer_python(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        f'  File "{SITE38}/somepkg/core.py", line 10',
        "    x = f(",
        "          ^",
        "SyntaxError: invalid syntax",
    )
    found = causes(cli, log)["PY140"]
    assert found["verdict"] == "unknown"
    assert "somepkg's release needs a newer Python than Python 3.8" in str(found["fix"])


def test_syntax_error_in_the_jobs_own_file_is_left_open(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        '  File "train.py", line 10',
        "    x = f(",
        "SyntaxError: invalid syntax",
    )
    assert causes(cli, log)["PY140"]["verdict"] == "unknown"


def test_pips_ignored_release_of_an_exact_pin_names_its_python_range(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "ERROR: Ignored the following versions that require a different python version: 2.0.0 "
        "Requires-Python >=3.10; 2.1.1 Requires-Python >=3.10",
        "ERROR: Could not find a version that satisfies the requirement accuweather==2.1.1 "
        "(from versions: 0.5.2, 1.0.0)",
        "ERROR: No matching distribution found for accuweather==2.1.1",
    )
    found = causes(cli, log)["PY140"]
    text = fix_text(found)
    assert found["verdict"] == "confirmed"
    assert "accuweather 2.1.1 accepts: '>=3.10'" in text
    assert "pip install accuweather==1.0.0" in text


def test_pips_ignored_list_without_the_pin_stays_open(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "ERROR: Ignored the following versions that require a different python version: 1.6.2 "
        "Requires-Python >=3.7,<3.10",
        "ERROR: Could not find a version that satisfies the requirement triton (from versions: "
        "none)",
    )
    found = causes(cli, log)["PY140"]
    assert found["verdict"] == "unknown"
    assert "if the releases pip ignored are triton's" in str(found["fix"])


def test_a_module_python_313_removed_is_not_a_distribution_to_install(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(tmp_path, "ModuleNotFoundError: No module named 'audioop'")
    found = causes(cli, log)["PY151"]
    text = fix_text(found)
    assert "pip install audioop-lts" in text
    assert "Python < 3.13" in text


def test_pydubs_fallback_module_names_the_backport(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(tmp_path, "ModuleNotFoundError: No module named 'pyaudioop'")
    assert "pip install audioop-lts" in fix_text(causes(cli, log)["PY151"])
