"""ABI and loader fixes in the form threads use: a companion of torch's release with the
other C++ ABI (TOR104 builds it here instead of pinning the release already installed)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file


def test_a_paired_companion_of_the_pre_cxx11_abi_is_built_here(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "/w/lib/python3.10/site-packages/torchvision/io/image.py:13: UserWarning: Failed to load "
        "image Python extension: /w/lib/python3.10/site-packages/torchvision/image.so: undefined "
        "symbol: _ZN3c105ErrorC2ENS_14SourceLocationESs",
        "torch==1.12.0",
    )
    cause = causes(cli, log)["TOR104"]
    assert cause["verdict"] == "confirmed", cause
    text = fix_text(cause)
    assert "--no-binary torchvision torchvision==0.13.0" in text
    assert "where that release is already installed" in text


def test_a_companion_of_another_torch_still_gets_the_paired_release(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: /w/lib/python3.10/site-packages/torchvision/_C.so: undefined symbol: "
        "_ZN3c106Device8validateEv",
        "torch==1.12.0",
    )
    cause = causes(cli, log)["TOR104"]
    assert cause["verdict"] == "confirmed", cause
    assert "torchvision==0.13.0" in fix_text(cause)
    assert "--no-binary" not in fix_text(cause)


def test_a_conda_package_is_pinned_to_the_release_that_ships_the_soname(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        '  File "/opt/conda/lib/python3.9/site-packages/cffi/api.py", line 56, in __init__',
        "    import _cffi_backend as backend",
        "ImportError: libffi.so.7: cannot open shared object file: No such file or directory",
    )
    cause = causes(cli, log)["SYS150"]
    assert cause["verdict"] == "confirmed", cause
    assert "conda install -c conda-forge libffi=3.3" in fix_text(cause)


def test_libffi_6_and_openssl_1_1_name_their_conda_releases(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    six = log_file(
        tmp_path,
        "ImportError: libffi.so.6: cannot open shared object file: No such file or directory",
    )
    assert "libffi=3.2" in fix_text(causes(cli, six)["SYS150"])
    ssl = tmp_path / "ssl.txt"
    ssl.write_text(
        "ImportError: libssl.so.1.1: cannot open shared object file: No such file or directory\n"
    )
    assert "openssl=1.1.1" in fix_text(causes(cli, ssl)["SYS150"])


def test_a_conda_copy_bound_for_a_system_program_takes_the_env_off_the_path(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "export LD_LIBRARY_PATH=$CONDA_PREFIX/lib:$LD_LIBRARY_PATH",
        "bash: /home/u/miniconda3/envs/x/lib/libtinfo.so.6: no version information available "
        "(required by bash)",
    )
    cause = causes(cli, log)["SYS224"]
    assert cause["verdict"] == "confirmed", cause
    text = fix_text(cause)
    assert "off LD_LIBRARY_PATH" in text
    assert 'grep -vx "$CONDA_PREFIX/lib"' in text


def test_a_stale_environment_copy_under_a_system_library_is_moved_aside(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "samtools: /opt/anaconda2/bin/../lib/libtinfo.so.5: no version information available "
        "(required by /lib/x86_64-linux-gnu/libncurses.so.5) ...",
        "samtools: relocation error: /lib/x86_64-linux-gnu/libncurses.so.5: symbol _nc_putchar, "
        "version NCURSES_TINFO_5.9.20150530 not defined in file libtinfo.so.5 with link time "
        "reference",
    )
    cause = causes(cli, log)["SYS224"]
    assert cause["verdict"] == "confirmed", cause
    text = fix_text(cause)
    assert "mv /opt/anaconda2/lib/libtinfo.so* /tmp/" in text
    assert "conda install -c conda-forge ncurses" in text


def test_an_extension_imported_whenever_installed_can_be_removed(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "RuntimeError: Failed to import transformers.models.clipseg.modeling_clipseg because of "
        "the following error (look up to see its traceback):",
        "/usr/local/lib/python3.8/dist-packages/transformer_engine_extensions.cpython-38-x86_64-"
        "linux-gnu.so: undefined symbol: _ZN2at4_ops5zeros4callEN3c108ArrayRefINS2_6SymIntEEE",
    )
    cause = causes(cli, log)["TOR150"]
    assert cause["verdict"] == "confirmed", cause
    text = fix_text(cause)
    assert "pip uninstall -y transformer-engine" in text
    assert "transformer-engine-extensions" not in text


def test_a_setup_py_that_downloads_release_wheels_is_built_with_its_variable(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: /env/lib/python3.11/site-packages/causal_conv1d_cuda.cpython-311-x86_64-"
        "linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEab",
    )
    cause = causes(cli, log)["TOR150"]
    assert cause["verdict"] == "confirmed", cause
    text = fix_text(cause)
    assert "CAUSAL_CONV1D_FORCE_BUILD=TRUE pip install --no-build-isolation" in text
    assert "--no-binary causal-conv1d causal-conv1d" not in text


def test_a_program_under_usr_local_refreshes_the_loader_cache_first(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "/usr/local/sbin/login_duo: error while loading shared libraries: libduo.so.1: cannot "
        "open shared object file: No such file or directory",
    )
    cause = causes(cli, log)["SYS150"]
    assert cause["verdict"] == "confirmed", cause
    assert "sudo ldconfig  (after make install into /usr/local)" in fix_text(cause)


def test_flash_attn_failing_under_a_torch_its_release_has_no_wheel_for(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        ">>> import flash_attn",
        "Traceback (most recent call last):",
        '  File "<stdin>", line 1, in <module>',
        '  File "/usr/local/lib/python3.10/dist-packages/flash_attn/__init__.py", line 3, in '
        "<module>",
    )
    spec = tmp_path / "spec.toml"
    spec.write_text(
        '[python]\nversion = "3.10"\n\n[packages]\ntorch = "2.4.0+cu118"\nflash-attn = "2.5.6"\n'
    )
    cause = causes(cli, log, "--no-probe", "--spec", str(spec))["TOR103"]
    assert cause["verdict"] == "confirmed", cause
    assert "no release wheel" in cause["findings"][0]["message"]


def test_flash_attn_failing_under_a_torch_its_release_has_wheels_for_stays_open(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        '  File "/usr/local/lib/python3.10/dist-packages/flash_attn/__init__.py", line 3, in '
        "<module>",
    )
    spec = tmp_path / "spec.toml"
    spec.write_text('[packages]\ntorch = "2.2.0"\nflash-attn = "2.5.6"\n')
    assert causes(cli, log, "--no-probe", "--spec", str(spec))["TOR103"]["verdict"] != "confirmed"


def test_an_unnamed_module_failing_to_load_on_windows_names_import_torch_first(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path, "ImportError: DLL load failed: The specified module could not be found."
    )
    cause = causes(cli, log)["SYS200"]
    assert cause["verdict"] == "confirmed", cause
    assert "import torch  (first, before a torch C++/CUDA extension)" in fix_text(cause)
