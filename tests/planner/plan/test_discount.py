"""`--discount PROVIDER=FACTOR`: an enterprise discount on every price of one provider."""

from __future__ import annotations

import json
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuplan.settings import load_catalog, load_settings
from pricing.catalog import PRICE_FIELDS, Catalog, Layer
from pricing.errors import InputError, UnknownNameError
from tests.conftest import CliResult
from tests.fixtures.catalogs import instance_csv, toy_catalog

Run = Callable[..., CliResult]


def test_a_discount_scales_every_price_of_that_provider_only() -> None:
    base = toy_catalog()
    cut = base.with_discounts({"acme": Decimal("0.85")})
    for old, new in zip(base.instances, cut.instances, strict=True):
        for field in PRICE_FIELDS:
            was, now = getattr(old, field), getattr(new, field)
            if old.provider == "acme" and was is not None:
                assert now == was * Decimal("0.85")
            else:
                assert now == was
        assert ("acme=0.85" in new.notes) == (old.provider == "acme")
    assert cut.layers[-1].layer is Layer.DISCOUNT and cut.layers[-1].rows == 3
    assert "15% off" in cut.layers[-1].origin


@given(st.decimals(min_value=Decimal("0.01"), max_value=Decimal(1), places=3))
def test_any_factor_in_range_keeps_the_ranking_of_that_providers_offers(factor: Decimal) -> None:
    base = toy_catalog()
    cut = base.with_discounts({"acme": factor})
    acme = [(r.hourly or Decimal(0), r.instance_type) for r in base.instances if r.provider == "acme"]
    acme_cut = [(r.hourly or Decimal(0), r.instance_type) for r in cut.instances if r.provider == "acme"]
    assert [t for _, t in sorted(acme)] == [t for _, t in sorted(acme_cut)]
    assert all(new <= old for (old, _), (new, _) in zip(acme, acme_cut, strict=True))


def test_buying_cards_can_be_discounted_too() -> None:
    base = Catalog.shipped()
    cut = base.with_discounts({"local": Decimal("0.9")})
    assert [c.price * Decimal("0.9") for c in base.cards] == [c.price for c in cut.cards]
    assert cut.instances == base.instances


@pytest.mark.parametrize("discounts, error", [
    ({"acmee": Decimal("0.9")}, UnknownNameError),
    ({"acme": Decimal("0")}, InputError),
    ({"acme": Decimal("1.01")}, InputError),
    ({"acme": Decimal("NaN")}, InputError),
])
def test_unknown_providers_and_factors_out_of_range_are_refused(discounts: dict[str, Decimal],
                                                               error: type[Exception]) -> None:
    with pytest.raises(error):
        toy_catalog().with_discounts(discounts)


def test_the_plan_costs_the_discounted_price_and_says_so(gpuplan: Run) -> None:
    code, out, err = gpuplan("plan", "--gpu-hours", "200", "--provider", "aws", "--billing", "hourly", "--json")
    assert code == 0, err
    full = json.loads(out)["cheapest"]
    code, out, err = gpuplan("plan", "--gpu-hours", "200", "--provider", "aws", "--billing", "hourly",
                             "--discount", "aws=0.85", "--json")
    assert code == 0, err
    plan = json.loads(out)
    cheap = plan["cheapest"]
    assert cheap["offer"] == full["offer"]
    # the discount is on the instance price; disks and addresses stay at list
    assert Decimal(cheap["instance_cost"]) == pytest.approx(Decimal(full["instance_cost"]) * Decimal("0.85"),
                                                            abs=Decimal("0.01"))
    assert any("discount" in layer and "aws=0.85" in layer for layer in plan["assumptions"]["catalog_layers"])


def test_offers_csv_rows_carry_the_discount_in_their_notes(gpuplan: Run) -> None:
    code, out, err = gpuplan("offers", "--provider", "aws", "--gpu", "h100", "-o", "csv", "--discount", "aws=0.5")
    assert code == 0, err
    rows = out.strip().splitlines()[1:]
    assert rows and all("aws=0.5 applied (50% off the listed price)" in r for r in rows)


@pytest.mark.parametrize("value, needle", [
    ("aws=0", "above 0 and at most 1"),
    ("aws=1.5", "above 0 and at most 1"),
    ("aws=-0.2", "above 0 and at most 1"),
    ("aws=lots", "not a number"),
    ("aws", "PROVIDER=FACTOR"),
    ("=0.9", "PROVIDER=FACTOR"),
    ("amazon=0.9", "unknown provider 'amazon'"),
    ("aws=0.9,aws=0.8", "more than once"),
])
def test_bad_discounts_are_one_line_and_exit_2(gpuplan: Run, value: str, needle: str) -> None:
    code, out, err = gpuplan("plan", "--gpu-hours", "200", "--discount", value)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert lines[0].startswith("error: ") and len(lines) <= 2  # the error, then a hint
    assert needle in err and "Traceback" not in err


def test_a_discount_in_the_config_file_or_environment_applies(clean_environ: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    config = clean_environ / "gpuplan-home" / "config" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('discount = { aws = 0.8 }\n', encoding="utf-8")
    assert load_settings().discounts() == {"aws": Decimal("0.8")}
    config.write_text('discount = ["aws=0.7", "tencent=0.9"]\n', encoding="utf-8")
    assert load_settings().discounts() == {"aws": Decimal("0.7"), "tencent": Decimal("0.9")}
    monkeypatch.setenv("GPUPLAN_DISCOUNT", "tencent=0.5")
    s = load_settings()
    assert s.discounts() == {"tencent": Decimal("0.5")}  # the environment replaces the file's list
    cat = load_catalog(s)
    shipped = {r.key: r for r in Catalog.shipped().instances}
    for row in cat.instances:
        listed = shipped[row.key].hourly
        if row.provider == "tencent" and listed is not None:
            assert row.hourly == listed * Decimal("0.5")
        elif row.provider == "aws":
            assert row.hourly == shipped[row.key].hourly


def test_a_discount_applies_to_rows_of_a_user_file(tmp_path: Path) -> None:
    mine = tmp_path / "mine.csv"
    mine.write_text(instance_csv(
        "mylab,rack.v100x1,rack,V100-SXM2-32GB,1,8,64,lab-1,,,USD,1.00,,,,,,,,,internal chargeback,2026-11-01,"),
        encoding="utf-8")
    cat = load_catalog(load_settings(catalog=(mine,), discount=("mylab=0.5",)))
    (row,) = cat.instance("rack.v100x1")
    assert row.hourly == Decimal("0.50") and row.layer is Layer.USER
