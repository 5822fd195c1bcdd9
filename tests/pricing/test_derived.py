"""Figures derived from shipped data are kept between runs, and never trusted once their sources change."""

from __future__ import annotations

import json
import os
import stat
import zlib
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import NamedTuple

import pytest

from pricing import derived as d


@pytest.fixture
def kept(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "derived"
    d.keep_in(lambda: folder, "9.9.9")
    yield folder
    d.keep_in(None)


def _counting(value: object) -> tuple[list[int], object]:
    calls: list[int] = []

    def compute() -> object:
        calls.append(1)
        return value

    return calls, compute


def test_a_figure_is_worked_out_once_while_its_sources_stay_the_same(kept: Path, tmp_path: Path) -> None:
    source = tmp_path / "rows.csv"
    source.write_text("a,b\n1,2\n")
    calls, compute = _counting({"A100": 0.25, "H100": -0.5})
    assert d.derived("speeds", [source], compute) == {"A100": 0.25, "H100": -0.5}
    assert d.derived("speeds", [source], compute) == {"A100": 0.25, "H100": -0.5}
    assert len(calls) == 1


def test_a_changed_source_or_version_works_it_out_again(kept: Path, tmp_path: Path) -> None:
    source = tmp_path / "rows.csv"
    source.write_text("a,b\n1,2\n")
    calls, compute = _counting([1, 2])
    d.derived("x", [source], compute)
    source.write_text("a,b\n1,2\n3,4\n")
    d.derived("x", [source], compute)
    assert len(calls) == 2
    d.keep_in(lambda: kept, "10.0.0")  # an upgraded gpuplan
    d.derived("x", [source], compute)
    assert len(calls) == 3


def test_a_damaged_file_is_a_miss_not_an_error(kept: Path, tmp_path: Path) -> None:
    source = tmp_path / "rows.csv"
    source.write_text("x\n")
    calls, compute = _counting({"k": [1.5]})
    d.derived("y", [source], compute)
    (stored,) = kept.iterdir()
    stored.write_bytes(b"\x80not a kept figure")
    assert d.derived("y", [source], compute) == {"k": [1.5]}
    assert len(calls) == 2


def test_without_a_folder_or_with_one_that_cannot_be_written_the_figure_is_still_given(tmp_path: Path) -> None:
    source = tmp_path / "rows.csv"
    source.write_text("x\n")
    calls, compute = _counting(7)
    d.keep_in(None)
    assert d.derived("z", [source], compute) == 7 and d.derived("z", [source], compute) == 7
    assert len(calls) == 2
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    d.keep_in(lambda: blocked / "derived", "1")  # a folder under a plain file cannot be made
    try:
        assert d.derived("z", [source], compute) == 7
    finally:
        d.keep_in(None)


def _reread_shipped() -> tuple[object, object]:
    from pricing.catalog import value

    value._shipped.cache_clear()
    try:
        first = value._shipped()  # parsed and kept
        value._shipped.cache_clear()
        again = value._shipped()  # read back
    finally:
        value._shipped.cache_clear()
    return first, again


def _same_catalog(a: object, b: object) -> bool:
    return all(getattr(a, f) == getattr(b, f) for f in ("instances", "gpus", "cards", "electricity", "layers"))


def test_the_kept_shipped_catalog_is_the_parsed_one(kept: Path) -> None:
    first, again = _reread_shipped()
    assert again is not first
    assert [p.name for p in kept.iterdir() if p.name.startswith("shipped")] == ["shipped-catalog.json"]
    assert _same_catalog(first, again)
    # the same types too: a Decimal price stays a Decimal, a date a date, an enum an enum (equality alone would hide it)
    for a, b in zip(first.instances, again.instances, strict=True):  # type: ignore[attr-defined]
        assert [type(x) for x in a] == [type(x) for x in b]
    for key, spec in first.gpus.items():  # type: ignore[attr-defined]
        assert again.gpus[key].model_fields_set == spec.model_fields_set  # type: ignore[attr-defined]


def test_kept_billing_rules_and_speeds_are_the_worked_out_ones(kept: Path) -> None:
    from pricing import billing

    billing.billing_rules.cache_clear()
    try:
        first = billing.billing_rules()
        billing.billing_rules.cache_clear()
        again = billing.billing_rules()
    finally:
        billing.billing_rules.cache_clear()
    assert again is not first and again == first
    assert all(type(k[1]) is type(f[1]) for k, f in zip(again, first, strict=True))


def test_no_kept_file_can_run_code(kept: Path, tmp_path: Path) -> None:
    _reread_shipped()
    for path in kept.iterdir():
        head, _, body = path.read_bytes().partition(b"\n")
        assert head.startswith(b"gpuplan-derived ")
        json.loads(body)  # plain JSON: no pickle, no marshal
    # a class the reader was not told it may build is refused, even in a file that is otherwise whole
    source = tmp_path / "rows.csv"
    source.write_text("x\n")
    calls, compute = _counting({"k": Decimal("1.5")})
    d.derived("t", [source], compute)
    path = kept / "t.json"
    forged = path.read_bytes().replace(b'"$dec"', b'"$enum"').split(b"\n", 1)[1].replace(b'"1.5"', b'["Path","/"]')
    path.write_bytes(b"gpuplan-derived 1 %08x\n" % zlib.crc32(forged) + forged)
    assert d.derived("t", [source], compute) == {"k": Decimal("1.5")} and len(calls) == 2


def test_a_flipped_bit_is_found_and_the_file_rebuilt(kept: Path, tmp_path: Path) -> None:
    source = tmp_path / "rows.csv"
    source.write_text("x\n")
    calls, compute = _counting({"p3.8xlarge": Decimal("12.24")})
    d.derived("prices", [source], compute)
    path = kept / "prices.json"
    data = bytearray(path.read_bytes())
    at = data.index(b"12.24") + 3
    data[at] ^= 0x01  # 12.24 -> 12.34: still JSON, still a price, only the checksum can tell
    path.write_bytes(bytes(data))
    assert d.derived("prices", [source], compute) == {"p3.8xlarge": Decimal("12.24")} and len(calls) == 2
    assert d.derived("prices", [source], compute) == {"p3.8xlarge": Decimal("12.24")} and len(calls) == 2  # rebuilt


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="files have owners on POSIX")
def test_a_file_owned_by_another_user_or_writable_by_others_is_ignored(kept: Path, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "rows.csv"
    source.write_text("x\n")
    calls, compute = _counting([1, 2, 3])
    d.derived("f", [source], compute)
    assert d.derived("f", [source], compute) == [1, 2, 3] and len(calls) == 1
    real = os.geteuid()
    monkeypatch.setattr(os, "geteuid", lambda: real + 1)  # every file now belongs to someone else
    assert d.derived("f", [source], compute) == [1, 2, 3] and len(calls) == 2
    monkeypatch.undo()
    os.chmod(kept / "f.json", 0o666)  # whole, the user's own, but anyone could have rewritten it
    assert d.derived("f", [source], compute) == [1, 2, 3] and len(calls) == 3
    assert stat.S_IMODE(os.stat(kept / "f.json").st_mode) == 0o600  # written again, private


def test_kept_files_are_private_whatever_the_umask(kept: Path, tmp_path: Path) -> None:
    source = tmp_path / "rows.csv"
    source.write_text("x\n")
    old = os.umask(0)
    try:
        d.derived("u", [source], lambda: {"a": 1.5})
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(kept).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(kept / "u.json").st_mode) == 0o600


def test_files_of_older_versions_that_ran_code_are_removed_not_read(kept: Path, tmp_path: Path) -> None:
    import pickle

    source = tmp_path / "rows.csv"
    source.write_text("x\n")
    kept.mkdir(mode=0o700)
    (kept / "speeds.pickle").write_bytes(pickle.dumps([["9.9.9"], {"k": 1}]))
    (kept / "dataclass-code.cpython-311.marshal").write_bytes(b"\0")
    assert d.derived("speeds", [source], lambda: {"k": 2}) == {"k": 2}
    assert sorted(p.name for p in kept.iterdir()) == ["speeds.json"]


class _Row(NamedTuple):
    price: Decimal | None
    share: float


def test_kept_rows_print_as_they_were_worked_out(kept: Path, tmp_path: Path) -> None:
    # equal values that print apart (4950 and 4950.0 in a CSV, 0.0 and -0.0) must come back as they were
    source = tmp_path / "rows.csv"
    source.write_text("x\n")
    rows = [_Row(Decimal("4950.0"), 0.0), _Row(Decimal("4950"), -0.0), _Row(None, 1.0), _Row(Decimal("4950.0"), 0.0)]
    d.derived("rows", [source], lambda: rows, types=(_Row,))
    again = d.derived("rows", [source], lambda: [], types=(_Row,))
    assert [(str(r.price), repr(r.share)) for r in again] == [(str(r.price), repr(r.share)) for r in rows]
    assert all(type(r) is _Row for r in again)


def test_any_failure_to_keep_a_figure_leaves_the_figure_given(kept: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import pricing.files

    def broken(path: Path, data: object) -> None:
        raise RuntimeError("a platform that cannot do what writing needs")

    monkeypatch.setattr(pricing.files, "write_private", broken)
    source = tmp_path / "rows.csv"
    source.write_text("x\n")
    assert d.derived("w", [source], lambda: {"a": 1}) == {"a": 1}
    assert d.derived("w", [source], lambda: {"a": 1}) == {"a": 1}


def test_where_files_have_no_owner_the_mode_bits_do_not_refuse_every_kept_figure(
        kept: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Windows reports every writable file as 0666 and has no geteuid: the cache must still be a cache there
    source = tmp_path / "rows.csv"
    source.write_text("x\n")
    calls, compute = _counting({"a": 1})
    d.derived("win", [source], compute)
    os.chmod(kept / "win.json", 0o666)
    monkeypatch.delattr(os, "geteuid", raising=False)
    assert d.derived("win", [source], compute) == {"a": 1} and len(calls) == 1
