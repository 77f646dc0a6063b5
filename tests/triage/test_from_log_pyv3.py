"""Lines that establish a Python, Ray or package-bound cause by themselves: the crash of a
matrix ``[[bound]]`` (transformers 5 removing what vLLM's tokenizer cache reads), pip's
'requires a different Python', pip's list of the releases it can install, Ray's version-mismatch
line with another cloudpickle. Lines as the tools print them (sources in the matrices)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult
from tests.triage.from_log import causes as _causes
from tests.triage.from_log import fix_text as _fix

# transformers 5's tokenizer __getattr__, as vLLM's get_cached_tokenizer hits it (Qwen3-VL#2058)
TOKENIZER_CRASH = (
    '(APIServer pid=75487)   File "/opt/envs/x/lib/python3.11/site-packages/vllm/'
    'transformers_utils/tokenizer.py", line 99, in get_cached_tokenizer\n'
    "(APIServer pid=75487)     tokenizer.all_special_tokens_extended)\n"
    "(APIServer pid=75487) AttributeError: Qwen2Tokenizer has no attribute "
    "all_special_tokens_extended. Did you mean: 'num_special_tokens_to_add'?\n"
)


def _log(tmp_path: Path, text: str, name: str = "job.log") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _spec(tmp_path: Path, text: str) -> str:
    path = tmp_path / "node.toml"
    path.write_text(text)
    return str(path)


def test_tokenizer_crash_confirms_the_transformers_bound(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    pkg110 = _causes(cli, _log(tmp_path, TOKENIZER_CRASH))["PKG110"]
    assert (pkg110["verdict"], pkg110["evidence"]) == ("confirmed", "confirmed from line 3")
    assert "pip install 'transformers<5'" in _fix(pkg110)


def test_tokenizer_crash_with_transformers_4_on_the_node_is_ruled_out(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    spec = _spec(tmp_path, '[packages]\nvllm = "0.10.1"\ntransformers = "4.57.1"\n')
    pkg110 = _causes(cli, _log(tmp_path, TOKENIZER_CRASH), "--spec", spec)["PKG110"]
    assert pkg110["verdict"] == "ruled_out"


def test_tokenizer_crash_with_the_versions_names_them(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    spec = _spec(tmp_path, '[packages]\nvllm = "0.10.1"\ntransformers = "5.3.0"\n')
    pkg110 = _causes(cli, _log(tmp_path, TOKENIZER_CRASH), "--spec", spec)["PKG110"]
    assert pkg110["verdict"] == "confirmed"
    assert "transformers 5.3.0" in pkg110["findings"][0]["message"]
    assert "transformers<5" in _fix(pkg110)


def test_pythons_own_attribute_error_leaves_the_bound_open(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    # not transformers 5's __getattr__: a tokenizer class that never had the attribute
    log = _log(
        tmp_path,
        "AttributeError: 'MistralTokenizer' object has no attribute "
        "'all_special_tokens_extended'\n",
    )
    pkg110 = _causes(cli, log)["PKG110"]
    assert pkg110["verdict"] == "unknown"
    assert not pkg110.get("findings")
