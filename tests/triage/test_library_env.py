"""A library env report (``transformers env``'s ``- Key: value`` block) pasted in a log is read
for the node's facts (envcheck/ingest/library_env.py): the versions it states decide the causes
and the pins of the fixes, and the log's other lines are not read as packages."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from envcheck.ingest.library_env import find_block, parse_in
from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file

Cli = Callable[..., CliResult]

# transformers/commands/env.py's format_dict: one '- {prop}: {val}' line per fact
_TRANSFORMERS_ENV = (
    "- `transformers` version: 4.41.2",
    "- Platform: Linux-5.15.0-105-generic-x86_64-with-glibc2.35",
    "- Python version: 3.10.12",
    "- Huggingface_hub version: 0.23.4",
    "- Safetensors version: 0.4.3",
    "- Accelerate version: 0.31.0",
    "- Accelerate config: \tnot found",
    "- PyTorch version (GPU?): 2.3.1+cu121 (True)",
    "- Tensorflow version (GPU?): not installed (NA)",
    "- Using GPU in script?: yes",
)


def test_the_block_is_found_and_read_alone() -> None:
    lines = ["Traceback (most recent call last):", "- note: not a report", "", *_TRANSFORMERS_ENV]
    assert find_block(lines) == (3, 13)
    report = parse_in("\n".join(lines), "job.log")
    assert report is not None
    versions = {d.name: d.version for d in report.packages.data.distributions}
    assert versions["transformers"] == "4.41.2" and versions["accelerate"] == "0.31.0"
    assert report.python.data is not None and report.python.data.version == "3.10.12"
    # a list of prose items with no version is no report
    assert find_block(["- Platform: Linux", "- Using GPU in script?: yes"]) is None
    assert parse_in("just a log line\n- one: item\n", "job.log") is None


def test_a_pasted_report_states_the_release_a_bound_is_checked_against(
    cli: Cli, tmp_path: Path
) -> None:
    """trl before 0.8.1 imports top_k_top_p_filtering, which transformers 4.39 removed: with the
    report the finding names the transformers installed (4.41.2); without it, it cannot."""
    error = (
        "ImportError: cannot import name 'top_k_top_p_filtering' from 'transformers' "
        "(/usr/local/lib/python3.10/site-packages/transformers/__init__.py)"
    )
    cause = causes(cli, log_file(tmp_path, *_TRANSFORMERS_ENV, error))["PKG110"]
    assert "transformers 4.41.2" in cause["findings"][0]["message"]
    assert "transformers<4.39" in fix_text(cause)
    bare = causes(cli, log_file(tmp_path, error, name="bare.log"))["PKG110"]
    assert "4.41.2" not in bare["findings"][0]["message"]


def test_a_pip_or_conda_list_pasted_in_a_log_states_the_packages(cli: Cli, tmp_path: Path) -> None:
    """`pip list` with its header and rule, pasted above the error: its rows are the node's
    packages (the jaxlib whose CUDA plugin the fix pins); the same rows without pip's header
    are not read from a log."""
    rows = ("jax                       0.4.28", "jaxlib                    0.4.28")
    error = (
        "RuntimeError: Unable to initialize backend 'cuda': INVALID_ARGUMENT: Mismatched PJRT "
        "plugin PJRT API version (0.54) and framework PJRT API version 0.51)."
    )
    header = ("Package                   Version", "------------------------- ---------")
    text = fix_text(causes(cli, log_file(tmp_path, *header, *rows, "", error))["PKG101"])
    assert "pip install jax-cuda12-plugin==0.4.28 jax-cuda12-pjrt==0.4.28" in text
    bare = fix_text(causes(cli, log_file(tmp_path, *rows, "", error, name="bare.log"))["PKG101"])
    assert "0.4.28" not in bare
    # conda list with its header: the same
    conda = (
        "# packages in environment at /opt/conda/envs/train:",
        "#",
        "# Name                    Version                   Build  Channel",
        "jaxlib                    0.4.28                   pypi_0    pypi",
    )
    text = fix_text(causes(cli, log_file(tmp_path, *conda, "", error, name="c.log"))["PKG101"])
    assert "pip install jax-cuda12-plugin==0.4.28 jax-cuda12-pjrt==0.4.28" in text


def test_a_pip_freeze_pasted_in_a_log_states_the_packages(cli: Cli, tmp_path: Path) -> None:
    """`pip freeze` pasted beside the error, as rows or run together on one line (rendered
    Markdown joins a thread's paste): its pins are the node's packages. Two rows, or a `pip
    install` command naming the same pins, are not a listing."""
    error = (
        "RuntimeError: Unable to initialize backend 'cuda': INVALID_ARGUMENT: Mismatched PJRT "
        "plugin PJRT API version (0.54) and framework PJRT API version 0.51)."
    )
    rows = ("flax==0.8.4", "jax==0.4.28", "jaxlib==0.4.28", "numpy==1.26.4")
    want = "pip install jax-cuda12-plugin==0.4.28 jax-cuda12-pjrt==0.4.28"
    assert want in fix_text(causes(cli, log_file(tmp_path, *rows, "", error))["PKG101"])
    one = log_file(tmp_path, "env: ", " ".join(rows), "", error, name="one.log")
    assert want in fix_text(causes(cli, one)["PKG101"])
    two = log_file(tmp_path, "jax==0.4.28", "jaxlib==0.4.28", "", error, name="two.log")
    assert "0.4.28" not in fix_text(causes(cli, two)["PKG101"])
    command = log_file(tmp_path, "$ pip install " + " ".join(rows), "", error, name="cmd.log")
    assert "0.4.28" not in fix_text(causes(cli, command)["PKG101"])


def test_a_log_on_standard_input_has_its_pasted_environment_read() -> None:
    """`triage -` reads standard input once; the head it keeps as it scans is read for a pasted
    environment as a file's head is (a pipe, and the grep engine's feeder)."""
    from tests.conftest import run_cli

    error = (
        "RuntimeError: Unable to initialize backend 'cuda': INVALID_ARGUMENT: Mismatched PJRT "
        "plugin PJRT API version (0.54) and framework PJRT API version 0.51)."
    )
    text = "\n".join(("jax==0.4.28", "jaxlib==0.4.28", "numpy==1.26.4", "", error, ""))
    want = "pip install jax-cuda12-plugin==0.4.28 jax-cuda12-pjrt==0.4.28"
    for engine in ("re", "grep"):
        res = run_cli("triage", "-", "--no-probe", "--json", "--engine", engine, stdin=text)
        assert res.returncode == 1, res.stderr
        assert want in res.stdout, engine


def test_a_pip_show_block_in_a_log_states_its_package(cli: Cli, tmp_path: Path) -> None:
    error = (
        "RuntimeError: Unable to initialize backend 'cuda': INVALID_ARGUMENT: Mismatched PJRT "
        "plugin PJRT API version (0.54) and framework PJRT API version 0.51)."
    )
    show = ("Name: jaxlib", "Version: 0.4.28", "Summary: XLA library for JAX", "Location: /x")
    text = fix_text(
        causes(cli, log_file(tmp_path, "$ pip show jaxlib", *show, "", error))["PKG101"]
    )
    assert "pip install jax-cuda12-plugin==0.4.28 jax-cuda12-pjrt==0.4.28" in text
    # a 'Name:' line that no 'Version:' follows is not pip's
    other = log_file(tmp_path, "Name: jaxlib", "Status: 0.4.28", "", error, name="o.log")
    assert "0.4.28" not in fix_text(causes(cli, other)["PKG101"])


def test_a_ds_report_block_in_a_log_states_torch_and_deepspeed() -> None:
    """DeepSpeed's ds_report (deepspeed/env_report.py): keys padded with dots to their values;
    three such lines or more are a block, read for the packages and nvcc it states."""
    lines = [
        "DeepSpeed general environment info:",
        "torch install path ............... ['/usr/lib/python3/dist-packages/torch']",
        "torch version .................... 2.3.0+cu121",
        "deepspeed info ................... 0.14.4, unknown, unknown",
        "nvcc version ..................... 12.2",
        "ImportError: cannot import name 'x' from 'y'",
    ]
    report = parse_in("\n".join(lines), "job.log")
    assert report is not None
    versions = {d.name: d.version for d in report.packages.data.distributions}
    assert versions == {"torch": "2.3.0+cu121", "deepspeed": "0.14.4"}
    assert report.system.data is not None and report.system.data.nvcc is not None
    assert report.system.data.nvcc.version == "12.2"
    # two dotted lines are not a report (a progress line, a table of contents)
    assert parse_in("step one ..... done\nstep two ..... done\n", "job.log") is None
