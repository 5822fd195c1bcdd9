"""The scaling table kept between runs (pricing.derived) is the one worked out from scaling.csv, types and all."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pricing import derived
from planner.perf import scaling


@pytest.fixture
def kept(tmp_path: Path) -> Iterator[Path]:
    derived.keep_in(lambda: tmp_path / "derived", "test")
    scaling.scaling_table.cache_clear()
    yield tmp_path / "derived"
    derived.keep_in(None)
    scaling.scaling_table.cache_clear()


def test_the_kept_scaling_table_is_the_worked_out_one(kept: Path) -> None:
    first = scaling.scaling_table()
    scaling.scaling_table.cache_clear()
    again = scaling.scaling_table()
    assert again is not first and (kept / "scaling.json").exists()
    assert again == first == scaling._scaling_table()
    for key, points in first.items():
        assert [type(k) for k in key] == [type(k) for k in next(k for k in again if k == key)]
        assert [tuple(map(type, p)) for p in points] == [tuple(map(type, p)) for p in again[key]]
