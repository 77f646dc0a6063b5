"""Features a job uses that the installed release lacks, from the matrix's
``[[first_release]]`` entries: trl's CLI without the command the job runs (PKG140) and a
transformers that does not know the checkpoint's model type (PKG141). Each is stated by a log
line (the tool's own refusal) or a spec's ``[workload]``."""

from __future__ import annotations

import re
from collections.abc import Iterable

from packaging.utils import canonicalize_name
from packaging.version import Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Fix, Severity
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.fixes import fix, manual, pip_install


@rule("PKG140", "trl-command-missing", Severity.ERROR)
def trl_command_missing(facts: Facts) -> Iterable[Hit]:
    """The installed trl is older than the command a job runs

    ## What it checks
    A log line of trl's command-line tool refusing a command (`TRL CLI: error: argument command:
    invalid choice: 'vllm-serve' (choose from ...)`): the trl that ran predates the command.
    Where the node's trl is known and new enough, another (older) trl is first on PATH. Only a
    log (trl's own refusal) or a spec's `[workload] command` states which command a job runs:
    on a node alone the rule does not run.

    ## Why it matters
    Recipes written for a newer trl (GRPO with a separate `trl vllm-serve` server) fail at once
    with an argparse error that does not name the installed version.

    ## Example
    `trl vllm-serve` with trl 0.15.2: `invalid choice: 'vllm-serve' (choose from 'chat', 'dpo',
    'env', 'grpo', 'kto', 'sft')`; vllm-serve arrived in trl 0.16.0.

    ## Fix
    `pip install --upgrade 'trl>=0.16.0'` in the environment whose `trl` runs (check `which trl`).

    ## References
    - https://github.com/huggingface/trl/issues/3139
    - trl/cli.py in the PyPI wheels of trl 0.15.2 and 0.16.0
    """
    command = facts.workload().command
    if command is None:
        raise Skip("the job's command is not stated", "workload.command")
    words = command.split()
    if len(words) < 2 or canonicalize_name(words[0]) != "trl":
        return []
    first = facts.matrix.first_release("trl", "command", words[1])
    if first is None:
        return []
    trl = facts.version("trl")
    if trl is None or trl >= first:
        return []
    want = f"trl>={first}"
    return [
        Hit(
            f"the job runs `trl {words[1]}`, which trl {trl} does not have (it arrived in trl "
            f"{first})",
            evidence={"command": command, "trl": str(trl), "needs": want},
            fix=fix(f"pip install --upgrade '{want}'", "safe", pip_install(want)),
        )
    ]


@from_log("PKG140")
def trl_command_in_log(facts: Facts, line: LogLine) -> Hit:
    found = re.search(r"invalid choice: '([A-Za-z0-9_-]+)'", line.text)
    if found is None:
        raise NotStated("the line is cut before the command", "workload.command")
    command = found.group(1)
    first = facts.matrix.first_release("trl", "command", command)
    want = f"trl>={first}" if first else "trl"
    trl = facts.known_version("trl")
    since = f" (it arrived in trl {first})" if first else ""
    if trl is not None and first is not None and trl >= first:
        return Hit(
            f"trl's CLI has no '{command}' command (line {line.line}), yet trl {trl} here has it"
            f"{since}: another, older trl is first on PATH",
            evidence={"line": line.line, "command": command, "trl": str(trl)},
            fix=fix(
                f"Run the `trl` of the environment that has trl {trl} (check `which trl`), or "
                f"upgrade the other one: pip install --upgrade '{want}'",
                "manual",
                manual("check `which trl` and `python -m pip show trl` in the job's environment"),
            ),
        )
    have = f"trl {trl}" if trl is not None else "the trl that ran"
    return Hit(
        f"{have} has no '{command}' command (line {line.line}: its CLI lists the commands it "
        f"has){since}",
        evidence={"line": line.line, "command": command, "trl": str(trl) if trl else None},
        fix=fix(
            f"pip install --upgrade '{want}' in the environment whose `trl` runs",
            "safe",
            pip_install(want, flags=("--upgrade",)),
        ),
    )


# transformers' own mapping of a model type to the module that defines it (models/auto/
# configuration_auto.py, model_type_to_module_name: SPECIAL_MODEL_TYPE_TO_MODULE_NAME, else
# the type with "-" read as "_"); the entries of releases 4.20-4.50 together
_SPECIAL_MODULES = {
    "aria_text": "aria",
    "chinese_clip_vision_model": "chinese_clip",
    "clip_text_model": "clip",
    "clip_vision_model": "clip",
    "clipseg_vision_model": "clipseg",
    "data2vec-audio": "data2vec",
    "data2vec-text": "data2vec",
    "data2vec-vision": "data2vec",
    "donut-swin": "donut",
    "gemma3_text": "gemma3",
    "idefics3_vision": "idefics3",
    "kosmos-2": "kosmos2",
    "maskformer-swin": "maskformer",
    "openai-gpt": "openai",
    "qwen2_audio_encoder": "qwen2_audio",
    "rt_detr_resnet": "rt_detr",
    "siglip_vision_model": "siglip",
    "smolvlm_vision": "smolvlm",
    "xclip": "x_clip",
}


def first_knowing(facts: Facts, model_type: str) -> Version | None:
    """The first transformers that knows ``model_type``: the curated ``[[first_release]]``
    entry, else the first release whose own source has the type's module
    (``transformers.models.<module>`` in generated/python_names.toml, read from transformers'
    release wheels), where the module arrived after the oldest release scanned and is still in
    the newest; None when neither says (an older type, a type of a model's own code)."""
    first = facts.matrix.first_release("transformers", "model_type", model_type)
    if first is not None:
        return first
    module = f"transformers.models.{_SPECIAL_MODULES.get(model_type, model_type.replace('-', '_'))}"
    history = facts.matrix.python_module(module)
    if history is None or history.module != module:
        return None
    added = history.added()
    return added.first if added is not None else None


def _dev_of(transformers: Version | None, first: Version, model_type: str) -> None:
    """A development build of the release that added the model type (4.49.0.dev0, from
    source) may or may not have it: undecided."""
    if transformers is not None and transformers < first <= Version(transformers.base_version):
        raise Skip(
            f"transformers {transformers} is a development build of {first}, which added {model_type!r}"
        )


@rule("PKG141", "transformers-unknown-model-type", Severity.ERROR)
def unknown_model_type(facts: Facts) -> Iterable[Hit]:
    """transformers does not know the model's architecture

    ## What it checks
    A log line of transformers refusing a checkpoint's model type (`KeyError: 'qwen2'` from
    configuration_auto.py, or `has model type `qwen2_5_vl` but Transformers does not recognize
    this architecture`): the transformers that ran predates the architecture. Where the node's
    transformers is known and new enough for it, the process ran another environment. Only a
    log or a spec's `[workload] model_type` states which model a job loads: on a node alone the
    rule does not run.

    ## Why it matters
    The environment a user lists (`pip list` in one shell) is not always the one the job
    imports; the KeyError names neither.

    ## Which release knows a type
    A curated `[[first_release]]` entry, else the first release whose own source has the
    type's module (`transformers.models.gemma3` for `gemma3`, `qwen3_moe` for `qwen3_moe`:
    transformers' `model_type_to_module_name`), read from transformers' release wheels
    (generated/python_names.toml): any model type added since 4.20, not a list of a few.

    ## Example
    Qwen1.5 fine-tuning fails with `KeyError: 'qwen2'` from a python3.11 env running
    transformers 4.32, while the user lists transformers 4.37.2; Qwen2 needs >= 4.37.0.

    ## Fix
    Install a transformers that knows the model type or the tokenizer class (4.37.0 or newer
    for qwen2, 4.49.0 or newer for qwen2_5_vl, 5.0.0 or newer for a checkpoint transformers 5
    saved: `TokenizersBackend`) in the environment the job runs, and check which interpreter
    that is. A class no release has is the model's own code (load it with
    `trust_remote_code=True`) or a misspelling of the library's (`LLaMATokenizer`); a
    SentencePiece tokenizer without its backend needs `pip install sentencepiece`.

    ## References
    - https://github.com/QwenLM/Qwen3/issues/434
    - https://github.com/hiyouga/LlamaFactory/issues/6784
    - huggingface/transformers src/transformers/models/auto/configuration_auto.py
      (`model_type_to_module_name`, `SPECIAL_MODEL_TYPE_TO_MODULE_NAME`)
    """
    model_type = facts.workload().model_type
    if model_type is None:
        raise Skip("the job's model type is not stated", "workload.model_type")
    first = first_knowing(facts, model_type)
    if first is None:
        raise Skip(f"the first transformers that knows {model_type!r} is not in the matrix")
    transformers = facts.version("transformers")
    _dev_of(transformers, first, model_type)
    if transformers is not None and transformers >= first:
        return []
    want = f"transformers>={first}"
    have = f"transformers {transformers}" if transformers is not None else "no transformers"
    return [
        Hit(
            f"the job loads model type '{model_type}', which {have} does not know (it arrived "
            f"in transformers {first})",
            evidence={"model_type": model_type, "transformers": str(transformers), "needs": want},
            fix=fix(f"pip install '{want}'", "safe", pip_install(want)),
        )
    ]


@from_log("PKG141")
def unknown_model_type_in_log(facts: Facts, line: LogLine) -> Hit | None:
    tokenizer = re.search(r"Tokenizer class ([A-Za-z0-9_]+) does not exist", line.text)
    if tokenizer is not None:
        return _unknown_tokenizer_class(facts, line, tokenizer.group(1))
    stated = line.stated.get("model_type")
    found = re.search(r"has model type `([A-Za-z0-9_-]+)`", line.text)
    model_type = found.group(1) if found else stated
    if not model_type:
        raise NotStated("the log is cut before the model type", "workload.model_type")
    first = first_knowing(facts, model_type)
    want = f"transformers>={first}" if first else "transformers"
    transformers = facts.known_version("transformers")
    if first is not None:
        _dev_of(transformers, first, model_type)
    since = f" (it arrived in transformers {first})" if first else ""
    if transformers is not None and first is not None and transformers >= first:
        return Hit(
            f"transformers refused model type '{model_type}' (line {line.line}), yet transformers "
            f"{transformers} here knows it{since}: the job ran another environment",
            evidence={
                "line": line.line,
                "model_type": model_type,
                "transformers": str(transformers),
            },
            fix=_another_environment(transformers, want),
        )
    return Hit(
        f"{_ran(transformers)} does not know model type '{model_type}' (line {line.line}){since}",
        evidence={
            "line": line.line,
            "model_type": model_type,
            "transformers": str(transformers) if transformers else None,
        },
        fix=fix(
            f"Install {want} in the environment the job runs"
            + ("" if first else " (a release that knows the model type)"),
            "safe",
            pip_install(want, flags=() if first else ("--upgrade",)),
        ),
    )


def _ran(transformers: Version | None) -> str:
    return (
        f"transformers {transformers}" if transformers is not None else "the transformers that ran"
    )


def _another_environment(transformers: Version, want: str) -> Fix:
    """The fix where the node's transformers is new enough yet the job's refused: the job ran
    another interpreter."""
    return fix(
        f"Run the job with the interpreter that has transformers {transformers} (check "
        f"`python -c 'import transformers; print(transformers.__file__)'`), or install "
        f"'{want}' in the one it runs",
        "manual",
        manual("print transformers.__version__ and __file__ from the job's interpreter"),
    )


def _unknown_tokenizer_class(facts: Facts, line: LogLine, name: str) -> Hit:
    """AutoTokenizer could not resolve the class the checkpoint's tokenizer_config.json names
    (models/auto/tokenization_auto.py: 'Tokenizer class X does not exist or is not currently
    imported'). By transformers' own releases (generated/python_names.toml): a class a later
    release added (Qwen2Tokenizer 4.37.0; TokenizersBackend, which transformers 5 writes into
    every checkpoint it saves, 5.0.0) means that release or newer; a class the library spells
    otherwise (LLaMATokenizer for LlamaTokenizer) is the checkpoint's misspelling; any other
    is the model's own code (trust_remote_code) or a tokenizer whose backend is missing
    (sentencepiece): left open."""
    # AutoTokenizer asks for the fast class first (name + "Fast"): the earlier of the two that a
    # release added is the release that loads the checkpoint
    candidates = (name,) if name.endswith("Fast") else (name, f"{name}Fast")
    histories = [facts.matrix.python_name("transformers", n) for n in candidates]
    spans = [s for h in histories if h is not None and (s := h.added()) is not None]
    added = min(spans, key=lambda s: s.first, default=None)
    if added is None:
        spelled = _spelled_otherwise(facts, name)
        if spelled is not None:
            return Hit(
                f"the checkpoint names tokenizer class {name} (line {line.line}), which no "
                f"transformers release has: the library's class is {spelled}",
                evidence={"line": line.line, "tokenizer_class": name, "spelled": spelled},
                fix=fix(
                    f"Spell the class {spelled} in the checkpoint's tokenizer_config.json "
                    f"(its tokenizer_class), or load the tokenizer as {spelled}.from_pretrained",
                    "manual",
                    manual(f'sed -i \'s/"{name}"/"{spelled}"/\' tokenizer_config.json'),
                ),
            )
        raise NotStated(
            f"tokenizer class {name} is not one a transformers release added: the model's own "
            "code (trust_remote_code=True) or a tokenizer whose backend is missing "
            "(pip install sentencepiece)",
            "packages.transformers",
        )
    first, want = added.first, f"transformers>={added.first}"
    transformers = facts.known_version("transformers")
    if transformers is not None and transformers >= first:
        return Hit(
            f"transformers could not load tokenizer class {name} (line {line.line}), yet "
            f"transformers {transformers} here has it (it arrived in {first}): the job ran "
            "another environment",
            evidence={
                "line": line.line,
                "tokenizer_class": name,
                "transformers": str(transformers),
            },
            fix=_another_environment(transformers, want),
        )
    return Hit(
        f"{_ran(transformers)} has no tokenizer class {name} (line {line.line}): it arrived in transformers "
        f"{first}",
        evidence={
            "line": line.line,
            "tokenizer_class": name,
            "transformers": str(transformers) if transformers else None,
            "needs": want,
        },
        fix=fix(f"pip install '{want}'", "safe", pip_install(want)),
    )


def _spelled_otherwise(facts: Facts, name: str) -> str | None:
    """The transformers class ``name`` is another spelling of (letter case only)."""
    if not facts.matrix.python_names_files:
        return None
    library = facts.matrix.python_names().library("transformers")
    names = library.names.get("transformers", {}) if library is not None else {}
    wanted = name.lower()
    return next((n for n in names if n.lower() == wanted and n != name), None)
