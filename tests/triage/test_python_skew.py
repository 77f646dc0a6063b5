"""Version skew between two Python packages named from a traceback's frames: the package
whose code made the call (PY160's caller, the innermost frame under site-packages), NumPy 2.0's
main-namespace removals (PY150), and h5py 3's str attributes under Keras' loaders (PY152)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult
from tests.triage.from_log import causes, fix_text, log_file, saved_node

_TRL_CALL = (
    "Traceback (most recent call last):",
    '  File "/workflow/sft.py", line 95, in <module>',
    "    trainer = SFTTrainer(",
    '  File "/opt/conda/lib/python3.10/site-packages/trl/trainer/sft_trainer.py", line 409, in '
    "__init__",
    "    super().__init__(",
    "TypeError: Trainer.__init__() got an unexpected keyword argument 'processing_class'",
)


def test_the_calling_package_is_named_and_pinned_back(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    """trl's frame calls transformers' Trainer with an argument transformers 4.46 added: both
    sides, the callee's library upgraded or trl pinned below the release whose declared bound
    began requiring transformers>=4.46 (generated/importers.toml)."""
    found = causes(cli, log_file(tmp_path, *_TRL_CALL))["PY160"]
    assert found["verdict"] == "confirmed"
    text = fix_text(found)
    assert "pip install --upgrade 'transformers>=4.46'" in text
    assert 'pip install "trl<0.12"' in text
    assert "the call is trl's" in str(found)


def test_an_installed_callee_with_the_argument_rules_it_out(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    node = saved_node(tmp_path, transformers="4.46.3")
    found = causes(cli, log_file(tmp_path, *_TRL_CALL), "--report", str(node))["PY160"]
    assert found["verdict"] != "confirmed"


def test_an_unknown_argument_names_the_caller_in_the_open_fix(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "Traceback (most recent call last):",
        '  File "/opt/conda/lib/python3.10/site-packages/llamafactory/chat/vllm_engine.py", '
        "line 100, in __init__",
        "    self.model = AsyncLLMEngine.from_engine_args(AsyncEngineArgs(**engine_args))",
        "TypeError: AsyncEngineArgs.__init__() got an unexpected keyword argument 'zz_unknown'",
    )
    found = causes(cli, log)["PY160"]
    assert found["verdict"] == "unknown"
    assert "llamafactory's code passes zz_unknown" in found["fix"]["summary"]


def test_numpy_2_main_namespace_constants_pin_numpy_1(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    lines = {
        "ImportError: cannot import name 'BUFSIZE' from 'numpy' "
        "(/venv/lib/python3.11/site-packages/numpy/__init__.py)": "deepspeed>=0.14.4",
        "AttributeError: module 'numpy' has no attribute 'MAXDIMS'": 'numpy<2.0"',
        "ImportError: cannot import name 'FPE_OVERFLOW' from 'numpy' "
        "(/venv/lib/python3.11/site-packages/numpy/__init__.py)": 'numpy<2.0"',
    }
    for n, (line, want) in enumerate(lines.items()):
        found = causes(cli, log_file(tmp_path, line, name=f"{n}.log"))["PY150"]
        assert found["verdict"] == "confirmed", line
        assert "numpy<2" in fix_text(found), line
        assert want in fix_text(found), line


def test_h5py_str_attribute_under_tf_keras_names_tensorflow(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        '  File "/usr/local/lib/python3.7/dist-packages/tensorflow_core/python/keras/saving/'
        'hdf5_format.py", line 651, in load_weights_from_hdf5_group',
        "    original_keras_version = f.attrs['keras_version'].decode('utf8')",
        "AttributeError: 'str' object has no attribute 'decode'",
    )
    found = causes(cli, log)["PY152"]
    assert found["verdict"] == "confirmed"
    assert "tensorflow's code" in str(found)
    assert "pip install 'h5py<3'" in fix_text(found)


def test_h5py_2_installed_rules_the_str_attribute_out(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    log = log_file(
        tmp_path,
        "    original_keras_version = f.attrs['keras_version'].decode('utf8')",
        "AttributeError: 'str' object has no attribute 'decode'",
    )
    node = saved_node(tmp_path, h5py="2.10.0")
    found = causes(cli, log, "--report", str(node))["PY152"]
    assert found["verdict"] != "confirmed"


def _httpx_call(package: str) -> tuple[str, ...]:
    return (
        "Traceback (most recent call last):",
        f'  File "/usr/local/lib/python3.11/site-packages/{package}/_base_client.py", line 723, '
        "in __init__",
        "    super().__init__(**kwargs)",
        "TypeError: Client.__init__() got an unexpected keyword argument 'proxies'",
    )


def test_a_removed_argument_upgrades_the_recorded_caller_the_frame_names(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    """httpx 0.28 removed proxies; openai before 1.55.3 passes it: httpx pinned back, or the
    caller the traceback shows upgraded to its release that stopped passing it."""
    found = causes(cli, log_file(tmp_path, *_httpx_call("openai")))["PY160"]
    assert found["verdict"] == "confirmed"
    text = fix_text(found)
    assert "pip install httpx==0.27.2" in text
    assert 'pip install -U "openai>=1.55.3"' in text


def test_another_caller_in_the_frame_is_named_not_the_recorded_one(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    found = causes(cli, log_file(tmp_path, *_httpx_call("anthropic")))["PY160"]
    text = fix_text(found)
    assert "pip install httpx==0.27.2" in text
    assert "upgrade anthropic, whose call passes it" in text
    assert "openai" not in text


_VERL_CALL = (
    '  File "/root/miniconda3/envs/r1/lib/python3.10/site-packages/vllm/entrypoints/llm.py", '
    "line 247, in __init__",
    "    engine_args = EngineArgs(",
    "TypeError: EngineArgs.__init__() got an unexpected keyword argument 'model_hf_config'",
)


def test_a_keyword_only_a_callers_own_copy_takes_pins_the_release_it_was_made_for(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    """verl's LLM copy for vLLM 0.6.3 takes model_hf_config; vLLM's own never did: the
    release verl's copy was made for, not vLLM's first or last release with the argument."""
    found = causes(cli, log_file(tmp_path, *_VERL_CALL))["PY160"]
    assert found["verdict"] == "confirmed"
    text = fix_text(found)
    assert "pip install vllm==0.6.3" in text
    assert "verl's own copy" in str(found)


def test_the_release_the_callers_copy_was_made_for_rules_it_out(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    node = saved_node(tmp_path, vllm="0.6.3")
    found = causes(cli, log_file(tmp_path, *_VERL_CALL), "--report", str(node))["PY160"]
    assert found["verdict"] != "confirmed"


def test_a_bare_init_is_the_class_its_source_line_calls_not_any_class(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    """Python 3.8's `__init__() got an unexpected keyword argument` under `engine_args =
    EngineArgs(`: EngineArgs', with an argument the table does not know, never peft's LoraConfig
    (whose every unknown argument the table reads as a newer adapter config)."""
    log = log_file(
        tmp_path,
        '  File "/usr/local/lib/python3.8/dist-packages/vllm/entrypoints/llm.py", line 53, in '
        "__init__",
        "    engine_args = EngineArgs(",
        "TypeError: __init__() got an unexpected keyword argument 'zz_flag'",
    )
    found = causes(cli, log)["PY160"]
    assert found["verdict"] == "unknown"
    assert "peft" not in str(found)
    assert "EngineArgs.__init__()" in str(found)


def test_a_removed_vllm_engine_argument_pins_its_last_release(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    """vLLM 0.13 removed EngineArgs' task (its wheels, release by release); an installed
    0.12.0 still has it, so the line is not this cause there."""
    line = "TypeError: EngineArgs.__init__() got an unexpected keyword argument 'task'"
    found = causes(cli, log_file(tmp_path, line))["PY160"]
    assert found["verdict"] == "confirmed"
    assert "pip install vllm==0.12.0" in fix_text(found)
    node = saved_node(tmp_path, vllm="0.12.0")
    found = causes(cli, log_file(tmp_path, line), "--report", str(node))["PY160"]
    assert found["verdict"] != "confirmed"


_SWIFT_IMPORT = (
    "Traceback (most recent call last):",
    '  File "/root/miniconda3/envs/env/lib/python3.12/site-packages/swift/llm/deploy.py", line '
    "880, in llm_deploy",
    "    from .utils import prepare_vllm_engine_template",
    "ImportError: cannot import name 'prepare_vllm_engine_template' from 'swift.llm.utils' "
    "(/root/miniconda3/envs/env/lib/python3.12/site-packages/swift/llm/utils/__init__.py)",
)


def test_a_name_gated_on_an_installed_backend_imports_the_backend_by_itself(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    """vLLM installed: ms-swift's vLLM helpers are missing because vLLM does not import, so the
    fix runs `import vllm` for its own error; neither package is upgraded blindly."""
    node = saved_node(tmp_path, vllm="0.6.3")
    found = causes(cli, log_file(tmp_path, *_SWIFT_IMPORT), "--report", str(node))["PY150"]
    assert found["verdict"] == "confirmed"
    text = fix_text(found)
    assert "python -c 'import vllm'" in text
    assert "pip install --upgrade swift" not in text
    assert "vllm 0.6.3 is installed" in str(found)


def test_an_availability_check_is_not_read_as_a_gated_name() -> None:
    from envcheck.rules.node.optional_backends import backend_in_name

    assert backend_in_name("swift.llm", "get_vllm_engine") == "vllm"
    assert backend_in_name("swift.llm", "VllmEngine") == "vllm"
    assert backend_in_name("transformers.utils", "is_vllm_available") is None
    assert backend_in_name("transformers.integrations.deepspeed", "deepspeed_config") is None
    assert backend_in_name("trl", "GRPOConfig") is None


def test_a_script_that_reaches_the_callee_through_the_package_is_the_other_side(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    """vLLM's own frame forwards the benchmark's keyword (one the table does not know) to EngineArgs: the script and the
    installed vLLM are the two sides, so upgrading vLLM (the script's release) is named."""
    log = log_file(
        tmp_path,
        "Traceback (most recent call last):",
        '  File "benchmark_latency.py", line 18, in main',
        "    llm = LLM(",
        '  File "/usr/local/lib/python3.8/dist-packages/vllm/entrypoints/llm.py", line 53, in '
        "__init__",
        "    engine_args = EngineArgs(",
        "TypeError: __init__() got an unexpected keyword argument 'zz_flag'",
    )
    found = causes(cli, log)["PY160"]
    assert found["verdict"] == "unknown"
    assert "pip install -U vllm" in found["fix"]["summary"]
    assert "benchmark_latency.py reaches EngineArgs.__init__()" in found["fix"]["summary"]
