"""A plan's options and exclusions as lazy sequences: kept as numbers, built as values when read."""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator, Sequence
from decimal import Decimal
from typing import Any

from pricing.billing import BillingMode
from providers.base import Offer
from planner.plan.filters import exclusion_zone
from planner.plan.model import Exclusion, ExclusionRule, Option

MODES = tuple(BillingMode)
MODE_AT = {m: i for i, m in enumerate(MODES)}


class RankedOptions(Sequence[Option]):
    """A plan's options, cheapest first, each costed in full (notes, line items, range) only when read.

    The ranking pass keeps three numbers per option (cost and wall hours as floats, and
    its provider, billing mode and offer packed in one integer); a 200k-offer plan has
    ~400k options, and as pydantic objects they would be ~2 GB. Floats rank as the exact Decimals do: a Decimal to float
    conversion is correctly rounded, hence monotone, and two costs of a plan that differ
    at all differ far above a float's resolution (prices have at most six decimal places).
    """

    def __init__(self, cost: array[float], wall: array[float], source: array[int],
                 build: Callable[[int], Option]) -> None:
        self.cost, self.wall, self.source, self._build = cost, wall, source, build
        order = sorted(range(len(cost)), key=wall.__getitem__)
        order.sort(key=cost.__getitem__)  # stable: cost, then wall hours, then the order options were found in
        self.order = order
        self._built: dict[int, Option] = {}
        self._firsts: list[int] | None = None

    def __len__(self) -> int:
        return len(self.order)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        record = self.order[index]
        if (o := self._built.get(record)) is None:
            o = self._built[record] = self._build(record)
        return o

    def __iter__(self) -> Iterator[Option]:
        # Not kept: --json over a 50k-offer plan reads 100k options once; kept, they would be ~500 MB.
        built, build = self._built, self._build
        return (built[r] if r in built else build(r) for r in self.order)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def first_by_billing(self) -> dict[BillingMode, tuple[int, Option]]:
        """Each billing mode's cheapest option and its 0-based rank."""
        if self._firsts is None:
            source = self.source
            modes = [source[record] >> 32 & 0xFF for record in self.order]
            self._firsts = sorted(modes.index(m) for m in set(modes))  # index() scans in C
        return {self[rank].billing: (rank, self[rank]) for rank in self._firsts}

    def fastest_within(self, bound: Decimal) -> int:
        """The rank of the quickest option costing at most ``bound`` (the cheaper one on a tie)."""
        limit = float(bound)
        best = 0
        key = (self.wall[self.order[0]], self.cost[self.order[0]])
        for rank, record in enumerate(self.order):
            cost = self.cost[record]
            if cost > limit or (cost == limit and self[rank].cost.amount > bound):
                break
            if (self.wall[record], cost) < key:
                best, key = rank, (self.wall[record], cost)
        return best


class Exclusions(Sequence[Exclusion]):
    """Excluded options, kept as tuples and built as :class:`Exclusion` when read (a plan may exclude 100k)."""

    _FIELDS = ("provider", "offer", "region", "zone", "billing", "rule", "reason")

    def __init__(self) -> None:
        self.items: list[tuple[Any, ...]] = []

    def add(self, offer: Offer, rule: ExclusionRule, reason: str, mode: BillingMode | None = None,
            zone: str | None = None) -> None:
        self.items.append((offer.provider, offer.name, offer.region, zone or exclusion_zone(offer, mode), mode, rule,
                           reason))

    def put(self, provider: str, offer: str, region: str, zone: str | None, mode: BillingMode | None,
            rule: ExclusionRule, reason: str) -> None:
        """:meth:`add` from the facts of an offer (see providers.base.OfferFacts), without the offer."""
        self.items.append((provider, offer, region, zone, mode, rule, reason))

    def rules(self) -> list[ExclusionRule]:
        return [e[5] for e in self.items]

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        return Exclusion.model_construct(**dict(zip(self._FIELDS, self.items[index], strict=True)))

    def __iter__(self) -> Iterator[Exclusion]:
        return (self[i] for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]
