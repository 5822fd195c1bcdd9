"""Spot at scale: a synchronous job loses more to interruptions the more nodes it has and the rarer its checkpoints."""

from __future__ import annotations

import json
from collections.abc import Callable
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.plan.spot import MAX_FACTOR, spot_factor

Run = Callable[..., tuple[int, str, str]]


def test_one_node_at_the_reference_interval_is_the_stated_overhead_exactly() -> None:
    assert spot_factor(Decimal("0.10"), 1) == Decimal("1.10")
    assert spot_factor(Decimal("0.10"), 1, Decimal(1)) == Decimal("1.10")
    assert spot_factor(Decimal(0), 64, Decimal(8)) == 1


@settings(max_examples=80, deadline=None)
@given(o=st.decimals("0.001", "0.5", places=3), n=st.integers(1, 32), more=st.integers(1, 32),
       tau=st.decimals("0.1", "4", places=2))
def test_more_nodes_or_rarer_checkpoints_never_lose_less(o: Decimal, n: int, more: int, tau: Decimal) -> None:
    assert spot_factor(o, n + more, tau) >= spot_factor(o, n, tau)
    assert spot_factor(o, n, tau * 2) >= spot_factor(o, n, tau)
    assert spot_factor(o, n, tau) <= MAX_FACTOR


@settings(max_examples=40, deadline=None)
@given(o=st.decimals("0.01", "0.3", places=2), n=st.integers(2, 16))
def test_nodes_and_interval_enter_as_one_product(o: Decimal, n: int) -> None:
    """x = n x lam x tau: n nodes checkpointing every hour lose what one node does checkpointing every n hours."""
    assert float(spot_factor(o, n, Decimal(1))) == pytest.approx(float(spot_factor(o, 1, Decimal(n))), rel=1e-9)


def test_small_losses_add_up_node_by_node() -> None:
    """(e^x - 1) / x ~ 1 + x / 2: when interruptions are rare, n nodes lose n times what one loses."""
    one = spot_factor(Decimal("0.001"), 1) - 1
    assert float(spot_factor(Decimal("0.001"), 10) - 1) == pytest.approx(10 * float(one), rel=0.01)


def _spot(gpuplan: Run, *extra: str) -> list[dict]:
    code, out, err = gpuplan("plan", "--model", "llama-2-70b", "--tokens", "2e11", "--billing", "spot", "--provider",
                             "aws", "--json", *extra)
    assert code == 0, err
    return [o for o in json.loads(out)["options"] if o["billing"] == "spot"]


def test_a_multi_node_spot_option_says_what_interruptions_cost_it(gpuplan: Run) -> None:
    o = _spot(gpuplan, "--nodes", "8")[0]
    note = next(n for n in o["notes"] if "interruptions" in n)
    assert note.startswith("SPOT AT SCALE") and "8 node(s)" in note and "x2.32" in note


def test_frequent_checkpoints_shorten_a_spot_run(gpuplan: Run) -> None:
    often = _spot(gpuplan, "--nodes", "4", "--checkpoint-every", "10m")[0]
    rarely = _spot(gpuplan, "--nodes", "4", "--checkpoint-every", "4h")[0]
    assert float(often["wall_hours"]) < float(rarely["wall_hours"])
    assert float(often["cost"]) < float(rarely["cost"])


@pytest.mark.parametrize("days", [2, 5, 10, 20, 40])
def test_the_spot_node_search_finds_what_trying_every_count_finds(days: int) -> None:
    """The count-by-count search stops once the expected time rises; trying every count gives the same answer."""
    from pricing.billing import BillingMode
    from pricing.catalog import Catalog
    from planner.plan.costing import Costing
    from planner.plan.model import Constraints
    from planner.plan.nodes import NodeRuns
    from planner.plan.workload_demand import WorkloadDemand
    from planner.settings import Settings
    from planner.workload.inputs import workload_from_options
    from providers.registry import get_provider

    cat = Catalog.shipped()
    demand = WorkloadDemand(workload_from_options(model="llama-2-7b", tokens=2e11), cat)
    c = Constraints(deadline_hours=Decimal(days * 24))
    offer = next(o for o in get_provider("aws", cat).list_offers() if o.name == "p5.48xlarge")
    factors = Costing(demand, c, Settings(), cat).factors(BillingMode.SPOT)
    runs = NodeRuns(demand, offer, cat.gpus[offer.gpu], c)
    first = runs.smallest_fitting()
    assert isinstance(first, int)
    n, _, _ = runs.for_deadline(first, factors)
    every = [m for m in range(first, runs.hi + 1)
             if not isinstance(r := runs.run(m), str) and r.wall_hours * factors(m) <= c.deadline_hours]
    assert n == (every[0] if every else runs.hi)
