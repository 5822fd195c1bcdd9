"""Figures derived from shipped data are kept between runs, and never trusted once their sources change."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

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


def test_the_kept_shipped_catalog_is_the_parsed_one(kept: Path) -> None:
    from pricing.catalog import value

    value._shipped.cache_clear()
    try:
        first = value._shipped()  # parsed and kept
        value._shipped.cache_clear()
        again = value._shipped()  # read back
    finally:
        value._shipped.cache_clear()
    assert again is not first and any(p.suffix == ".pickle" for p in kept.iterdir())
    assert again.instances == first.instances and again.gpus == first.gpus and again.cards == first.cards
    assert again.electricity == first.electricity and again.layers == first.layers
    assert os.stat(next(kept.iterdir())).st_size > 10_000
