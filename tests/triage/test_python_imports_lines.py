"""The python family's fixes that name the thing a thread changes: NumPy's C-API / C-ABI check
(PKG190, the NumPy release from NumPy's own version table), the module NumPy 2's guard refused
(PKG104, named from the traceback NumPy prints after its message), a checkout's own package
(PY151: `pip install -e .` from the checkout, never the index's project of that name), a
distribution looked up by name (importlib.metadata) and protobuf's refusal of old generated code
(PKG191: the package that ships the `_pb2.py`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file, saved_node

SITE = "/opt/venv/lib/python3.11/site-packages"


def test_numpy_c_api_names_the_release_and_the_module(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "RuntimeError: module compiled against API version 0xf but this version of numpy is 0xd",
        "Traceback (most recent call last):",
        f'  File "{SITE}/scipy/__init__.py", line 1, in <module>',
        "ImportError: numpy.core.multiarray failed to import",
    )
    found = causes(cli, log)["PKG190"]
    text = fix_text(found)
    assert found["verdict"] == "confirmed"
    assert "scipy was built against NumPy's C-API version 0xf (NumPy 1.22" in str(found)
    assert 'pip install --upgrade "numpy>=1.22,<2"' in text
    assert "--force-reinstall --no-cache-dir scipy" in text


def test_numpy_c_api_with_the_installed_numpy(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "RuntimeError: module compiled against API version 0x10 but this version of numpy is 0xe",
    )
    node = saved_node(tmp_path, numpy="1.21.6")
    found = causes(cli, log, "--report", str(node))["PKG190"]
    assert "numpy 1.21.6 has 0xe" in str(found)


def test_numpy2_guard_names_the_affected_module(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "A module that was compiled using NumPy 1.x cannot be run in",
        "NumPy 2.2.1 as it may crash. To support both 1.x and 2.x",
        "versions of NumPy, modules must be compiled with NumPy 2.0.",
        "",
        'Traceback (most recent call last):  File "<stdin>", line 1, in <module>',
        f'  File "{SITE}/pandas/__init__.py", line 22, in <module>',
        "    from pandas.compat import is_numpy_dev as _is_numpy_dev  # pyright: ignore # noqa:F401",
        "Traceback (most recent call last):",
        f'  File "{SITE}/numpy/core/_multiarray_umath.py", line 44, in __getattr__',
        "    raise ImportError(msg)",
    )
    text = fix_text(causes(cli, log)["PKG104"])
    assert text.index('"numpy<2"') < text.index("pip install -U pandas")


def test_numpy2_guard_does_not_guess_a_distribution_name(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "A module that was compiled using NumPy 1.x cannot be run in",
        "NumPy 2.2.1 as it may crash. To support both 1.x and 2.x",
        'Traceback (most recent call last):  File "<stdin>", line 1, in <module>',
        f'  File "{SITE}/utils_find_1st/__init__.py", line 3, in <module>',
    )
    text = fix_text(causes(cli, log)["PKG104"])
    assert "utils" not in text and 'pip install "numpy<2"' in text


def test_checkout_package_is_installed_from_the_checkout(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "Traceback (most recent call last):",
        '  File "/work/repo/src/mypkg/tools/train.py", line 3, in <module>',
        "    from mypkg.data import load",
        "ModuleNotFoundError: No module named 'mypkg'",
    )
    text = fix_text(causes(cli, log)["PY151"])
    assert "cd /work/repo && pip install -e ." in text  # the root above src/
    assert "$ pip install mypkg" not in text and "pip_install" not in text


def test_site_packages_importer_is_not_a_checkout(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "Traceback (most recent call last):",
        '  File "/work/repo/llava/train.py", line 3, in <module>',
        "    import peft",
        f'  File "{SITE}/peft/__init__.py", line 3, in <module>',
        "    import llava",
        "ModuleNotFoundError: No module named 'llava'",
    )
    text = fix_text(causes(cli, log)["PY151"])
    assert "pip install -e ." not in text


def test_package_metadata_not_found_installs_the_distribution(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "importlib.metadata.PackageNotFoundError: No package metadata was found for bitsandbytes",
    )
    assert "pip install bitsandbytes" in fix_text(causes(cli, log)["PY151"])


def test_protobuf_generated_code_names_its_package(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "Traceback (most recent call last):",
        f'  File "{SITE}/tensorboard/compat/proto/resource_handle_pb2.py", line 16, in <module>',
        "    DESCRIPTOR = _descriptor.FileDescriptor(",
        f'  File "{SITE}/google/protobuf/descriptor.py", line 1024, in __new__',
        "TypeError: Descriptors cannot not be created directly.",
    )
    text = fix_text(causes(cli, log)["PKG191"])
    assert 'pip install "protobuf==3.20.*"' in text
    assert "pip install -U tensorboard" in text
    assert "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION" in text


def test_checkout_named_as_its_package_runs_an_example(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "Traceback (most recent call last):",
        '  File "/content/transformers/examples/pytorch/run_glue.py", line 3, in <module>',
        "    import transformers",
        "ModuleNotFoundError: No module named 'transformers'",
    )
    assert "cd /content/transformers && pip install -e ." in fix_text(causes(cli, log)["PY151"])
