"""FSDP x TP (tensor parallelism inside a node, ZeRO-3 over the data-parallel replicas): hand-computed bytes and seconds
per micro-batch, and where the search keeps or drops it (its memory: tests/planner/workload/test_memory_3d_fsdp.py)."""

from __future__ import annotations

import pytest

from planner.perf import comm, links
from planner.perf import parallel3d as p3
from planner.workload.spec import Recompute, Sharding, TrainingWorkload, TransformerArch

# Llama 3.1 405B as heldout_throughput.csv's torchtitan row gives it: 126 layers, hidden 16384, 128 heads, vocab 128256,
# params 2 x 128256 x 16384 + 126 x (2 x 16384^2 + 2 x 16384 x 1024 + 3 x 16384 x 53248) = 405.85e9 (the row's count)
LLAMA_405B = TransformerArch(name="llama-405b-test", params=405.85e9, layers=126, hidden=16384, heads=128, vocab=128256)
H100_NVSWITCH = comm.Link("NVSwitch (NVLink 4)", 337.5, True, "test: 450 GB/s x 0.75 as intra_links.csv")


def _w405(**kw: object) -> TrainingWorkload:
    return TrainingWorkload(arch=LLAMA_405B, tokens=1e12, seq_len=8192, **kw)  # type: ignore[arg-type]


FSDP_TP8 = p3.Degrees(tp=8, pp=1, ep=1, dp=16, zero=3)  # 128 GPUs: 8 tensor ranks x 16 FSDP replicas


def test_names() -> None:
    assert FSDP_TP8.name == "tp8+zero3"
    assert p3.Degrees(tp=8, pp=1, ep=1, dp=16).name == "tp8+zero1"


def test_405b_tp8_zero3_traffic_per_micro_batch_by_hand() -> None:
    net = links.network(3200.0, "rdma")  # 8 x 400 Gbps a node at RDMA's 85%: 340 GB/s
    assert net.gbytes_s == pytest.approx(340.0)
    tm = p3.time_layout(_w405(), FSDP_TP8, 1, Recompute.NONE, 8, H100_NVSWITCH, net, 400e12, 32 * 8192)
    # S = 2 B x 405.85e9 / 8 = 101.4625e9 B of 16-bit weights a GPU; all-gather forward, all-gather backward and
    # reduce-scatter over 16 replicas: 3 x 101.4625e9 x 15/16 = 285.363e9 B a micro-batch
    per_gpu = 3 * 2 * 405.85e9 / 8 * 15 / 16
    assert per_gpu == pytest.approx(285.363e9, rel=1e-5)
    assert comm.traffic("zero3", 2 * 405.85e9 / 8, 16)[0] == pytest.approx(per_gpu)
    # the 16 replicas sit in 16 nodes (one tensor group a node): each of the node's 8 tensor ranks rings through its
    # NIC, 8 x 285.363e9 / 340e9 = 6.714 s (on NVLink alone it would be 285.363e9 / 337.5e9 = 0.846 s)
    assert tm.fsdp_s == pytest.approx(8 * per_gpu / 340e9, rel=1e-9)
    assert tm.dp_s == 0.0  # no once-per-step collective: the optimizer steps its shard in place
    # compute: 6 x 405.85e9 / 8 x 8192 tokens at 400 TFLOP/s = 6.2339 s; 2/3 of it (4.156 s) hides the gathers, the
    # other 2.558 s are exposed, plus 7.5% slowdown on the 4.156 s hidden: 2.870 s
    c = 6 * 405.85e9 / 8 * 8192 / 400e12
    assert tm.compute_s == pytest.approx(c)
    exposed = 8 * per_gpu / 340e9 - 2 / 3 * c + 0.075 * 2 / 3 * c
    # TP: 126 layers x 4 all-reduces x 2 x 7/8 x (8192 x 16384 x 2 B) over 337.5 GB/s
    tp = 126 * 4 * 1.75 * 8192 * 16384 * 2 / 337.5e9
    assert tm.tp_s == pytest.approx(tp, rel=1e-9)
    # 32 sequences a step over 16 replicas at micro-batch 1: 2 micro-batches, each paying its own gathers
    assert tm.micro_batches == pytest.approx(2)
    assert tm.efficiency == pytest.approx(c / (c + tp + exposed), rel=1e-3)
    assert tm.intra_node * tm.inter_node == pytest.approx(tm.efficiency)


def test_fsdp_inside_one_node_rides_nvlink() -> None:
    # Megatron's 39B shape on one 8-GPU node at tp2 x 4 replicas: the replicas never leave the node, so the gathers
    # go over NVLink only: 3 x (2 B x 39.1e9 / 2) x 3/4 = 87.975e9 B over 337.5 GB/s = 0.2607 s
    arch = TransformerArch(name="megatron-39b", params=39.1e9, layers=48, hidden=8192, heads=64, vocab=51200)
    w = TrainingWorkload(arch=arch, tokens=1e12, seq_len=2048)
    tm = p3.time_layout(w, p3.Degrees(tp=2, pp=1, ep=1, dp=4, zero=3), 1, Recompute.NONE, 8, H100_NVSWITCH,
                        None, 400e12, 4 * 2048)
    assert tm.fsdp_s == pytest.approx(3 * 39.1e9 * 0.75 / 337.5e9, rel=1e-9)


def test_zero3_splits_are_searched_at_one_stage_only_and_as_the_sharding_allows() -> None:
    auto = p3.degrees(_w405(tensor_parallel=8), 8, 16)
    fsdp = [d for d in auto if d.zero == 3]
    # one stage, no experts, tensor 8: the one FSDP x TP split of 128 GPUs; every pipeline split keeps ZeRO-1
    assert fsdp == [FSDP_TP8]
    assert any(d.zero == 1 and d.pp == 1 for d in auto)
    pinned = p3.degrees(_w405(tensor_parallel=8, pipeline_parallel=1, sharding=Sharding.ZERO3), 8, 16)
    assert pinned == [FSDP_TP8]
    assert all(d.zero == 1 for d in p3.degrees(_w405(sharding=Sharding.ZERO1), 8, 16))


def test_same_micro_batch_zero1_is_never_slower() -> None:
    # the same split, micro-batch and recompute: FSDP's 3S(d-1)/d every micro-batch exposes no less than ZeRO-1's
    # 2S(d-1)/d once a step (the search's pruning rests on this)
    net = links.network(3200.0, "rdma")
    for mb in (1, 2, 4):
        z3 = p3.time_layout(_w405(), FSDP_TP8, mb, Recompute.FULL, 8, H100_NVSWITCH, net, 400e12, 64 * 8192)
        z1 = p3.time_layout(_w405(), p3.Degrees(8, 1, 1, 16), mb, Recompute.FULL, 8, H100_NVSWITCH, net, 400e12,
                            64 * 8192)
        assert z3.efficiency <= z1.efficiency
