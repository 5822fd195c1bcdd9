"""The plan's ranking pass (bare Decimals, shared per shape) must give what costing each option in full gives.

The reference below costs every (offer, billing mode) the slow, obvious way, with the full
option builder (quote, notes, line items, range), and sorts by cost then wall hours. The
plan must list the same options in the same order and exclude the same ones, on
catalogs made to have equal prices (ties), several currencies, estimated spot prices,
per-zone rows and clusters.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pricing.billing import BillingMode
from pricing.catalog import Catalog, Layer, parse_instances
from pricing.errors import NoOptionError
from pricing.money import Currency, Money
from providers.base import Offer
from providers.registry import all_providers
from planner.plan.demand import Demand, RefGpuHours
from planner.settings import Settings
from planner.plan.workload_demand import WorkloadDemand
from planner.plan import Constraints, Exclusion, Option, Plan, make_plan
from planner.plan.costing import Costing
from planner.plan.filters import exclusion_zone, offer_filter, unwhole_build
from planner.workload.spec import TrainingWorkload, TransformerArch
from tests.fixtures.catalogs import instance_csv

SHIPPED = Catalog.shipped()
REF = "V100-SXM2-32GB"
SHAPES = [("g1.v100x1", "V100-SXM2-32GB", 1), ("g1.v100x8", "V100-SXM2-32GB", 8), ("h1.h100x8", "H100-SXM5-80GB", 8),
          ("l1.l4x1", "L4", 1), ("a1.a100x4", "A100-SXM4-40GB", 4)]
PRICES = ["", "1.5", "2", "2.25", "9.999999", "40"]  # few values: many options tie on cost


def reference(demand: Demand, c: Constraints, s: Settings, cat: Catalog) -> tuple[list[Option], list[tuple[Any, ...]]]:
    """Every option costed in full, offer by offer, and every exclusion, as the planner did before its ranking pass."""
    costing = Costing(demand, c, s, cat)
    options: list[Option] = []
    excluded: list[tuple[Any, ...]] = []

    def drop(o: Offer, rule: Any, reason: str, mode: BillingMode | None = None, zone: str | None = None) -> None:
        excluded.append((o.provider, o.name, o.region, zone or exclusion_zone(o, mode), mode, rule, reason))

    for provider in all_providers(cat, spot_pricing=s.spot_price):
        if c.providers is not None and provider.name not in c.providers:
            continue
        for offer in provider.list_offers():
            spec = cat.gpus[offer.gpu]
            if (rejected := offer_filter(offer, spec, c) or unwhole_build(offer)) is not None:
                drop(offer, *rejected)
                continue
            for zone in offer.sold_out_zones:
                drop(offer, "sold_out", f"sold out in {zone} (live data of {offer.as_of}); priced in "
                     f"{', '.join(offer.zones)}", zone=zone)
            runs = costing.runs(offer, spec)
            first = runs.smallest_fitting()
            if isinstance(first, str):
                drop(offer, "workload", first)
                continue
            for mode in offer.rates:
                if c.billing is not None and mode not in c.billing:
                    continue
                if not provider.bills(mode):
                    drop(offer, "no_price", f"{offer.provider} has no {mode} billing rule: add "
                         f"[{offer.provider}.{mode}] to the billing rules to plan with this price", mode)
                    continue
                result = costing.option(provider, offer, spec, mode, runs, first)
                if isinstance(result, Option):
                    options.append(result)
                else:
                    drop(offer, *result, mode)
    options.sort(key=lambda o: (o.cost.amount, o.wall_hours))
    return options, excluded


def _exclusions(p: Plan) -> list[tuple[Any, ...]]:
    return [(e.provider, e.offer, e.region, e.zone, e.billing, str(e.rule), e.reason) for e in p.excluded]


def _check(demand: Demand, c: Constraints, s: Settings, cat: Catalog) -> Plan | None:
    want, dropped = reference(demand, c, s, cat)
    try:
        p = make_plan(demand, c, s, catalog=cat)
    except NoOptionError:
        assert not want
        return None
    assert len(p.options) == len(want)
    assert list(p.options) == want
    assert _exclusions(p) == [(*e[:5], str(e[5]), e[6]) for e in dropped]
    assert all(isinstance(e, Exclusion) for e in p.excluded)
    return p


rows = st.lists(
    st.tuples(st.sampled_from(["acme", "pandacloud", "aws"]), st.sampled_from(SHAPES),
              st.sampled_from(["r-east-1", "r-west-2", "r-north-1"]), st.sampled_from(PRICES),
              st.sampled_from(PRICES), st.sampled_from(PRICES), st.sampled_from(["", "az1", "az2"])),
    min_size=1, max_size=14)


def _catalog(drawn: list[tuple[Any, ...]]) -> Catalog:
    lines = []
    for provider, (name, gpu, count), region, hourly, monthly, spot, zone in drawn:
        currency = "CNY" if provider == "pandacloud" else "USD"
        zone_name = f"{region}-{zone}" if zone else ""
        lines.append(f"{provider},{name},{name.split('.')[0]},{gpu},{count},{8 * count},{64 * count},{region},"
                     f"{zone_name},{zone_name},{currency},{hourly},,{monthly},,{spot},,,,,made-up test figure,"
                     "2026-01-01,")
    user = parse_instances(instance_csv(*lines), origin="drawn", layer=Layer.USER)
    return SHIPPED.with_instances([*SHIPPED.instances, *user])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(drawn=rows,
       hours=st.sampled_from([Decimal("0.5"), Decimal(200), Decimal(5000)]),
       deadline=st.sampled_from([None, Decimal(3), Decimal(100)]),
       budget=st.sampled_from([None, Decimal(50), Decimal(2000)]),
       billing=st.sampled_from([None, frozenset({BillingMode.SPOT}),
                                frozenset({BillingMode.MONTHLY, BillingMode.HOURLY})]),
       currency=st.sampled_from(list(Currency)))
def test_the_ranking_pass_gives_what_full_costing_gives(drawn: list[tuple[Any, ...]], hours: Decimal,
                                                        deadline: Decimal | None, budget: Decimal | None,
                                                        billing: frozenset[BillingMode] | None,
                                                        currency: Currency) -> None:
    cat = _catalog(drawn)
    s = Settings(currency=currency)
    c = Constraints(deadline_hours=deadline, billing=billing,
                    budget=None if budget is None else Money(amount=budget, currency=Currency.USD))
    _check(RefGpuHours(gpu_hours=hours, ref_gpu=REF, catalog=cat), c, s, cat)


def test_clusters_with_ranges_rank_as_full_costing_does() -> None:
    """A model workload: calibrated ranges, several nodes for a deadline, one shape across regions."""
    d = WorkloadDemand(TrainingWorkload(arch=TransformerArch(params=70e9), tokens=2e10), SHIPPED)
    p = _check(d, Constraints(deadline_hours=Decimal(240)), Settings(), SHIPPED)
    assert p is not None and any(o.nodes > 1 for o in p.options) and p.options[0].range is not None


def test_the_shipped_catalog_ranks_as_full_costing_does() -> None:
    p = _check(RefGpuHours(gpu_hours=Decimal(200), ref_gpu=REF, catalog=SHIPPED), Constraints(), Settings(), SHIPPED)
    assert p is not None and len(p.options) > 100


def test_winners_per_billing_mode_are_the_first_of_each_mode() -> None:
    p = make_plan(RefGpuHours(gpu_hours=Decimal(200), ref_gpu=REF, catalog=SHIPPED), None, Settings(), catalog=SHIPPED)
    every = list(p.options)
    firsts: dict[BillingMode, int] = {}
    for rank, o in enumerate(every):
        firsts.setdefault(o.billing, rank)
    assert {m: r for m, (r, _) in p.ranked_by_billing().items()} == firsts
    assert list(p.ranked_by_billing()) == sorted(firsts, key=firsts.__getitem__)


def test_a_table_reads_only_the_options_it_shows() -> None:
    """What makes a 50k-offer plan quick: the options below the table are never costed in full."""
    p = make_plan(RefGpuHours(gpu_hours=Decimal(200), ref_gpu=REF, catalog=SHIPPED), None, Settings(), catalog=SHIPPED)
    _ = p.options[:25], p.cheapest_by_billing(), p.explanation
    built = p.options._built  # type: ignore[attr-defined]
    assert len(built) < 40 < len(p.options)
