"""TOR150 names the torch releases that export an extension's undefined torch symbol (the table
scripts/gen_torch_symbols.py reads from torch's release wheels), on real mangled names from
corpus logs and a small fixture table (no network): the installed torch past the span pins
the last release that has it, before the span the first; a symbol every release exports in
the other C++ ABI's spelling names the ABI, not a release."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version

from envcheck.matrix import torch_symbols
from envcheck.matrix.torch_symbols import neutral, read, short_hash, table_for
from envcheck.matrix_validate import load
from envcheck.rules.node import torch_symbol_span
from envcheck.rules.node.torch_symbol_span import abi_of, span_reading

# cs149gpt#2: at::_ops::zeros::call(c10::ArrayRef<c10::SymInt>, c10::optional<...>...)
ZEROS = (
    "_ZN2at4_ops5zeros4callEN3c108ArrayRefINS2_6SymIntEEENS2_8optionalINS2_10ScalarTypeEEENS6_"
    "INS2_6LayoutEEENS6_INS2_6DeviceEEENS6_IbEE"
)
# ai-dynamo/nixl#1798: c10::impl::cow::materialize_cow_storage(c10::StorageImpl&)
COW = "_ZN3c104impl3cow23materialize_cow_storageERNS_11StorageImplE"
# tgale96/grouped_gemm#30: torchInternalAssertFail(..., std::__cxx11::string const&)
ASSERT_CXX11 = (
    "_ZN3c106detail23torchInternalAssertFailEPKcS2_jS2_RKNSt7__cxx1112basic_stringIcSt11char_"
    "traitsIcESaIcEEE"
)
# lxxue/FRNN#21: c10::SmallVectorBase<unsigned int>::grow_pod(void const*, unsigned long, ...)
GROW_POD = "_ZN3c1015SmallVectorBaseIjE8grow_podEPKvmm"

TABLE = f"""# fixture: the generated table's format
releases\t2.1.2 2.2.2 2.6.0 2.7.1 2.12.1 2.13.0
wheels\ta.whl b.whl c.whl d.whl e.whl f.whl
{ZEROS}\t..2.1.2\tcpu
{COW}\t2.2.2..2.12.1\tc10
{GROW_POD}\t2.7.1..\tc10
={short_hash(neutral(ASSERT_CXX11))}
"""


class _Facts:
    """What span_reading reads of the node: the installed torch and the matrix."""

    def __init__(self, torch: str | None) -> None:
        self.matrix = load([])
        self._torch = Version(torch) if torch else None

    def known_version(self, name: str) -> Version | None:
        assert name == "torch"
        return self._torch


@pytest.fixture
def table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "generated" / torch_symbols.FILE
    path.parent.mkdir()
    path.write_text(TABLE)
    loaded = read(str(path))
    monkeypatch.setattr(torch_symbol_span, "symbol_table", lambda facts: loaded)
    return path


def _reading(torch: str | None, symbol: str) -> Any:
    return span_reading(_Facts(torch), symbol)  # type: ignore[arg-type]


def test_the_table_reads_spans_and_the_every_release_hashes(table: Path) -> None:
    loaded = table_for([str(table.parent / "python_names.toml")])
    assert loaded is not None
    cow = loaded.lookup(COW)
    assert cow is not None and not cow.every and cow.library == "c10"
    assert [str(v) for v in cow.present] == ["2.2.2", "2.6.0", "2.7.1", "2.12.1"]
    assert cow.has(Version("2.13.0")) is False and cow.has(Version("2.12.0")) is True
    assert cow.has(Version("1.13.1")) is None  # a minor release the table did not read
    every = loaded.lookup(ASSERT_CXX11)
    assert every is not None and every.every
    # the pre-C++11 spelling of the same function is the same key
    assert loaded.lookup(
        ASSERT_CXX11.replace("NSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE", "Ss")
    )
    assert loaded.lookup("_ZN3c104impl3cow5otherEv") is None


def test_a_torch_past_the_span_pins_the_last_release_that_exports_it(table: Path) -> None:
    reading = _reading("2.13.0", COW)
    assert reading.side == "newer"
    assert reading.pin[0] == "torch==2.12.1"
    assert "2.2.2 .. 2.12.1" in reading.cause and "torch 2.13.0 is newer" in reading.cause
    zeros = _reading("2.2.2", ZEROS)
    assert zeros.side == "newer" and zeros.pin[0] == "torch==2.1.2"
    assert "2.1.2 (or older)" in zeros.cause
    # the torchvision / torchaudio the matrix pairs with exactly that torch come with it
    assert any(p.startswith("torchvision==0.16.2") for p in zeros.pin)


def test_a_torch_before_the_span_pins_the_first_release_that_exports_it(table: Path) -> None:
    reading = _reading("2.2.2", GROW_POD)
    assert reading.side == "older" and reading.pin[0] == "torch==2.7.1"


def test_an_unstated_torch_gets_the_span_and_an_open_pin(table: Path) -> None:
    reading = _reading(None, GROW_POD)
    assert reading.side == "unknown" and reading.pin == ("torch>=2.7.1",)
    assert _reading(None, COW).pin[0] == "torch==2.12.1"


def test_the_installed_torch_inside_the_span_rules_the_release_out(table: Path) -> None:
    reading = _reading("2.6.0", COW)
    assert reading.side == "inside" and reading.pin == ()


def test_a_symbol_in_every_release_names_the_cxx_abi(table: Path) -> None:
    assert abi_of(ASSERT_CXX11) == "cxx11" and abi_of(COW) is None
    assert abi_of("_ZN5torch3jit17parseSchemaOrNameERKSs") == "old"
    reading = _reading("2.6.0", ASSERT_CXX11)
    assert reading.side == "abi" and reading.pin == ()
    assert "_GLIBCXX_USE_CXX11_ABI" in reading.cause
    assert _reading("2.6.0", "_ZN3c10unknownEv") is None


def test_the_committed_table_is_read_lazily_and_answers() -> None:
    """The generated table beside python_names.toml: a real symbol's history, read on demand."""
    matrix = load([])
    loaded = table_for(matrix.python_names_files)
    if loaded is None:
        pytest.skip("no generated torch_symbols table in this matrix")
    assert loaded.releases[0] == Version("1.8.1")
    cow = loaded.lookup(COW)
    assert cow is not None and not cow.every
    assert cow.has(Version("2.12.1")) and not cow.has(Version("2.13.0"))


def test_a_damaged_table_is_read_for_its_good_rows_or_not_at_all(tmp_path: Path) -> None:
    """An edited or damaged copy (an overlay's): a row whose span is no version is left out,
    bytes that are not UTF-8 leave no table; neither fails later, at the lookup."""
    good = "_ZN3c104cuda9SetDeviceEi"
    table = tmp_path / "torch_symbols.tsv"
    table.write_text(
        "releases\t2.1.2 2.2.2 2.3.1\n"
        f"{good}\t2.1.2..2.2.2\tc10_cuda\n"
        "_ZN3c1015SmallVectorBase8grow_podEPvmm\tnot-a-version..2.2.2\tc10\n"
        "_ZN3c106SymInt22maybe_as_int_slow_pathEv\t2.3.1\tc10\n"
    )
    read.cache_clear()
    loaded = read(str(table))
    assert loaded is not None and set(loaded.rows) == {good}
    history = loaded.lookup(good)
    assert history is not None and history.present == (Version("2.1.2"), Version("2.2.2"))
    assert loaded.lookup("_ZN3c1015SmallVectorBase8grow_podEPvmm") is None
    table.write_bytes(b"releases\t2.1.2\n\xff\xfe bad\n")
    read.cache_clear()
    assert read(str(table)) is None
    read.cache_clear()
