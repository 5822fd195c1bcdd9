"""Tensor/pipeline/expert parallelism: hand-computed bytes, seconds, bubble and memory, and what the search picks."""

from __future__ import annotations

import pytest

from planner.perf import comm, links
from planner.perf import parallel3d as p3
from planner.workload.memory import GIB
from planner.workload.memory_3d import memory_3d
from planner.workload.spec import Recompute, TrainingWorkload, TransformerArch

# Narayanan et al. 2021 (arXiv 2104.04473) Table 1, the 39.1B row (RECALLED from the paper and the Megatron-LM README
# table, which give vocab 51,200 and sequence 2,048 for every row): 64 heads, hidden 8192, 48 layers, tensor 8,
# pipeline 2, 512 A100 (Selene: 8 GPUs and 8 x 200 Gbps HDR InfiniBand a node), batch 1536 sequences, 138 TFLOP/s a GPU
MEGATRON_39B = TransformerArch(name="megatron-39b", params=39.1e9, layers=48, hidden=8192, heads=64, vocab=51200)
A100_NVSWITCH = comm.Link("NVSwitch (NVLink 3)", 225.0, True, "test: 300 GB/s x 0.75 as intra_links.csv")


def _w39(**kw: object) -> TrainingWorkload:
    return TrainingWorkload(arch=MEGATRON_39B, tokens=1e12, seq_len=2048, **kw)  # type: ignore[arg-type]


def test_bubble_is_p_minus_1_over_m_and_interleaving_divides_it() -> None:
    assert p3.bubble(4, 8) == pytest.approx(3 / 8)
    assert p3.bubble(4, 8, v=2) == pytest.approx(3 / 16)
    assert p3.bubble(1, 8) == 0.0


def test_megatron_39b_on_512_a100_by_hand() -> None:
    net = links.network(1600.0, "rdma")  # 8 x 200 Gbps HDR at 85%: 170 GB/s a node
    deg = p3.Degrees(tp=8, pp=2, ep=1, dp=32)
    tm = p3.time_layout(_w39(), deg, 1, Recompute.SELECTIVE, 8, A100_NVSWITCH, net, 138e12, 1536 * 2048)
    # m = 1536 sequences / 32 replicas / micro-batch 1 = 48; bubble (2-1)/48
    assert tm.micro_batches == pytest.approx(48)
    assert tm.bubble == pytest.approx(1 / 48)
    # TP: 24 layers a stage x 4 all-reduces x 2(8-1)/8 x (2048 x 8192 x 2 B = 33,554,432 B) = 5.637e9 B over 225 GB/s
    assert p3.tp_bytes(2048, 8192, 24, 8) == pytest.approx(24 * 4 * 1.75 * 33_554_432)
    assert tm.tp_s == pytest.approx(5.6371e9 / 225e9, rel=1e-4)  # 0.02505 s
    # compute: 6 x 39.1e9 x 2048 / 16 GPUs = 3.0028e13 FLOPs at 138 TFLOP/s = 0.2176 s, so TP is 11.5% of it
    assert tm.compute_s == pytest.approx(3.00288e13 / 138e12, rel=1e-4)
    # PP: each of the node's 8 GPUs sends 2 x 2048 x 8192 x 2 B / 8 = 8,388,608 B a micro-batch through 170 GB/s
    assert tm.pp_s == pytest.approx(8 * 8_388_608 / 170e9, rel=1e-4)  # 0.39 ms
    # DP: 39.1e9 / 16 x 2 B = 4.8875e9 B of gradients; 2 x 4.8875e9 x 31/32 = 9.4695e9 B; 8 tensor ranks' rings share
    # the NIC: 8 x 9.4695e9 / 170e9 = 0.4456 s a step
    assert tm.dp_s == pytest.approx(8 * 9.4695e9 / 170e9, rel=1e-4)
    # step: (48 + 1) x (0.2176 + 0.02505 + 0.00039) + DP exposed beyond 2/3 of one micro-batch's compute
    # (0.4456 - 0.1451 = 0.3005, plus 7.5% slowdown on the 0.1451 hidden = 0.0109) = 11.93 + 0.311 = 12.24 s
    c = 3.00288e13 / 138e12
    step = 49 * (c + 5.6371e9 / 225e9 + 8 * 8_388_608 / 170e9) + (0.44562 - 2 / 3 * c) + 0.075 * 2 / 3 * c
    assert tm.efficiency == pytest.approx(48 * c / step, rel=1e-3)
    assert tm.intra_node * tm.inter_node == pytest.approx(tm.efficiency)


def test_megatron_39b_memory_by_hand() -> None:
    m = memory_3d(_w39(), p3.Degrees(tp=8, pp=2, ep=1, dp=32), Recompute.SELECTIVE)
    # 39.1e9 / 16 = 2.44375e9 params a GPU: 2 B weights + 2 B gradients; 12 B optimizer over 32 replicas
    assert m.weights * GIB == pytest.approx(2.44375e9 * 2)
    assert m.optimizer * GIB == pytest.approx(2.44375e9 * 12 / 32)
    # first stage: 2 micro-batches in flight x 24 layers x 2048 x 8192 x 34 / 8 B = 3.4225e9 B a sequence; the last
    # (24 layers + logits 2048 x 51200 x 14 B / 8 = 0.1835e9 B) holds less
    assert m.activations_per_sample * GIB == pytest.approx(48 * 2048 * 8192 * 34 / 8)  # type: ignore[operator]


def test_tensor_parallelism_never_leaves_an_nvlink_node() -> None:
    pcie = comm.Link("PCIe Gen4 x16, 8 GPUs across two CPU sockets", 10.0, True, "test")
    w = _w39()
    found = p3.search(w, 80.0, 8, 4, pcie, links.network(400.0, "efa"), 100e12, 4e6, (Recompute.NONE,
                                                                                          Recompute.FULL))
    assert all(tm.degrees.tp == 1 for tm, _ in found)  # pipeline stages only over PCIe
    assert all(d.tp == 1 and d.pp > 1 for d in p3.degrees(w, 8, 4, tensor=False))
    assert all(d.tp <= 8 and 8 % d.tp == 0 and d.pp <= 4 and d.tp * d.pp * d.dp == 32 for d in p3.degrees(w, 8, 4))
    # t = 1 appears only with pipeline stages (plain ZeRO-1 is the data-parallel search's); one GPU a node: no TP
    assert all(d.pp > 1 for d in p3.degrees(w, 8, 4) if d.tp == 1)
    assert all(d.tp == 1 for d in p3.degrees(w, 1, 4))


def test_names() -> None:
    assert p3.Degrees(4, 4, 8, 16).name == "tp4+pp4+ep8+zero1"
    assert p3.Degrees(8, 4, 1, 16).name == "tp8+pp4+zero1"


def test_interleaved_names_and_chunks() -> None:
    assert p3.Degrees(4, 4, 1, 4, v=5).name == "tp4+pp4v5+zero1"
    assert p3.Degrees(4, 4, 1, 4).name == "tp4+pp4+zero1"
    # 80 layers over 4 stages: v = 2 (10 layers a chunk) and 4 (5 a chunk); 8 would be 2.5 layers, 16 1.25
    assert p3.interleavings(80, 4) == (4, 2)
    # 48 layers over 2 stages: 24 a stage, v = 2, 4, 8 (3 layers a chunk); 16 would be 1.5
    assert p3.interleavings(48, 2) == (8, 4, 2)
    assert p3.interleavings(80, 1) == ()


def test_interleaved_megatron_39b_by_hand() -> None:
    net = links.network(1600.0, "rdma")
    w = _w39()
    plain = p3.time_layout(w, p3.Degrees(8, 2, 1, 32), 1, Recompute.SELECTIVE, 8, A100_NVSWITCH, net, 138e12,
                           1536 * 2048)
    tm = plain.interleaved(2)
    # bubble (p-1)/(v*m) = 1/(2 x 48) = 1/96 (against 1/48 plain)
    assert tm.bubble == pytest.approx(1 / 96)
    # boundary sends: v x 2 x 2048 x 8192 x 2 B / 8 = 16,777,216 B a GPU a micro-batch; 8 GPUs through 170 GB/s
    assert p3.p2p_bytes(2048, 8192, 8, v=2) == 16_777_216
    assert tm.pp_s == pytest.approx(8 * 16_777_216 / 170e9, rel=1e-4)  # 0.79 ms
    # step: (48 + 0.5) x (compute + TP + 0.79 ms) + the same exposed DP as the plain schedule (test above: 0.311 s)
    c = 3.00288e13 / 138e12
    step = 48.5 * (c + 5.6371e9 / 225e9 + 8 * 16_777_216 / 170e9) + (0.44562 - 2 / 3 * c) + 0.075 * 2 / 3 * c
    assert tm.efficiency == pytest.approx(48 * c / step, rel=1e-3)
    # the shortcut agrees with timing the interleaved degrees from scratch
    full = p3.time_layout(w, p3.Degrees(8, 2, 1, 32, v=2), 1, Recompute.SELECTIVE, 8, A100_NVSWITCH, net, 138e12,
                          1536 * 2048)
    assert full.efficiency == pytest.approx(tm.efficiency, rel=1e-12)
    assert full.bubble == pytest.approx(tm.bubble)


def test_interleaved_first_stage_memory_by_hand() -> None:
    # Megatron-LM's interleaved-schedule penalty 1 + (p-1)/(p*v): p = 2, v = 2 -> 1.25 x the first stage's
    # 48 layers' worth (2 micro-batches x 24 layers) of 2048 x 8192 x 34 / 8 B; v = 8 -> 1 + 1/16
    per_layer = 2048 * 8192 * 34 / 8
    m2 = memory_3d(_w39(), p3.Degrees(8, 2, 1, 32, v=2), Recompute.SELECTIVE)
    m8 = memory_3d(_w39(), p3.Degrees(8, 2, 1, 32, v=8), Recompute.SELECTIVE)
    assert m2.activations_per_sample * GIB == pytest.approx(1.25 * 48 * per_layer)  # type: ignore[operator]
    assert m8.activations_per_sample * GIB == pytest.approx(1.0625 * 48 * per_layer)  # type: ignore[operator]


def test_search_names_an_interleaved_layout_where_the_bubble_is_large() -> None:
    # 39.1B on 512 A100 at micro-batch 1: the plain 2-stage bubble is 1/48 of the step; interleaving halves it or
    # better for a few ms of sends, so the search's pick for pipeline splits is interleaved
    net = links.network(1600.0, "rdma")
    w = _w39(micro_batch=1)
    found = p3.search(w, 80.0, 8, 64, A100_NVSWITCH, net, 138e12, 1536 * 2048, (Recompute.SELECTIVE,))
    piped = [tm for tm, _ in found if tm.degrees.pp > 1]
    assert piped and all(tm.degrees.v > 1 and f"v{tm.degrees.v}" in tm.degrees.name for tm in piped)


def test_pipeline_stages_across_single_gpu_nodes_over_ethernet_by_hand() -> None:
    # Llama 2 7B on 36 nodes of one L4 each over 25 Gbps EFA (g6.8xlarge): no NVLink, so no tensor parallelism, but
    # pipeline stages need only their boundary sends. pp4 at micro-batch 1 of 2048 tokens: each boundary sends the
    # activations forward and their gradient back, 2 x 2048 x 4096 x 2 B = 33.55 MB, through the node's NIC at 25 Gbps
    # x 0.80 / 8 = 2.5 GB/s: 13.4 ms, exposed (1F1B without interleaving batches its sends)
    from planner.workload.inputs import arch_for

    w = TrainingWorkload(arch=arch_for("llama-2-7b", None), tokens=2e10, seq_len=2048)
    efa = links.network(25.0, "efa")
    l4 = comm.Link("PCIe Gen4 x16 (one GPU)", 10.0, True, "test")
    tm = p3.time_layout(w, p3.Degrees(tp=1, pp=4, ep=1, dp=9), 1, Recompute.NONE, 1, l4, efa, 48e12, 4e6)
    assert p3.p2p_bytes(2048, 4096, 1) == 2 * 2048 * 4096 * 2
    assert tm.pp_s == pytest.approx(2 * 2048 * 4096 * 2 / 2.5e9, rel=1e-9)  # 0.0134 s
    # 4e6 / (9 replicas x 2048) = 217 micro-batches a step: bubble 3/217
    assert tm.micro_batches == pytest.approx(4e6 / (9 * 2048))
    assert tm.bubble == pytest.approx(3 / (4e6 / (9 * 2048)))
    # compute: 6 x 6.738e9 / 4 stages x 2048 tokens at 48 TFLOP/s = 0.431 s, so the sends are 3% of it
    assert tm.compute_s == pytest.approx(6 * 6_738_415_616 / 4 * 2048 / 48e12, rel=1e-6)
    # where data parallelism needs ZeRO-3 over that network (per micro-batch 3 x 13.48 GB through the NIC), the
    # pipeline moves 33.55 MB a boundary: the search finds it on these nodes
    found = p3.search(w, 22.0, 1, 36, l4, efa, 48e12, 4e6, (Recompute.NONE, Recompute.FULL))
    assert found and all(tm.degrees.tp == 1 and tm.degrees.pp > 1 for tm, _ in found)
    assert found[0][0].efficiency > 0.8
