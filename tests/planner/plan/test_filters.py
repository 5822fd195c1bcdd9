"""Region and GPU filters over a fixture catalog: a filter that matches nothing is bad input,
and exclusions say where (region and zone) they happened."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pricing.billing import BillingMode
from pricing.catalog import Catalog, Layer, parse_instances
from pricing.errors import InputError
from pricing.money import Currency, Money
from planner.plan.demand import RefGpuHours
from planner.plan.offers import offer_rows
from planner.plan import Constraints, make_plan
from planner.settings import Settings
from tests.fixtures.catalogs import instance_csv, toy_catalog

REF = "V100-SXM2-32GB"


def plan(cat: Catalog, **constraints: object):  # type: ignore[no-untyped-def]
    demand = RefGpuHours(gpu_hours=Decimal(100), ref_gpu=REF, catalog=cat)
    return make_plan(demand, Constraints(**constraints), Settings(), catalog=cat)  # type: ignore[arg-type]


def test_a_region_no_offer_has_names_the_closest() -> None:
    with pytest.raises(InputError,
                       match=r"'test-est-1' matches no offer of acme, pandacloud; closest known: test-east-1"):
        plan(toy_catalog(), regions=("test-est-1",))


def test_the_shipped_catalogs_rows_without_a_region_are_never_offered_as_one() -> None:
    cat = Catalog.shipped()
    assert any(o.region == "unknown" for o in cat.instances)  # rows whose source names no region (unpriced Tencent)
    with pytest.raises(InputError) as caught:
        plan(cat, regions=("nowhere",))
    assert "unknown" not in caught.value.message and "unknown" not in (caught.value.hint or "")


def test_buying_cards_never_makes_a_wrong_region_valid() -> None:
    # Cards to buy have no region and pass any region filter; they must not answer for a typo.
    with pytest.raises(InputError, match="matches no offer"):
        plan(toy_catalog(), regions=("nowhere",))
    p = plan(toy_catalog(), regions=("test-east",))
    assert {o.region for o in p.options} <= {"test-east-1", "local"}


def test_every_region_given_must_match() -> None:
    with pytest.raises(InputError, match="'pc-nort' matches no offer of acme; closest known: test-east-1"):
        plan(toy_catalog(), regions=("test-east-1", "pc-nort"), providers=frozenset({"acme"}))


def test_offers_check_regions_like_plans() -> None:
    with pytest.raises(InputError, match="closest known: pc-north"):
        offer_rows(toy_catalog(), Constraints(regions=("pc-nrth",)), Settings())


@given(st.sampled_from(["test-east-1", "test-east", "TEST-", "pc-north", "pc"]))
def test_a_prefix_of_a_real_region_is_accepted(prefix: str) -> None:
    assert plan(toy_catalog(), regions=(prefix,)).options


LIVE = instance_csv(
    "acme,z1.v100,z1,V100-SXM2-32GB,1,8,64,test-east-1,test-east-1a,,USD,2.00,,,,,,,,available,live test,2026-01-01,",
    "acme,z1.v100,z1,V100-SXM2-32GB,1,8,64,test-east-1,test-east-1b,,USD,1.00,,,,,,,,sold_out,live test,2026-01-01,",
    "acme,z2.v100,z2,V100-SXM2-32GB,1,8,64,test-west-1,test-west-1a,,USD,9.00,,,,,,,,available,live test,2026-01-01,",
)


def test_exclusions_carry_the_zone_where_the_data_names_one() -> None:
    base = Catalog.shipped()
    cat = base.with_instances(parse_instances(LIVE, origin="live", layer=Layer.CACHE))
    p = plan(cat, providers=frozenset({"acme"}), budget=Money(amount=Decimal(500), currency=Currency.USD))
    assert [(o.offer, o.zone) for o in p.options] == [("z1.v100", "test-east-1a")]
    where = {(e.offer, e.zone, e.rule.value) for e in p.excluded}
    assert ("z1.v100", "test-east-1b", "sold_out") in where  # the sold-out zone, not the region alone
    assert ("z2.v100", "test-west-1a", "budget") in where  # the zone whose price was over the budget


def test_a_gpu_family_filters_every_variant_a_full_name_one() -> None:
    cat = Catalog.shipped()
    v100s = {g.key for g in cat.gpu_family("v100")}
    assert v100s == {"V100-SXM2-16GB", "V100-SXM2-32GB", "V100-PCIE-16GB", "V100-PCIE-32GB"}
    assert "V100S-PCIE-32GB" not in v100s  # a different model, its own family
    assert [g.key for g in cat.gpu_family("v100-16gb")] == ["V100-SXM2-16GB"]
    assert [g.key for g in cat.gpu_family("RTX 4090")] == ["RTX-4090"]
    assert cat.gpu("v100").key == "V100-SXM2-32GB"  # one GPU where one is meant


@given(st.sampled_from(sorted(Catalog.shipped().gpus)))
def test_every_gpu_is_in_its_own_family_lookup(key: str) -> None:
    cat = Catalog.shipped()
    assert key in {g.key for g in cat.gpu_family(key)}
    family = key.partition("-")[0]
    for g in cat.gpu_family(family) if family.lower() in cat.families else []:
        assert g.key.startswith(family + "-")


def test_rows_of_a_family_in_a_toy_catalog_are_all_selected() -> None:
    rows = instance_csv(
        "acme,a.16,a,V100-SXM2-16GB,1,8,64,test-east-1,,,USD,1.00,,,,,,,,,made-up test figure,2026-01-01,",
        "acme,a.32,a,V100-SXM2-32GB,1,8,64,test-east-1,,,USD,2.00,,,,,,,,,made-up test figure,2026-01-01,",
        "acme,b.t4,b,T4,1,8,64,test-east-1,,,USD,0.50,,,,,,,,,made-up test figure,2026-01-01,",
    )
    cat = toy_catalog(rows)
    gpus = frozenset(g.key for g in cat.gpu_family("v100"))
    p = plan(cat, providers=frozenset({"acme"}), gpus=gpus, billing=frozenset({BillingMode.HOURLY}))
    assert {o.offer for o in p.options} == {"a.16", "a.32"}


def test_an_estimated_spot_price_is_not_ranked_unless_asked_for() -> None:
    # Tencent spot is estimated at a fraction of pay-as-you-go for types no source says are sold as spot;
    # such guesses won plans (GT4 spot* second overall) and the TCO verdict.
    cat = Catalog.shipped()
    p = plan(cat)
    assert not any(o.estimate for o in p.options)
    held = [e for e in p.excluded if e.rule == "estimate"]
    assert held and all(e.billing == BillingMode.SPOT and "--spot-estimates" in e.reason for e in held)
    with_guesses = plan(cat, spot_estimates=True)
    guessed = [o for o in with_guesses.options if o.estimate]
    assert guessed and all(o.billing == BillingMode.SPOT for o in guessed)
    assert {(e.offer, e.region) for e in held} == {(o.offer, o.region) for o in guessed}
    assert not [e for e in with_guesses.excluded if e.rule == "estimate"]


def test_an_sxm_module_bought_without_its_baseboard_is_never_ranked_and_says_why() -> None:
    """The shipped cards include SXM modules (V100-SXM2, H100-SXM5): no price covers the HGX/DGX server they need."""
    p = plan(Catalog.shipped(), providers=frozenset({"local"}))
    assert p.options and not any("SXM" in o.offer for o in p.options)
    said = [e for e in p.excluded if "SXM" in e.offer]
    assert said and all("baseboard" in e.reason for e in said)
    assert any("PCIE" in o.offer.upper() or "RTX" in o.offer.upper() for o in p.options)  # whole builds still rank
