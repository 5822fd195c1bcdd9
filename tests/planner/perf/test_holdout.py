"""Held-out error of the training physics per regime (docs/performance.md, planner/perf/holdout.py)."""

from __future__ import annotations

import statistics

from planner.perf import holdout
from tests.planner.perf.test_sharded_runs import CAT

POINTS = holdout.all_points(CAT)


def _errors(regime: str) -> list[float]:
    return [p.error for p in POINTS if p.regime == regime]


def test_every_point_is_sourced_and_every_regime_with_data_is_there() -> None:
    assert all(p.source and p.measured > 0 and p.predicted > 0 for p in POINTS)
    assert {"one node, NVLink", "NVSwitch clusters, RDMA", "RDMA, traffic exposed", "data-parallel clusters (beta)",
            "mixtures of experts (GPU-hours)", "TCP Ethernet"} <= {p.regime for p in POINTS}


def test_where_traffic_hides_the_physics_stays_within_8_percent() -> None:
    errs = _errors("NVSwitch clusters, RDMA") + _errors("one node, NVLink")
    assert statistics.median(abs(e) for e in errs) <= 0.03 and max(abs(e) for e in errs) <= 0.08


def test_where_traffic_is_exposed_the_two_flop_readings_bracket_the_measurements() -> None:
    """The ZeRO++ figures do not say whether they count 6N or 8N FLOPs a token; the link physics (RDMA at 85% of line
    rate, 2/3 hidden, 7.5% overlap slowdown) is pessimistic under the first reading and optimistic under the second."""
    six, eight = _errors("RDMA, traffic exposed"), _errors("RDMA, traffic exposed (read as 8N)")
    assert statistics.median(six) < 0 < statistics.median(eight)
    assert max(abs(e) for e in six + eight) <= 0.31


def test_mixtures_of_experts_leave_one_out_within_1_5x() -> None:
    # issue 41's bar (1.5x). Was 1.25x while the share was fitted as dense; refitted on the layout-aware predictions
    # (expert parallelism's all-to-all charged once) Llama 4 Scout's leave-one-out comes out at 0.74x (1.36x under)
    for p in POINTS:
        if p.regime.startswith("mixtures"):
            assert 1 / 1.5 <= p.predicted / p.measured <= 1.5, p.name
