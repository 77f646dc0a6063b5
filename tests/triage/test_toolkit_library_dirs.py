"""A CUDA toolkit library the loader cannot find: the fix names the toolkit directory that
holds it, under the toolkit root the log's LD_LIBRARY_PATH names (TensorFlow prints it), and
the table's ``toolkit_dir`` for a library outside lib64 (CUPTI: extras/CUPTI/lib64), for a
release the table lists and one it does not; the driver's own library in a container names
the GPU runtime of each Docker generation. Lines and versions other than the corpus's."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult
from tests.triage.from_log import causes as _causes
from tests.triage.from_log import fix_text as _fix
from tests.triage.from_log import log_file


def _confirmed(cli: Callable[..., CliResult], log: Path) -> str:
    cause = _causes(cli, log)["SYS150"]
    assert cause["verdict"] == "confirmed", cause
    return _fix(cause)


def test_an_unlisted_cupti_release_under_the_toolkit_root_the_log_names(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "I tensorflow/stream_executor/dso_loader.cc:129] Couldn't open CUDA library "
        "libcupti.so.10.0. LD_LIBRARY_PATH: /opt/nvidia/cuda-10.0/lib64:/usr/lib",
    )
    text = _confirmed(cli, log)
    assert "export LD_LIBRARY_PATH=/opt/nvidia/cuda-10.0/extras/CUPTI/lib64:" in text


def test_a_listed_cupti_without_a_path_goes_to_the_default_toolkit(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "OSError: libcupti.so.12: cannot open shared object file: No such file or directory",
    )
    text = _confirmed(cli, log)
    assert "/usr/local/cuda/extras/CUPTI/lib64" in text
    assert "/usr/local/cuda/lib64" not in text


def test_another_toolkit_library_stays_in_lib64_of_the_stated_root(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "W tensorflow/stream_executor/platform/default/dso_loader.cc:60] Could not load dynamic "
        "library 'libcusolver.so.11'; dlerror: libcusolver.so.11: cannot open shared object "
        "file: No such file or directory; LD_LIBRARY_PATH: /usr/local/cuda-11.2/lib64",
    )
    text = _confirmed(cli, log)
    assert "/usr/local/cuda-11.2/lib64" in text
    assert "extras/CUPTI" not in text


def test_the_drivers_library_in_a_container_names_the_runtime_of_each_docker(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: libcuda.so.1: cannot open shared object file: No such file or directory",
    )
    text = _confirmed(cli, log)
    assert "docker run --gpus all" in text
    assert "docker run --runtime=nvidia" in text and "nvidia-docker run" in text
