"""rules/log_only.py (generated): ``check`` runs the rules of rules/log_catalog.py's modules as
it states them, without importing those modules, and they answer as the modules' own rules."""

from __future__ import annotations

import subprocess
import sys

import pytest

from envcheck.facts.skip import Skip
from envcheck.rules import code_rules
from envcheck.rules.base import log_only_rule
from envcheck.rules.log_only import RULES
from tests.conftest import REPO

sys.path.insert(0, str(REPO / "scripts"))
import gen_docs


def test_the_table_is_current() -> None:
    assert (REPO / "envcheck" / "rules" / "log_only.py").read_text(
        encoding="utf-8"
    ) == gen_docs.render_log_only(), "run python scripts/gen_docs.py"


def test_check_runs_the_same_rules_as_the_node_commands() -> None:
    assert sorted(r.code for r in code_rules("check")) == sorted(r.code for r in code_rules("node"))


@pytest.mark.parametrize("entry", RULES, ids=[e[0] for e in RULES])
def test_each_answers_as_its_module_rule(entry: tuple[str, ...]) -> None:
    real = next(r for r in code_rules("node") if r.code == entry[0])
    made = log_only_rule(*entry)
    assert (made.code, made.name, made.severity, made.title, made.scope) == (
        real.code,
        real.name,
        real.severity,
        real.title,
        real.scope,
    )
    assert made.doc == real.doc and repr(made.doc) == repr(real.doc)
    with pytest.raises(Skip) as mine:
        list(made.check(None))  # type: ignore[arg-type]
    with pytest.raises(Skip) as theirs:
        list(real.check(None))  # type: ignore[arg-type]
    assert (mine.value.reason, mine.value.fact) == (theirs.value.reason, theirs.value.fact)


def test_check_imports_none_of_their_modules() -> None:
    code = (
        "import sys\n"
        "from envcheck.rules import code_rules\n"
        "from envcheck.rules.log_only import RULES\n"
        "code_rules('check')\n"
        "print(sorted({e[4] for e in RULES} & set(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    ).stdout
    assert out.strip() == "[]"


def test_every_catalog_module_registers_a_rule() -> None:
    """A module of rules/catalog.py that registers no rule (only ``@from_log`` readers, which
    only ``triage`` reads) belongs in rules/log_catalog.py: ``check`` would import it for
    nothing."""
    import types

    from envcheck.rules import catalog
    from envcheck.rules.base import _REGISTRY

    code_rules("node")
    ruled = {r.check.__module__ for r in _REGISTRY}
    modules = {m.__name__ for m in vars(catalog).values() if isinstance(m, types.ModuleType)}
    assert sorted(modules - ruled) == []
