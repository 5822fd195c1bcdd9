"""How many identical nodes an offer needs for a job: fit in memory first, then the deadline."""

from __future__ import annotations

from collections.abc import Callable
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from pricing.billing import BillingMode
from pricing.catalog import LOCAL, GpuSpec
from pricing.money import Money, money_text
from providers.base import Offer, Provider
from planner.plan.demand import Demand, Run
from planner.plan.model import Constraints

def shape_key(offer: Offer, spec: GpuSpec, nodes: int) -> tuple[Any, ...]:
    """Everything a ``runs_by_shape`` demand reads from an offer: two offers with one key run alike.

    The GPU, its count and interconnect on one node; across nodes also the instance type's
    network (looked up by provider and type), so only multi-node runs are keyed on the type.
    """
    network = (offer.provider, offer.name.lower()) if nodes > 1 else None
    return spec.key, offer.gpu_count, offer.interconnect, nodes, network


class NodeRuns:
    """Run times of one offer on 1 .. max_nodes identical nodes, computed lazily and cached.

    More nodes usually cost more (every billing mode charges node-time, and scaling across
    nodes is below 100%), so the search starts from the smallest count that fits the memory and
    meets the deadline, found by bisection (fit and speed only improve with nodes). A few larger
    counts are then tried: more GPUs can allow a layout with less sharding (ZeRO-1 where the
    fewest nodes need ZeRO-3), whose traffic hides, so fewer node-hours; the cheapest is kept.
    """

    def __init__(self, demand: Demand, offer: Offer, spec: GpuSpec, c: Constraints,
                 shared: dict[tuple[Any, ...], Run | str] | None = None) -> None:
        self.demand, self.offer, self.spec = demand, offer, spec
        # Runs shared between offers of one shape (see shape_key), for demands that declare
        # ``runs_by_shape``: a large catalog has hundreds of shapes for tens of thousands of offers.
        self.shared = shared
        cloud = offer.provider != LOCAL and offer.gpu_count >= 1
        most = c.max_nodes if cloud else 1
        if c.max_gpus is not None:
            most = max(1, min(most, int(c.max_gpus // max(offer.gpu_count, 1))))
        self.c_nodes = c.nodes if cloud else None  # pinned by the user (--nodes), not chosen for memory
        self.lo = self.hi = c.nodes if (c.nodes is not None and cloud) else 1
        if c.nodes is None:
            self.hi = most
        self.deadline = c.deadline_hours
        self._runs: dict[int, Run | str] = {}

    def run(self, n: int) -> Run | str:
        if n not in self._runs:
            key = shape_key(self.offer, self.spec, n) if self.shared is not None else None
            if key is not None and self.shared is not None and key in self.shared:
                self._runs[n] = self.shared[key]
                return self._runs[n]
            self._runs[n] = self.demand.run(self.offer, self.spec, n) if n > 1 else self.demand.run(self.offer,
                                                                                                   self.spec)
            if key is not None and self.shared is not None:
                self.shared[key] = self._runs[n]
        return self._runs[n]

    def _smallest(self, lo: int, ok: Callable[[Run | str], bool]) -> int | None:
        if ok(self.run(lo)):
            return lo
        if lo >= self.hi or not ok(self.run(self.hi)):
            return None
        bad, good = lo, self.hi
        while good - bad > 1:
            mid = (bad + good) // 2
            bad, good = (bad, mid) if ok(self.run(mid)) else (mid, good)
        return good

    def smallest_fitting(self) -> int | str:
        n = self._smallest(self.lo, lambda r: not isinstance(r, str))
        if n is None:
            why = self.run(self.hi)
            assert isinstance(why, str)
            return why if self.hi == 1 else f"{why} (also on {self.hi} nodes)"
        return n

    def for_deadline(self, first: int, factor: Callable[[int], Decimal]) -> tuple[int, Run | str, str]:
        """(nodes, run, why that many) for one billing mode: the fewest that meet the deadline, else ``first``.

        ``factor`` is the mode's run-time factor by node count (1 but on spot, where it grows with nodes: then
        the wall time is not monotone in the node count and every count is tried, not bisected)."""
        pinned = self.c_nodes is not None
        why = ("" if first <= 1 else f"--nodes {first} asked for" if pinned else f"memory needs {first} nodes")
        search = not pinned and getattr(self.demand, "layouts_vary_with_nodes", False)
        if self.deadline is None:
            cheaper = self._cheaper_beyond(first, factor, lambda m: True) if search else None
            if cheaper is None:
                return first, self.run(first), why
            m, saving = cheaper
            return m, self.run(m), (f"{m} nodes take {saving:.0%} fewer node-hours than the fewest that fit ({first}); "
                                    "more GPUs leave room for a layout with less traffic")
        deadline = self.deadline

        def ok_at(n: int) -> bool:
            r = self.run(n)
            return not isinstance(r, str) and r.wall_hours * factor(n) <= deadline

        if factor(self.hi) == factor(first):  # one factor for every count: bisect
            n = self._smallest(first, lambda r: not isinstance(r, str) and r.wall_hours * factor(first) <= deadline)
        else:
            n = self._smallest_scanning(first, factor, ok_at)
        if n is None:
            return self.hi, self.run(self.hi), why  # too slow even on the most nodes: the deadline check says so
        if n > first:
            before = self.run(n - 1)
            took = (f" ({n - 1} would take {before.wall_hours * factor(n - 1):,.0f} h)"
                    if not isinstance(before, str) else "")
            why = f"the {deadline:g} h deadline needs {n} nodes{took}"
        if search and (cheaper := self._cheaper_beyond(n, factor, ok_at)) is not None:
            m, saving = cheaper
            return m, self.run(m), (f"{m} nodes take {saving:.0%} fewer node-hours than the fewest that "
                                    f"{'meet the deadline' if n > first else 'fit'} ({n}): {why or 'memory'}; "
                                    "more GPUs leave room for a layout with less traffic")
        return n, self.run(n), why

    def _cheaper_beyond(self, n: int, factor: Callable[[int], Decimal], ok_at: Callable[[int], bool]
                        ) -> tuple[int, float] | None:
        """A larger count with fewer node-hours than ``n`` (as billed by time: more GPUs can allow less sharding,
        whose better scaling pays for the extra nodes), and its saving; None if none of a few larger counts is."""
        base = self.run(n)
        if isinstance(base, str):
            return None
        best, best_cost = n, base.wall_hours * factor(n) * n
        tries = sorted({*range(n + 1, n + 6), *(int(n * 1.25 ** i) for i in range(1, 5))})
        for m in (t for t in tries if n < t <= min(self.hi, 2 * n + 4)):
            r = self.run(m)
            if isinstance(r, str) or not ok_at(m):
                continue
            cost = r.wall_hours * factor(m) * m
            if cost < best_cost * Decimal("0.99"):  # 1% or more: not a rounding difference
                best, best_cost = m, cost
        if best == n:
            return None
        return best, float(1 - best_cost / (base.wall_hours * factor(n) * n))

    def _smallest_scanning(self, first: int, factor: Callable[[int], Decimal], ok_at: Callable[[int], bool]
                           ) -> int | None:
        """The fewest nodes from ``first`` that meet the deadline when the factor grows with nodes. log(run time) falls
        about as -log n and log(factor) rises convexly, so the expected time falls to one low point and then
        rises: once it rises, no larger count can meet a deadline the smaller ones missed."""
        last: Decimal | None = None
        for m in range(first, self.hi + 1):
            if ok_at(m):
                return m
            r = self.run(m)
            if isinstance(r, str):
                continue
            t = r.wall_hours * factor(m)
            if last is not None and t > last:
                return None
            last = t
        return None

    def bigger_note(self, n: int, mode: BillingMode, factors: Callable[[int], Decimal], provider: Provider,
                    hours_per_month: Decimal, cost: Money) -> str | None:
        """Why a cluster twice the size lost: poorer scaling makes the same work cost more."""
        m = min(2 * n, self.hi)
        r = self.run(m) if m > n else None
        if r is None or isinstance(r, str):
            return None
        factor = factors(m)
        q = provider.quote(self.offer, mode, r.wall_hours * factor, hours_per_month=hours_per_month)
        other = q.cost * m
        if cost.amount <= 0:
            return None
        shown = money_text(other.amount, other.currency, rounding=ROUND_HALF_EVEN)  # as this note always rounded
        return (f"{m} nodes would finish in {r.wall_hours * factor:,.0f} h but cost {shown} "
                f"({other.amount / cost.amount - 1:+.0%}): scaling falls as nodes are added")
