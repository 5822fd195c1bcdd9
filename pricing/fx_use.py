"""Which exchange rates a command converted with, for the CLI's "this rate is old" warning.

Kept apart from :mod:`pricing.money` and its pydantic models: the CLI records around every
command, ``--help`` included, and must not pay for those models to do so.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["FX_USED", "record_fx_use"]

# Every Fx converts through pricing.money, which adds the rate (a pricing.money.FxRate) here,
# however deep in the planner it was built. Typed as any hashable value so this module needs
# nothing of pricing.money: money imports it, never the other way round.
FX_USED: ContextVar[set[Hashable] | None] = ContextVar("gpuplan_fx_used", default=None)


@contextmanager
def record_fx_use() -> Iterator[set[Hashable]]:
    """Collect every rate an :class:`pricing.money.Fx` converts with inside the block."""
    seen: set[Hashable] = set()
    token = FX_USED.set(seen)
    try:
        yield seen
    finally:
        FX_USED.reset(token)
