"""A plan's options and exclusions as lazy sequences: kept as numbers, built as values when read."""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import NamedTuple

from pricing.billing import BillingMode
from providers.base import Offer
from providers.lazy import LazySequence
from planner.plan.filters import exclusion_zone
from planner.plan.model import Exclusion, ExclusionRule, Option

MODES = tuple(BillingMode)
MODE_AT = {m: i for i, m in enumerate(MODES)}  # a billing mode as RankedOptions.mode keeps it


class OptionRecords:
    """The ranking pass's record of every option, one entry per array: a 200k-offer plan has ~400k.

    As pydantic options they would be ~2 GB; as these arrays 21 bytes each. A record is an
    index into them: its cost and wall hours (floats: see :class:`RankedOptions`), its
    billing mode (an index into :data:`MODES`) and its offer (an index into its provider's
    offers). Records are added provider by provider, so a record's provider is the one
    whose span (:meth:`start_provider`) it falls in.
    """

    __slots__ = ("cost", "wall", "mode", "offer", "starts")

    def __init__(self) -> None:
        self.cost, self.wall = array("d"), array("d")
        self.mode, self.offer = array("B"), array("I")
        self.starts: list[int] = []  # the first record of each provider, in the order they were started

    def start_provider(self) -> None:
        """The records added from now on are the next provider's."""
        self.starts.append(len(self.cost))

    def provider(self, record: int) -> int:
        """The index of the provider whose span ``record`` falls in."""
        return bisect_right(self.starts, record) - 1

    def __len__(self) -> int:
        return len(self.cost)


class RankedOptions(LazySequence[Option]):
    """A plan's options, cheapest first, each costed in full (notes, line items, range) only when read.

    Ranked from :class:`OptionRecords`. Floats rank as the exact Decimals do: a Decimal to
    float conversion is correctly rounded, hence monotone, and two costs of a plan that
    differ at all differ far above a float's resolution (prices have at most six decimal
    places).
    """

    __slots__ = ("records", "order", "_build_record", "_built", "_firsts")

    def __init__(self, records: OptionRecords, build: Callable[[int], Option]) -> None:
        self.records, self._build_record = records, build
        cost, wall = records.cost, records.wall
        order = sorted(range(len(cost)), key=wall.__getitem__)
        order.sort(key=cost.__getitem__)  # stable: cost, then wall hours, then the order options were found in
        self.order = order
        self._built: dict[int, Option] = {}
        self._firsts: list[int] | None = None

    def __len__(self) -> int:
        return len(self.order)

    def _build(self, rank: int) -> Option:
        record = self.order[rank]
        if (o := self._built.get(record)) is None:
            o = self._built[record] = self._build_record(record)
        return o

    def __iter__(self) -> Iterator[Option]:
        return self.read(0, len(self))

    def read(self, start: int, stop: int) -> Iterator[Option]:
        # Not kept: --json over a 50k-offer plan reads 100k options once; kept, they would be ~500 MB.
        built, build = self._built, self._build_record
        return (built[r] if r in built else build(r) for r in self.order[start:stop])

    def first_by_billing(self) -> dict[BillingMode, tuple[int, Option]]:
        """Each billing mode's cheapest option and its 0-based rank."""
        if self._firsts is None:
            modes = list(map(self.records.mode.__getitem__, self.order))
            self._firsts = sorted(modes.index(m) for m in set(modes))  # index() scans in C
        return {self[rank].billing: (rank, self[rank]) for rank in self._firsts}

    def fastest_within(self, bound: Decimal) -> int:
        """The rank of the quickest option costing at most ``bound`` (the cheaper one on a tie)."""
        costs, walls = self.records.cost, self.records.wall
        limit = float(bound)
        best = 0
        key = (walls[self.order[0]], costs[self.order[0]])
        for rank, record in enumerate(self.order):
            cost = costs[record]
            if cost > limit or (cost == limit and self[rank].cost.amount > bound):
                break
            if (walls[record], cost) < key:
                best, key = rank, (walls[record], cost)
        return best


class Excluded(NamedTuple):
    """An exclusion as the ranking pass records it: :class:`Exclusion`'s fields, built into one when read."""

    provider: str
    offer: str
    region: str
    zone: str | None
    billing: BillingMode | None
    rule: ExclusionRule
    reason: str


class Exclusions(LazySequence[Exclusion]):
    """Excluded options, recorded as :class:`Excluded` and built as :class:`Exclusion` when read (a plan may
    exclude 100k)."""

    __slots__ = ("items",)

    def __init__(self) -> None:
        self.items: list[Excluded] = []

    def add(self, offer: Offer, rule: ExclusionRule, reason: str, mode: BillingMode | None = None,
            zone: str | None = None) -> None:
        self.items.append(Excluded(offer.provider, offer.name, offer.region, zone or exclusion_zone(offer, mode),
                                   mode, rule, reason))

    def put(self, provider: str, offer: str, region: str, zone: str | None, mode: BillingMode | None,
            rule: ExclusionRule, reason: str) -> None:
        """:meth:`add` from what an offer's facts say (see providers.bulk.OfferFacts), without the offer."""
        self.items.append(Excluded(provider, offer, region, zone, mode, rule, reason))

    def rules(self) -> list[ExclusionRule]:
        return [e.rule for e in self.items]

    def __len__(self) -> int:
        return len(self.items)

    def _build(self, index: int) -> Exclusion:
        return Exclusion(**self.items[index]._asdict())
