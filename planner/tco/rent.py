"""Renting in the TCO: a cloud offer under each billing mode, month by month, quoted by its provider."""

from __future__ import annotations

import math
from decimal import Decimal

from pricing.billing import BillingMode, rule_for
from pricing.catalog import Catalog
from pricing.errors import PriceMissingError
from pricing.money import Currency, Fx, Money
from providers.base import Offer
from providers.listprice import RENT_MODES
from providers.lookup import find_offer, offers_of_type
from providers.registry import get_provider
from pricing.bill import ExtraItem, Extras, extras_bill
from planner.tco.lines import TcoLine, TcoOption, When, _option, line


def pick_offer(catalog: Catalog, name: str, region: str | None) -> tuple[Offer, list[str]]:
    """The offer for instance ``name``: in ``region`` (a prefix, as plan's --region) if given, else the first
    priced region."""
    if region:
        found = find_offer(catalog, name, region=region, prefix=True)
        offer, offers = found.offer, found.offers
    else:
        offers = tuple(offers_of_type(catalog, name))
        offer = next((o for o in offers if any(m in o.rates for m in RENT_MODES)), offers[0])
    notes = []
    if len(offers) > 1:
        why = "as asked" if region else "the first region with a price; --region picks another"
        notes.append(f"region {offer.region} ({why})")
    return offer, notes


def _monthly_extras(ex: Extras, offer: Offer, mode: BillingMode, run_hours: Decimal, nodes: int,
                    hours_per_month: Decimal, disk_kept: bool = True) -> tuple[list[ExtraItem], list[str]]:
    """One month's extras: the run's addresses and egress, stored data kept the whole month, and the disks:
    kept for the project all month (``disk_kept``, what a disk holding a project's data costs) or only while
    the machine runs."""
    run_only = {"storage_gb": Decimal(0), **({"disk_gb": Decimal(0)} if disk_kept else {})}
    run = extras_bill(ex.model_copy(update=run_only), offer.provider, mode, run_hours, nodes,
                      hours_per_month=hours_per_month)
    items, missing = list(run.items), list(run.not_priced)
    if disk_kept and ex.disk_gb:
        disk = Extras(disk_gb=ex.disk_gb, disk_type=ex.disk_type, bandwidth_mbps=Decimal(0))
        # a term mode's disk is bought with it; otherwise it bills pay-as-you-go every hour of the month
        disk_mode = mode if mode is BillingMode.MONTHLY else BillingMode.HOURLY
        month = extras_bill(disk, offer.provider, disk_mode, hours_per_month, nodes, hours_per_month=hours_per_month)
        items += [i for i in month.items if i.item.startswith("disk:")]
        missing += [m for m in month.not_priced if m.startswith("disk")]
    if ex.storage_gb:
        kept = Extras(disk_gb=Decimal(0), storage_gb=ex.storage_gb, bandwidth_mbps=Decimal(0))
        store = extras_bill(kept, offer.provider, BillingMode.HOURLY, hours_per_month, 1,
                            hours_per_month=hours_per_month)
        items += [i for i in store.items if i.item.startswith("storage")]
        missing += [m for m in store.not_priced if "storage" in m]
    return items, missing


def monthly_vs_hourly_hours(offer: Offer) -> Decimal | None:
    """Hours per month above which the monthly subscription beats pay-as-you-go."""
    hourly, monthly = offer.rates.get(BillingMode.HOURLY), offer.rates.get(BillingMode.MONTHLY)
    return monthly / hourly if hourly and monthly is not None else None


def rent_option(
    offer: Offer,
    mode: BillingMode,
    usage: Decimal,
    months: int,
    *,
    currency: Currency,
    fx: Fx,
    hours_per_month: Decimal,
    spot_overhead: Decimal,
    catalog: Catalog,
    notes: list[str] | None = None,
    work_per_hour: Decimal | None = None,
    extras: Extras | None = None,
    disk_kept: bool = True,
) -> TcoOption:
    """``offer`` under ``mode`` for ``usage`` reference GPU-hours of work every month, ``months`` months.

    ``work_per_hour`` is the reference GPU-hours one instance-hour does (planner.tco.work);
    left out, the offer's own GPU is the reference and its GPUs scale perfectly. ``extras`` adds
    the rest of the bill each month: disks all month (``disk_kept``) or for the hours the instances
    run, addresses for those hours, the month's egress, the data kept all month in object storage,
    and Tencent bandwidth.
    """
    if mode not in offer.rates:
        raise PriceMissingError(f"{offer.label} has no {mode} price in the catalog")
    instance_hours = usage / (work_per_hour if work_per_hour is not None else Decimal(repr(offer.gpu_count)))
    extra = list(notes or [])
    conv = fx.rate(offer.currency, currency)

    def money(amount: Decimal) -> Money:
        return Money(amount=amount * conv, currency=currency)

    lines: list[TcoLine] = []
    provider = get_provider(offer.provider, catalog)
    if mode in (BillingMode.RESERVED_1Y, BillingMode.RESERVED_3Y):
        rule = rule_for(offer.provider, mode)
        if rule is None or rule.term_hours is None:
            raise PriceMissingError(f"{offer.provider} has no {mode} billing rule")
        # Reservations run side by side: enough of them to cover the monthly instance-hours,
        # each billed for whole terms over the horizon by the provider's own rule.
        instances = max(1, math.ceil(instance_hours / hours_per_month))
        q = provider.quote(offer, mode, hours_per_month * months, hours_per_month=hours_per_month)
        total = q.cost.amount * instances
        term = max(1, round(rule.term_hours / hours_per_month))
        per_month = total / (months + (-months) % term)
        monthly = [per_month * conv] * months
        owed = (-months) % term
        if owed:
            monthly[-1] += per_month * owed * conv
            extra.append(f"the {term}-month term runs past the horizon: {owed} more month(s) are owed, "
                         "counted in the last month")
        lines.append(line(f"{offer.name} {mode} (every hour of the term)", rule.term_hours / term * instances,
                          "hours", money(offer.rates[mode]), When.PER_MONTH))
        extra += list(q.notes)
    else:
        wall = instance_hours * (1 + spot_overhead) if mode is BillingMode.SPOT else instance_hours
        q = provider.quote(offer, mode, wall, hours_per_month=hours_per_month)
        monthly = [q.cost.amount * conv] * months
        lines += [line(i.description, i.quantity, i.unit, money(i.unit_price.amount), When.PER_MONTH)
                  for i in q.line_items]
        extra += list(q.notes)
        if mode is BillingMode.SPOT:
            extra.append(f"{spot_overhead:.0%} extra run time for restarts after interruptions")
    if extras is not None:
        if mode in (BillingMode.RESERVED_1Y, BillingMode.RESERVED_3Y):
            run, nodes = hours_per_month, instances
        else:
            run, nodes = wall, 1
        items, missing = _monthly_extras(extras, offer, mode, run, nodes, hours_per_month, disk_kept)
        for i in items:
            lines.append(line(i.description, i.quantity, i.unit, money(i.unit_price.amount), When.PER_MONTH))
            monthly = [m + i.cost.amount * conv for m in monthly]
        if missing:
            extra.append("not priced (no sourced rate): " + "; ".join(missing))
    estimate = mode in offer.estimated
    if estimate and not any("ESTIMATE" in n for n in extra):
        extra.append(f"ESTIMATED {mode} price")
    if offer.currency != currency:
        extra.append(f"priced in {offer.currency}, converted at 1 {offer.currency} = {conv:.6g} {currency}")
    return _option(f"{offer.name} {mode}", mode, monthly, usage, provider=offer.provider,
                   region=offer.region, gpu=offer.gpu, gpu_count=offer.gpu_count, native_currency=offer.currency,
                   estimate=estimate, lines=lines, notes=extra)
