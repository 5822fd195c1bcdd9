"""Cost lines as cost reports show them: quantity x unit price = cost."""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Self

from pydantic import BaseModel, ConfigDict

from pricing.money import Money


def quantity_text(q: Decimal) -> str:
    """A billing quantity: whole numbers as they are, fractions to 2 places (4 below 1)."""
    if q == q.to_integral_value():
        return f"{q:,.0f}"
    return f"{q:,.2f}" if abs(q) >= 1 else f"{q:.4f}"


class LineItem(BaseModel):
    """quantity x unit price = cost."""

    model_config = ConfigDict(frozen=True)

    description: str
    quantity: Decimal
    unit: str
    unit_price: Money
    cost: Money

    @classmethod
    def priced(cls, description: str, quantity: Decimal, unit: str, unit_price: Money, **extra: Any) -> Self:
        """An item whose cost is exactly quantity x unit price."""
        return cls(description=description, quantity=quantity, unit=unit, unit_price=unit_price,
                   cost=unit_price * quantity, **extra)

    def story(self) -> str:
        """'12.5 hours x 95.84 CNY', for explanations."""
        return f"{quantity_text(self.quantity)} {self.unit} x {self.unit_price.amount} {self.unit_price.currency}"
