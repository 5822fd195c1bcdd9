"""The one lazy sequence: what every sequence of items built when read gets from it."""

from __future__ import annotations

import pytest

from providers.lazy import LazySequence


class Squares(LazySequence[int]):
    __slots__ = ("n", "built")

    def __init__(self, n: int) -> None:
        self.n, self.built = n, 0

    def __len__(self) -> int:
        return self.n

    def _build(self, index: int) -> int:
        self.built += 1
        return index * index


def test_it_reads_as_a_list_of_its_items_would() -> None:
    s, items = Squares(6), [i * i for i in range(6)]
    assert [s[i] for i in range(-6, 6)] == [items[i] for i in range(-6, 6)]
    for cut in (slice(1, 4), slice(None, None, -2), slice(-2, None), slice(10, 20)):
        assert s[cut] == items[cut]
    assert list(s) == items and len(s) == 6 and 9 in s and s.index(16) == 4 and list(reversed(s)) == items[::-1]


def test_out_of_range_is_an_index_error_as_for_a_list() -> None:
    s = Squares(3)
    for i in (3, -4):
        with pytest.raises(IndexError):
            s[i]
    with pytest.raises(TypeError):
        s["1"]  # type: ignore[call-overload]


def test_items_are_built_when_read_and_not_before() -> None:
    s = Squares(1000)
    assert s.built == 0
    assert s[10] == 100 and s.built == 1
    assert s[2:5] == [4, 9, 16] and s.built == 4


def test_equal_to_any_sequence_with_equal_items_and_never_hashable() -> None:
    assert Squares(3) == [0, 1, 4] == Squares(3) and Squares(3) == (0, 1, 4)
    assert Squares(3) != [0, 1] and Squares(3) != [0, 1, 5] and Squares(0) == []
    assert Squares(2) != "ab" and Squares(2) != 3
    with pytest.raises(TypeError):
        hash(Squares(2))
    assert repr(Squares(2)) == "Squares(2 items)"
