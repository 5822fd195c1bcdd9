"""One read-only sequence whose items are built when they are read.

A plan over a 200k-row catalog holds ~400k options and up to as many exclusions, and a
list-price provider ~200k offers: kept as numbers or catalog rows, and built as objects
only when read, they cost a few bytes each instead of a kilobyte. Every such sequence
(:class:`providers.bulk.OfferTable`, :class:`planner.plan.ranked.RankedOptions`,
:class:`planner.plan.ranked.Exclusions`) is a :class:`LazySequence`: it says how many
items it has and how to build one, and gets indexing, slices, iteration and equality here.
"""

from __future__ import annotations

import operator
from abc import abstractmethod
from collections.abc import Iterator, Sequence
from typing import TypeVar, overload

T = TypeVar("T")


class LazySequence(Sequence[T]):
    """``len(self)`` items; item ``i`` is built by :meth:`_build` when it is read.

    Reading an item twice may build it twice (a subclass may keep what it built); a slice
    is a list of built items. Iteration builds each item once, in order, and keeps none; a
    subclass may iterate faster. Equal to any sequence with equal items; not hashable, as
    a list is not.
    """

    __slots__ = ()

    @abstractmethod
    def __len__(self) -> int: ...

    @abstractmethod
    def _build(self, index: int) -> T:
        """Item ``index``, where ``0 <= index < len(self)``."""

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> list[T]: ...

    def __getitem__(self, index: int | slice) -> T | list[T]:
        n = len(self)
        if isinstance(index, slice):
            return [self._build(i) for i in range(*index.indices(n))]
        i = operator.index(index)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"{type(self).__name__} index {index} out of range ({n} items)")
        return self._build(i)

    def __iter__(self) -> Iterator[T]:
        return map(self._build, range(len(self)))

    def read(self, start: int, stop: int) -> Iterator[T]:
        """Items ``start`` to ``stop - 1`` (clipped to the sequence), built one by one as iteration builds them."""
        return map(self._build, range(*slice(start, stop).indices(len(self))))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self)} items)"


def read(items: Sequence[T], start: int, stop: int) -> Iterator[T]:
    """Items ``start`` to ``stop - 1`` of any sequence, a lazy one's built one by one and kept by none."""
    return items.read(start, stop) if isinstance(items, LazySequence) else iter(items[start:stop])
