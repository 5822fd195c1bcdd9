"""Cost lines as cost reports show them: quantity x unit price = cost."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Self

from pricing.frozen import quick_init
from pricing.money import Money, money


def quantity_text(q: Decimal) -> str:
    """A billing quantity: whole numbers as they are, fractions to 2 places (4 below 1)."""
    if q == q.to_integral_value():
        return f"{q:,.0f}"
    return f"{q:,.2f}" if abs(q) >= 1 else f"{q:.4f}"


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True, init=False)  # quick_init writes __init__
class LineItem:
    """quantity x unit price = cost.

    A plain value, not a pydantic model: a JSON plan over a 50k-offer catalog makes ~100k of them
    (pydantic models that hold one, such as a TCO option, take it as it is).
    """

    description: str
    quantity: Decimal
    unit: str
    unit_price: Money
    cost: Money

    @classmethod
    def priced(cls, description: str, quantity: Decimal, unit: str, unit_price: Money, **extra: Any) -> Self:
        """An item whose cost is exactly quantity x unit price (a quantity given as int or float is made a Decimal)."""
        if type(quantity) is not Decimal:
            quantity = Decimal(str(quantity))
        return cls(description=description, quantity=quantity, unit=unit, unit_price=unit_price,  # type: ignore[call-arg]
                   cost=money(unit_price.amount * quantity, unit_price.currency), **extra)  # (quick_init's __init__)

    def story(self) -> str:
        """'12.5 hours x 95.84 CNY', for explanations."""
        return f"{quantity_text(self.quantity)} {self.unit} x {self.unit_price.amount} {self.unit_price.currency}"
