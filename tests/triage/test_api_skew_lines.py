"""The python family's API skew and conda solver lines: a keyword a release of the callee added
or removed (PY160, from matrices/packages/keyword_changes.toml, the installed version ruling the
cause out), and conda's / mamba's solver refusals (PY161) with the virtual-package case
(PY162: the system's __cuda / __glibc against the package's constraint)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file, saved_node


def test_removed_keyword_pins_the_last_release_and_names_the_replacement(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "TypeError: SFTTrainer.__init__() got an unexpected keyword argument 'tokenizer'",
    )
    found = causes(cli, log)["PY160"]
    text = fix_text(found)
    assert found["verdict"] == "confirmed"
    assert "trl 0.16 removed it" in str(found)
    assert "pip install trl==0.15.2" in text
    assert "rename the call's tokenizer argument to processing_class" in text


def test_added_keyword_upgrades_and_names_the_config_workaround(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    # Markdown ate the dunders of a pasted line: LoraConfig.init()
    log = log_file(
        tmp_path,
        "TypeError: LoraConfig.init() got an unexpected keyword argument 'layer_replication'",
    )
    text = fix_text(causes(cli, log)["PY160"])
    assert "pip install --upgrade 'peft>=0.10'" in text
    assert "adapter_config.json" in text


def test_installed_release_that_has_the_keyword_rules_it_out(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "TypeError: SFTTrainer.__init__() got an unexpected keyword argument 'tokenizer'",
    )
    node = saved_node(tmp_path, trl="0.15.2")
    assert causes(cli, log, "--report", str(node))["PY160"]["verdict"] == "ruled_out"


def test_unknown_keyword_is_left_open(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    log = log_file(
        tmp_path,
        "TypeError: FinetuningConfig.__init__() got an unexpected keyword argument 'combine'",
    )
    found = causes(cli, log)["PY160"]
    assert found["verdict"] != "confirmed"
    assert not found["findings"]


def test_conda_cuda_constraint_above_the_driver(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "Encountered problems while solving:",
        "  - package cudatoolkit-11.0.3-h15472ef_6 has constraint __cuda >=11.0 conflicting "
        "with __cuda-10.2-0",
    )
    found = causes(cli, log)["PY162"]
    text = fix_text(found)
    assert found["verdict"] == "confirmed"
    assert "__cuda 10.2" in str(found)
    assert "NVIDIA driver >= 450.51.05" in text  # CUDA 11.0's, from the toolkit table
    assert "cuda-version<=10.2" in text
    assert "CONDA_OVERRIDE_CUDA=11.0" in text


def test_conda_sees_no_driver_puts_the_override_first(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "  - nothing provides __cuda >=12 needed by pytorch-cuda-12.1-ha16c6d3_6",
    )
    text = fix_text(causes(cli, log)["PY162"])
    assert text.index("CONDA_OVERRIDE_CUDA=12") < text.index("NVIDIA driver")


def test_classic_conda_glibc_met_is_not_the_cause(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "UnsatisfiableError: The following specifications were found to be incompatible with your system:",
        "",
        "  - feature:/linux-64::__glibc==2.31=0",
        "  - feature:|@/linux-64::__glibc==2.31=0",
        "  - bcolz -> libgcc-ng[version='>=7.5.0'] -> __glibc[version='>=2.17']",
        "",
        "Your installed version is: 2.31",
    )
    found = causes(cli, log)["PY162"]
    assert found["verdict"] == "ruled_out"


def test_classic_conda_glibc_below_the_constraint(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "The following specifications were found to be incompatible with your system:",
        "",
        "  - feature:/linux-64::__glibc==2.17=0",
        "  - pytorch -> libgcc[version='>=14'] -> __glibc[version='>=2.28,<3.0.a0']",
        "",
        "Your installed version is: 2.17",
    )
    found = causes(cli, log)["PY162"]
    assert found["verdict"] == "confirmed"
    assert "glibc >= 2.28" in fix_text(found)


def test_conda_package_requires_what_the_request_excludes(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "LibMambaUnsatisfiableError: Encountered problems while solving:",
        "  - package torchaudio-2.0.2-py310_cu117 requires pytorch-cuda 11.7.*, but none of "
        "the providers can be installed",
    )
    found = causes(cli, log)["PY161"]
    text = fix_text(found)
    assert found["verdict"] == "confirmed"
    assert 'conda install "pytorch-cuda=11.7.*" torchaudio' in text


def test_removed_keyword_whose_name_looks_secret_is_printed_whole(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    # huggingface_hub 1.0 dropped use_auth_token: the name itself is no secret to redact
    log = log_file(
        tmp_path,
        "ERROR [omnivoice.model] Failed to load Pyannote pipeline (class=LOAD_FAILED): "
        "hf_hub_download() got an unexpected keyword argument 'use_auth_token'",
    )
    found = causes(cli, log)["PY160"]
    text = fix_text(found)
    assert "<redacted>" not in str(found)
    assert "pip install 'huggingface_hub<1'" in text
    assert "use_auth_token argument to token" in text


def test_argument_moved_to_the_config_names_where_it_went(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "[rank0]: TypeError: SFTTrainer.__init__() got an unexpected keyword argument "
        "'max_seq_length'",
    )
    text = fix_text(causes(cli, log)["PY160"])
    assert "pip install trl==0.12.2" in text
    assert "SFTConfig(max_seq_length=...)" in text


def test_argument_a_release_passes_to_an_override_of_any_class(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "TypeError: LogitsTrainer.compute_loss() got an unexpected keyword argument "
        "'num_items_in_batch'",
    )
    found = causes(cli, log)["PY160"]
    text = fix_text(found)
    assert found["verdict"] == "confirmed"
    assert "pip install transformers==4.45.2" in text
    assert "num_items_in_batch=None" in text
    older = saved_node(tmp_path, transformers="4.45.2")
    assert causes(cli, log, "--report", str(older))["PY160"]["verdict"] == "ruled_out"


def test_peft_config_argument_the_table_does_not_name_upgrades_peft(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    # peft's troubleshooting guide: any unknown LoraConfig argument is an adapter saved by a
    # newer peft
    log = log_file(
        tmp_path,
        "TypeError: LoraConfig.__init__() got an unexpected keyword argument "
        "'alora_invocation_tokens'",
    )
    text = fix_text(causes(cli, log)["PY160"])
    assert "pip install --upgrade peft" in text
    assert 'remove the "alora_invocation_tokens" key' in text


def test_resolve_package_not_found_with_build_strings_exports_without_them(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "ResolvePackageNotFound: ",
        "  - libgcc-ng==11.2.0=h1234567_1",
        "  - python==3.8.5=h7579374_1",
    )
    found = causes(cli, log)["PY161"]
    assert found["verdict"] == "confirmed"
    assert "conda env export --no-builds" in fix_text(found)


def test_packages_not_found_names_the_spec(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    log = log_file(
        tmp_path,
        "PackagesNotFoundError: The following packages are not available from current channels:",
        "",
        "  - pytorch-cuda=12.1",
        "",
        "Current channels:",
    )
    found = causes(cli, log)["PY161"]
    assert "no pytorch-cuda=12.1" in str(found)
    assert "conda search -c conda-forge pytorch-cuda" in fix_text(found)


def test_removed_accelerate_argument_names_its_new_home(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "TypeError: Accelerator.__init__() got an unexpected keyword argument 'dispatch_batches'",
    )
    text = fix_text(causes(cli, log)["PY160"])
    assert "pip install accelerate==0.34.2" in text
    assert "DataLoaderConfiguration(dispatch_batches=...)" in text


def test_pip_refusing_a_managed_system_python_puts_a_venv_first(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "error: externally-managed-environment",
        "",
        "× This environment is externally managed",
        "╰─> To install Python packages system-wide, try apt install",
        "    python3-xyz, where xyz is the package you are trying to",
        "    install.",
    )
    found = causes(cli, log)["PY163"]
    text = fix_text(found)
    assert found["verdict"] == "confirmed"
    assert text.index("python3 -m venv .venv") < text.index("--break-system-packages")


def test_override_missing_an_argument_the_installed_release_does_not_pass_yet(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "TypeError: CustomTrainer.compute_loss() missing 1 required positional argument: "
        "'num_items_in_batch'",
    )
    found = causes(cli, log)["PY160"]
    text = fix_text(found)
    assert found["verdict"] == "confirmed"
    assert "pip install --upgrade 'transformers>=4.46'" in text
    assert "num_items_in_batch=None" in text
    newer = saved_node(tmp_path, transformers="4.46.0")
    assert causes(cli, log, "--report", str(newer))["PY160"]["verdict"] != "confirmed"


def test_missing_argument_the_table_does_not_know_is_open_with_its_fix(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "TypeError: LlamaAttention.forward() missing 1 required positional argument: "
        "'position_embeddings'",
    )
    found = causes(cli, log)["PY160"]
    assert found["verdict"] != "confirmed"
    assert not found["findings"]
    assert "pass position_embeddings in the call to LlamaAttention.forward()" in str(found["fix"])


def test_argument_given_twice_is_open_and_names_keyword_arguments(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "TypeError: SFTTrainer.__init__() got multiple values for argument 'processing_class'",
    )
    found = causes(cli, log)["PY160"]
    assert found["verdict"] != "confirmed"
    text = str(found["fix"])
    assert "by keyword" in text
    assert "trl 0.16 removed tokenizer" in text
