"""Per-micro-batch communication: bytes by strategy, seconds on a link, and how much compute hides them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from planner.perf import comm

S = 2 * 7e9  # bf16 gradients of a 7B model: 14 GB


def test_bytes_per_strategy_follow_the_ring_formulas() -> None:
    # 4 GPUs: each moves (n-1)/n = 3/4 of S per collective
    assert comm.traffic("ddp", S, 4) == pytest.approx((0.0, 2 * 14e9 * 0.75))
    assert comm.traffic("zero1", S, 4) == pytest.approx((0.0, 21e9))
    # ZeRO-2: the gradient reduce-scatter every micro-batch, the updated parameters' all-gather once a step
    assert comm.traffic("zero2", S, 4) == pytest.approx((10.5e9, 10.5e9))
    assert comm.traffic("zero3", S, 4) == pytest.approx((31.5e9, 0.0))
    assert comm.traffic("zero3", S, 1) == (0.0, 0.0)


def test_seconds_on_pcie_gen4_for_four_l40s() -> None:
    # ZeRO-2 on 4 GPUs moves 10.5 GB per micro-batch and 10.5 GB more per step; 24 GB/s of bus bandwidth takes
    # 0.4375 s for each
    mb, step = comm.comm_seconds("zero2", S, 4, 24.0)
    assert mb == pytest.approx(10.5 / 24)
    assert step == pytest.approx(10.5 / 24)


def test_overlap_hides_up_to_two_thirds_of_compute() -> None:
    # 0.43 s compute hides 0.2867 s; 0.4375 s of traffic leaves 0.1508 s exposed
    eff = comm.efficiency(0.43, 0.4375)
    assert eff == pytest.approx(0.43 / (0.43 + 0.4375 - 0.43 * 2 / 3))
    assert 0.74 < eff < 0.78
    assert comm.efficiency(0.43, 0.2) == 1.0  # fully hidden


def test_per_step_all_reduce_overlaps_only_the_last_micro_batch() -> None:
    # 10 micro-batches of 1 s; a 5 s all-reduce: 5 - 2/3 exposed once per step
    assert comm.efficiency(1.0, 0.0, 5.0, 10) == pytest.approx(10 / (10 + 5 - 2 / 3))


def test_needed_bandwidth_reaches_one_third_efficiency() -> None:
    # ZeRO-3 across 3 nodes: 3 x 14 GB x 2/3 = 28 GB per micro-batch, 0.43 s of compute
    need = comm.needed_gbytes_s(0.43, 28e9)
    assert need == pytest.approx(28 / (0.43 * 2 + 0.43 * 2 / 3))
    assert comm.efficiency(0.43, 28e9 / (need * 1e9)) == pytest.approx(1 / 3)


def test_link_rows_carry_sources_and_estimates() -> None:
    l40s = comm.intra_link("L40S", "pcie")
    assert l40s is not None and l40s.estimate and l40s.bus_gbytes_s == pytest.approx(32 * 0.75)
    h100 = comm.intra_link("H100-SXM5-80GB", "nvlink")
    # the datasheet's 900 GB/s is both directions; a collective is counted per direction, as PCIe's 32 is
    assert h100 is not None and h100.bus_gbytes_s == pytest.approx(900 / 2 * 0.75) and h100.source
    assert comm.intra_link("no-such-gpu", "pcie") is None


@given(st.floats(0.01, 100), st.floats(0, 100), st.floats(0, 100), st.floats(1, 1000))
def test_efficiency_is_a_fraction_and_falls_with_traffic(compute: float, mb: float, step: float, k: float) -> None:
    eff = comm.efficiency(compute, mb, step, k)
    assert 0 < eff <= 1
    assert comm.efficiency(compute, mb * 2 + 0.1, step, k) <= eff
