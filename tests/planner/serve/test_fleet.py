"""Invariants of serving plans over the shipped catalog."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplan.cli.options import catalog_from, settings_from
from planner.plan.model import Constraints
from planner.serve.fleet import serve_plan
from planner.serve.inputs import serve_workload_from_options

S = settings_from()
CAT = catalog_from(S)


def cheapest(rate: float, hours: float = 24, model: str = "llama-3-8b") -> dict[tuple[str, str, str], float]:
    w = serve_workload_from_options(model, rate=repr(rate), hours_per_day=hours, prompt_tokens=800, output_tokens=200)
    p = serve_plan(w, Constraints(), S, catalog=CAT)
    return {(o.provider, o.offer, str(o.billing)): float(o.cost_per_month.amount) for o in p.options}


@settings(max_examples=15, deadline=None)
@given(rate=st.floats(0.1, 50), more=st.floats(0.01, 50))
def test_more_load_never_costs_less_on_any_fleet(rate: float, more: float) -> None:
    low, high = cheapest(rate), cheapest(rate + more)
    for key, cost in high.items():
        if key in low:
            assert cost >= low[key] - 1e-6
    assert min(high.values()) >= min(low.values()) - 1e-6


@settings(max_examples=10, deadline=None)
@given(hours=st.floats(1, 23), more=st.floats(0.5, 23))
def test_more_hours_a_day_never_cost_less(hours: float, more: float) -> None:
    a, b = cheapest(5, hours), cheapest(5, min(24.0, hours + more))
    for key, cost in b.items():
        assert cost >= a[key] - 1e-6
