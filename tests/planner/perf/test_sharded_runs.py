"""The per-micro-batch communication model against measured sharded training (planner/data/sharded_runs.csv).

Each row is one model trained with ZeRO-3 / FSDP FULL_SHARD at two GPU counts on the same hardware; what the
larger run keeps of the smaller run's throughput per GPU is what communication (and everything else that grows
with scale) costs. The model predicts it from bytes and links alone: compute per micro-batch from the smaller
run's measured throughput, traffic 3S(n-1)/n over the node's NIC (or NVLink inside one node).
"""

from __future__ import annotations

import statistics

import pytest

from pricing.catalog import Catalog
from pricing.datafiles import data_rows
from planner.perf import comm

CAT = Catalog.shipped()
RUNS = data_rows("sharded_runs.csv", "planner.data")


def _efficiency(r: dict[str, str], gpus: int, micro_batch: int) -> float:
    params = float(r["params"])
    tokens = micro_batch * int(r["seq"])
    base = float(r["small_throughput"])
    # compute at the smaller run's pace: tokens/s/GPU, or 6N FLOPs a token at its TFLOPS
    compute_s = tokens / base if r["unit"] == "tokens/s/GPU" else 6 * params * tokens / (base * 1e12)
    if gpus <= int(r["gpus_per_node"]):
        spec = CAT.gpus[r["gpu_key"]]
        link = comm.intra_link(r["gpu_key"], str(spec.interconnect.among(gpus)))
        assert link is not None, r["run"]
        gbytes_s = link.bus_gbytes_s
    else:  # a flat ring: each byte crosses each node's NIC once
        gbytes_s = float(r["inter_node_gbps"]) / 8
    per_mb, per_step = comm.comm_seconds(r["strategy"], 2 * params, gpus, gbytes_s)
    return comm.efficiency(compute_s, per_mb, per_step)


def _kept(r: dict[str, str]) -> tuple[float, float]:
    """(predicted, measured) throughput per GPU of the larger run over the smaller one."""
    predicted = (_efficiency(r, int(r["big_gpus"]), int(r["big_micro_batch"]))
                 / _efficiency(r, int(r["small_gpus"]), int(r["small_micro_batch"])))
    return predicted, float(r["big_throughput"]) / float(r["small_throughput"])


def test_every_row_is_sourced_and_shaped() -> None:
    assert len(RUNS) >= 5
    for r in RUNS:
        assert r["source"] and r["as_of"] and "VERIFIED" in r["notes"], r["run"]
        assert r["gpu_key"] in CAT.gpus and r["strategy"] in ("zero3", "zero2")
        assert int(r["big_gpus"]) > int(r["small_gpus"]) >= 1


@pytest.mark.parametrize("run", [r["run"] for r in RUNS])
def test_the_model_keeps_what_the_measured_run_kept_within_8_percent(run: str) -> None:
    (r,) = [x for x in RUNS if x["run"] == run]
    predicted, measured = _kept(r)
    assert abs(predicted / measured - 1) <= 0.08, (predicted, measured)


def test_the_model_is_at_most_slightly_optimistic_where_traffic_hides() -> None:
    """All measured pairs sit where the model hides the traffic behind compute (it predicts no loss); the measured
    runs lost 0-7%, a median 1.5%: the model's optimism there, not yet a fitted term (docs/performance.md)."""
    errors = [p / m - 1 for p, m in map(_kept, RUNS)]
    assert all(e >= -0.02 for e in errors) and statistics.median(errors) <= 0.03


# ZeRO-3 at two bandwidths between nodes (planner/data/bandwidth_runs.csv): where the traffic is exposed, which the
# pairs above never reach. Compute per micro-batch at the faster run's pace, 6N FLOPs a token (the figures do not say
# how they count; with 8N the compute is 4/3 as long and the model comes out ~25% optimistic: docs/performance.md).
BANDWIDTH_RUNS = data_rows("bandwidth_runs.csv", "planner.data")


def _kept_at_lower_bandwidth(r: dict[str, str]) -> tuple[float, float]:
    params, tokens, gpus = float(r["params"]), int(r["tokens_per_gpu"]), int(r["gpus"])
    compute_s = 6 * params * tokens / (float(r["fast_tflops"]) * 1e12)

    def eff(gbps: float) -> float:
        per_mb, per_step = comm.comm_seconds(r["strategy"], 2 * params, gpus, gbps / 8)
        return comm.efficiency(compute_s, per_mb, per_step)

    return (eff(float(r["slow_gbps"])) / eff(float(r["fast_gbps"])),
            float(r["slow_tflops"]) / float(r["fast_tflops"]))


def test_every_bandwidth_pair_is_sourced_and_slower_on_the_slower_network() -> None:
    assert len(BANDWIDTH_RUNS) >= 10
    for r in BANDWIDTH_RUNS:
        assert r["source"] and r["as_of"] and "VERIFIED" in r["notes"], r["run"]
        assert float(r["slow_gbps"]) < float(r["fast_gbps"]) and float(r["slow_tflops"]) < float(r["fast_tflops"])


def test_where_traffic_is_exposed_the_model_keeps_what_the_slower_network_kept() -> None:
    """Ten measured pairs (ZeRO++ blog, 384 V100): the unfitted 2/3 overlap is off by a median +0.05%, from -22% (18B:
    the model expects more loss than measured) to +18% (138B, 800 -> 200 Gbps). A change to the traffic or the overlap
    that moves the median past 5% or a pair past 25% fails here."""
    errors = {r["run"]: p / m - 1 for r in BANDWIDTH_RUNS for p, m in [_kept_at_lower_bandwidth(r)]}
    assert all(abs(e) <= 0.25 for e in errors.values()), errors
    assert abs(statistics.median(errors.values())) <= 0.05, errors
    # the model sees the slow network: every pair predicted to lose at least a sixth (measured: 21-52%)
    assert all(p <= 0.85 for p, _ in map(_kept_at_lower_bandwidth, BANDWIDTH_RUNS))
