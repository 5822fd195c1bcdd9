"""Where bought hardware lives: the workstation and colocated profiles, the host's idle draw, its price by card \
count."""

from __future__ import annotations

from decimal import Decimal

import pytest

from pricing.catalog import Catalog
from pricing.errors import InputError
from pricing.money import Currency, Fx
from planner.tco.compare import build_tco
from planner.tco.host import default, size_host, tco_defaults, tco_profiles
from planner.tco.owned import make_owned
from planner.tco.scenario import Scenario
from planner.settings import Settings

CAT = Catalog.shipped()


def build(count: int, **over: object):  # type: ignore[no-untyped-def]
    sc = Scenario(usage=Decimal(100), **over)  # type: ignore[arg-type]
    return make_owned(CAT.gpu("RTX-4090"), count, sc, currency=Currency.USD, fx=Fx([]),
                      hours_per_month=Decimal(730), catalog=CAT)


def test_every_profile_figure_is_sourced_and_names_a_model_figure() -> None:
    assert set(tco_profiles()) == {"workstation", "colocated"}
    for p in tco_profiles().values():
        assert p.description
        for key, f in p.figures.items():
            assert key in tco_defaults() and f.source and f.as_of and f.unit, (p.name, key)


def test_a_box_of_up_to_four_cards_is_a_workstation_and_more_a_colocated_server() -> None:
    # The defaults used to charge a 4x RTX-4090 box a data centre's PUE (1.58) and a DGX support contract (20%).
    four = build(4)
    assert (four.profile, four.pue, four.maintenance_fraction, four.colo_per_kw_month) == \
        ("workstation", Decimal("1.0"), Decimal(0), None)
    eight = build(8)
    assert (eight.profile, eight.pue, eight.maintenance_fraction) == ("colocated", Decimal("1.42"), Decimal("0.20"))
    assert eight.colo_per_kw_month is not None
    assert eight.colo_per_kw_month.amount == default("colocation_usd_per_kw_month")


def test_a_named_profile_or_colo_wins_over_the_card_count_and_flags_win_over_the_profile() -> None:
    assert build(4, profile="colocated").profile == "colocated"
    assert build(4, colo=True).profile == "colocated"
    assert build(8, profile="workstation").colo_per_kw_month is None
    assert build(4, pue=Decimal("1.33")).pue == Decimal("1.33")  # an air-conditioned office
    with pytest.raises(InputError, match="unknown TCO profile 'datacentre'"):
        build(4, profile="datacentre")


def test_the_host_cpu_idles_with_the_gpus() -> None:
    # Worked by hand for a sized 4-card host: 16 cores x 10.625 W = 170 W of CPU, 100 W for the rest.
    o = build(4)
    assert o.host.cpu_watts == 170 and o.host.watts == 270
    gpus_idle = 4 * 450 * Decimal("0.10")
    assert o.average_watts(Decimal(0)) == gpus_idle + 100 + 170 * Decimal("0.178")
    assert o.average_watts(Decimal(1)) == 4 * 450 + 270  # all at TDP while busy
    assert o.peak_kw == (4 * 450 + 270) / Decimal(1000)


def test_the_host_base_is_priced_per_four_cards() -> None:
    base = default("host_base_usd")
    one, two = (next(p for p in size_host(n, 24).parts if p.description.startswith("board"))
                for n in (4, 8))
    assert (one.quantity, one.cost.amount) == (1, base) and (two.quantity, two.cost.amount) == (2, 2 * base)


def test_the_report_names_each_builds_profile_and_the_figures_it_used() -> None:
    s = Settings()
    r = build_tco(Scenario(usage=Decimal(300), buy=["4x RTX-4090"], vs=["p3.16xlarge"]), currency=s.currency,
                  fx=s.fx_table(), hours_per_month=s.hours_per_month, spot_overhead=s.spot_overhead, catalog=CAT)
    assert r.assumptions["profiles"] == {"4x RTX-4090": "workstation"}
    pue = next(d for d in r.assumptions["defaults"] if d["key"] == "pue")
    assert (pue["value"], pue["profile"]) == ("1.0", "workstation") and "pugetsystems" in pue["source"]
    (buy,) = [o for o in r.options if o.kind.value == "buy"]
    assert any(n.startswith("profile workstation") for n in buy.notes)
