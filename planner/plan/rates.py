"""How the planner reads a provider's offers and costs them by the thousand.

The ranking pass (:mod:`planner.plan.ranking`) reads each provider's offers once, as an
:class:`~providers.bulk.OfferTable`, and costs every offer x billing mode as one number.
A provider with the bulk capabilities (:mod:`providers.bulk`) makes that cheap: its
offers' facts come without building the offers, and a job length's billing rule is worked
out once for every offer of a family. Any other provider is read through its listed
offers and costed by its quotes, which is slower but the same answer.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

from pricing.billing import BillingMode
from pricing.billing import rate_coster as rule_coster
from pricing.errors import PriceMissingError
from providers.base import Offer, Provider
from providers.bulk import BulkOffers, ListedOffers, OfferTable, RateBilled


def offer_table(provider: Provider) -> OfferTable:
    """The provider's offers, in :meth:`Provider.list_offers` order, as a table."""
    if isinstance(provider, BulkOffers):
        return provider.offer_table()
    return ListedOffers(provider.list_offers())


def rate_coster(provider: Provider, mode: BillingMode, wall_hours: Decimal, *, family: str,
                hours_per_month: Decimal) -> Callable[[Decimal], Decimal] | None:
    """What ``wall_hours`` in ``mode`` cost on any offer of ``family``, as a function of its ``mode`` rate.

    The number the provider's quote comes to, worked out once per job length; None when the
    provider's costs are not a function of one rate (cost each offer by :func:`quoted_cost`).
    """
    if not isinstance(provider, RateBilled):
        return None
    rule = provider.billing_rule(mode)
    if rule is None:
        raise PriceMissingError(f"{provider.name} has no {mode} billing rule")
    return rule_coster(rule, wall_hours, family=family, hours_per_month=hours_per_month)


def quoted_cost(provider: Provider, offer: Offer, mode: BillingMode, wall_hours: Decimal, *,
                hours_per_month: Decimal) -> Decimal:
    """What the provider's quote charges, as an amount in the offer's currency."""
    return provider.quote(offer, mode, wall_hours, hours_per_month=hours_per_month).cost.amount
