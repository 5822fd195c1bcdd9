"""What every TCO option is made of: line items that say when they are paid, and monthly cost curves."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict

from pricing.billing import BillingMode
from pricing.line_items import LineItem
from pricing.money import Currency, Money

ZERO = Decimal(0)
PER_HOUR_PLACES = 4  # cost per GPU-hour reads to 4 places in every table, the verdict and JSON


class When(StrEnum):
    ONCE = "once"
    PER_MONTH = "per month"
    PER_LIFE = "per life"
    END = "at the horizon"


@dataclass(frozen=True, slots=True, kw_only=True)
class TcoLine(LineItem):
    """A quote's line item (quantity x unit price = cost) that also says when it is paid."""

    when: When


def line(description: str, quantity: Decimal, unit: str, unit_price: Money, when: When) -> TcoLine:
    return TcoLine.priced(description, quantity, unit, unit_price, when=when)



class TcoOption(BaseModel):
    """One way to get the usage done over the horizon."""

    model_config = ConfigDict(frozen=True)

    name: str
    kind: BillingMode
    provider: str
    region: str | None = None
    gpu: str
    gpu_count: float
    native_currency: Currency
    monthly_cost: list[Decimal]
    cumulative_cost: list[Decimal]
    total_cost: Decimal
    cost_per_ref_gpu_hour: Decimal | None  # total cost / reference GPU-hours of work done
    estimate: bool = False
    lines: list[TcoLine]
    notes: list[str] = []


def cumulative(monthly: list[Decimal]) -> list[Decimal]:
    out, total = [], ZERO
    for m in monthly:
        total += m
        out.append(total)
    return out


def _option(name: str, kind: BillingMode, monthly: list[Decimal], usage: Decimal, **kw: Any) -> TcoOption:
    cum = cumulative(monthly)
    months = len(monthly)
    per_work_h = cum[-1] / (usage * months) if usage > 0 and months else None
    return TcoOption(name=name, kind=kind, monthly_cost=monthly, cumulative_cost=cum, total_cost=cum[-1],
                     cost_per_ref_gpu_hour=per_work_h, **kw)


