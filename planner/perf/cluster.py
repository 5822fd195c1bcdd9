"""Clusters of identical nodes: how well data-parallel training scales across them.

The model (docs/performance.md): each optimizer step ends with a gradient all-reduce
across the nodes. A hierarchical ring all-reduce moves 2(N-1)/N x the gradient bytes
through each node's network link, while every GPU computes its share of the step:

    c(N)   = 2 (N - 1) / N x gradient bytes / node bandwidth (bytes/s)   exposed traffic time
    t_step = compute seconds per GPU between two all-reduces
    efficiency(N) = 1 / (1 + beta x c(N) / t_step)

beta is the share of the all-reduce that compute does not hide. It is fitted on published
multi-node throughput tables (``planner/data/multinode.csv``: NVIDIA's BERT-Large tables on
DGX-1, DGX-2H and DGX A100 at 1-32 nodes, where t_step is the stated batch per GPU over the
measured per-GPU throughput at one node), as the median of each point's implied beta; every
point's leave-one-out error is in docs/performance.md. A workload's own t_step comes from its
FLOPs per step (6 x params x tokens per GPU per step, at the GPU's delivered FLOP rate), with
a global batch of 4M tokens split over all GPUs (Llama 2, Touvron et al. 2023, table 1);
GPU-hour demands without a model use the calibration runs' own traffic-to-compute ratio,
and say so. Gradients are bf16 (2 bytes per parameter; 4 in fp32 training), and ZeRO-3/FSDP
across nodes moves 1.5x the data of plain data parallelism (Rajbhandari et al., ZeRO, SC'20,
section 7). A node whose network the catalog does not know is not planned across nodes.
"""

from __future__ import annotations

import re
import statistics
from collections import defaultdict
from functools import lru_cache

from pydantic import BaseModel, ConfigDict

from pricing.datafiles import data_rows
from pricing.network import NetworkSpec
from planner.perf.speed import WorkloadClass

GLOBAL_BATCH_TOKENS = 4e6  # Llama 2 (Touvron et al. 2023, table 1): 4M-token global batch
ZERO3_TRAFFIC = 1.5  # ZeRO-3 all-gathers parameters besides reducing gradients (ZeRO paper, sec. 7)


class CalibrationPoint(BaseModel):
    """One published multi-node throughput, with the compute time per step it implies."""

    # Validator built on first validation: a plan whose options all run on one node never makes one.
    model_config = ConfigDict(frozen=True, defer_build=True)

    system: str
    gpu: str
    gpus_per_node: int
    nodes: int
    network_gbps: float
    model: str
    params: float
    workload_class: WorkloadClass
    scaling_efficiency: float
    step_seconds: float  # batch per GPU / per-GPU throughput at the group's smallest scale
    source: str

    def comm_seconds(self) -> float:
        return comm_seconds(self.nodes, 2.0 * self.params, self.network_gbps)

    def implied_beta(self) -> float:
        """The beta that makes the model reproduce this point exactly."""
        return (1.0 / self.scaling_efficiency - 1.0) * self.step_seconds / self.comm_seconds()

    def bytes_per_compute_second(self) -> float:
        return 2.0 * self.params / self.step_seconds


def comm_seconds(nodes: int, grad_bytes: float, gbps: float) -> float:
    """Seconds per step a ring all-reduce of ``grad_bytes`` needs on one node's link."""
    if nodes <= 1:
        return 0.0
    return 2.0 * (nodes - 1) / nodes * grad_bytes / (gbps * 1e9 / 8)


def _class_of(model: str) -> WorkloadClass:
    cnn = ("resnet", "inception", "vgg", "ssd", "mask", "unet", "retinanet", "efficientnet")
    return WorkloadClass.CNN if any(m in model.lower() for m in cnn) else WorkloadClass.TRANSFORMER


_BATCH = re.compile(r"batch/GPU (\d+)")


@lru_cache(maxsize=1)
def calibration_points() -> tuple[CalibrationPoint, ...]:
    """Multi-node points with a throughput table to derive their step time from (rows at 1 node are the base)."""
    try:
        rows = data_rows("multinode.csv", "planner.data")
    except FileNotFoundError:
        return ()
    groups: dict[tuple[str, str], list[dict[str, str]]] = defaultdict(list)
    for r in rows:
        groups[(r["system"], r["metric"])].append(r)
    out = []
    for (_, metric), members in groups.items():
        batch = _BATCH.search(metric)
        try:
            members.sort(key=lambda r: int(r["nodes"]))
            base = members[0]
            per_gpu = float(base["value"]) / (int(base["nodes"]) * int(base["gpus_per_node"]))
        except (ValueError, KeyError):
            continue
        if batch is None or per_gpu <= 0:
            continue  # no throughput table (e.g. a published efficiency alone): nothing to time a step by
        step = int(batch.group(1)) / per_gpu
        for r in members[1:]:
            try:
                nodes, eff, params = int(r["nodes"]), float(r["scaling_efficiency"]), float(r["params"])
                gbps = float(r["network_gbps"])
            except (ValueError, KeyError):
                continue
            if nodes <= int(base["nodes"]) or not 0 < eff <= 1.05:
                continue
            out.append(CalibrationPoint(system=r["system"], gpu=r["gpu"], gpus_per_node=int(r["gpus_per_node"]),
                                        nodes=nodes, network_gbps=gbps, model=r["model"], params=params,
                                        workload_class=_class_of(r["model"]), scaling_efficiency=min(eff, 0.9999),
                                        step_seconds=step, source=r["source"]))
    return tuple(out)


def fit_beta(points: tuple[CalibrationPoint, ...] | list[CalibrationPoint]) -> float | None:
    """Median implied beta; None without data."""
    pool = [p.implied_beta() for p in points]
    return statistics.median(pool) if pool else None


def predict(beta: float, nodes: int, grad_bytes: float, gbps: float, step_seconds: float) -> float:
    return 1.0 / (1.0 + beta * comm_seconds(nodes, grad_bytes, gbps) / step_seconds)


def loo_errors(points: tuple[CalibrationPoint, ...]) -> list[tuple[CalibrationPoint, float, float]]:
    """Leave-one-out: each point predicted from beta fitted on the others; (point, predicted, error)."""
    out = []
    for i, p in enumerate(points):
        beta = fit_beta(points[:i] + points[i + 1:])
        if beta is None:
            continue
        pred = predict(beta, p.nodes, 2.0 * p.params, p.network_gbps, p.step_seconds)
        out.append((p, pred, pred / p.scaling_efficiency - 1.0))
    return out


class Scaling(BaseModel):
    """How N nodes of one offer scale, or why they are not planned."""

    # Validator built on first validation: a plan whose options all run on one node never makes one.
    model_config = ConfigDict(frozen=True, defer_build=True)

    nodes: int
    efficiency: float
    note: str


def internode(nodes: int, network: NetworkSpec | None, cls: WorkloadClass, *, grad_bytes: float | None,
              step_seconds: float | None = None, zero3: bool = False) -> Scaling | str:
    """Efficiency of ``nodes`` identical nodes against one, or why it cannot be estimated.

    ``grad_bytes`` and ``step_seconds`` describe the workload; without them the calibration
    runs' own ratio of gradient bytes to compute seconds stands in (and the note says so).
    """
    if nodes <= 1:
        return Scaling(nodes=1, efficiency=1.0, note="")
    if network is None or network.gbps is None:
        return "its network is unknown to the catalog, so scaling across nodes cannot be estimated"
    points = calibration_points()
    beta = fit_beta(points)
    if beta is None:
        return "no multi-node calibration data ships with this gpuplan"
    assumed = ""
    if grad_bytes is None or step_seconds is None:
        ratio = statistics.median(p.bytes_per_compute_second() for p in points)
        grad_bytes, step_seconds = ratio, 1.0
        assumed = "; assumes the calibration runs' gradient bytes per compute-second (give a model for a better figure)"
    traffic = grad_bytes * (ZERO3_TRAFFIC if zero3 else 1.0)
    # beta is fitted on InfiniBand/RoCE runs; another fabric reaches its own share of line rate (link_physics.csv)
    from planner.perf.links import network as fabric_network

    here, calibrated = fabric_network(network.gbps, str(network.fabric)), fabric_network(network.gbps, "rdma")
    eff = predict(beta, nodes, traffic, network.gbps * here.fraction / calibrated.fraction, step_seconds)
    return Scaling(nodes=nodes, efficiency=eff,
                   note=f"{eff:.0%} scaling over {here.describe()} across {nodes} nodes{assumed}")
