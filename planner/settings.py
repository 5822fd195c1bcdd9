"""The settings a plan is made with, as one value: display currency, exchange rates, billing terms, discounts.

Only the value lives here; :mod:`gpuplan.settings` reads it from flags, ``GPUPLAN_*`` variables
and the config file. The planner takes it from its caller and never reads the environment.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from pricing.billing import HOURS_PER_MONTH
from pricing.errors import InputError
from pricing.money import Currency, Fx, FxRate, parse_fx, shipped_fx_rates, to_decimal
from providers.listprice import SpotPricing

__all__ = ["DEFAULT_REF_GPU", "Discount", "Settings", "parse_discount"]

DEFAULT_REF_GPU = "V100-SXM2-32GB"  # the seed's card: Tencent GN10Xp's V100 NVLink 32 GB


class Discount(BaseModel):
    """An enterprise discount: every listed price of ``provider`` times ``factor`` (0 < factor <= 1)."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    provider: str
    factor: Decimal

    def label(self) -> str:
        return f"{self.provider}={self.factor}"


def parse_discount(text: str) -> Discount:
    """Parse ``aws=0.85`` (15% off every AWS price); the provider is checked against the catalog later."""
    from pricing.catalog import check_discount

    name, sep, value = text.partition("=")
    provider = name.strip().lower()
    if not sep or not provider or not value.strip():
        raise InputError(f"cannot read discount {text!r}", "write it as PROVIDER=FACTOR, e.g. aws=0.85 for 15% off")
    factor = to_decimal(value, f"discount factor for {provider}")
    return Discount(provider=provider, factor=check_discount(provider, factor))


class Settings(BaseModel):
    """Shared defaults; each field can come from a flag, ``GPUPLAN_<NAME>`` or the config file."""

    # Built on first validation: given no flag, variable or config file, the program takes the defaults unchecked
    # and builds no validator (~2 ms of every cold start, Discount's with it).
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    currency: Currency = Currency.USD
    fx: tuple[FxRate, ...] = ()
    # ECB's rates as `gpuplan catalog refresh --fx` last read them: set by the program (gpuplan.settings reads the
    # cache), never by a flag, variable or config file; they rank between the user's rates and the shipped ones.
    fx_refreshed: tuple[FxRate, ...] = Field(default=(), exclude=True)
    hours_per_month: Decimal = Field(default=HOURS_PER_MONTH, gt=0)
    spot_overhead: Decimal = Field(default=Decimal("0.10"), ge=0)
    # Hours between checkpoints of a spot run (None: the 1 h that spot_overhead is taken at; planner.plan.spot).
    checkpoint_every: Decimal | None = Field(default=None, gt=0)
    ref_gpu: str = DEFAULT_REF_GPU
    catalog: tuple[Path, ...] = ()  # user catalog CSVs, layered over the shipped and refreshed data
    spot_price: SpotPricing = SpotPricing.TYPICAL
    discount: tuple[Discount, ...] = ()  # enterprise discounts, applied where the catalog is built
    # The launcher's: a team's shared ledger ("postgresql://..."; "" keeps the SQLite file in the data folder),
    # and the project launches are recorded under when --project is not given.
    ledger_url: str = ""
    project: str = ""

    @field_validator("fx", mode="before")
    @classmethod
    def _fx(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = [v for v in value.split(",") if v.strip()]
        if isinstance(value, list | tuple):
            rates = tuple(parse_fx(v) if isinstance(v, str) else v for v in value)
            # one rate per pair: which of two a conversion used would be a silent guess (USD/CNY is CNY/USD too)
            pairs = [frozenset((r.base, r.quote)) for r in rates if isinstance(r, FxRate)]
            if twice := sorted({"/".join(sorted(p)) for p in pairs if pairs.count(p) > 1}):
                raise InputError(f"exchange rate for {', '.join(twice)} given more than once",
                                 "give one rate per currency pair")
            return rates
        return value

    @field_validator("currency", mode="before")
    @classmethod
    def _currency(cls, value: Any) -> Any:
        return Currency.parse(value) if isinstance(value, str) else value

    @field_validator("catalog", mode="before")
    @classmethod
    def _catalog(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = [v for v in value.split(",") if v.strip()]
        return value

    @field_validator("discount", mode="before")
    @classmethod
    def _discount(cls, value: Any) -> Any:
        if isinstance(value, dict):  # config file: discount = { aws = 0.85 }
            value = [f"{k}={v}" for k, v in value.items()]
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list | tuple):
            return value
        out: list[Any] = []
        for v in value:
            if isinstance(v, str):
                out += [parse_discount(p) for p in v.split(",") if p.strip()]
            else:
                out.append(v)
        names = [d.provider for d in out if isinstance(d, Discount)]
        if twice := sorted({n for n in names if names.count(n) > 1}):
            raise InputError(f"discount for {', '.join(twice)} given more than once", "give one factor per provider")
        return tuple(out)

    def discounts(self) -> dict[str, Decimal]:
        return {d.provider: d.factor for d in self.discount}

    def fx_table(self) -> Fx:
        """User rates first, so they override the refreshed and shipped ones for the same pair; a pair with no rate
        of its own is crossed through the euro with the first rate of each leg (ECB quotes every currency
        against it). A user who wants a pair converted otherwise gives that pair's rate (--fx, GPUPLAN_FX, config)."""
        return Fx(list(self.fx) + list(self.fx_refreshed) + list(shipped_fx_rates()))
