"""The `fix --apply` snapshot: a new file (O_EXCL) of mode 0600, index credentials and
control sequences taken out, under a name no other run has (two runs in the same second
each get their own)."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path
from typing import Any

import pytest

from envcheck.errors import InputError
from envcheck.model.finding import Action
from envcheck.model.plan import Plan, Step
from envcheck.plan.apply import ApplyError, apply_plan
from tests.security.helpers import fake_program

FREEZE = (
    "--extra-index-url https://alice:s3cret@private.example/simple\n"
    "numpy==2.1.3\nkeyring==24.3.1\nevil==1.0 \x1b]52;c;ZXZpbA==\x07\n"
)


def _write_snapshot(*args: Any, **kwargs: Any) -> Path:
    from envcheck.plan.apply import write_snapshot

    return write_snapshot(*args, **kwargs)


def _python(tmp_path: Path) -> Path:
    """An interpreter whose `-m pip freeze` prints FREEZE and whose `-m pip install` works."""
    freeze = tmp_path / "freeze.out"
    freeze.write_text(FREEZE, encoding="utf-8")
    return fake_program(
        tmp_path / "python",
        f'if [ "$3" = "freeze" ]; then cat "{freeze}"; fi\nexit 0\n',
    )


def _plan() -> Plan:
    return Plan(
        node="n",
        steps=(Step(Action(kind="pip_install", packages=("numpy<2",)), "safe", ("PKG104",), "x"),),
    )


def test_snapshot_is_0600_redacted_and_clean(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    old = os.umask(0o022)
    try:
        outcome = apply_plan(_plan(), str(_python(tmp_path)), snapshot=None)
    finally:
        os.umask(old)
    path = Path(outcome.snapshot)
    assert path.parent == Path(".") or path.parent == tmp_path
    assert stat.S_IMODE((tmp_path / path.name).stat().st_mode) == 0o600
    text = (tmp_path / path.name).read_text(encoding="utf-8")
    assert "s3cret" not in text and "alice" not in text
    assert "https://<redacted>@private.example/simple" in text
    assert "keyring==24.3.1" in text  # a requirement whose name holds "key" is kept whole
    assert "\x1b" not in text and "\x07" not in text


def test_default_names_are_unique_within_one_second(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    names: list[Path] = []
    lock = threading.Lock()

    def one() -> None:
        path = _write_snapshot(None, "numpy==2.1.3\n")
        with lock:
            names.append(path)

    threads = [threading.Thread(target=one) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(names)) == 16
    assert len(list(tmp_path.glob("envcheck-freeze-*.txt"))) == 16


def test_a_named_snapshot_is_never_replaced_without_force(tmp_path: Path) -> None:
    target = tmp_path / "snap.txt"
    target.write_text("precious\n", encoding="utf-8")
    with pytest.raises(InputError, match="exists"):
        _write_snapshot(target, "numpy==2.1.3\n")
    assert target.read_text(encoding="utf-8") == "precious\n"
    _write_snapshot(target, "numpy==2.1.3\n", overwrite=True)
    assert target.read_text(encoding="utf-8") == "numpy==2.1.3\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_a_symlink_planted_at_the_name_is_not_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("root's file\n", encoding="utf-8")
    (tmp_path / "snap.txt").symlink_to(victim)
    with pytest.raises(InputError, match="exists"):
        _write_snapshot(tmp_path / "snap.txt", "numpy==2.1.3\n")
    assert victim.read_text(encoding="utf-8") == "root's file\n"


def test_an_unwritable_snapshot_is_an_apply_error(tmp_path: Path) -> None:
    with pytest.raises(ApplyError, match=r"cannot write the snapshot .*nothing was changed"):
        _write_snapshot(tmp_path / "missing" / "snap.txt", "x\n")
