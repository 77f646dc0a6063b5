"""envcheck/dataclass_methods/ (generated) holds exactly the code ``exec`` compiles for the
methods of envcheck's dataclasses, and is current; the CLI uses it, the library never."""

from __future__ import annotations

import subprocess
import sys
import types
from dataclasses import dataclass

import pytest

from envcheck import dataclass_code, dataclass_methods
from tests.conftest import REPO

sys.path.insert(0, str(REPO / "scripts"))
import gen_dataclass_code

same_interpreter = pytest.mark.skipif(
    sys.implementation.cache_tag != dataclass_methods.CACHE_TAG,
    reason=f"generated for {dataclass_methods.CACHE_TAG}",
)


def _same_code(a: types.CodeType, b: types.CodeType) -> bool:
    if (a.co_code, a.co_names, a.co_varnames, a.co_argcount, a.co_flags, a.co_name) != (
        b.co_code,
        b.co_names,
        b.co_varnames,
        b.co_argcount,
        b.co_flags,
        b.co_name,
    ):
        return False
    nested_a = [c for c in a.co_consts if isinstance(c, types.CodeType)]
    nested_b = [c for c in b.co_consts if isinstance(c, types.CodeType)]
    plain_a = [c for c in a.co_consts if not isinstance(c, types.CodeType)]
    plain_b = [c for c in b.co_consts if not isinstance(c, types.CodeType)]
    return (
        plain_a == plain_b
        and len(nested_a) == len(nested_b)
        and all(_same_code(x, y) for x, y in zip(nested_a, nested_b, strict=True))
    )


@same_interpreter
def test_the_generated_module_is_current_and_holds_what_exec_compiles() -> None:
    texts = gen_dataclass_code.texts()
    assert len(texts) > 500
    missing = []
    for module, text in texts:
        found = dataclass_code.table(module).get(text)
        if found is None:
            missing.append(text)
            continue
        code = compile(text, "<string>", "exec", dont_inherit=True)
        (expected,) = [c for c in code.co_consts if isinstance(c, types.CodeType)]
        assert _same_code(found.__code__, expected), text
    # a dataclass added or changed since: correct without it (exec), but slower
    assert not missing, f"{len(missing)} new texts: run python scripts/gen_dataclass_code.py"
    check = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "gen_dataclass_code.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert check.returncode == 0, check.stdout


@same_interpreter
def test_classes_made_through_it_behave_as_without_it() -> None:
    import dataclasses

    assert dataclass_code.install()
    try:
        from envcheck.model.finding import Severity

        @dataclass(frozen=True)
        class Sample:  # a text the module does not hold: compiled by exec as usual
            name: str
            level: Severity = Severity.ERROR

        value = Sample("x")
        assert value == Sample("x", Severity.ERROR) and hash(value) == hash(Sample("x"))
        assert (
            repr(value)
            == "test_classes_made_through_it_behave_as_without_it.<locals>.Sample(name='x', level=<Severity.ERROR: 'error'>)"
        )
        with pytest.raises(dataclasses.FrozenInstanceError):
            value.name = "y"  # type: ignore[misc]
    finally:
        dataclass_code.uninstall()
    assert not hasattr(dataclasses, "exec")


def test_the_library_never_installs_it() -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import dataclasses, envcheck, envcheck.api; print(hasattr(dataclasses, 'exec'))",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert out.stdout.strip() == "False"


@same_interpreter
def test_envcheck_classes_get_the_generated_code(monkeypatch: pytest.MonkeyPatch) -> None:
    """A class with the same fields, defaults and flags as one of envcheck's has the same method
    texts: made through the hook, none of them is compiled."""
    import builtins
    import dataclasses

    from envcheck.probes.run import RunResult

    compiled: list[str] = []
    real_exec = builtins.exec

    def recording(source: object, *args: object) -> None:
        compiled.append(str(source))
        real_exec(source, *args)  # type: ignore[call-overload]

    params = RunResult.__dataclass_params__  # type: ignore[attr-defined]
    spec = [
        (f.name, f.type, dataclasses.field(default=f.default))
        if f.default is not dataclasses.MISSING
        else (f.name, f.type)
        for f in dataclasses.fields(RunResult)
    ]
    assert dataclass_code.install()
    monkeypatch.setattr(dataclass_code.builtins, "exec", recording)
    try:
        copy = dataclasses.make_dataclass(
            "Copy",
            spec,
            namespace={"__module__": RunResult.__module__},  # its methods get that module's globals
            frozen=params.frozen,
            eq=params.eq,
        )
    finally:
        monkeypatch.undo()
        dataclass_code.uninstall()
    assert [t for t in compiled if t.startswith("def __create_fn__")] == []
    values = {f.name: f.default for f in dataclasses.fields(RunResult)}
    values.update(argv=("x",), returncode=0, stdout="", stderr="")
    assert copy(**values) == copy(**values)


@pytest.mark.parametrize(
    "annotation",
    [
        "ClassVar[int]",
        "typing.ClassVar[int]",
        "t.ClassVar",
        "InitVar[str]",
        "dataclasses.InitVar[str]",
        "KW_ONLY",
        "dataclasses.KW_ONLY",
        "str | None",
        " tuple[str, ...]",
        "  typing . ClassVar",
        "",
        "[int]",
    ],
)
def test_the_annotation_test_answers_as_dataclasses_own(annotation: str) -> None:
    """The ClassVar/InitVar/KW_ONLY test of a string annotation, with its parse kept per text,
    answers as dataclasses' own in a module that imports the names both ways."""
    import dataclasses
    import typing

    module = types.ModuleType("envcheck_annotation_probe")
    module.__dict__.update(
        ClassVar=typing.ClassVar, InitVar=dataclasses.InitVar, KW_ONLY=dataclasses.KW_ONLY
    )
    module.__dict__.update(typing=typing, dataclasses=dataclasses, t=typing)
    cls = type("Probe", (), {"__module__": module.__name__})
    sys.modules[module.__name__] = module
    try:
        original = dataclasses._is_type  # type: ignore[attr-defined]
        assert original is not dataclass_code._is_type
        checks = [
            (typing, typing.ClassVar, dataclasses._is_classvar),  # type: ignore[attr-defined]
            (dataclasses, dataclasses.InitVar, dataclasses._is_initvar),  # type: ignore[attr-defined]
            (dataclasses, dataclasses.KW_ONLY, dataclasses._is_kw_only),  # type: ignore[attr-defined]
        ]
        for a_module, a_type, predicate in checks:
            assert dataclass_code._is_type(
                annotation, cls, a_module, a_type, predicate
            ) == original(annotation, cls, a_module, a_type, predicate)
    finally:
        del sys.modules[module.__name__]
