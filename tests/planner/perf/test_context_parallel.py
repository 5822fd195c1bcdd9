"""Context parallelism (--cp): the ring's bytes by hand, where it runs, and what each GPU computes and reduces."""

from __future__ import annotations

import pytest

from planner.perf import comm, links
from planner.perf import parallel3d as p3
from planner.workload.spec import Recompute, TrainingWorkload, TransformerArch

# Llama 3 70B's shape (Meta's model card / config.json: 80 layers, hidden 8192, 64 query heads, 8 KV heads, head
# dimension 8192 / 64 = 128, vocab 128,256); 70.6e9 parameters
LLAMA3_70B = TransformerArch(name="llama-3-70b-cp-test", params=70.6e9, layers=80, hidden=8192, heads=64, kv_heads=8,
                             vocab=128256)
H100_NVSWITCH = comm.Link("NVSwitch (NVLink 4)", 337.5, True, "test: 450 GB/s x 0.75 as intra_links.csv")
NET = links.network(3200.0, "rdma")  # 8 x 400 Gbps InfiniBand a node at the rdma fabric's achievable share


def _w(cp: int | None) -> TrainingWorkload:
    return TrainingWorkload(arch=LLAMA3_70B, tokens=1e12, seq_len=8192, context_parallel=cp)


def test_ring_bytes_by_hand() -> None:
    # micro-batch 1 x 8192 at tp4 cp2: each GPU holds 8192 / 2 = 4096 tokens and its tensor rank's 8 x 128 / 4 = 256
    # K and V channels. Forward: (2 - 1) pass x 2 tensors (K, V) x 1 x 4096 x 256 x 2 B = 4,194,304 B a layer;
    # backward K,V again plus dK,dV: 2 x that; 3 x 4,194,304 = 12,582,912 B a layer; 20 layers a stage (80 / pp4):
    # 251,658,240 B a micro-batch
    assert p3.cp_ring_bytes(1, 8192, 1024, 20, 4, 2) == 251_658_240
    # cp4: 3 passes of 8192 / 4 = 2048 tokens: (4 - 1) x 2 x 2048 x 256 x 2 = 6,291,456 B forward a layer, x 3 x 20
    assert p3.cp_ring_bytes(1, 8192, 1024, 20, 4, 4) == 3 * 6_291_456 * 20
    # full recompute reruns the forward ring: 4 x 4,194,304 x 20
    assert p3.cp_ring_bytes(1, 8192, 1024, 20, 4, 2, full_recompute=True) == 4 * 4_194_304 * 20
    assert p3.cp_ring_bytes(1, 8192, 1024, 20, 4, 1) == 0.0


def test_tp4_pp4_cp2_on_64_h100_by_hand() -> None:
    deg = p3.Degrees(tp=4, pp=4, ep=1, dp=2, cp=2)
    assert deg.name == "tp4+pp4+cp2+zero1"
    assert p3.Degrees(4, 4, 1, 2, v=5, cp=2).name == "tp4+pp4v5+cp2+zero1"
    rate = 400e12
    tm = p3.time_layout(_w(2), deg, 1, Recompute.NONE, 8, H100_NVSWITCH, NET, rate, 128 * 8192)
    # each GPU runs 4096 tokens through 70.6e9 / 16 = 4.4125e9 parameters: 6 x 4.4125e9 x 4096 / 400e12 = 0.27111 s
    c = 6 * 4.4125e9 * 4096 / 400e12
    assert tm.compute_s == pytest.approx(c, rel=1e-9)
    # the same GPU without context parallelism runs the whole 8192 tokens: twice the seconds
    plain = p3.time_layout(_w(None), p3.Degrees(4, 4, 1, 4), 1, Recompute.NONE, 8, H100_NVSWITCH, NET, rate,
                           128 * 8192)
    assert plain.compute_s == pytest.approx(2 * c, rel=1e-9)
    # TP messages carry the GPU's 4096 tokens: 20 layers x 4 all-reduces x 2 x 3/4 x 4096 x 8192 x 2 B over 337.5 GB/s
    assert tm.tp_s == pytest.approx(20 * 4 * 1.5 * 4096 * 8192 * 2 / 337.5e9, rel=1e-9)
    # the ring: tp x cp = 8 GPUs fit a node of 8, so NVLink: 251,658,240 B / 337.5 GB/s = 0.74565 ms
    assert tm.cp_s == pytest.approx(251_658_240 / 337.5e9, rel=1e-9)
    # 128 sequences a step over dp = 2 whole-sequence replicas at micro-batch 1: 64 micro-batches a pipeline
    assert tm.micro_batches == pytest.approx(64)
    # gradients: 4.4125e9 x 2 B reduce-scattered and gathered over dp x cp = 4 GPUs: 2 x 8.825e9 x 3/4 = 1.32375e10 B;
    # a tensor rank has 8 / 4 = 2 of those 4 peers in its node, so the ring crosses the NIC, which the node's 4
    # tensor ranks' rings share: 4 x 1.32375e10 / (3200 Gbps x rdma share / 8)
    assert tm.dp_s == pytest.approx(4 * 1.32375e10 / (NET.gbytes_s * 1e9), rel=1e-9)
    # the ring hides behind the attention's share of the compute (12 x 80 x 8192 x 8192 = 6.4425e10 of
    # 6 x 70.6e9 + 6.4425e10 FLOPs a token, 13.2%: 0.0358 s, of which 2/3 hides traffic, far above 0.75 ms):
    # only the overlap slowdown of the hidden seconds is paid
    ring_paid = links.overlap_slowdown() * 251_658_240 / 337.5e9
    assert tm.per_mb_s == pytest.approx(c + tm.tp_s + tm.pp_s + ring_paid, rel=1e-9)
    # tokens a GPU trains a second: the 8192 tokens of a micro-batch over the 4 x 4 x 2 = 32 GPUs of a replica
    assert p3.useful_rate(tm, 8192) == pytest.approx(tm.efficiency * 8192 / (c * 32), rel=1e-9)


def test_a_ring_across_nodes_goes_through_the_nic() -> None:
    # tp8 x cp2 = 16 GPUs: a sequence's two halves sit in two nodes; every GPU of the node sends its ring traffic
    # through the NIC at once: 8 x bytes / NIC
    deg = p3.Degrees(tp=8, pp=2, ep=1, dp=2, cp=2)
    tm = p3.time_layout(_w(2), deg, 1, Recompute.NONE, 8, H100_NVSWITCH, NET, 400e12, 128 * 8192)
    sent = p3.cp_ring_bytes(1, 8192, 1024, 40, 8, 2)  # 3 x (1 x 2 x 4096 x 128 x 2 B) x 40 layers = 251,658,240 B
    assert sent == 3 * 2 * 4096 * 128 * 2 * 40
    assert tm.cp_s == pytest.approx(8 * sent / (NET.gbytes_s * 1e9), rel=1e-9)


def test_degrees_only_with_cp_pinned() -> None:
    # without --cp no split has context parallelism (never searched); with --cp 2 every split has it and tp x pp x cp
    # x dp covers the 64 GPUs, tp1 pp1 cp2 included (NVIDIA's Llama 3.1 8B layout)
    assert all(d.cp == 1 for d in p3.degrees(_w(None), 8, 8))
    pinned = p3.degrees(_w(2), 8, 8)
    assert pinned and all(d.cp == 2 and d.tp * d.pp * d.cp * d.dp == 64 for d in pinned)
    assert p3.Degrees(1, 1, 1, 32, 1, 2) in pinned
