"""Time model: FLOPs, MFU defaults, goodput overhead, image throughput, and the accuracy table."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.workload.estimate import default_mfu, estimate_images, estimate_training, goodput_overhead, peak_tflops
from planner.workload.accuracy import accuracy_rows, accuracy_summary
from planner.workload.spec import ImageWorkload, Precision, Recompute, TrainingWorkload, TransformerArch
from pricing.catalog import Catalog
from pricing.errors import InputError

CAT = Catalog.shipped()


def tw(params: float = 7e9, tokens: float = 2e12, **kw: object) -> TrainingWorkload:
    return TrainingWorkload(arch=TransformerArch(params=params), tokens=tokens, **kw)  # type: ignore[arg-type]


def test_six_nd_over_peak_times_mfu() -> None:
    e = estimate_training(tw(mfu=0.5, overhead=0.0), CAT.gpu("a100-80gb"), 1024, catalog=CAT)
    assert e.flops == pytest.approx(6 * 7e9 * 2e12)
    assert e.gpu_hours == pytest.approx(6 * 7e9 * 2e12 / (312e12 * 0.5 * 3600))
    assert e.wall_hours == pytest.approx(e.gpu_hours / 1024)


def test_full_recompute_costs_a_third_more() -> None:
    spec = CAT.gpu("h100")
    base = estimate_training(tw(mfu=0.4, overhead=0.0), spec, 8, recompute=Recompute.NONE, catalog=CAT)
    full = estimate_training(tw(mfu=0.4, overhead=0.0), spec, 8, recompute=Recompute.FULL, catalog=CAT)
    assert full.gpu_hours == pytest.approx(base.gpu_hours * 8 / 6)


def test_a100_is_not_a_v100() -> None:
    a = estimate_training(tw(), CAT.gpu("a100-80gb"), 8, catalog=CAT)
    v = estimate_training(tw(), CAT.gpu("v100"), 8, catalog=CAT)
    assert v.gpu_hours > 2 * a.gpu_hours


def test_fp8_needs_hopper_or_ada_and_tf32_is_half() -> None:
    with pytest.raises(InputError):
        peak_tflops(CAT.gpu("a100"), Precision.FP8)
    assert peak_tflops(CAT.gpu("h100"), Precision.FP8)[0] == pytest.approx(2 * 989)
    assert peak_tflops(CAT.gpu("a100"), Precision.FP32)[0] == pytest.approx(156)


def test_mfu_defaults_are_sourced_medians() -> None:
    node, basis = default_mfu(CAT.gpu("a100-80gb"), 8, Precision.BF16, CAT)
    cluster, _ = default_mfu(CAT.gpu("a100-80gb"), 2048, Precision.BF16, CAT)
    assert 0.3 < cluster < node < 0.8 and "Ampere" in basis
    ada, own = default_mfu(CAT.gpu("rtx 4090"), 1, Precision.BF16, CAT)  # the L40S runs of data/mfu.csv
    assert "Ada Lovelace anchors" in own and 0.4 < ada < 0.55
    _, fallback = default_mfu(CAT.gpu("t4"), 1, Precision.BF16, CAT)
    assert "none for Turing" in fallback


def test_goodput_overhead_derived_from_llama31() -> None:
    overhead, basis = goodput_overhead(CAT)
    assert 0.1 < overhead < 0.3 and "Llama 3.1 405B" in basis


def test_resnet50_uses_measured_throughput() -> None:
    w = ImageWorkload(model="resnet50", images=1281167, epochs=90, precision=Precision.BF16, overhead=0.0)
    e = estimate_images(w, CAT.gpu("V100-16GB"), 1, catalog=CAT)
    assert e.assumptions["images_per_sec_per_gpu"] == 833  # Lambda PyTorch v1/v2, V100 16GB, fp16
    assert e.assumptions["throughput_source"].startswith("measured")
    assert e.gpu_hours == pytest.approx(1281167 * 90 / 833 / 3600)
    assert e.flops == pytest.approx(3 * 2 * 4.09e9 * 1281167 * 90)


def test_image_estimate_for_unmeasured_gpu_says_so() -> None:
    w = ImageWorkload(model="resnet152", images=1e6, precision=Precision.BF16)
    e = estimate_images(w, CAT.gpu("h100"), 1, catalog=CAT)
    assert "relative CNN speed" in e.assumptions["throughput_source"] and e.notes


@settings(max_examples=40, deadline=None)
@given(tokens=st.floats(1e6, 1e13), more=st.floats(0, 1e13), gpus=st.integers(1, 4096))
def test_more_tokens_never_lower_gpu_hours(tokens: float, more: float, gpus: int) -> None:
    spec = CAT.gpu("a100-80gb")
    assert estimate_training(tw(tokens=tokens + more), spec, gpus, catalog=CAT).gpu_hours >= estimate_training(
        tw(tokens=tokens), spec, gpus, catalog=CAT).gpu_hours


def test_accuracy_table_size_and_most_runs_within_2x() -> None:
    """Recomputed from the shipped data: at least 35 runs, and nine in ten point estimates within 2x."""
    rows = [r for r in accuracy_rows(CAT) if r.included and r.error is not None]
    assert len(rows) >= 35
    within = [r for r in rows if max(1 + r.error, 1 / (1 + r.error)) <= 2.0]  # type: ignore[operator]
    assert len(within) >= 0.9 * len(rows)


@pytest.mark.xfail(strict=True, reason="phi-1.5 (32 A100 x 8 days, model card) spends 3.0x the point estimate "
                                       "(docs/accuracy.md); the calibrated range is the answer to such runs")
def test_accuracy_table_meets_worst_case_target() -> None:
    assert accuracy_summary(accuracy_rows(CAT))["worst_ratio"] <= 2.0


def test_published_runs_include_an_moe_run_and_gpu_days_runs() -> None:
    rows = {r.run: r for r in accuracy_rows(CAT)}
    ds = rows["deepseek-v3"]
    assert ds.included and ds.gpu == "H800-SXM-80GB" and ds.published_gpu_hours == 2_664_000 and ds.basis == "stated"
    assert sum(r.basis == "gpu_count_x_days" and r.included for r in rows.values()) >= 10
    assert sum(r.basis == "stated" and r.included for r in rows.values()) >= 10


def test_accuracy_table_meets_median_target() -> None:
    assert accuracy_summary(accuracy_rows(CAT))["median_abs_error"] <= 0.20


def test_each_moe_run_is_predicted_with_a_factor_from_the_others_only() -> None:
    """The MoE utilisation share is derived from published MoE runs; a run's own hours never feed its prediction."""
    import math

    from planner.plan.moe_share import moe_run_gpu_hours, moe_utilization
    from planner.workload.estimate import published_runs, run_workload

    rows = {r.run: r for r in accuracy_rows(CAT)}
    moe = ["deepseek-v2", "deepseek-v3", "llama-4-scout", "llama-4-maverick"]
    dense = {}
    for r in published_runs():  # the as-dense prediction: the layout-aware path with no MoE share (issue 41)
        if r["run"] in moe:
            w, n = run_workload(r)
            dense[r["run"]] = moe_run_gpu_hours(w, CAT.gpus[r["gpu_key"]], n, CAT, 1.0)
    for run in moe:
        others = [o for o in moe if o != run]
        expected = math.exp(sum(math.log(dense[o] / rows[o].published_gpu_hours) for o in others) / len(others))
        assert moe_utilization(CAT, leave_out=run)[0] == pytest.approx(expected, rel=1e-9)
        # issue 41's bar: within 1.5x with the others' share (Scout is the farthest, 0.74x)
        assert 1 / 1.5 <= 1 + (rows[run].error or 0) <= 1.5
    full, why = moe_utilization(CAT)
    # refitted once expert parallelism and its all-to-all are in the layout: ~0.93, no longer the as-dense 0.68
    assert 0.8 < full < 1.0 and "4 published MoE runs" in why


def test_deepseek_v2_lands_inside_the_range_the_other_runs_give_it() -> None:
    """Predicted as if dense it was 41% under its published 172.8K H800-hours per trillion tokens; with the other
    MoE runs' share it falls inside the leave-one-out range of the transformer runs."""
    from planner.workload.ranges import leave_one_out

    rows, _ = leave_one_out(CAT)
    (v2,) = [r for r in rows if r.run == "deepseek-v2"]
    assert v2.inside and v2.low < v2.ratio < v2.high


def test_every_exclusion_is_explained() -> None:
    for r in accuracy_rows(CAT):
        assert r.included or r.reason, r.run
