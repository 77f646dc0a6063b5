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
    # a candidate (its own signature lists PKG110 but confirms nothing): open, no node given
    assert pkg110["verdict"] == "unchecked"
    assert not pkg110.get("findings")


# pip's refusal, as ms-swift#3268 pasted it after `pip install git+...trl`
PIP_REFUSAL = "ERROR: Package 'trl' requires a different Python: 3.8.17 not in '>=3.9'\n"


def test_pips_python_refusal_confirms_py140_with_the_pythons_in_range(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    py140 = _causes(cli, _log(tmp_path, PIP_REFUSAL))["PY140"]
    assert (py140["verdict"], py140["evidence"]) == ("confirmed", "confirmed from line 1")
    (finding,) = py140["findings"]
    assert finding["message"] == "trl requires Python '>=3.9'; this is Python 3.8.17"
    text = _fix(py140)
    assert "'>=3.9' (3.9, 3.10, 3.11" in text
    assert "(3.8," not in text and ", 3.8," not in text  # 3.8 is outside the range
    # the release pip refused is the one the job asked for: no older trl is offered
    assert "pip install trl==" not in text


def test_pips_python_refusal_for_a_python_in_range_is_ruled_out(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    # a line whose numbers contradict it (retyped by hand) does not establish the cause
    log = _log(
        tmp_path, "ERROR: Package 'trl' requires a different Python: 3.10.2 not in '>=3.9'\n"
    )
    assert _causes(cli, log)["PY140"]["verdict"] == "ruled_out"


# Ray 0.2.2's version check, as ray#1263 pasted it
RAY_MISMATCH = (
    "Exception: Version mismatch: The cluster was started with:\n"
    "    Ray: 0.2.2\n"
    "    Ray location: /home/ubuntu/ray/python/ray/__init__.py\n"
    "    Python: 3.5.2\n"
    "    Cloudpickle: {theirs}\n"
    "This process on node 172.31.4.51 was started with:\n"
    "    Ray: 0.2.2\n"
    "    Ray location: /home/ubuntu/ray/python/ray/__init__.py\n"
    "    Python: 3.5.2\n"
    "    Cloudpickle: {mine}\n"
)


def test_early_rays_mismatch_line_with_another_cloudpickle_confirms_clu140(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    found = _causes(cli, _log(tmp_path, RAY_MISMATCH.format(theirs="0.5.2", mine="0.2.2")))
    assert found["CLU101"]["verdict"] == "ruled_out"  # same Ray
    assert found["CLU102"]["verdict"] == "ruled_out"  # same Python
    assert found["CLU140"]["verdict"] == "confirmed"
    assert "pip install cloudpickle==0.5.2" in _fix(found["CLU140"])


def test_mismatch_line_with_equal_cloudpickles_rules_clu140_out(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    found = _causes(cli, _log(tmp_path, RAY_MISMATCH.format(theirs="0.5.2", mine="0.5.2")))
    assert found["CLU140"]["verdict"] == "ruled_out"


def test_newer_rays_mismatch_line_without_cloudpickle_rules_clu140_out(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _log(
        tmp_path,
        "RuntimeError: Version mismatch: The cluster was started with:\n"
        "    Ray: 2.9.3\n    Python: 3.10.12\n"
        "This process on node 10.0.0.7 was started with:\n"
        "    Ray: 2.10.0\n    Python: 3.10.12\n",
    )
    found = _causes(cli, log)
    assert found["CLU101"]["verdict"] == "confirmed"
    assert found["CLU140"]["verdict"] == "ruled_out"


# ray#34666 on macOS 11.6 with Python 3.7.16: pip lists what it found for this interpreter
# (the thread's lines, verbatim, from the corpus)
PIP_NO_RAY = (Path(__file__).parents[1] / "corpus" / "ray-34666" / "log.txt").read_text()


def test_pips_list_of_ray_releases_names_the_newest_installable(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    # the line is longer than triage displays: the extractor reads it whole
    assert len(PIP_NO_RAY.splitlines()[1]) > 400
    spec = _spec(
        tmp_path,
        '[python]\nversion = "3.7.16"\n[packages]\nray = "2.3.1"\n[system]\nos = "macOS 11.6"\n',
    )
    ray101 = _causes(cli, _log(tmp_path, PIP_NO_RAY), "--spec", spec)["RAY101"]
    assert (ray101["verdict"], ray101["evidence"]) == ("confirmed", "confirmed from line 2")
    assert "pip lists ray up to 2.3.0" in ray101["findings"][0]["message"]
    assert "pip install ray==2.3.0" in _fix(ray101)


def test_ray101_does_not_rule_out_a_macos_node_from_the_linux_wheels(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    # ray 2.3.1 has cp37 Linux wheels, which say nothing of macOS: the rule cannot decide
    spec = _spec(
        tmp_path,
        '[python]\nversion = "3.7.16"\n[packages]\nray = "2.3.1"\n[system]\nos = "macOS 11.6"\n',
    )
    found = _causes(
        cli,
        _log(tmp_path, "ERROR: No matching distribution found for ray==2.3.1\n"),
        "--spec",
        spec,
    )
    assert found["RAY101"]["verdict"] == "unknown"


def test_pip_finding_no_torch_for_a_python_no_release_has_names_the_pythons(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _log(
        tmp_path,
        "ERROR: Could not find a version that satisfies the requirement torch (from versions: none)\n",
    )
    py101 = _causes(cli, log, "--spec", _spec(tmp_path, '[python]\nversion = "3.4.10"\n'))["PY101"]
    assert py101["verdict"] == "confirmed"
    text = _fix(py101)
    assert "Use a Python that torch has wheels for: torch " in text and "3.12" in text


def test_pip_finding_no_torch_for_a_python_releases_have_stays_open(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    # torch has had 3.12 wheels since 2.2: the empty list points at the platform or the index
    log = _log(
        tmp_path,
        "ERROR: Could not find a version that satisfies the requirement torch (from versions: none)\n",
    )
    py101 = _causes(cli, log, "--spec", _spec(tmp_path, '[python]\nversion = "3.12.0"\n'))["PY101"]
    assert py101["verdict"] == "unknown"
    assert "platform or the index" in py101["reason"]


def test_open_no_torch_for_a_python_prints_the_minors_before_it(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    # open, yet the fix threads ran is concrete: the Python before the one pip ran under
    log = _log(
        tmp_path,
        "ERROR: Could not find a version that satisfies the requirement torch (from versions: none)\n",
    )
    py101 = _causes(cli, log, "--spec", _spec(tmp_path, '[python]\nversion = "3.12.0"\n'))["PY101"]
    assert py101["verdict"] == "unknown"
    text = str(py101["fix"])
    assert "use Python 3.11 or 3.10" in text and "python=3.11" in text


def test_pips_last_line_alone_reads_the_python(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    log = _log(tmp_path, "ERROR: No matching distribution found for ray\n")
    ray101 = _causes(cli, log, "--spec", _spec(tmp_path, '[python]\nversion = "3.8.1"\n'))["RAY101"]
    assert ray101["verdict"] == "unknown"
    assert "use Python 3.7" in str(ray101["fix"])
