"""A log copied from a terminal that cut its lines at the terminal's width (80 or 132 columns,
the Windows console's 120): the message is named, its facts read and its fix printed as from
the uncut log, whether the facts sit on the rest of a cut line, a path was cut on the line
above, or a long list ran over many cut lines. Lines that only happen to be as long as a
terminal is wide are not glued to a next line that starts a record of its own, and a table's
rows of one width are not taken for a cut. Real lines of corpus threads (urls beside them)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from envcheck.triage.hardwrap import continues, looks_cut, rejoined, terminal_width
from tests.conftest import CliResult
from tests.triage.from_log import confirmed_fixes, stated_facts, triage_data

# https://github.com/NVlabs/curobo/issues/138: torch's CUDA is on the line after the match
CUDA_MISMATCH = (
    "RuntimeError:\n"
    "  The detected CUDA version (10.1) mismatches the version that was used to compile\n"
    "  PyTorch (11.8). Please make sure to use the same CUDA versions.\n"
)
# https://github.com/mattshma/bigdata/issues/108
NVML = (
    "$ nvidia-smi\n"
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make "
    "sure that the latest NVIDIA driver is installed and running.\n"
)
# https://github.com/open-mmlab/mmdetection/issues/1189: the extension's path is cut above
UNDEFINED = (
    "ImportError: mmdetection/mmdet/ops/dcn/deform_conv_cuda.cpython-37m-x86_64-linux-gnu.so: "
    "undefined symbol: _ZN2at7getTypeERKNS_6TensorE\n"
)
# https://github.com/ray-project/ray/issues/34666: pip's list of the versions it found
VERSIONS = ", ".join(
    [f"0.{m}.{p}" for m in (6, 7, 8) for p in range(8)]
    + [f"1.{m}.0" for m in range(14)]
    + ["2.0.0", "2.0.1", "2.1.0", "2.2.0", "2.3.0rc0", "2.3.0"]
)
PIP = (
    "(my-example-package-py-3.7) % pip install ray==2.3.1\n"
    "ERROR: Could not find a version that satisfies the requirement ray==2.3.1 (from "
    f"versions: {VERSIONS})\n"
    "ERROR: No matching distribution found for ray==2.3.1\n"
)


def _cut(text: str, width: int) -> str:
    """``text`` as a terminal ``width`` columns wide shows it, copied from its screen."""
    out = []
    for line in text.split("\n"):
        out += [line[i : i + width] for i in range(0, len(line), width)] or [""]
    return "\n".join(out)


CASES = [
    ("facts-below", CUDA_MISMATCH, "CUD110", ("torch_cuda", "11.8")),
    ("message-table", NVML, "DRV151", None),
    ("path-above", UNDEFINED, "TOR150", ("library_path", "mmdetection/mmdet/ops/dcn/")),
    ("long-list", PIP, "RAY101", ("pip_offered", "2.3.0rc0, 2.3.0")),
]


@pytest.mark.parametrize(
    ("width", "text", "code", "fact"),
    [
        pytest.param(width, text, code, fact, id=f"{name}-{width}")
        for name, text, code, fact in CASES
        for width in (80, 120, 132)
        if _cut(text, width) != text  # a line of the text is longer than the terminal
    ],
)
def test_cut_log_is_read_as_the_uncut_one(
    tmp_path: Path,
    cli: Callable[..., CliResult],
    width: int,
    text: str,
    code: str,
    fact: tuple[str, str] | None,
) -> None:
    plain = tmp_path / "plain.log"
    plain.write_text(text, encoding="utf-8")
    expected = triage_data(cli, plain)
    assert code in confirmed_fixes(expected)
    if fact is not None:
        assert any(n == fact[0] and fact[1] in v for n, v in stated_facts(expected))
    cut = tmp_path / "cut.log"
    cut.write_text(_cut(text, width), encoding="utf-8")
    data = triage_data(cli, cut)
    assert confirmed_fixes(data) == confirmed_fixes(expected)
    assert stated_facts(expected) <= stated_facts(data)


def test_a_line_as_long_as_a_terminal_is_not_glued_to_a_new_record(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """NCCL's line that happens to be 80 characters long, then the next line of the same
    logger: two records (https://github.com/NVIDIA/nccl/issues/290)."""
    first = "gpu2-ru7:2143:2561 [1] include/shm.h:28 NCCL WARN Call to posix_fallocate failed"
    assert len(first) == 80
    second = "gpu2-ru7:2143:2561 [1] NCCL INFO include/shm.h:41 -> 2"
    assert not looks_cut(first, second)
    # nccl#328: another host's NCCL line after torch's NCCL error is no rest of it, whether the
    # error is as long as a terminal or shorter (an editor's wrap)
    error = "RuntimeError: NCCL error in ProcessGroupNCCL.cpp:290, unhandled system error"
    nccl = "node08:27106:27302 [0] include/shm.h:27 NCCL WARN Call to shm_open failed"
    assert not looks_cut(error.replace("system", "system" + " " * 4), nccl)
    assert not continues(error, nccl)
    assert not looks_cut(first, "Traceback (most recent call last):")
    assert looks_cut(first, " : No space left on device")
    assert not looks_cut(first[:79], "d : No space left on device")  # no terminal is 79 wide


def test_a_tables_rows_are_not_a_cut() -> None:
    """conda list's rows all have one width: a table, not a terminal's cut."""
    rows = [
        "ffmpeg                    4.3                  hf484d3e_0    pytorch",
        "libjpeg-turbo             2.0.0                h9bf148f_0    pytorch",
        "pytorch-cuda              11.8                 h7e8668a_6    pytorch",
        "pytorch-mutex             1.0                        cuda    pytorch",
    ]
    assert len({len(r) for r in rows}) == 1
    assert terminal_width(rows) is None


def test_rejoined_lines_keep_the_users_line_numbers() -> None:
    text = "step 1\n" + _cut(PIP.rstrip("\n"), 80) + "\nstep 2\n"
    joined, starts = rejoined(text.encode()) or (b"", [])
    lines = joined.decode().split("\n")
    assert lines[0] == "step 1"
    assert lines[2].startswith("ERROR: Could not find") and lines[2].endswith(f"{VERSIONS})")
    assert lines[3] == "ERROR: No matching distribution found for ray==2.3.1"
    physical = text.split("\n")
    assert physical[starts[3] - 1] == lines[3]  # its number in the user's file
    assert physical[starts[4] - 1] == "step 2"


def test_an_uncut_log_is_left_as_it_is() -> None:
    assert rejoined(PIP.encode()) is None
    assert rejoined(CUDA_MISMATCH.encode()) is None


# https://github.com/xingyizhou/CenterNet/issues/119: torch's cuDNN check before torch 1.12
CUDNN = "RuntimeError: cuDNN version mismatch: PyTorch was compiled against 7102 but linked against 7605\n"


def test_an_editors_word_wrap_keeps_the_versions_on_the_next_line(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """Wrapped at a space before 'but linked against 7605' (an editor, a mail client, a
    console's word wrap): the rule reads both cuDNN versions and prints the plain log's fix."""
    plain = tmp_path / "plain.log"
    plain.write_text(CUDNN, encoding="utf-8")
    expected = confirmed_fixes(triage_data(cli, plain))
    assert "CUD104" in expected and "7.1.2" in expected["CUD104"]
    wrapped = tmp_path / "wrapped.log"
    wrapped.write_text(CUDNN.replace("7102 but", "7102\nbut"), encoding="utf-8")
    assert confirmed_fixes(triage_data(cli, wrapped)) == expected


def test_a_code_line_or_a_new_sentence_is_not_read_as_the_rest() -> None:
    line = "RuntimeError: cuDNN version mismatch: PyTorch was compiled against 7102"
    assert continues(line, "but linked against 7605")
    assert not continues(line, "    return torch.cudnn_convolution(x)")  # indented code
    assert not continues(line + ".", "but linked against 7605")  # the sentence ended
    assert not continues(line, "Traceback (most recent call last):")
    assert not continues("short line", "but linked against 7605")


# a WSL user's paste: the loader's line is exactly 80 characters, the next a command of its own
WSL_LIBCUDA = (
    "OSError: libcuda.so.1: cannot open shared object file: No such file or directory\n"
    "ls /usr/lib/wsl/lib\n"
    "libcuda.so  libcuda.so.1  libcuda.so.1.1  libd3d12.so  libdxcore.so\n"
)


def test_a_join_never_trades_the_lines_failure_for_a_benign_lines_facts(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """An 80-column failure line glued to the next line would be named by the WSL platform
    line (noise) alone: the failure keeps its own signature and the platform stays a fact."""
    log = tmp_path / "wsl.log"
    log.write_text(WSL_LIBCUDA, encoding="utf-8")
    data = triage_data(cli, log)
    assert "SYS150" in confirmed_fixes(data)
    assert ("host_platform", "/usr/lib/wsl") in stated_facts(data)
