"""Which distribution a failing extension belongs to, read from the tables (wheels' top_level /
RECORD in matrices/packages/import_names.toml, the compiled-ops packages' modules and ops in
extensions.toml), never made up from a module name; the package-specific causes of a generic
`undefined symbol` line decided by the path it names; sgl-kernel's own line as decisive as the
generic one (envcheck/rules/node/abi.py, sgl_kernel.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from packaging.utils import canonicalize_name

from tests.builtin_matrix import builtin_matrix
from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file, saved_node

MATRIX = builtin_matrix()
TORCH_SYMBOL = "_ZN3c104cuda9SetDeviceEi"
SITE = "/opt/conda/envs/train/lib/python3.10/site-packages"


def _tor150(cli: Callable[..., CliResult], tmp_path: Path, line: str) -> tuple[dict, str]:
    cause = causes(cli, log_file(tmp_path, line))["TOR150"]
    assert cause["verdict"] == "confirmed", cause
    (finding,) = cause["findings"]
    return finding, fix_text(cause)


def test_an_ops_module_of_a_source_only_package_names_it_and_no_index_install(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    for module in ("apex_C", "amp_C", "fused_layer_norm_cuda"):
        finding, text = _tor150(
            cli,
            tmp_path,
            f"ImportError: {SITE}/{module}.cpython-310-x86_64-linux-gnu.so: undefined symbol: "
            f"{TORCH_SYMBOL}",
        )
        assert finding["evidence"]["distribution"] == "apex", finding
        assert canonicalize_name(module) not in text
        assert "git clone https://github.com/NVIDIA/apex" in text
        # the index's `apex` is another project: no command fetches it by name
        assert "--no-binary apex" not in text and "pip install apex " not in text


def test_a_package_directory_named_otherwise_than_its_distribution(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    finding, text = _tor150(
        cli,
        tmp_path,
        f"ImportError: {SITE}/flashinfer/_kernels.cpython-310-x86_64-linux-gnu.so: undefined "
        f"symbol: {TORCH_SYMBOL}",
    )
    assert finding["evidence"]["distribution"] == "flashinfer-python"
    assert "--force-reinstall --no-binary flashinfer-python flashinfer-python" in text


def test_an_unknown_compiled_part_is_looked_up_not_named(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    # the torch pin: the newest release the wheels' symbol table says exports the symbol
    # (c10::cuda::SetDevice(int): 2.1.2 .. 2.2.2), else the placeholder
    for module, symbol, pin in (
        ("quant_cuda", TORCH_SYMBOL, "pip install torch==2.2.2 torchvision==0.17.2"),
        (
            "rope_ext",
            "_ZN2at4_ops5empty4callEN3c108ArrayRefIlEE",
            "pip install torch==<the release it was built for>",
        ),
    ):
        finding, text = _tor150(
            cli,
            tmp_path,
            f"ImportError: {SITE}/{module}.cpython-310-x86_64-linux-gnu.so: undefined symbol: "
            f"{symbol}",
        )
        assert finding["evidence"]["distribution"] is None
        assert finding["evidence"]["module"] == module
        assert canonicalize_name(module) not in text
        assert f"packages_distributions as p; print(p().get('{module}'))" in text
        assert pin in text


def test_a_generic_line_rules_out_other_packages_pairings(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        f"ImportError: {SITE}/mmcv/_ext.cpython-310-x86_64-linux-gnu.so: undefined symbol: "
        f"{TORCH_SYMBOL}",
    )
    found = causes(cli, log)
    assert found["TOR150"]["verdict"] == "confirmed"
    for code in ("TOR103", "TOR104", "VLM101"):
        assert found[code]["verdict"] == "ruled_out", found[code]
        assert "mmcv/_ext" in found[code]["reason"]
    # a line that names no extension's path leaves them to their rules
    bare = log_file(tmp_path, f"undefined symbol: {TORCH_SYMBOL}", name="bare.log")
    for code, cause in causes(cli, bare).items():
        assert cause["verdict"] != "ruled_out", (code, cause)


def test_sgl_kernels_line_with_a_torch_symbol_confirms_it(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = (
        "ImportError: /usr/local/lib/python3.10/dist-packages/sgl_kernel/common_ops.abi3.so: "
        f"undefined symbol: {TORCH_SYMBOL}"
    )
    cause = causes(cli, log_file(tmp_path, line))["TOR120"]
    assert cause["verdict"] == "confirmed", cause
    text = fix_text(cause)
    assert "pip show sglang" in text and '"sglang[all]==<installed sglang>"' in text
    # with the node's torch known, the sgl-kernel sglang pins beside it (matrix's companions)
    paired = sorted(
        (
            c
            for c in MATRIX.companions
            if canonicalize_name(c.package) == "sgl-kernel" and str(c.torch) == "2.6.0"
        ),
        key=lambda c: c.version,
    )
    assert paired
    node = saved_node(tmp_path, torch="2.6.0")
    cause = causes(cli, log_file(tmp_path, line, name="n.log"), "--report", str(node))["TOR120"]
    assert cause["verdict"] == "confirmed", cause
    assert f"sgl-kernel=={paired[-1].version}" in fix_text(cause)


def test_sgl_kernels_line_with_a_cuda_symbol_stays_open(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ImportError: /usr/local/lib/python3.10/dist-packages/sgl_kernel/common_ops.abi3.so: "
        "undefined symbol: cudaGetDriverEntryPointByVersion",
    )
    assert causes(cli, log)["TOR120"]["verdict"] != "confirmed"


def test_a_companion_paired_with_a_cuda_build_of_torch_comes_from_its_index(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = f"ImportError: {SITE}/torchvision/_C.so: undefined symbol: {TORCH_SYMBOL}"
    node = saved_node(tmp_path, torch="2.5.1+cu118")
    cause = causes(cli, log_file(tmp_path, line), "--report", str(node))["TOR104"]
    assert cause["verdict"] == "confirmed", cause
    paired = max(
        c.version
        for c in MATRIX.companions
        if c.package == "torchvision" and str(c.torch) == "2.5.1"
    )
    url = MATRIX.torch_index_url("cu118")
    assert url is not None
    assert f"pip install torchvision=={paired} --index-url {url}" in fix_text(cause)


def test_a_source_trees_extension_is_not_taken_for_torchvisions_or_vllms(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """A path outside site-packages (a source checkout's `/mmcv/_ext...so`) still names the
    package that failed: torchvision's and vLLM's causes are not confirmed from it."""
    found = causes(
        cli,
        log_file(
            tmp_path,
            "`/mmcv/_ext.cpython-37m-x86_64-linux-gnu.so: undefined symbol: "
            "_ZNK2at6Tensor7is_cudaEv`",
        ),
    )
    assert found["TOR150"]["verdict"] == "confirmed"
    for code in ("TOR104", "VLM101", "TOR103"):
        assert found[code]["verdict"] != "confirmed", (code, found[code])
