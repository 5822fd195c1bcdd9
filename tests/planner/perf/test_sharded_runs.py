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
