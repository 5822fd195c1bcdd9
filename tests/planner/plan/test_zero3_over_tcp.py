"""ZeRO-3 over a 25 Gbps TCP network between 8-GPU nodes, checked by hand (docs/performance.md, "ZeRO-3 over slow
Ethernet, by hand"): what it claims comes from the micro-batch, not from missing bytes."""

from __future__ import annotations

import pytest

from planner.perf import links
from planner.plan.layout_choice import choose
from planner.workload.inputs import arch_for
from planner.workload.memory import layout
from planner.workload.spec import Sharding, TrainingWorkload

V100_16 = 16.0  # usable GB of a V100 SXM2 16GB (the label's figure)
RATE = 125e12 * 0.39  # V100 dense fp16 peak x a utilisation near its anchors', FLOP/s delivered
N = 6_738_415_616  # Llama 2 7B parameters as the preset counts them


def _w(**kw: object) -> TrainingWorkload:
    return TrainingWorkload(arch=arch_for("llama-2-7b", None), tokens=2e10, sharding=Sharding.ZERO3,
                            **kw)  # type: ignore[arg-type]


def _p3_16xlarge_x4(w: TrainingWorkload):  # type: ignore[no-untyped-def]
    link = links.collective_link("V100-SXM2-16GB", "nvlink", 8)
    assert link is not None
    s = choose(w, layout(w, V100_16, 32), V100_16, 8, 4, link, 25.0, RATE, "ethernet")
    assert not isinstance(s, str), s
    return s


def test_bytes_and_seconds_by_hand() -> None:
    s = _p3_16xlarge_x4(_w())
    # each micro-batch: all-gather (forward), all-gather (backward), reduce-scatter (gradients) of 2 B x N, each
    # moving 31/32 of it per GPU in a ring of 32; the ring crosses each node's NIC once per byte, so the NIC carries
    # one GPU's 3 x 13.48 GB x 31/32 = 39.2 GB at 25 Gbps x 0.60 / 8 = 1.875 GB/s: 20.9 s
    traffic = 3 * 2 * N * 31 / 32 / (25e9 * 0.60 / 8)
    assert traffic == pytest.approx(20.89, abs=0.01)
    assert s.comm_s_per_microbatch == pytest.approx(traffic, rel=1e-6)
    mb = s.micro_batch
    compute = 8 * N * mb * 2048 / RATE  # full recompute: 8 N per token
    assert s.compute_s_per_microbatch == pytest.approx(compute, rel=1e-6)
    # 1/3 of compute hides TCP traffic, compute runs 7.5% slower while it does, the rest waits
    hidden = compute / 3
    by_hand = compute / (compute + traffic - hidden + 0.075 * hidden)
    assert s.inter_node == pytest.approx(by_hand, rel=1e-4)
    # the chosen micro-batch (the largest that fits, here 5: 11.3 s of compute) is what lifts it above 35%
    assert (mb, round(s.inter_node, 2)) == (5, 0.39)


def test_at_micro_batch_1_the_same_layout_keeps_a_tenth_and_is_excluded() -> None:
    compute = 8 * N * 2048 / RATE  # 2.26 s against the same 20.9 s of traffic
    traffic = 3 * 2 * N * 31 / 32 / (25e9 * 0.60 / 8)
    kept = compute / (compute + traffic - compute / 3 * (1 - 0.075))
    assert kept == pytest.approx(0.10, abs=0.005)
    link = links.collective_link("V100-SXM2-16GB", "nvlink", 8)
    assert link is not None
    w = _w(micro_batch=1)
    why = choose(w, layout(w, V100_16, 32), V100_16, 8, 4, link, 25.0, RATE, "ethernet")
    assert isinstance(why, str) and "needs >= " in why  # under 1/3: not offered at all
