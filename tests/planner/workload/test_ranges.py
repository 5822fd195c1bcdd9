"""Calibrated low/expected/high ranges: how they are made, how well they cover, and where they show."""

from __future__ import annotations

import json
import math
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.workload.accuracy import accuracy_rows
from planner.workload.ranges import HIGH_PERCENTILE, LOW_PERCENTILE, leave_one_out, spread, spread_from
from pricing.catalog import Catalog

CAT = Catalog.shipped()


def test_range_is_the_p10_p90_of_published_over_predicted() -> None:
    rows = [r for r in accuracy_rows(CAT) if r.included and r.kind == "transformer" and r.error is not None]
    ratios = sorted(1 / (1 + r.error) for r in rows)  # type: ignore[operator]
    s = spread(CAT, "transformer")
    assert s.runs == len(ratios) >= 25
    assert (LOW_PERCENTILE, HIGH_PERCENTILE) == (10, 90)
    # about a tenth of the runs fall below the low end and a tenth above the high end
    below = sum(r < s.low for r in ratios)
    above = sum(r > s.high for r in ratios)
    assert below <= math.ceil(0.1 * len(ratios)) and above <= math.ceil(0.1 * len(ratios))
    assert s.low <= statistics.median(ratios) <= s.high


@settings(max_examples=100, deadline=None)
@given(ratios=st.lists(st.floats(0.1, 10), min_size=1, max_size=60))
def test_range_always_contains_the_expected_value(ratios: list[float]) -> None:
    s = spread_from(ratios, "transformer")
    assert 0 < s.low <= 1 <= s.high
    r = s.of(100.0)
    assert r["low"] <= r["expected"] == 100.0 <= r["high"]


def test_leave_one_out_coverage_is_near_the_nominal_80_percent() -> None:
    """Each run's range from the others only: the share inside should be the 80% the percentiles promise,
    within two binomial standard errors for this many runs."""
    rows, summaries = leave_one_out(CAT)
    overall = next(s for s in summaries if s.workload_class == "all")
    assert overall.runs == len(rows) >= 35
    nominal = (HIGH_PERCENTILE - LOW_PERCENTILE) / 100
    assert abs(overall.share_inside - nominal) <= 2 * math.sqrt(nominal * (1 - nominal) / overall.runs)
    # a run's range comes from the other runs of its class only, never from itself
    for r in rows[:3]:
        others = [x.ratio for x in rows if x.workload_class == r.workload_class and x is not r]
        s = spread_from(others, r.workload_class)
        assert (r.low, r.high) == (s.low, s.high)


def test_estimate_json_gives_low_expected_high(gpuplan) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = gpuplan("estimate", "--params", "7e9", "--tokens", "2e12", "--gpu", "A100-80GB", "--gpus", "2048",
                           "--json")
    assert code == 0
    d = json.loads(out)
    s = spread(CAT, "transformer")
    for key in ("gpu_hours", "wall_hours", "wall_days"):
        v = d[key]
        assert set(v) == {"low", "expected", "high"} and v["low"] <= v["expected"] <= v["high"]
        assert v["low"] == pytest.approx(v["expected"] * s.low, rel=1e-3)
        assert v["high"] == pytest.approx(v["expected"] * s.high, rel=1e-3)
    assert "P10-P90" in d["range_basis"]


def test_plan_with_a_model_carries_ranges_and_ranks_on_expected(gpuplan) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = gpuplan("plan", "--model", "llama-2-7b", "--tokens", "2e9", "--json", "--provider", "aws")
    assert code == 0
    d = json.loads(out)
    costs = [float(o["cost"]) for o in d["options"]]
    assert costs == sorted(costs)
    for o in d["options"]:
        r = o["range"]
        assert r["cost"]["expected"] == o["cost"] and r["gpu_hours"]["expected"] == pytest.approx(o["gpu_hours"])
        assert float(r["cost"]["low"]) <= float(o["cost"]) <= float(r["cost"]["high"])
        assert r["wall_hours"]["low"] <= o["wall_hours"] <= r["wall_hours"]["high"]
    assert d["assumptions"]["estimate_range"]["high"] > 1
    code, out, _ = gpuplan("plan", "--gpu-hours", "50", "--json", "--provider", "aws")
    assert code == 0 and all(o["range"] is None for o in json.loads(out)["options"])


def test_plan_table_says_values_are_expected(gpuplan) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = gpuplan("plan", "--model", "llama-2-7b", "--tokens", "2e9", "--provider", "aws", "--limit", "3")
    assert code == 0 and "expected values" in out and "calibrated range" in out


def test_a_gpu_whose_architecture_has_no_utilisation_anchor_gets_a_wider_labelled_range(gpuplan) -> None:  # type: ignore[no-untyped-def]
    """A T4 is given the median utilisation of other generations' runs: its range widens by how far those
    runs spread, and says so; an A100's does not, nor an L40S's (Ada has anchors), nor a run whose --mfu the
    user gave."""
    import statistics

    from planner.workload.estimate import mfu_anchors

    def est(gpu: str, *more: str) -> dict:
        code, out, err = gpuplan("estimate", "--model", "llama-2-7b", "--tokens", "1e9", "--gpu", gpu, "--gpus", "8",
                                 *more, "--json")
        assert code == 0, err
        return json.loads(out)

    s = spread(CAT, "transformer")
    a100, t4, given, l40s = est("A100-80GB"), est("T4"), est("T4", "--mfu", "0.3"), est("L40S")
    assert a100["gpu_hours"]["high"] == pytest.approx(a100["gpu_hours"]["expected"] * s.high, rel=1e-3)
    assert "no Turing anchor" in t4["range_basis"] and "widened" not in a100["range_basis"]
    assert "widened" not in given["range_basis"] and "widened" not in l40s["range_basis"]
    utils = sorted(u for a in mfu_anchors() if a.gpu_key and not a.fp8 and (a.gpu_count or 10**6) <= 64
                   and (u := a.utilization(CAT)) is not None)
    deciles = statistics.quantiles(utils, n=10, method="inclusive")
    high = t4["gpu_hours"]["high"] / t4["gpu_hours"]["expected"]
    assert high == pytest.approx(s.high * statistics.median(utils) / deciles[0], rel=1e-3)
    assert t4["gpu_hours"]["low"] / t4["gpu_hours"]["expected"] < s.low
    code, out, _ = gpuplan("plan", "--params", "1.3e9", "--tokens", "2e9", "--json", "--provider", "aws")
    options = json.loads(out)["options"]
    by_gpu = {o["gpu"]: o["range"]["cost"] for o in options if o["range"] and o["nodes"] == 1}
    width = {g: float(r["high"]) / float(r["expected"]) for g, r in by_gpu.items()}
    assert width["T4"] > width["A100-SXM4-40GB"] + 0.3
    assert width["L40S"] == pytest.approx(width["A100-SXM4-40GB"], abs=0.05)
