"""Optional capabilities of a provider with many offers: what a planner needs to rank them fast.

A plan over a 200k-row catalog costs every offer x billing mode as a number and builds
full offers and quotes only for the options it shows. Two capabilities make that cheap:

- :class:`BulkOffers`: the offers as an :class:`OfferTable`, built when read, each one's
  :class:`OfferFacts` (what the ranking pass reads) readable without building it;
- :class:`RateBilled`: what an option costs is a billing rule applied to one list rate of
  the offer, so a planner works the rule out once per job length and costs each offer
  with a multiplication or two (:func:`pricing.billing.rate_coster`).

A provider without them (buying cards) is planned through :meth:`Provider.list_offers` and
:meth:`Provider.quote` alone; :mod:`planner.plan.rates` is the planner's side of both.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from pricing.billing import BillingMode, BillingRule
from pricing.catalog import Interconnect, Stock
from pricing.money import Currency
from providers.base import Offer
from providers.lazy import LazySequence


@dataclass(slots=True)
class OfferFacts:
    """What a ranking pass reads of an offer, named as the :class:`Offer` names it.

    The ranking pass makes one for each of 200k offers, where building the offers would
    cost more than the ranking itself, and reads it once. Built positionally, in field
    order, and not frozen: keyword arguments and a frozen dataclass's ``__init__`` each
    cost 3-4x a plain positional call here (~0.25 us), and no one keeps or changes one.
    """

    name: str
    family: str
    region: str
    zones: tuple[str, ...]
    gpu: str
    gpu_count: float
    interconnect: Interconnect
    currency: Currency
    rates: dict[BillingMode, Decimal]
    stock: Stock
    rate_zones: dict[BillingMode, str]
    sold_out_zones: tuple[str, ...]
    as_of: date
    estimated: frozenset[BillingMode]  # modes whose rate is gpuplan's estimate, not a price the source lists

    @classmethod
    def of(cls, o: Offer) -> OfferFacts:
        return cls(o.name, o.family, o.region, o.zones, o.gpu, o.gpu_count, o.interconnect, o.currency, o.rates,
                   o.stock, o.rate_zones, o.sold_out_zones, o.as_of, o.estimated)


class OfferTable(LazySequence[Offer]):
    """A provider's offers, each built when read, and what the ranking reads of each (:meth:`facts`)."""

    __slots__ = ()

    def facts(self) -> Iterator[OfferFacts]:
        """Each offer's :class:`OfferFacts`, in order, equal to ``OfferFacts.of(offer)``; a table whose offers are
        costly to build says them without building them."""
        return map(OfferFacts.of, self)


class ListedOffers(OfferTable):
    """Offers already built (a provider without :class:`BulkOffers`), seen as a table."""

    __slots__ = ("offers",)

    def __init__(self, offers: list[Offer]) -> None:
        self.offers = offers

    def __len__(self) -> int:
        return len(self.offers)

    def _build(self, index: int) -> Offer:
        return self.offers[index]

    def __iter__(self) -> Iterator[Offer]:
        return iter(self.offers)


class BulkOffers(ABC):
    """A provider whose offers come from many catalog rows: it gives them as a table, built when read."""

    @abstractmethod
    def offer_table(self) -> OfferTable:
        """The offers of :meth:`Provider.list_offers`, in its order."""


class RateBilled(ABC):
    """A provider that charges a billing rule applied to one list rate of the offer (``offer.rates[mode]``).

    Its quotes must come to ``rate_cost(billing_rule(mode), offer.rates[mode], hours, family=offer.family)``:
    a planner ranks every option by that number and quotes only the options it shows.
    """

    @abstractmethod
    def billing_rule(self, mode: BillingMode) -> BillingRule | None:
        """The rule ``mode`` is billed by; None when this provider does not bill it."""
