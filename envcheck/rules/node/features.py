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
from envcheck.model.finding import Severity
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

    ## Example
    Qwen1.5 fine-tuning fails with `KeyError: 'qwen2'` from a python3.11 env running
    transformers 4.32, while the user lists transformers 4.37.2; Qwen2 needs >= 4.37.0.

    ## Fix
    Install a transformers that knows the model type (4.37.0 or newer for qwen2, 4.49.0 or newer
    for qwen2_5_vl) in the environment the job runs, and check which interpreter that is.

    ## References
    - https://github.com/QwenLM/Qwen3/issues/434
    - https://github.com/hiyouga/LlamaFactory/issues/6784
    """
    model_type = facts.workload().model_type
    if model_type is None:
        raise Skip("the job's model type is not stated", "workload.model_type")
    first = facts.matrix.first_release("transformers", "model_type", model_type)
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
    stated = line.stated.get("model_type")
    found = re.search(r"has model type `([A-Za-z0-9_-]+)`", line.text)
    model_type = found.group(1) if found else stated
    if not model_type:
        raise NotStated("the log is cut before the model type", "workload.model_type")
    first = facts.matrix.first_release("transformers", "model_type", model_type)
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
            fix=fix(
                f"Run the job with the interpreter that has transformers {transformers} (check "
                f"`python -c 'import transformers; print(transformers.__file__)'`), or install "
                f"'{want}' in the one it runs",
                "manual",
                manual("print transformers.__version__ and __file__ from the job's interpreter"),
            ),
        )
    have = (
        f"transformers {transformers}" if transformers is not None else "the transformers that ran"
    )
    return Hit(
        f"{have} does not know model type '{model_type}' (line {line.line}){since}",
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
