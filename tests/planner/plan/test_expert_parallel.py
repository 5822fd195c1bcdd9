"""Expert parallelism in the layout model: experts are not gathered on every GPU, tokens travel all-to-all."""

from __future__ import annotations

import pytest

from planner.perf import links
from planner.plan.layout_choice import _state_bytes, all_to_all_seconds
from planner.workload.inputs import workload_from_options
from planner.workload.params import param_groups


def test_data_parallel_traffic_carries_the_dense_layers_and_a_share_of_the_experts() -> None:
    w = workload_from_options(model="mixtral-8x7b", tokens=1e12)
    g = param_groups(w)
    assert g.experts > 0.9 * w.arch.params - g.dense  # nearly all of Mixtral is experts
    assert _state_bytes(w, 64) == pytest.approx((g.dense + g.experts / 8) * 2)  # 8 experts over 64 GPUs: EP 8
    dense = workload_from_options(model="llama-2-7b", tokens=1e12)
    assert _state_bytes(dense, 64) == pytest.approx(dense.arch.params * 2)


def test_all_to_all_by_hand() -> None:
    w = workload_from_options(model="mixtral-8x7b", tokens=1e12)
    a = w.arch
    assert (a.layers, a.hidden, a.experts_per_token, a.experts) == (32, 4096, 2, 8)
    nvswitch = links.collective_link("H100-SXM5-80GB", "nvlink", 8)
    assert nvswitch is not None
    # one node of 8: 4096 tokens x 32 layers x (dispatch + combine) x (forward + backward) x 2 experts x 4096 x 2 B,
    # 7/8 of it to other GPUs, at 337.5 GB/s
    by_hand = 4096 * 32 * 4 * 2 * 4096 * 2 * 7 / 8 / 337.5e9
    assert all_to_all_seconds(w, 4096, 8, 1, nvswitch, None) == pytest.approx(by_hand)
    # one GPU a node over 100 Gbps EFA: everything leaves the node at 10 GB/s achievable, one copy per distinct
    # remote node of a token's 2 experts among 8 nodes: 7 x (1 - (7/8)^2) = 1.64 copies, not 2 x 7/8 = 1.75
    one = links.collective_link("H100-SXM5-80GB", "nvlink", 1)
    assert one is not None
    across = all_to_all_seconds(w, 4096, 1, 8, one, links.network(100, "efa"))
    assert across == pytest.approx(4096 * 32 * 4 * 4096 * 2 * 7 * (1 - (7 / 8) ** 2) / 10e9)
    assert all_to_all_seconds(workload_from_options(model="llama-2-7b", tokens=1e9), 4096, 8, 1, nvswitch, None) == 0


def test_node_limited_routing_by_hand() -> None:
    w = workload_from_options(model="deepseek-v3", tokens=1e12)
    a = w.arch
    assert (a.layers, a.hidden, a.experts_per_token, a.experts) == (61, 7168, 8, 256)
    link = links.collective_link("H100-SXM5-80GB", "nvlink", 8)
    assert link is not None
    # EP 256 over 32 nodes of 8; 2,048 tokens x 61 layers x 4 copies x 7168 x 2 B = 7.164 GB per copy of the
    # micro-batch. Unlimited, a token's 8 experts sit on 31 x (1 - (31/32)^8) = 6.96 remote nodes; DeepSeek-V3's
    # router takes them from at most 4 groups (one a node), of which 31/32 are remote: 3.875 copies. The NIC
    # carries its 8 GPUs' tokens at 3,200 Gbps x 0.80 / 8 = 320 GB/s: 8 x 7.164e9 x 3.875 / 320e9 = 0.694 s
    per_copy = 2048 * 61 * 4 * 7168 * 2
    assert per_copy == pytest.approx(7.164e9, rel=1e-3)
    got = all_to_all_seconds(w, 2048, 8, 32, link, links.network(3200, "efa"))
    assert got == pytest.approx(8 * per_copy * 3.875 / 320e9)
    assert got == pytest.approx(0.694, abs=0.001)
