"""Clusters of identical nodes: the inter-node scaling model and how plan chooses a node count.

Fixture networks and calibration points with made-up figures keep these tests about the
logic; the shipped calibration is checked against its sources in docs/performance.md.
"""

from __future__ import annotations

import math
from datetime import date
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pricing.catalog import Layer, parse_instances
from pricing.network import Fabric, NetworkSpec
from planner.perf import cluster
from planner.perf.cluster import CalibrationPoint, comm_seconds, fit_beta, internode, loo_errors
from planner.plan.demand import RefGpuHours
from planner.perf.speed import WorkloadClass
from planner.plan import Constraints, make_plan
from planner.settings import Settings
from tests.fixtures.catalogs import instance_csv, toy_catalog

CLS = WorkloadClass.TRANSFORMER
REF = "V100-SXM2-32GB"


def point(nodes: int, gbps: float, eff: float, params: float = 3.4e8, step: float = 0.3) -> CalibrationPoint:
    return CalibrationPoint(system="test", gpu="V100", gpus_per_node=8, nodes=nodes, network_gbps=gbps,
                            model="bert-large", params=params, workload_class=CLS, scaling_efficiency=eff,
                            step_seconds=step, source="made-up test figure")


POINTS = (point(2, 100, 0.95), point(4, 100, 0.90), point(8, 25, 0.60), point(16, 400, 0.93))


def net(gbps: float | None, fabric: Fabric = Fabric.EFA, name: str = "a1.v100x8") -> NetworkSpec:
    return NetworkSpec(provider="acme", instance_type=name, gbps=gbps, fabric=fabric, source="made-up test figure",
                       as_of=date(2026, 1, 1))


@pytest.fixture(autouse=True)
def fixture_calibration(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cluster, "calibration_points", lambda: POINTS)


def test_comm_follows_the_ring_all_reduce_formula() -> None:
    # 2(N-1)/N x bytes / (Gbps x 1e9 / 8): 4 nodes, 1 GB of gradients, 100 Gbps
    assert comm_seconds(4, 1e9, 100) == pytest.approx(2 * 3 / 4 * 1e9 / 12.5e9)
    assert comm_seconds(1, 1e9, 100) == 0


def test_one_node_is_perfect_and_an_unknown_network_is_said() -> None:
    assert internode(1, None, CLS, grad_bytes=1e9).efficiency == 1.0  # type: ignore[union-attr]
    why = internode(2, net(None), CLS, grad_bytes=1e9)
    assert isinstance(why, str) and "unknown" in why


def test_the_fit_reproduces_its_points_within_their_spread() -> None:
    beta = fit_beta(POINTS)
    assert beta is not None and beta > 0
    errors = [abs(e) for _, _, e in loo_errors(POINTS)]
    assert len(errors) == len(POINTS) and max(errors) < 1.0


@given(st.integers(min_value=1, max_value=63), st.sampled_from([10.0, 25.0, 100.0, 400.0, 3200.0]),
       st.floats(min_value=1e7, max_value=2e12), st.floats(min_value=0.01, max_value=1000))
def test_more_nodes_never_scale_better_and_faster_links_never_worse(n: int, gbps: float, grad: float,
                                                                   step: float) -> None:
    a = internode(n, net(gbps), CLS, grad_bytes=grad, step_seconds=step)
    b = internode(n + 1, net(gbps), CLS, grad_bytes=grad, step_seconds=step)
    c = internode(n + 1, net(gbps * 4), CLS, grad_bytes=grad, step_seconds=step)
    d = internode(n + 1, net(gbps), CLS, grad_bytes=grad, step_seconds=step * 2)
    assert not isinstance(a, str) and not isinstance(b, str) and not isinstance(c, str)
    assert b.efficiency <= a.efficiency
    assert not isinstance(d, str)
    assert c.efficiency >= b.efficiency
    assert d.efficiency >= b.efficiency  # more compute per all-reduce hides it better


def billed_hours(wall: Decimal) -> Decimal:
    return Decimal(math.ceil(wall * 3600)) / 3600


def toy_with_network(gbps: float | None):  # type: ignore[no-untyped-def]
    rows = instance_csv(
        "acme,a1.v100x8,a1,V100-SXM2-32GB,8,64,512,test-east-1,,,USD,16.00,,,,,,,,,made-up test figure,2026-01-01,")
    cat = toy_catalog(rows)
    return cat.__class__(gpus=cat.gpus, instances=parse_instances(rows, origin="toy", layer=Layer.USER),
                         cards=cat.cards, electricity=cat.electricity,
                         networks={("acme", "a1.v100x8"): net(gbps)})


def plan(cat, **c):  # type: ignore[no-untyped-def]
    demand = RefGpuHours(gpu_hours=Decimal(800), ref_gpu=REF, catalog=cat)
    return make_plan(demand, Constraints(providers=frozenset({"acme"}), **c), Settings(), catalog=cat)


def test_without_a_deadline_one_node_wins() -> None:
    (o,) = plan(toy_with_network(400)).options
    assert o.nodes == 1


def test_a_deadline_takes_the_fewest_nodes_that_meet_it_and_says_why() -> None:
    cat = toy_with_network(400)
    one = plan(cat).options[0]
    p = plan(cat, deadline_hours=one.wall_hours / 3)
    (o,) = p.options
    assert o.nodes == 4  # 3 nodes at < 100% scaling cannot do a third of the time; 4 can
    assert o.wall_hours <= one.wall_hours / 3
    assert "deadline needs 4 nodes" in o.notes[0] and "3 would take" in o.notes[0]
    assert any("scaling over 400 Gbps EFA, 80% of line rate achievable across 4 nodes" in n for n in o.notes)
    assert o.cost.amount >= one.cost.amount  # poorer scaling costs more than one node
    assert o.line_items[0].quantity.quantize(Decimal("1e-12")) == (4 * billed_hours(o.wall_hours)).quantize(
        Decimal("1e-12"))
    assert any("8 nodes would finish" in n for n in o.notes)


def test_cost_is_nodes_times_node_cost() -> None:
    cat = toy_with_network(400)
    (o,) = plan(cat, nodes=3).options
    assert o.nodes == 3 and o.gpus_total == 24
    assert "--nodes 3 asked for" in o.notes[0] and "memory" not in o.notes[0]  # it fits one node: pinned, not needed
    # each of the three nodes is billed its wall time, to the second
    exact = Decimal("1e-12")
    assert o.native_cost.amount.quantize(exact) == (Decimal("16.00") * billed_hours(o.wall_hours) * 3).quantize(exact)


def test_a_clusters_bill_counts_node_hours_and_says_so() -> None:
    from planner.plan.make import explain

    p = plan(toy_with_network(400), nodes=3)
    (item,) = p.options[0].line_items
    assert item.unit == "node-hours" and item.description.startswith("3 nodes x")
    assert "node-hours x 16.00" in explain(p.options)  # the Why line said "hours x" for three machines' hours
    (single,) = plan(toy_with_network(400)).options[0].line_items
    assert single.unit == "hours"


def test_pinned_nodes_and_max_nodes_are_obeyed() -> None:
    cat = toy_with_network(400)
    one = plan(cat).options[0]
    with pytest.raises(Exception, match="no option"):
        plan(cat, deadline_hours=one.wall_hours / 10, max_nodes=4)


def test_an_unknown_network_is_not_clustered_and_the_plan_says_so() -> None:
    cat = toy_with_network(None)
    one = plan(cat).options[0]
    with pytest.raises(Exception) as err:
        plan(cat, deadline_hours=one.wall_hours / 3)
    assert "past the deadline" in str(err.value) or "deadline" in str(err.value)
