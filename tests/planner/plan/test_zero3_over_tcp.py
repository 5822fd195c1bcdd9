"""ZeRO-3 over a 25 Gbps TCP network between 8-GPU nodes, checked by hand (docs/performance.md, "ZeRO-3 over slow
Ethernet, by hand"): what it claims comes from the micro-batch, not from missing bytes."""

from __future__ import annotations

import json
from collections.abc import Callable

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


# --- measured ZeRO-3/FSDP over TCP (planner/data/tcp_runs.csv): what the measured runs found can and cannot say ---

def test_the_tcp_share_of_line_rate_agrees_with_the_measured_usable_tcp_bandwidth() -> None:
    """IBM's FSDP cluster: 2 x 100 Gbps Ethernet with a TCP/IP stack, 'a usable bandwidth of 120Gbps' (the blog's
    measured figure) = 0.60 of line rate, the TCP row's share (nccl #209's 60%); a second source, not a fit."""
    from pricing.datafiles import data_rows

    rows = [r for r in data_rows("tcp_runs.csv", "planner.data") if r["usable_gbps"]]
    assert rows
    for r in rows:
        usable = float(r["usable_gbps"]) / float(r["line_gbps"])  # 120 / 200
        assert abs(usable - links.network(float(r["line_gbps"]), "ethernet").fraction) <= 0.05, r["run"]


def test_tcp_bounds_by_hand() -> None:
    """T5-11B over 256 A100s (32 nodes x 8), 200 Gbps TCP: each micro-batch moves 3 x 2 B x 11e9 x 255/256 = 65.7 GB per
    GPU through the NIC at 200 x 0.60 / 8 = 15 GB/s: 4.38 s. To keep the measured 0.90 with 1/3 hidden and 7.5%
    slowdown the model needs c / T = 0.90 / (1 - 0.90 x (1 - 1/3 + 0.075/3)) = 2.38, i.e. 10.4 s of compute per
    micro-batch (0.21 s a sample at the run's batch of 50); T5-3B over 512 GPUs keeping 0.95 needs
    0.95 / (1 - 0.95 x 0.6917) = 2.77 x 1.20 s = 3.3 s."""
    from planner.perf.holdout import compute_over_traffic, tcp_bounds

    by = {b.name: b for b in tcp_bounds()}
    t11 = by["ibm-t5-11b-fsdp-32-nodes"]
    assert t11.traffic_s == pytest.approx(6 * 11e9 * 255 / 256 / 15e9, rel=1e-9)
    # the data file writes the hidden share as 0.3333, hence 1e-3 rather than exact thirds
    assert t11.ratio == pytest.approx(0.90 / (1 - 0.90 * (1 - 1 / 3 + 0.075 / 3)), rel=1e-3)
    assert t11.compute_s == pytest.approx(10.45, abs=0.01)
    assert by["ibm-t5-3b-fsdp-64-nodes"].compute_s == pytest.approx(
        0.95 / (1 - 0.95 * (1 - 1 / 3 + 0.075 / 3)) * 6 * 3e9 * 511 / 512 / 15e9, rel=1e-3)
    assert "ibm-t5-11b-fsdp-before-rate-limiter" not in by  # software-limited: recorded, never a bound
    # fully hidden branch: at r >= 3 (all traffic behind 1/3 of compute) only the slowdown remains
    assert compute_over_traffic(0.99, 1 / 3, 0.075) == pytest.approx(0.075 * 0.99 / 0.01)


def test_the_bound_inverts_the_efficiency_the_planner_charges() -> None:
    """Round trip through planner.perf.comm.efficiency: the bound is the model's own arithmetic, read backwards."""
    from planner.perf import comm
    from planner.perf.holdout import compute_over_traffic

    for kept in (0.35, 0.6, 0.8, 0.9, 0.97, 0.99):
        r = compute_over_traffic(kept, 1 / 3, 0.075)
        assert comm.efficiency(r, 1.0, hidden=1 / 3, slowdown=0.075) == pytest.approx(kept, rel=1e-9)


def test_every_tcp_run_quotes_its_source_and_is_tcp() -> None:
    from pricing.datafiles import data_rows

    rows = data_rows("tcp_runs.csv", "planner.data")
    assert rows
    for r in rows:
        assert r["source"] and r["as_of"] and "VERIFIED" in r["notes"], r["run"]
        assert r["fabric"] == "ethernet" and r["use"] in ("predict", "bound", "no"), r["run"]
        assert 0 < float(r["kept"]) <= 1, r["run"]


# oumi PR 213 (tcp_runs.csv): FSDP FULL_SHARD of a 1.71B Llama over 4 GCP nodes of 4 x A100 40GB, TCP at 32-50 Gbps
OUMI_N = 24 * (4 * 2048**2 + 3 * 2048 * 8192) + 50272 * 2048  # 1,713,569,792: 24 layers, tied 50,272 x 2048 embedding
OUMI_C = 16 * 2048 / (21.7 * 2048 / 4)  # 16 x 2,048 tokens at one node's 21.7 samples/s over 4 GPUs: 2.95 s
OUMI_KEPT = 55.349 / (4 * 21.7)  # 0.638 of one node's throughput per GPU


def _oumi_kept(gbps: float, share: float, hidden: float, slowdown: float) -> float:
    # gpuplan's ZeRO-3 charge: 3 collectives of 2 B x N a micro-batch, 15/16 of each through the NIC (ring of 16 GPUs)
    traffic = 3 * 2 * OUMI_N * 15 / 16 / (gbps * share / 8 * 1e9)
    hid = min(traffic, hidden * OUMI_C)
    return OUMI_C / (OUMI_C + traffic - hid + slowdown * hid)


def test_oumi_full_shard_over_tcp_is_bracketed_by_the_tcp_row() -> None:
    """By hand: 3 x 3.427 GB x 15/16 = 9.64 GB a micro-batch; at 50 Gbps x 0.60 / 8 = 3.75 GB/s that is 2.57 s against
    2.95 s of compute, 1/3 of it (0.98 s) hidden: 2.95 / (2.95 + 1.59 + 0.07) = 0.64; at 32 Gbps, 4.02 s: 0.49. The
    measured 0.638 lies between (the line rate is not known better than 32-50 Gbps)."""
    from planner.perf.holdout import tcp_points

    by = {p.name: p for p in tcp_points()}
    hi, lo = by["oumi-llama2b-fsdp-full-shard-4x4 @ 50 Gbps"], by["oumi-llama2b-fsdp-full-shard-4x4 @ 32 Gbps"]
    assert hi.measured == pytest.approx(OUMI_KEPT, abs=5e-4)
    # the data file writes the hidden share as 0.3333
    assert hi.predicted == pytest.approx(_oumi_kept(50, 0.60, 1 / 3, 0.075), rel=1e-3)
    assert lo.predicted == pytest.approx(_oumi_kept(32, 0.60, 1 / 3, 0.075), rel=1e-3)
    assert (round(hi.predicted, 2), round(lo.predicted, 2)) == (0.64, 0.49)
    assert lo.predicted <= hi.measured <= hi.predicted


def test_oumi_full_shard_rules_out_the_physics_before_issue_41() -> None:
    """Before issue 41 every network ran at 100% of its line rate with 2/3 of compute hiding it and no slowdown: that
    predicts 0.87 (32 Gbps) to 1.00 (50 Gbps) for a run that kept 0.638, optimistic by 36-57% at any line rate in the
    range; so does 2/3 hidden at TCP's 60% at 50 Gbps (0.80, +25%)."""
    assert _oumi_kept(32, 1.0, 2 / 3, 0.0) > 1.35 * OUMI_KEPT
    assert _oumi_kept(50, 1.0, 2 / 3, 0.0) > 1.5 * OUMI_KEPT
    assert _oumi_kept(50, 0.60, 2 / 3, 0.075) > 1.2 * OUMI_KEPT


def test_oumi_hsdp_loses_more_than_its_bandwidth_explains() -> None:
    """HSDP on the same nodes all-reduces 2 x 3.43 GB x 3/4 = 5.1 GB a step across 4 nodes (16 micro-batches, 47 s of
    compute): at 32 Gbps x 0.60 that is 2.1 s, the model keeps 0.975; measured 0.857 (0.940 at 2 nodes). The model is
    optimistic there by 5-16%: a multi-node loss that is not bandwidth (recorded, not fitted)."""
    from planner.perf.holdout import tcp_points

    for p in tcp_points():
        if "hsdp" in p.name:
            assert 0.04 <= p.error <= 0.17, p.name


def test_oumi_ddp_over_24_gbps_by_hand() -> None:
    """DDP, 4 nodes of one A100 80GB at ~24 Gbps: one all-reduce of 2 x 1.714e9 B a step, 2 x 3.43 GB x 3/4 = 5.14 GB
    through each NIC at 24 x 0.60 / 8 = 1.8 GB/s: 2.86 s against 128 micro-batches of 2 x 2,048 tokens at 5.7 samples/s
    (0.351 s each, 44.9 s); only the last micro-batch's 1/3 (0.117 s) hides it: 44.9 / (44.9 + 2.74 + 0.009) = 0.942,
    measured 20.2 / (4 x 5.7) = 0.886: the model is 6% optimistic, as on the HSDP rows."""
    from planner.perf.holdout import tcp_points

    p = next(p for p in tcp_points() if p.name.startswith("oumi-llama2b-ddp-4x1"))
    c = 2 / 5.7
    t = 2 * 2 * OUMI_N * 3 / 4 / (24 * 0.60 / 8 * 1e9)
    hid = c / 3
    assert p.predicted == pytest.approx(128 * c / (128 * c + t - hid + 0.075 * hid), rel=1e-3)
    assert p.measured == pytest.approx(20.2 / (4 * 5.7), abs=5e-4)
    assert 0.05 <= p.error <= 0.08


def test_the_7b_plan_trains_slow_networks_with_pipeline_stages_not_zero3(
    gpuplan: Callable[..., tuple[int, str, str]],
) -> None:
    # issue 41: no ZeRO-3 option across nodes over <= 25 Gbps claims more than 35%, or a better layout is chosen. On
    # nodes without NVLink (one L4 a g6.8xlarge, four T4 over PCIe a GN7) the fourth pass still chose ZeRO-3 across
    # 51 and 31 nodes (82% and 63% kept, 3 x 13.5 GB a GPU a micro-batch through the NIC). Pipeline stages need no
    # NVLink, only 2 x 2048 x 4096 x 2 B = 33.5 MB a boundary a micro-batch: now they win there, cheaper per token.
    code, out, err = gpuplan("plan", "--model", "llama-2-7b", "--tokens", "2e10", "--deadline", "7d", "--json",
                             "--limit", "0")
    assert code == 0, err
    slow = []
    for o in json.loads(out)["options"]:
        net = next((n for n in o.get("notes", []) if "scaling over" in n), "")
        if o["nodes"] > 1 and " Gbps" in net:
            gbps = float(net.split(" Gbps")[0].split("over ")[-1].replace(",", ""))
            if gbps <= 25:
                slow.append((o["offer"], (o.get("scaling") or {}).get("layout") or ""))
    assert len(slow) > 20
    assert not [s for s in slow if "zero3" in s[1]]
    g6 = {lay for offer, lay in slow if offer == "g6.8xlarge"}
    assert g6 and all(lay.startswith("pp") and lay.endswith("zero1") for lay in g6)
