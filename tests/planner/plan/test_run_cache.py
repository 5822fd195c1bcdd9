"""Runs shared between offers of one shape must give exactly the plan computed offer by offer."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pricing.catalog import Catalog, GpuSpec
from pricing.errors import NoOptionError
from providers.base import Offer
from planner.plan.demand import Demand, RefGpuHours, Run
from planner.settings import Settings
from planner.plan.workload_demand import WorkloadDemand
from planner.perf.speed import WorkloadClass
from planner.plan import Constraints, Plan, make_plan
from planner.workload.spec import TrainingWorkload, TransformerArch

SHIPPED = Catalog.shipped()
REF = "V100-SXM2-32GB"


class OfferByOffer:
    """The same demand without ``runs_by_shape``: the planner asks it for every offer."""

    def __init__(self, inner: Demand) -> None:
        self.inner = inner
        self.calls = 0

    def run(self, offer: Offer, spec: GpuSpec, nodes: int = 1) -> Run | str:
        self.calls += 1
        return self.inner.run(offer, spec, nodes)

    def assumptions(self) -> dict[str, Any]:
        return self.inner.assumptions()


class Counting(OfferByOffer):
    runs_by_shape = True


def _same(a: Plan, b: Plan) -> None:
    assert (a.currency, a.assumptions, a.explanation) == (b.currency, b.assumptions, b.explanation)
    assert list(a.options) == list(b.options)  # every field of every option, line items and notes included
    assert list(a.excluded) == list(b.excluded)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hours=st.decimals(min_value=Decimal(1), max_value=Decimal(200000), places=1),
       cls=st.sampled_from(list(WorkloadClass)),
       deadline=st.sampled_from([None, Decimal(2), Decimal(24), Decimal(300)]))
def test_gpu_hours_plans_are_the_same_with_shared_runs(hours: Decimal, cls: WorkloadClass,
                                                        deadline: Decimal | None) -> None:
    d = RefGpuHours(gpu_hours=hours, ref_gpu=REF, catalog=SHIPPED, workload_class=cls)
    c = Constraints(deadline_hours=deadline)
    try:
        shared = make_plan(d, c, Settings(), catalog=SHIPPED)
    except NoOptionError as exc:  # an impossible deadline must fail the same way offer by offer
        try:
            make_plan(OfferByOffer(d), c, Settings(), catalog=SHIPPED)
        except NoOptionError as again:
            assert str(again) == str(exc)
            return
        raise
    _same(shared, make_plan(OfferByOffer(d), c, Settings(), catalog=SHIPPED))


def test_a_model_needing_several_nodes_plans_the_same_with_shared_runs() -> None:
    d = WorkloadDemand(TrainingWorkload(arch=TransformerArch(params=70e9), tokens=2e10), SHIPPED)
    c = Constraints(deadline_hours=Decimal(240))
    shared = make_plan(d, c, Settings(), catalog=SHIPPED)
    assert any(o.nodes > 1 for o in shared.options)  # the case the network key is for
    _same(shared, make_plan(OfferByOffer(d), c, Settings(), catalog=SHIPPED))


def test_offers_of_one_shape_are_run_once() -> None:
    d = Counting(RefGpuHours(gpu_hours=Decimal(200), ref_gpu=REF, catalog=SHIPPED))
    p = make_plan(d, Constraints(nodes=1), Settings(), catalog=SHIPPED)
    offers = {(o.provider, o.offer, o.region) for o in p.options}
    shapes = {(o.gpu, o.gpu_count) for o in p.options}
    assert d.calls < len(offers)
    assert d.calls >= len(shapes)
