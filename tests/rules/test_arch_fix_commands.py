"""The arch rules' fixes (the ``[[arch_floor]]`` table's prose): the summary holds the whole
prose, and the commands are only the commands it quotes or the settings it names, so that no
command line repeats the prose (it printed as one line of hundreds of columns)."""

from __future__ import annotations

import re

from envcheck.rules.node.arch import _fix
from tests.builtin_matrix import builtin_matrix

_COMMAND = re.compile(
    r"(?:pip|pip3|uv|conda|mamba|export|unset|sudo|apt|apt-get|python[0-9.]*|cmake|git)\s"
    r"|[A-Z][A-Z0-9_]{2,}="
)


def test_every_floor_fix_keeps_prose_in_the_summary_and_commands_apart() -> None:
    matrix = builtin_matrix()
    texts = [t for e in matrix.arch_floors for t in (e.fix, e.at_or_above_fix) if t]
    assert texts
    for text in texts:
        built = _fix(text)
        assert built.summary == text
        for action in built.actions:
            assert action.text != text, text
            assert _COMMAND.match(action.text), action.text


def test_quoted_commands_and_bare_settings() -> None:
    quoted = _fix(
        "Install bitsandbytes 0.37.0 or newer (`pip install -U 'bitsandbytes>=0.37.0'`); "
        "or load the model in 4-bit"
    )
    assert [a.text for a in quoted.actions] == ["pip install -U 'bitsandbytes>=0.37.0'"]
    bare = _fix("turn FlashInfer off: VLLM_USE_FLASHINFER_SAMPLER=0 in vLLM")
    assert [a.text for a in bare.actions] == ["export VLLM_USE_FLASHINFER_SAMPLER=0"]
    assert _fix("Train in fp16 (fp16=True) below Ampere, or run on an sm_80+ GPU").actions == ()
