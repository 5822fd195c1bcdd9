"""Which exchange rates a command converted with, for the CLI's "this rate is old" warning.

Kept apart from :mod:`pricing.money` and its pydantic models: the CLI records around every
command, ``--help`` included, and must not pay for those models to do so.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pricing.money import FxRate

# Every Fx converts through pricing.money, which adds the rate here, however deep in the
# planner it was built.
FX_USED: ContextVar[set[FxRate] | None] = ContextVar("gpuplan_fx_used", default=None)


@contextmanager
def record_fx_use() -> Iterator[set[FxRate]]:
    """Collect every rate an :class:`pricing.money.Fx` converts with inside the block."""
    seen: set[FxRate] = set()
    token = FX_USED.set(seen)
    try:
        yield seen
    finally:
        FX_USED.reset(token)
