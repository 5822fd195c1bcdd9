"""Billing modes and the rule each provider bills them by.

The rules (granularity, minimums, tiers, terms) live in ``data/billing_rules.toml``
with their sources; this module only applies them. A job of ``hours`` wall-clock
hours on an instance with rate ``r`` costs:

- hourly:      r x billed seconds / 3600, billed seconds = max(ceil(hours x 3600), minimum),
               with the tier fractions applied past their thresholds where a family is tiered
- monthly:     monthly price x whole months, months = ceil(hours / hours_per_month), at least 1
- spot:        like hourly on the spot rate, on hours x (1 + restart overhead)
- reserved_Ny: effective hourly x the whole term, however few hours the job uses
- buy:         not a rate; see ``planner`` for owned hardware
"""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import Decimal
from enum import StrEnum
from functools import lru_cache

from pydantic import BaseModel, ConfigDict

HOURS_PER_MONTH = Decimal(730)


class BillingMode(StrEnum):
    """How an option is paid for."""

    HOURLY = "hourly"
    MONTHLY = "monthly"
    SPOT = "spot"
    RESERVED_1Y = "reserved_1y"
    RESERVED_3Y = "reserved_3y"
    BUY = "buy"


class Tier(BaseModel):
    """From ``from_hours`` on, each hour costs ``fraction`` of the list rate."""

    # Validator built on first validation: a plan from the kept (derived) data never validates one.
    model_config = ConfigDict(frozen=True, defer_build=True)

    from_hours: Decimal
    fraction: Decimal


class BillingRule(BaseModel):
    """How one provider bills one mode."""

    # Validator built on first validation: a plan from the kept (derived) data never validates one.
    model_config = ConfigDict(frozen=True, defer_build=True)

    provider: str
    mode: BillingMode
    granularity_seconds: int = 1
    minimum_seconds: int = 0
    whole_months: bool = False
    term_hours: Decimal | None = None
    tiers: tuple[Tier, ...] = ()
    tiered_families: tuple[str, ...] = ()
    spot_fraction_estimate: Decimal | None = None
    source: str = ""
    note: str = ""

    def billed_seconds(self, hours: Decimal) -> Decimal:
        """Wall time rounded up to the billing granularity and minimum, in whole seconds."""
        seconds = Decimal(math.ceil(hours * 3600 / self.granularity_seconds) * self.granularity_seconds)
        return max(seconds, Decimal(self.minimum_seconds))

    def story(self, family: str = "") -> str:
        """The rule as a user reads it for one instance family: its source, and its tiers only where they apply."""
        if not self.tiers or family not in self.tiered_families:
            return self.source
        steps = ", ".join(f"from {t.from_hours} h {t.fraction * 100:.0f}%" for t in self.tiers[1:])
        return f"{self.source}; {family} is tiered: {steps} of the list rate"

    def tiered_units(self, hours: Decimal, family: str) -> Decimal:
        """Hours weighted by the tier fractions: the multiple of the list rate charged."""
        if not self.tiers or family not in self.tiered_families:
            return hours
        units = Decimal(0)
        bounds = [t.from_hours for t in self.tiers[1:]] + [None]
        for tier, upper in zip(self.tiers, bounds, strict=True):
            if hours <= tier.from_hours:
                break
            top = hours if upper is None else min(hours, upper)
            units += (top - tier.from_hours) * tier.fraction
        return units


def whole_months(hours: Decimal, hours_per_month: Decimal) -> int:
    """Months a subscription must cover to run ``hours`` (at least one)."""
    return max(1, math.ceil(hours / hours_per_month))


def reserved_terms(hours: Decimal, term_hours: Decimal) -> int:
    """Reservation terms needed to cover ``hours`` (at least one)."""
    return max(1, math.ceil(hours / term_hours))


def rate_cost(
    rule: BillingRule,
    rate: Decimal,
    hours: Decimal,
    *,
    family: str = "",
    hours_per_month: Decimal = HOURS_PER_MONTH,
) -> Decimal:
    """What ``hours`` of wall time cost at ``rate`` under ``rule`` (in the rate's currency).

    ``rate`` is per hour for hourly, spot and reserved modes and per month for monthly.
    """
    return rate_coster(rule, hours, family=family, hours_per_month=hours_per_month)(rate)


def rate_coster(
    rule: BillingRule,
    hours: Decimal,
    *,
    family: str = "",
    hours_per_month: Decimal = HOURS_PER_MONTH,
) -> Callable[[Decimal], Decimal]:
    """:func:`rate_cost` for one job length, as a function of the rate.

    A plan costs tens of thousands of offers with one run time each: the billed seconds,
    months or terms are worked out once and each rate costs one or two multiplications,
    in the same order as always, so the Decimal result is the same to the last digit.

    Kept per rule, job length and family. The key names the rule by its provider and mode and the
    entry holds the rule itself, checked by identity: hashing a (pydantic) rule on every quote of a
    JSON plan was a cost of its own.
    """
    key = (rule.provider, rule.mode, hours, family, hours_per_month)
    if (kept := _COSTERS.get(key)) is not None and kept[0] is rule:
        return kept[1]
    coster = _coster(rule, hours, family, hours_per_month)
    if len(_COSTERS) >= 4096:
        _COSTERS.clear()
    _COSTERS[key] = rule, coster
    return coster


_COSTERS: dict[tuple[str, BillingMode, Decimal, str, Decimal], tuple[BillingRule, Callable[[Decimal], Decimal]]] = {}


def _coster(rule: BillingRule, hours: Decimal, family: str, hours_per_month: Decimal) -> Callable[[Decimal], Decimal]:
    if hours < 0:
        raise ValueError("hours must not be negative")
    if rule.mode is BillingMode.MONTHLY:
        months = whole_months(hours, hours_per_month)
        return lambda rate: rate * months
    if rule.mode in (BillingMode.RESERVED_1Y, BillingMode.RESERVED_3Y):
        assert rule.term_hours is not None
        term, terms = rule.term_hours, reserved_terms(hours, rule.term_hours)
        return lambda rate: rate * term * terms
    if rule.mode is BillingMode.BUY:
        raise ValueError("buying has no rate; cost owned hardware in the planner")
    seconds = rule.billed_seconds(hours)
    if not rule.tiers or family not in rule.tiered_families:
        return lambda rate: rate * seconds / 3600  # multiply first: rate x 60 / 3600 stays exact
    units = rule.tiered_units(seconds / 3600, family)
    return lambda rate: rate * units


@lru_cache(maxsize=1)
def billing_rules() -> dict[tuple[str, BillingMode], BillingRule]:
    """All shipped rules, keyed by (provider, mode); kept between runs by the program (pricing.derived), as reading
    the TOML is most of their cost to a cold command."""
    from pathlib import Path

    from pricing.datafiles import data_path
    from pricing.derived import derived

    return derived("billing-rules", [data_path("billing_rules.toml"), Path(__file__)], _read_rules,  # type: ignore[no-any-return]
                   types=(BillingRule, Tier, BillingMode))


def _read_rules() -> dict[tuple[str, BillingMode], BillingRule]:
    import tomllib

    from pricing.datafiles import data_path

    data = tomllib.loads(data_path("billing_rules.toml").read_text(encoding="utf-8"))
    rules: dict[tuple[str, BillingMode], BillingRule] = {}
    for provider, modes in data.items():
        for mode, body in modes.items():
            rule = BillingRule(provider=provider, mode=BillingMode(mode), **body)
            rules[(provider, rule.mode)] = rule
    return rules


DEFAULT_RULES = "default"  # the rules of providers that have none of their own


@lru_cache(maxsize=None)
def rule_for(provider: str, mode: BillingMode) -> BillingRule | None:
    """The provider's rule for ``mode``; a provider with no rules at all gets the default ones.

    Cached (the shipped rules never change in a process): a plan asks once per offer and
    billing mode, and scanning every rule each time was a sixth of a large plan.
    """
    rules = billing_rules()
    if any(p == provider for p, _ in rules):
        return rules.get((provider, mode))
    return rules.get((DEFAULT_RULES, mode))
