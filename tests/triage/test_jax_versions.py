"""JAX's own release checks (rules/node/jax_versions.py): jax, jaxlib and the CUDA plugin come
from one release, and each check's line names the versions the fix installs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file

Cli = Callable[..., CliResult]


def test_a_plugin_of_another_release_than_jaxlib_is_pinned_to_jaxlibs(
    cli: Cli, tmp_path: Path
) -> None:
    # ma-gilles/recovar#64: jax-cuda12-plugin 0.9.2 beside jaxlib 0.9.0.1
    log = log_file(
        tmp_path,
        "RuntimeWarning: JAX plugin jax_cuda12_plugin version 0.9.2 is installed, but it is not "
        "compatible with the installed jaxlib version 0.9.0.1, so it will not be used.",
    )
    cause = causes(cli, log)["PKG101"]
    assert cause["verdict"] == "confirmed"
    text = fix_text(cause)
    assert "pip install jax-cuda12-plugin==0.9.0.1 jax-cuda12-pjrt==0.9.0.1" in text
    # wrapped in two lines, as the thread shows it: jaxlib's release read from the second
    wrapped = log_file(
        tmp_path,
        "RuntimeWarning: JAX plugin jax_cuda13_plugin version 0.8.1 is installed,",
        "but it is not compatible with the installed jaxlib version 0.8.0, so it will not be used.",
        name="wrapped.log",
    )
    text = fix_text(causes(cli, wrapped)["PKG101"])
    assert "jax-cuda13-plugin==0.8.0 jax-cuda13-pjrt==0.8.0" in text


def test_jax_refusing_its_jaxlib_names_the_direction(cli: Cli, tmp_path: Path) -> None:
    newer = log_file(
        tmp_path,
        "RuntimeError: jaxlib version 0.4.30 is newer than and incompatible with jax version "
        "0.4.23. Please update your jax and/or jaxlib packages.",
    )
    assert "pip install --upgrade jax==0.4.30" in fix_text(causes(cli, newer)["PKG101"])
    older = log_file(
        tmp_path,
        "RuntimeError: jaxlib is version 0.4.7, but this version of jax requires version >= "
        "0.4.14.",
        name="older.log",
    )
    assert "pip install --upgrade 'jaxlib>=0.4.14'" in fix_text(causes(cli, older)["PKG101"])


def test_a_pjrt_api_mismatch_is_the_plugin_of_another_release(cli: Cli, tmp_path: Path) -> None:
    # jax-ml/jax#22416
    line = (
        "RuntimeError: Unable to initialize backend '{}': INVALID_ARGUMENT: Mismatched PJRT "
        "plugin PJRT API version (0.54) and framework PJRT API version 0.51). (you may need to "
        "uninstall the failing plugin package, or set JAX_PLATFORMS=cpu to skip this backend.)"
    )
    cuda = causes(cli, log_file(tmp_path, line.format("cuda")))["PKG101"]
    assert cuda["verdict"] == "confirmed"
    assert "pip install --upgrade 'jax[cuda12]'" in fix_text(cuda)
    # the node's jaxlib known (a declared stack): the plugin of that release
    spec = tmp_path / "spec.toml"
    spec.write_text('[packages]\njax = "0.4.28"\njaxlib = "0.4.28"\n', encoding="utf-8")
    text = fix_text(
        causes(cli, log_file(tmp_path, line.format("cuda")), "--spec", str(spec))["PKG101"]
    )
    assert "jax-cuda12-plugin==0.4.28 jax-cuda12-pjrt==0.4.28" in text
    # another backend's plugin (jax-metal): no CUDA command
    metal = fix_text(causes(cli, log_file(tmp_path, line.format("METAL"), name="m.log"))["PKG101"])
    assert "METAL plugin" in metal and "cuda12" not in metal


def test_a_plugin_failing_on_a_jaxlib_name_is_a_release_skew(cli: Cli, tmp_path: Path) -> None:
    # jax-ml/jax#26750: the plugin calls what only a newer jaxlib has
    head = (
        "Jax plugin configuration error: Exception when calling jax_plugins.xla_cuda13.initialize()"
    )
    frames = (
        "Traceback (most recent call last):",
        '  File "/venv/lib/python3.13/site-packages/jax_plugins/xla_cuda13/__init__.py", line 96,'
        " in initialize",
        "    xla_client.register_custom_type_id_handler(",
    )
    error = (
        "AttributeError: module 'jaxlib.xla_client' has no attribute "
        "'register_custom_type_id_handler'."
    )
    cause = causes(cli, log_file(tmp_path, head, *frames, error))["PKG101"]
    assert cause["verdict"] == "confirmed"
    # the plugin the frames name decides the extra
    assert "pip install --upgrade 'jax[cuda13]'" in fix_text(cause)
    # jax.print_environment_info()'s lines state jax's release: the extra at that release
    stated = log_file(
        tmp_path, head, *frames, error, "", "jax:    0.4.35", "jaxlib: 0.4.35", name="s.log"
    )
    assert "pip install --upgrade 'jax[cuda13]==0.4.35'" in fix_text(causes(cli, stated)["PKG101"])
    # the plugin failing for another reason (no GPU: cuInit's CUDA_ERROR_NO_DEVICE) is not this
    other = log_file(
        tmp_path,
        head,
        *frames[:2],
        "RuntimeError: jaxlib/cuda/versions_helpers.cc:135: operation cuInit(0) failed: "
        "CUDA_ERROR_NO_DEVICE",
        name="o.log",
    )
    assert "PKG101" not in causes(cli, other)
