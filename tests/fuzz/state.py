"""Fuzz families for what a run finds on disk before it starts (docs/security.md): hostile
settings files (``envcheck.toml``, ``[tool.envcheck]`` in pyproject.toml) and corrupted or
hostile cache files (the compiled matrix's JSON entries, the binaries' per-file JSON cache).

Besides the harness's contract, each family checks its own promise after the run
(``after``): a settings file that is refused is named in the one error line; ``--isolated``
gives the verdict of a run without the file; a matrix cache entry that is not exactly what
envcheck writes, or one in a directory others may write to, is a miss (the verdict of a run
without a cache), and nothing in a cache is executed (a pickle whose loading would create a
directory never does)."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from tests.fuzz import harness
from tests.fuzz.cases import (
    HOSTILE_NUMBERS,
    HOSTILE_STRINGS,
    LOG_LINES,
    Case,
    _toml_value,
    byte_mutation,
    case_env,
    json_value,
    materialise,
    overlay_bytes,
)
from tests.fuzz.harness import SECRET, Outcome
from tests.specs import TINYZERO

GIT = {".git/HEAD": b"ref: refs/heads/main\n"}  # discovery stops at the case's directory

# --- settings ------------------------------------------------------------------------------

SETTING_KEYS = ["select", "ignore", "severity", "matrix", "expect"]
HOSTILE_KEYS = ["source", "bogus", "api_token", "Select", "select.x", '"quoted key"', "tool"]
EXPECTS = [
    "8x H100, driver>=550",
    "no-gpu",
    "0x H100",
    "9" * 40 + "x H100",
    "driver>=abc",
    "2x H20, driver>=535, cuda>=12.1",
    "8x",
    ", , ,",
    f"https://__token__:{SECRET}@host/simple",
]
CODES = ["CUD102", "SYS", "NET103", "", "*", "ZZZ999", "cud102", "CUD", "\u0043UD102"]
SEVERITIES = ["error", "warning", "info", "fatal", "", "ERROR", "Warning"]
MATRIX_DIRS = ["overlay", "../../nonexistent", "/proc", "", "x" * 300, "/dev/zero", "node.toml"]
RAW_VALUES = [
    *HOSTILE_NUMBERS,
    "true",
    "1979-05-27T07:32:00Z",
    "{ a = 1 }",
    "[[1], ['x']]",
    "[]",
    '"""multi\nline"""',
    "'literal \\x'",
    '"\\u0000"',
    f'"{SECRET}"',
]


@st.composite
def _setting_line(draw: st.DrawFn) -> str:
    key = draw(st.sampled_from(SETTING_KEYS + HOSTILE_KEYS))
    pool: list[Any]
    if key in ("select", "ignore"):
        pool = [draw(st.lists(st.sampled_from(CODES), max_size=4)), draw(st.sampled_from(CODES))]
    elif key == "severity":
        pool = [draw(st.sampled_from(SEVERITIES))]
    elif key == "matrix":
        pool = [draw(st.lists(st.sampled_from(MATRIX_DIRS), max_size=3))]
    elif key == "expect":
        pool = [draw(st.sampled_from(EXPECTS)), draw(st.sampled_from(HOSTILE_STRINGS))]
    else:
        pool = [SECRET, draw(st.sampled_from(HOSTILE_STRINGS))]
    if draw(st.integers(0, 4)) == 0:  # a value of the wrong type or TOML's odd corners
        return f"{key} = {draw(st.sampled_from(RAW_VALUES))}"
    return f"{key} = {_toml_value(draw(st.sampled_from(pool)))}"


@st.composite
def settings_text(draw: st.DrawFn) -> tuple[str, bytes]:
    """(file name, bytes): envcheck.toml, or a pyproject.toml with a [tool.envcheck] table
    (as a table, dotted keys or a key spelled with an escape)."""
    lines = draw(st.lists(_setting_line(), max_size=5))
    where = draw(st.integers(0, 3))
    if where == 0:
        name, text = "envcheck.toml", "\n".join(lines)
    else:
        header = ["[tool.envcheck]", '[tool."\\u0065nvcheck"]', "[tool.envcheck.nested]"][where - 1]
        name = "pyproject.toml"
        project = '[project]\nname = "job"\nversion = "0.1"\n\n'
        text = project + header + "\n" + "\n".join(lines)
    data = draw(byte_mutation((text + "\n").encode()))
    if draw(st.integers(0, 15)) == 0:  # past the 1 MiB cap: refused, not read
        data = data + b"# " + b"x" * (1024 * 1024) + b"\n"
    return name, data


@st.composite
def settings_case(draw: st.DrawFn) -> Case:
    name, data = draw(settings_text())
    files = {**GIT, name: data, "node.toml": TINYZERO.encode()}
    if draw(st.booleans()):  # the overlay a `matrix = ["overlay"]` names
        files["overlay/site.toml"] = draw(overlay_bytes())
    isolated = ("--isolated",) if draw(st.integers(0, 3)) == 0 else ()
    if draw(st.booleans()):
        fmt = draw(st.sampled_from([(), ("--json",), ("--markdown",)]))
        out = ("-o", "{dir}/out.json") if draw(st.booleans()) else ()
        argv = ("check", "--spec", "{dir}/node.toml", *fmt, *out, *isolated)
        return Case("settings", argv, files, outputs=("out.json",), same_verdict=bool(isolated))
    lines = draw(st.lists(st.sampled_from(LOG_LINES), min_size=1, max_size=4))
    files["job.log"] = ("\n".join(lines) + "\n").encode()
    fmt = draw(st.sampled_from([(), ("--json",)]))
    argv = ("triage", "{dir}/job.log", "--no-probe", *fmt, *isolated)
    return Case("settings", argv, files, same_verdict=bool(isolated))


# --- the compiled matrix's cache -----------------------------------------------------------


@lru_cache(maxsize=1)
def _builtin_files() -> tuple[tuple[str, str], ...]:
    """(where, text) of every built-in matrix file, as ``matrix.load`` reads them."""
    from envcheck.matrix.load import builtin_dir, read_file, tree_files

    return tuple((str(p), read_file(p)) for p in tree_files(builtin_dir()))


def _entry_name(where: str, text: str) -> str:
    from envcheck.matrix.compiled import code_key

    key = hashlib.sha256(f"{code_key()}|{where}|".encode() + text.encode("utf-8")).hexdigest()
    return f"m-{key[:48]}.json"


@lru_cache(maxsize=64)
def _valid_entry(index: int) -> str:
    """The JSON envcheck itself writes for built-in file ``index``."""
    from envcheck.matrix.load import parse_text
    from envcheck.model.record_lists import _data

    where, text = _builtin_files()[index]
    return json.dumps({"format": 2, "file": _data(parse_text(text, where))})


class _Mkdir:
    """A pickle whose loading would create the directory ``pwned`` (in the working directory,
    the case's): the proof that nothing loaded a cache file as a pickle."""

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return os.mkdir, ("pwned",)


PICKLE = pickle.dumps({"format": 2, "file": _Mkdir()})


def _mutate(value: Any, path: list[int], replacement: Any) -> Any:
    """``value`` with the node that ``path`` picks (each step an index into a list or a
    dict's items, taken modulo their count) replaced."""
    if not path or not isinstance(value, (list, dict)) or not value:
        return replacement
    step, rest = path[0], path[1:]
    if isinstance(value, list):
        at = step % len(value)
        return [_mutate(v, rest, replacement) if i == at else v for i, v in enumerate(value)]
    keys = list(value)
    chosen = keys[step % len(keys)]
    return {k: _mutate(v, rest, replacement) if k == chosen else v for k, v in value.items()}


# corruptions a cache must read as a miss (the verdict of a run without a cache); "mutated"
# may still be a well-formed entry of other records, so it is held to the contract only
MISS_KINDS = ["garbage", "truncated", "format", "nested", "pickle", "numbers", "directory"]


@st.composite
def _hostile_entry(draw: st.DrawFn, index: int) -> tuple[str, bytes | None]:
    kind = draw(st.sampled_from([*MISS_KINDS, "mutated", "mutated"]))
    if kind == "garbage":
        return kind, draw(st.binary(max_size=200))
    if kind == "pickle":
        return kind, PICKLE
    if kind == "nested":
        depth = draw(st.integers(1000, 200_000))
        return kind, b'{"format": 2, "file": ' + b"[" * depth + b"]" * depth + b"}"
    if kind == "numbers":
        number = draw(st.sampled_from(["NaN", "Infinity", "-Infinity", "1e999999", "9" * 5000]))
        return kind, f'{{"format": 2, "file": [{number}]}}'.encode()
    if kind == "directory":
        return kind, None  # a directory where the entry should be
    valid = _valid_entry(index)
    if kind == "truncated":
        return kind, valid.encode()[: draw(st.integers(0, len(valid) - 1))]
    if kind == "format":
        data = json.loads(valid)
        data["format"] = draw(st.sampled_from([1, 3, "2", None, 2.0, [2]]))
        return kind, json.dumps(data).encode()
    data = json.loads(valid)
    path = draw(st.lists(st.integers(0, 10_000), min_size=1, max_size=8))
    mutated = _mutate(data["file"], path, draw(json_value))
    return kind, json.dumps({"format": 2, "file": mutated}).encode()


@st.composite
def cache_case(draw: st.DrawFn) -> Case:
    count = len(_builtin_files())
    indexes = draw(st.lists(st.integers(0, count - 1), min_size=1, max_size=3, unique=True))
    files: dict[str, bytes] = {"node.toml": TINYZERO.encode()}
    kinds: list[str] = []
    for index in indexes:
        where, text = _builtin_files()[index]
        kind, data = draw(_hostile_entry(index))
        kinds.append(kind)
        name = f"cache/matrix/{_entry_name(where, text)}"
        files[f"{name}/x" if data is None else name] = data or b""
    modes: tuple[tuple[str, int], ...] = ()
    if draw(st.integers(0, 5)) == 0:  # a cache others may write to: never read
        modes = (("cache/matrix", 0o777),)
        kinds = ["unsafe"]
    miss = all(k in MISS_KINDS or k == "unsafe" for k in kinds)
    fmt = draw(st.sampled_from([("--json",), ("--json", "--severity", "info")]))
    return Case(
        "caches",
        ("check", "--spec", "{dir}/node.toml", *fmt),
        files,
        env=(("ENVCHECK_CACHE_DIR", "{dir}/cache"),),
        modes=modes,
        same_verdict=miss,
    )


# --- the binaries' per-file cache ----------------------------------------------------------

_BINARIES: list[dict[str, Any]] = []


def _binaries_cache() -> dict[str, Any]:
    """The cache a clean `check` of this node writes (once per process)."""
    if not _BINARIES:
        from envcheck.binaries.cache import FILE_NAME

        with tempfile.TemporaryDirectory(prefix="envcheck-fuzz-cache-") as tmp:
            harness.run(["check", "--json"], env={"ENVCHECK_CACHE_DIR": tmp}, bound=60.0)
            path = Path(tmp) / FILE_NAME
            _BINARIES.append(json.loads(path.read_text()) if path.exists() else {"files": {}})
    return _BINARIES[0]


@st.composite
def binaries_cache_case(draw: st.DrawFn) -> Case:
    """Entries of the real files' cache with their keys kept (so they are read as hits) and
    their facts replaced by hostile JSON, or the whole file corrupted."""
    from envcheck.binaries.cache import FILE_NAME

    data = json.loads(json.dumps(_binaries_cache()))
    files_map = data.get("files") or {}
    if files_map and draw(st.integers(0, 3)):
        names = sorted(files_map)
        for _ in range(draw(st.integers(1, 6))):
            name = names[draw(st.integers(0, len(names) - 1))]
            key = files_map[name].get("key")
            path = draw(st.lists(st.integers(0, 1000), max_size=4))
            entry = _mutate(files_map[name], path, draw(json_value))
            files_map[name] = {**entry, "key": key} if isinstance(entry, dict) else entry
        body = json.dumps(data).encode()
    else:
        body = draw(byte_mutation(json.dumps(data).encode()))
    return Case(
        "binaries-cache",
        ("check", "--json"),
        {f"cache/{FILE_NAME}": body},
        env=(("ENVCHECK_CACHE_DIR", "{dir}/cache"),),
    )


# --- what each family promises beyond the contract ------------------------------------------

_BASELINES: dict[tuple[tuple[str, ...], bytes], tuple[int | None, list[str]]] = {}


def _verdict(outcome: Outcome) -> tuple[int | None, list[str]]:
    codes: list[str] = []
    try:
        data = json.loads(outcome.stdout)
        codes = sorted(f["code"] for f in data["data"]["findings"])
    except (ValueError, KeyError, TypeError):
        pass
    return outcome.code, codes


def _baseline(case: Case, argv: tuple[str, ...]) -> tuple[int | None, list[str]]:
    """The verdict of ``argv`` with no settings file and no cache (once per argv and log)."""
    key = (argv, case.files.get("job.log", b""))
    if key not in _BASELINES:
        with tempfile.TemporaryDirectory(prefix="envcheck-fuzz-base-") as tmp:
            clean = Case(case.kind, argv, {**GIT, "node.toml": TINYZERO.encode()})
            real_argv, _ = materialise(clean, Path(tmp))
            for name in ("job.log",):
                if name in case.files:
                    (Path(tmp) / name).write_bytes(case.files[name])
            outcome = harness.run(real_argv, directory=Path(tmp), env={"ENVCHECK_NO_CACHE": "1"})
            _BASELINES[key] = _verdict(outcome)
    return _BASELINES[key]


def after(case: Case, outcome: Outcome, directory: Path) -> list[str]:
    """Problems of the settings and caches families beyond the contract."""
    found: list[str] = []
    if (directory / "pwned").exists():
        found.append("a cache file was loaded as code (pickle)")
    if case.same_verdict and outcome.code in (0, 1, 2):
        base = _baseline(case, case.argv)
        if _verdict(outcome) != base:
            found.append(f"verdict {_verdict(outcome)}, without the file or cache {base}")
    elif case.kind == "settings" and outcome.code == 2 and str(directory) not in outcome.stderr:
        found.append(f"the error names no file of the case: {outcome.stderr.strip()!r}")
    return found


_WARM: list[Path] = []


def _warm_matrix_cache() -> Path:
    """A matrix cache with every built-in file's entry, as a run writes it (once per process):
    each case starts from a copy, so that only its hostile entries are parsed again."""
    if not _WARM:
        import atexit
        import shutil

        base = Path(tempfile.mkdtemp(prefix="envcheck-fuzz-warm-"))
        atexit.register(shutil.rmtree, base, True)
        (base / "node.toml").write_text(TINYZERO, encoding="utf-8")
        harness.run(
            ["check", "--spec", str(base / "node.toml")],
            env={"ENVCHECK_CACHE_DIR": str(base / "cache")},
        )
        _WARM.append(base / "cache" / "matrix")
    return _WARM[0]


def run_case(case: Case, directory: Path) -> tuple[list[str], Outcome]:
    if any(name.startswith("cache/matrix/") for name in case.files):
        import shutil

        target = directory / "cache" / "matrix"
        target.mkdir(parents=True)
        taken = {name.split("/")[2] for name in case.files if name.startswith("cache/matrix/")}
        for entry in _warm_matrix_cache().iterdir():
            if entry.name not in taken and entry.is_file():
                shutil.copyfile(entry, target / entry.name)
    argv, outputs = materialise(case, directory)
    env = case_env(case, directory)
    # a check of this node probes it (a second or two, much more on a loaded machine)
    bound = harness.TIME_BOUND_S * (3 if case.kind == "binaries-cache" else 1)
    outcome = harness.run(
        argv, stdin=case.stdin, outputs=outputs, directory=directory, env=env, bound=bound
    )
    outcome.extra += after(case, outcome, directory)
    return argv, outcome
