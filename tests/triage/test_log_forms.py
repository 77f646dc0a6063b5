"""A known failure is found however its text reached us: real lines (from tests/corpus threads)
pasted as an HTML page's source, with typographic or full-width punctuation, non-breaking or
zero-width characters, hard-wrapped by an editor or cut at a terminal's width, quoted in
Markdown, JSON-escaped (a structured logger, Docker's json-file driver) or inside a Python repr,
are named by the same signature as their plain form, at the line they start on in the user's
file; whatever the engine (grep, the Python one), from a file or held in memory."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from envcheck.api import triage
from envcheck.triage.forms import needs_reading, plain_lines, plain_text
from tests.conftest import CliResult

# real lines of corpus threads, each with the signature its plain form is named by
LINES = {
    "cannot-import-name": "ImportError: cannot import name 'Qwen3VLForConditionalGeneration' "
    "from 'transformers' (/home/newai/test/lib/python3.10/site-packages/transformers/"
    "__init__.py)",
    "no-kernel-image": "RuntimeError: CUDA error: no kernel image is available for execution "
    "on the device",
    "libstdcxx-version-not-found": "ImportError: /lib/x86_64-linux-gnu/libstdc++.so.6: version "
    "`GLIBCXX_3.4.29' not found (required by /home/zk/conda/envs/anylabeling/lib/python3.8/"
    "site-packages/matplotlib/_path.cpython-38-x86_64-linux-gnu.so)",
}
ABOVE = "Traceback (most recent call last):\n"
BELOW = "\nCUDA kernel errors might be asynchronously reported at some other API call.\n"

_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}


def _smart(line: str) -> str:
    out = []
    for i, ch in enumerate(line):
        opening = i == 0 or line[i - 1] in " (`"
        out.append(("\u2018" if opening else "\u2019") if ch == "'" else ch)
    return "".join(out)


def _wrap(line: str, width: int, sep: str) -> str:
    """``line`` hard-wrapped at ``width`` columns: at the last space before it (sep " ": an
    editor) or exactly there (sep "": a terminal's screen)."""
    out = []
    while len(line) > width:
        cut = line.rfind(" ", 0, width + 1) if sep else width
        if cut <= 0:  # a word longer than the width (a path): its own line, as editors do
            cut = line.find(" ", width)
            if cut == -1:
                break
        out.append(line[:cut])
        line = line[cut + len(sep) :]
    return "\n".join([*out, line])


# form: how the line reads in it (the line number it is named at stays the plain one's)
FORMS: dict[str, Callable[[str], str]] = {
    "html": lambda s: "".join(_ENTITIES.get(c, c) for c in s),
    "html-hex": lambda s: s.replace("'", "&#x27;").replace("`", "&#96;"),
    "html-nbsp": lambda s: "".join(_ENTITIES.get(c, c) for c in s).replace(" ", "&nbsp;"),
    "nbsp": lambda s: s.replace(" ", "\u00a0"),
    "smart-quotes": _smart,
    "fullwidth": lambda s: s.replace("'", "\uff07").replace("(", "\uff08").replace(")", "\uff09"),
    "zero-width": lambda s: "\u200b".join(s[i : i + 5] for i in range(0, len(s), 5)),
    "markdown-quote": lambda s: "> " + s,
    "ansi-inside": lambda s: s.replace(": ", ": \x1b[1;31m", 1) + "\x1b[0m",
    "wrapped-72": lambda s: _wrap(s, 72, " "),
    "cut-80": lambda s: _wrap(s, 80, ""),
    "escaped-twice": lambda s: "".join(_ENTITIES.get(c, c) for c in s).replace("&", "&amp;"),
}


def _log(line: str) -> str:
    return ABOVE + line + BELOW


def _named(cli: Callable[..., CliResult], path: Path, *args: str) -> dict[str, int]:
    result = cli("triage", str(path), "--json", "--no-probe", *args)
    assert result.returncode == 1, result.stderr
    return {m["id"]: m["first"]["line"] for m in result.json()["data"]["matches"]}


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("engine", ["auto", "re"])
def test_line_in_another_form_is_named_as_its_plain_form(
    tmp_path: Path, cli: Callable[..., CliResult], form: str, engine: str
) -> None:
    """Every line in the form, in one log (grep reads the file; the Python engine)."""
    plain = tmp_path / "plain.log"
    plain.write_text("".join(_log(line) for line in LINES.values()), encoding="utf-8")
    expected = {signature: 2 + 3 * i for i, signature in enumerate(LINES)}
    assert _named(cli, plain, "--engine", engine) == expected
    other = tmp_path / f"{form}.log"
    text = "".join(_log(FORMS[form](line)) for line in LINES.values())
    other.write_text(text, encoding="utf-8")
    lines = [1 + text[:at].count("\n") for at in _starts(text)]
    assert _named(cli, other, "--engine", engine) == dict(zip(LINES, lines, strict=True))


def _starts(text: str) -> list[int]:
    """Offsets of the lines after each ABOVE line: where each message starts."""
    out, at = [], text.find(ABOVE)
    while at != -1:
        out.append(at + len(ABOVE))
        at = text.find(ABOVE, at + 1)
    return out


@pytest.mark.parametrize("form", sorted(FORMS))
def test_text_in_memory_reads_the_forms_too(form: str) -> None:
    text = "".join(_log(FORMS[form](line)) for line in LINES.values())
    result = triage(text)
    named = {m.tally.signature.id: m.tally.first.line for m in result.matches}
    assert named == dict(
        zip(LINES, [1 + text[:at].count("\n") for at in _starts(text)], strict=True)
    )


def test_the_plain_line_is_shown_and_its_facts_read(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """The escaped line is shown as the plain text the signature matched, and the extractors
    read the name and the module from it, not from the entities."""
    log = tmp_path / "issue.html.txt"
    log.write_text(_log(FORMS["html"](LINES["cannot-import-name"])), encoding="utf-8")
    result = cli("triage", str(log), "--json", "--no-probe")
    data = result.json()["data"]
    (match,) = data["matches"]
    assert match["first"]["text"] == LINES["cannot-import-name"]
    plain = tmp_path / "plain.log"
    plain.write_text(_log(LINES["cannot-import-name"]), encoding="utf-8")
    expected = cli("triage", str(plain), "--json", "--no-probe").json()["data"]["facts"]
    assert expected
    assert data["facts"] == expected


def _json_whole(text: str) -> str:
    return json.dumps({"level": "error", "message": text}) + "\n"


def _docker(text: str) -> str:
    return "".join(
        json.dumps({"log": line + "\n", "stream": "stderr", "time": "2024-05-01T12:00:00Z"}) + "\n"
        for line in text.split("\n")
    )


# forms that put the log's lines on fewer lines: (form, the line the failure is named at)
PACKED = {
    "json-message": (_json_whole, 1),
    "docker-json": (_docker, 2),
    "repr-list": (lambda t: repr([line + "\n" for line in t.split("\n")]) + "\n", 1),
    "repr-dict": (lambda t: repr({"error": t, "rank": 0}) + "\n", 1),
}


@pytest.mark.parametrize("form", sorted(PACKED))
@pytest.mark.parametrize("engine", ["auto", "re"])
def test_lines_held_in_a_json_string_or_repr(
    tmp_path: Path, cli: Callable[..., CliResult], form: str, engine: str
) -> None:
    pack, line = PACKED[form]
    signature = "no-kernel-image"
    log = tmp_path / "job.json"
    log.write_text(pack(_log(LINES[signature]).rstrip("\n")), encoding="utf-8")
    assert _named(cli, log, "--engine", engine) == {signature: line}


def test_wrapped_message_keeps_the_users_line_numbers(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """A wrapped message further down is named at the line it starts on, and a line after it
    keeps its own number."""
    text = (
        "step 1\nstep 2\n"
        + _wrap(LINES["no-kernel-image"], 60, " ")
        + "\n"
        + FORMS["html"](LINES["cannot-import-name"])
        + "\n"
    )
    log = tmp_path / "wrapped.log"
    log.write_text(text, encoding="utf-8")
    assert text.count("\n") == 5  # the CUDA line took two lines
    assert _named(cli, log) == {"no-kernel-image": 3, "cannot-import-name": 5}


def test_binary_data_is_not_joined_as_a_wrapped_message(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """A line holding a byte no text holds (a NUL, a C0 control) is binary data, not half of a
    hard-wrapped message: the same wrap is named as text and not with such a byte in a half
    (a core dump's lines are not joined to each other)."""
    wrapped = _wrap(LINES["no-kernel-image"], 35, " ")  # "... no kernel" / "image is ..."
    assert wrapped.split("\n")[0].endswith(" no kernel")
    text = tmp_path / "text.log"
    text.write_text(f"step 1\n{wrapped}\n", encoding="utf-8")
    assert _named(cli, text)["no-kernel-image"] == 2
    binary = tmp_path / "binary.log"
    binary.write_bytes(
        f"step 1\n{wrapped}\n".replace(" no kernel\n", "\x00\x02 no kernel\n").encode()
    )
    result = cli("triage", str(binary), "--json", "--no-probe")
    assert result.returncode in (0, 1), result.stderr
    assert "no-kernel-image" not in {m["id"] for m in result.json()["data"]["matches"]}


def test_a_wrap_before_each_long_word_is_read_as_one_message(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """An editor that wraps at 72 columns puts a word longer than what is left of the line on
    a line of its own: the exception's name alone, the library's path, 'undefined symbol:',
    the mangled name (flash-attention#821). The four lines are one message, named at the
    first, with the library read from the path."""
    line = (
        "ImportError: .../test_env/lib/python3.10/site-packages/flash_attn_2_cuda.cpython-310-"
        "x86_64-linux-gnu.so: undefined symbol: _ZN2at4_ops5zeros4callEN3c108ArrayRefINS2_6Sym"
        "IntEEENS2_8optionalINS2_10ScalarTypeEEENS6_INS2_6LayoutEEENS6_INS2_6DeviceEEENS6_IbEE"
    )
    wrapped = textwrap.wrap(line, 72, break_long_words=False, break_on_hyphens=False)
    assert len(wrapped) == 4 and wrapped[0] == "ImportError:"
    log = tmp_path / "wrapped.log"
    log.write_text("import flash_attn\n" + "\n".join(wrapped) + "\n", encoding="utf-8")
    result = cli("triage", str(log), "--json", "--no-probe")
    data = result.json()["data"]
    assert {m["id"]: m["first"]["line"] for m in data["matches"]} == {
        "undefined-symbol-flash-attn": 2
    }
    assert "flash_attn_2_cuda" in json.dumps(data)


def test_a_named_line_takes_the_start_its_wrap_left_above(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """'undefined symbol: ...' is named alone, but the library it is missing from (the package
    to rebuild) is the path a word wrap left on the line above (pytorch_scatter#186): the path
    is read as the message's start, and the package's extension is the confirmed cause."""
    line = (
        "OSError: /home/zhao/anaconda3/envs/pytorch2/lib/python3.6/site-packages/torch_scatter/"
        "_version.so: undefined symbol: _ZN5torch3jit17parseSchemaOrNameERKSs"
    )
    wrapped = textwrap.wrap(line, 72, break_long_words=False, break_on_hyphens=False)
    assert wrapped[-1].startswith("undefined symbol:")
    log = tmp_path / "wrapped.log"
    log.write_text("\n".join(wrapped) + "\n", encoding="utf-8")
    data = cli("triage", str(log), "--json", "--no-probe").json()["data"]
    facts = json.dumps(data)
    assert "torch_scatter/_version.so" in facts
    causes = [c for m in data["matches"] for c in m["causes"]]
    confirmed = {c["code"] for c in causes if c["verdict"] == "confirmed"}
    assert "TOR150" in confirmed
    # a line above that a wrap did not end (short, its next word fits) is not taken
    log.write_text("OSError: see below\n" + wrapped[-1] + "\n", encoding="utf-8")
    assert "see below" not in json.dumps(cli("triage", str(log), "--json", "--no-probe").json())


def test_a_path_ending_its_line_with_a_colon_takes_the_indented_message_below(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """The writer put 'undefined symbol: ...' indented on the line below the library's path
    and its colon (ai-dynamo/nixl#1798): the path is the message's start, so the package's
    extension is the confirmed cause, not a companion's or vLLM's."""
    log = tmp_path / "split.log"
    log.write_text(
        "ImportError: /usr/local/lib/python3.12/dist-packages/nixl_ep/"
        "nixl_ep_cpp.cpython-312-x86_64-linux-gnu.so:\n"
        "  undefined symbol: _ZN3c104impl3cow23materialize_cow_storageERNS_11StorageImplE\n",
        encoding="utf-8",
    )
    data = cli("triage", str(log), "--json", "--no-probe").json()["data"]
    assert "nixl_ep/nixl_ep_cpp" in json.dumps(data)
    causes = [c for m in data["matches"] for c in m["causes"]]
    confirmed = {c["code"] for c in causes if c["verdict"] == "confirmed"}
    assert confirmed == {"TOR150"}
    # a line that does not end with a library's path and colon is not taken
    log.write_text(
        "ImportError: see below:\n  undefined symbol: _ZN3c104impl3cow23materialize_cow_storage"
        "ERNS_11StorageImplE\n",
        encoding="utf-8",
    )
    assert "see below" not in json.dumps(cli("triage", str(log), "--json", "--no-probe").json())


def test_short_lines_are_not_joined(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    """Two short lines that only together read as a message are two messages, not one cut
    line: nothing is named."""
    log = tmp_path / "short.log"
    log.write_text("CUDA error: no kernel image\nis available for execution\n", encoding="utf-8")
    result = cli("triage", str(log), "--json", "--no-probe")
    assert "no-kernel-image" not in {m["id"] for m in result.json()["data"]["matches"]}


def test_plain_lines_undoes_each_form() -> None:
    assert plain_lines(b"cannot import name &#39;X&#39;") == [b"cannot import name 'X'"]
    assert plain_lines(b"a&amp;#39;b") == [b"a'b"]  # escaped twice
    assert plain_lines("\u201cx\u201d \u2018y\u2019\u00a0z\u200b!".encode()) == [b"\"x\" 'y' z!"]
    assert plain_lines("\uff08a\uff09\uff1a\uff02".encode()) == [b'(a):"']
    assert plain_lines(b"> > quoted") == [b"quoted"]
    assert plain_lines(b"50%|####\r100%|######\r") == [b"100%|######"]
    assert plain_lines(b'{"log":"Killed\\n","stream":"stderr"}') == [
        b"log",
        b"Killed",
        b"",
        b"stream",
        b"stderr",
    ]
    assert plain_lines(b"['a\\n', 'b \\'c\\'\\n']") == [b"a", b"", b"b 'c'", b""]
    # a Windows path's "\new\nvidia" holds no escaped line end
    path = b"OSError: C:\\new\\lib\\nvrtc64_120_0.dll not found"
    assert plain_lines(path) == [path]
    # a line that only looks like a Python literal is read by its escapes, nothing is run
    assert plain_lines(b"[__import__('os').system('x')]\\n'") == [
        b"[__import__('os').system('x')]",
        b"'",
    ]


def test_only_lines_in_another_form_are_read_again() -> None:
    assert not needs_reading(b"RuntimeError: CUDA error: out of memory")
    assert not needs_reading(b"Epoch 3:  40%|####      | 4/10 [00:12<00:18,  1.23it/s]")
    for line in ("&quot;", "\u2019", "\u00a0", "\u200b", "\uff1a", "\x1b[0m", "\\n", "> x"):
        assert needs_reading(line.encode()), line
    assert plain_text("x&#39;y") == "x'y"
    assert plain_text("plain") == "plain"


def test_a_line_named_as_the_log_shows_it_is_read_in_its_plain_form(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    """LLaMA-Factory's version check, HTML-escaped: its signature names the escaped line as it
    is, and the requirement its extractors read is the unescaped one, so the pin printed is the
    plain log's (https://github.com/hiyouga/LlamaFactory/issues/7428)."""
    text = (
        "ImportError: vllm>=0.4.3,<=0.7.3 is required for a normal functioning of this module, "
        "but found vllm==0.8.1.\n"
        "To fix: run `pip install vllm>=0.4.3,<=0.7.3` or set `DISABLE_VERSION_CHECK=1` to skip "
        "this check.\n"
    )
    plain = tmp_path / "plain.log"
    plain.write_text(text, encoding="utf-8")
    escaped = tmp_path / "escaped.log"
    escaped.write_text(FORMS["html"](text), encoding="utf-8")
    facts = {}
    for path in (plain, escaped):
        data = cli("triage", str(path), "--json", "--no-probe").json()["data"]
        facts[path.name] = {(f["fact"], f["value"]) for f in data["facts"]}
        assert "vllm<=0.7.3" in json.dumps(data["matches"]).replace("\\u003c", "<")
    assert ("requires", "llamafactory requires vllm>=0.4.3,<=0.7.3") in facts["escaped.log"]
    assert facts["escaped.log"] == facts["plain.log"]
