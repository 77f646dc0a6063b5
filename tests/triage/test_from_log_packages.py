"""Package causes a log line states by itself (matrices/signatures/packages.toml): NumPy 2's import
guard (PKG104), transformers' torch gate (PKG108), trl's CLI refusing a command (PKG140) and
transformers refusing a model type (PKG141). Lines as the libraries print them (the threads
are named in the signatures' sources)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult
from tests.triage.from_log import causes as _causes
from tests.triage.from_log import fix_text as _fix
from tests.triage.from_log import log_file

CASES = Path(__file__).parents[1] / "rules" / "cases"
NUMPY_GUARD = (
    "A module that was compiled using NumPy 1.x cannot be run in\n"
    "NumPy 2.0.0 as it may crash. To support both 1.x and 2.x\n"
    "versions of NumPy, modules must be compiled with NumPy 2.0.\n"
    "Some module may need to rebuild instead e.g. with 'pybind11>=2.12'.\n"
)


def _spec(tmp_path: Path, text: str) -> Path:
    spec = tmp_path / "spec.toml"
    spec.write_text(text)
    return spec


def test_numpy_guard_confirms_pkg104_with_numpy_below_2(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    pkg104 = _causes(cli, log_file(tmp_path, NUMPY_GUARD))["PKG104"]
    assert (pkg104["verdict"], pkg104["evidence"]) == ("confirmed", "confirmed from line 2")
    assert "numpy 2.0.0 is installed" in pkg104["findings"][0]["message"]
    assert "pip install 'numpy<2'" in _fix(pkg104)


def test_numpy_guard_names_an_old_torch_the_spec_declares(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    spec = _spec(tmp_path, '[packages]\ntorch = "2.2.2"\nnumpy = "2.0.0"\n')
    found = _causes(cli, log_file(tmp_path, NUMPY_GUARD), "--spec", str(spec))
    assert found["PKG104"]["verdict"] == "confirmed"
    assert (
        "torch 2.2.2 (built against NumPy 1 before 2.3)"
        in (found["PKG104"]["findings"][0]["message"])
    )
    assert found["PKG103"]["verdict"] == "confirmed"  # the rule itself: torch < 2.3, numpy 2


def test_numpy_guard_with_a_package_that_needs_numpy_2_does_not_offer_numpy_below_2(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """vllm-project/vllm#34041: opencv-python-headless requires NumPy 2 on the node (its
    Requires-Dist in a saved report), so the fix is to upgrade the NumPy-1 module, not numpy<2."""
    report = json.loads((CASES / "PKG105" / "bad.json").read_text())
    report["packages"]["data"]["broken"] = []
    report["packages"]["data"]["distributions"] = [
        {"name": "numpy", "version": "2.2.6", "location": "/opt/venv", "requires": []},
        {
            "name": "opencv-python-headless",
            "version": "4.12.0.88",
            "location": "/opt/venv",
            "requires": ['numpy<2.3.0,>=2; python_version >= "3.9"'],
        },
    ]
    saved = tmp_path / "node.json"
    saved.write_text(json.dumps(report))
    log = log_file(tmp_path, NUMPY_GUARD.replace("2.0.0", "2.2.6"))
    pkg104 = _causes(cli, log, "--report", str(saved))["PKG104"]
    assert pkg104["verdict"] == "confirmed"
    text = _fix(pkg104)
    assert "install 'numpy<2'" not in text
    assert "opencv-python-headless 4.12.0.88 (numpy<2.3.0,>=2) rules out numpy<2" in text


def test_numpy_1_in_the_guard_rules_pkg104_out(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    pkg104 = _causes(cli, log_file(tmp_path, NUMPY_GUARD.replace("2.0.0", "1.26.4")))["PKG104"]
    assert pkg104["verdict"] == "ruled_out"


def test_transformers_torch_gate_pins_transformers_below_the_first_release_needing_more(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """jingyaogong/minimind#588: torch 2.0.1 is the newest the server supports; transformers
    4.50 already breaks on torch 2.0 (a [[bound]]), so the pin is transformers<4.50."""
    log = log_file(
        tmp_path, "Disabling PyTorch because PyTorch >= 2.1 is required but found 2.0.1\n"
    )
    pkg108 = _causes(cli, log)["PKG108"]
    assert (pkg108["verdict"], pkg108["evidence"]) == ("confirmed", "confirmed from line 1")
    assert "pip install 'transformers<4.50.0'" in _fix(pkg108)


def test_transformers_torch_gate_on_torch_2_1(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path, "Disabling PyTorch because PyTorch >= 2.2 is required but found 2.1.2\n"
    )
    pkg108 = _causes(cli, log)["PKG108"]
    assert "pip install 'transformers<4.56'" in _fix(pkg108)


def test_trl_cli_without_vllm_serve_confirms_pkg140(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "usage: trl\nTRL CLI: error: argument command: invalid choice: 'vllm-serve' (choose from "
        "'chat', 'dpo', 'env', 'grpo', 'kto', 'sft')\n",
    )
    pkg140 = _causes(cli, log)["PKG140"]
    assert (pkg140["verdict"], pkg140["evidence"]) == ("confirmed", "confirmed from line 2")
    assert "pip install --upgrade 'trl>=0.16.0'" in _fix(pkg140)


def test_trl_cli_refusal_with_a_new_trl_declared_points_at_another_trl_on_path(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(tmp_path, "TRL CLI: error: argument command: invalid choice: 'vllm-serve'\n")
    spec = _spec(tmp_path, '[packages]\ntrl = "0.17.0"\n')
    pkg140 = _causes(cli, log, "--spec", str(spec))["PKG140"]
    assert pkg140["verdict"] == "confirmed"
    assert "another, older trl is first on PATH" in pkg140["findings"][0]["message"]


def test_keyerror_from_configuration_auto_confirms_pkg141(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        '  File "/envs/qwen/lib/python3.11/site-packages/transformers/models/auto/'
        'configuration_auto.py", line 723, in __getitem__\n'
        "    raise KeyError(key)\n"
        "KeyError: 'qwen2'\n",
    )
    pkg141 = _causes(cli, log)["PKG141"]
    assert pkg141["verdict"] == "confirmed"
    assert "model type 'qwen2'" in pkg141["findings"][0]["message"]
    assert "pip install 'transformers>=4.37.0'" in _fix(pkg141)


def test_model_type_refused_while_the_spec_has_a_new_enough_transformers(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """QwenLM/Qwen3#434: the listed environment has 4.37.2; the process ran another one."""
    log = log_file(
        tmp_path,
        'File "x/transformers/models/auto/configuration_auto.py", line 723, in __getitem__\n'
        "    raise KeyError(key)\nKeyError: 'qwen2'\n",
    )
    spec = _spec(tmp_path, '[packages]\ntransformers = "4.37.2"\n')
    pkg141 = _causes(cli, log, "--spec", str(spec))["PKG141"]
    assert pkg141["verdict"] == "confirmed"
    assert "the job ran another environment" in pkg141["findings"][0]["message"]


def test_unrecognised_architecture_message_names_the_release_that_knows_it(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ValueError: The checkpoint you are trying to load has model type `qwen2_5_vl` but "
        "Transformers does not recognize this architecture.\n",
    )
    pkg141 = _causes(cli, log)["PKG141"]
    assert "pip install 'transformers>=4.49.0'" in _fix(pkg141)


def test_a_model_type_the_table_does_not_know_gets_an_upgrade(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = log_file(
        tmp_path,
        "ValueError: The checkpoint you are trying to load has model type `newarch` but "
        "Transformers does not recognize this architecture.\n",
    )
    pkg141 = _causes(cli, log)["PKG141"]
    assert pkg141["verdict"] == "confirmed"
    assert "pip install --upgrade transformers" in _fix(pkg141)


def test_any_model_type_gets_the_release_whose_source_added_it(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """No curated entry for gemma3: the first transformers wheel with transformers.models.gemma3
    (generated/python_names.toml) is 4.50.0; gemma3_text is transformers' special module name
    for the same module."""
    for model_type in ("gemma3", "gemma3_text"):
        log = log_file(
            tmp_path,
            f"ValueError: The checkpoint you are trying to load has model type `{model_type}` "
            "but Transformers does not recognize this architecture.",
        )
        pkg141 = _causes(cli, log)["PKG141"]
        assert pkg141["verdict"] == "confirmed"
        assert "pip install 'transformers>=4.50.0'" in _fix(pkg141), model_type


def _tokenizer_log(tmp_path: Path, name: str) -> Path:
    return log_file(
        tmp_path,
        '  File "/venv/lib/python3.10/site-packages/transformers/models/auto/'
        'tokenization_auto.py", line 1153, in from_pretrained',
        f"ValueError: Tokenizer class {name} does not exist or is not currently imported.",
    )


def test_a_tokenizer_class_a_later_release_added_names_that_release(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """transformers#47553: a checkpoint transformers 5 saved (TokenizersBackend) under v4."""
    pkg141 = _causes(cli, _tokenizer_log(tmp_path, "TokenizersBackend"))["PKG141"]
    assert pkg141["verdict"] == "confirmed"
    assert "pip install 'transformers>=5.0.0'" in _fix(pkg141)
    qwen2 = _causes(cli, _tokenizer_log(tmp_path, "Qwen2Tokenizer"))["PKG141"]
    assert "pip install 'transformers>=4.37.0'" in _fix(qwen2)


def test_a_tokenizer_class_the_node_has_means_another_environment(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    spec = _spec(tmp_path, '[packages]\ntransformers = "4.40.0"\n')
    log = _tokenizer_log(tmp_path, "Qwen2Tokenizer")
    pkg141 = _causes(cli, log, "--spec", str(spec))["PKG141"]
    assert pkg141["verdict"] == "confirmed"
    assert "the job ran another environment" in pkg141["findings"][0]["message"]


def test_a_misspelled_tokenizer_class_names_the_librarys_spelling(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """transformers#22222: early LLaMA checkpoints name LLaMATokenizer."""
    pkg141 = _causes(cli, _tokenizer_log(tmp_path, "LLaMATokenizer"))["PKG141"]
    assert pkg141["verdict"] == "confirmed"
    assert "LlamaTokenizer" in _fix(pkg141) and "tokenizer_config.json" in _fix(pkg141)


def test_a_tokenizer_class_of_the_models_own_code_stays_open(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """Baichuan-13B#190: the model's own tokenizer; trust_remote_code, not an upgrade."""
    pkg141 = _causes(cli, _tokenizer_log(tmp_path, "BaichuanTokenizer"))["PKG141"]
    assert pkg141["verdict"] != "confirmed"
    assert "trust_remote_code" in json.dumps(pkg141)


LF_CHECK = (
    "ImportError: transformers>=4.41.2,<=4.48.1 is required for a normal functioning of this "
    "module, but found transformers==4.49.0.\n"
    "To fix: run `pip install transformers>=4.41.2,<=4.48.1` or set `DISABLE_VERSION_CHECK=1` to "
    "skip this check.\n"
)


def test_llamafactory_check_offers_its_own_switch_in_pkg101s_fix(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """hiyouga/LlamaFactory#6784: the line says DISABLE_VERSION_CHECK=1 skips the check."""
    spec = _spec(tmp_path, '[packages]\nllamafactory = "0.9.2"\ntransformers = "4.49.0"\n')
    pkg101 = _causes(cli, log_file(tmp_path, LF_CHECK), "--spec", str(spec))["PKG101"]
    assert pkg101["verdict"] == "confirmed"
    text = _fix(pkg101)
    assert "set DISABLE_VERSION_CHECK=1 to skip llamafactory's own check" in text
    assert "pip install 'transformers<=4.48.1,>=4.41.2'" in text


def test_a_check_without_the_switch_offers_none(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """LLaMA-Factory's PPO trl check (hiyouga/LlamaFactory#10757) names no switch."""
    log = log_file(
        tmp_path,
        "[rank0]: Incompatible TRL version detected. LLaMA-Factory ppo requires TRL version "
        ">=0.8.6,<=0.9.6. Found version 0.24.0. Please\n",
    )
    spec = _spec(tmp_path, '[packages]\nllamafactory = "0.9.1"\ntrl = "0.24.0"\n')
    pkg101 = _causes(cli, log, "--spec", str(spec))["PKG101"]
    assert pkg101["verdict"] == "confirmed"
    assert "DISABLE_VERSION_CHECK" not in _fix(pkg101)


CHECK_DEPENDENCIES = (
    '  File "/w/LLaMA-Factory/src/llamafactory/extras/misc.py", line 92, in check_dependencies\n'
    '    check_version("transformers>=4.45.0,<=4.51.3,!=4.46.0,!=4.\n'
)


def test_check_dependencies_traceback_confirms_pkg101_with_the_range_it_states(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """hiyouga/LlamaFactory#7827: the traceback is cut inside the range; the complete clauses
    are the fix."""
    pkg101 = _causes(cli, log_file(tmp_path, CHECK_DEPENDENCIES))["PKG101"]
    assert (pkg101["verdict"], pkg101["evidence"]) == ("confirmed", "confirmed from line 1")
    text = _fix(pkg101)
    assert "transformers>=4.45.0 and transformers<=4.51.3 and transformers!=4.46.0" in text
    assert "pip install 'transformers!=4.46.0,<=4.51.3,>=4.45.0'" in text


def test_check_dependencies_with_a_transformers_inside_the_range_rules_pkg101_out(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    spec = _spec(tmp_path, '[packages]\nllamafactory = "0.9.3"\ntransformers = "4.51.3"\n')
    pkg101 = _causes(cli, log_file(tmp_path, CHECK_DEPENDENCIES), "--spec", str(spec))["PKG101"]
    assert pkg101["verdict"] == "ruled_out"


def test_top_k_import_error_is_the_symptom_of_trls_transformers_bound(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """huggingface/trl#1409: the line alone confirms PKG110 with the bound's own fix."""
    log = log_file(
        tmp_path,
        "ImportError: cannot import name 'top_k_top_p_filtering' from 'transformers' "
        "(/usr/local/lib/python3.10/dist-packages/transformers/__init__.py)\n",
    )
    pkg110 = _causes(cli, log)["PKG110"]
    assert (pkg110["verdict"], pkg110["evidence"]) == ("confirmed", "confirmed from line 1")
    text = _fix(pkg110)
    assert "pip install 'transformers<4.39'" in text and "trl release" in text


def test_worker_extension_cls_names_trls_vllm_extra(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """huggingface/trl#3304: 'pip install trl[vllm]' (the release's own pin when it is known)."""
    line = "TypeError: EngineArgs.__init__() got an unexpected keyword argument 'worker_extension_cls'\n"
    assert "pip install 'trl[vllm]'" in _fix(_causes(cli, log_file(tmp_path, line))["PKG110"])
    spec = _spec(tmp_path, '[packages]\ntrl = "0.17.0"\nvllm = "0.8.2"\n')
    pkg110 = _causes(cli, log_file(tmp_path, line), "--spec", str(spec))["PKG110"]
    assert "pip install 'trl[vllm]==0.17.0'" in _fix(pkg110)


def test_a_bound_symptom_with_the_node_inside_the_bound_is_ruled_out(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    line = "TypeError: EngineArgs.__init__() got an unexpected keyword argument 'worker_extension_cls'\n"
    spec = _spec(tmp_path, '[packages]\ntrl = "0.17.0"\nvllm = "0.8.3"\n')
    pkg110 = _causes(cli, log_file(tmp_path, line), "--spec", str(spec))["PKG110"]
    assert pkg110["verdict"] == "ruled_out"
