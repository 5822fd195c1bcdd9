"""The share of the dense utilisation a mixture of experts reaches, fitted on published MoE runs on the layout path.

Each published MoE run (``planner/data/published_runs.csv``) is predicted as dense (share 1) and divided by the
efficiency of the layout `estimate` chooses for it (expert parallelism and its all-to-all are charged there, once);
the share is the geometric mean of predicted / published GPU-hours. It lives in the plan layer because that
prediction runs the layout search (:func:`planner.plan.estimate_cluster.estimate_with_layout`); the workload
estimate takes the share as an argument.
"""

from __future__ import annotations

from functools import lru_cache

from pricing.catalog import Catalog, GpuSpec
from planner.workload.estimate import estimate_training, published_runs, run_workload
from planner.workload.spec import TrainingWorkload


def share(w: TrainingWorkload, catalog: Catalog) -> tuple[float, str] | None:
    """(share, why) for a mixture of experts, None for a dense model."""
    return moe_utilization(catalog) if w.arch.moe else None


def moe_run_gpu_hours(w: TrainingWorkload, spec: GpuSpec, gpus: int, catalog: Catalog,
                      moe_factor: float | tuple[float, str] | None) -> float:
    """Predicted GPU-hours of a published MoE run: with its shape and experts known (a preset), the utilisation
    estimate divided by the chosen layout's efficiency (expert parallelism and its all-to-all on the nodes `estimate`
    splits the GPUs into, :func:`planner.plan.estimate_cluster.estimate_with_layout`); else the utilisation estimate."""
    if w.arch.experts and w.arch.has_shape:
        from planner.plan.estimate_cluster import estimate_with_layout

        return float(estimate_with_layout(w, spec, gpus, catalog, moe_factor=moe_factor)[0].gpu_hours)
    return float(estimate_training(w, spec, gpus, spec.interconnect, catalog=catalog, moe_factor=moe_factor).gpu_hours)


@lru_cache(maxsize=16)
def moe_utilization(catalog: Catalog, leave_out: str | None = None) -> tuple[float, str]:
    """The share of the dense utilisation a mixture of experts reaches: the geometric mean of published / predicted
    GPU-hours over the included MoE runs (predicted as if dense), ``leave_out`` left out of it.

    Expert routing moves every token's activations to its experts and back (all-to-all) and balances load
    unevenly; the dense MFU anchors see neither, and the published MoE runs all took longer than they give.
    """
    import math

    runs = [r for r in published_runs() if r["active_params"] and r["tokens"] and r["include"] == "yes"
            and r["run"] != leave_out]
    if not runs:
        return 1.0, "no published MoE run to derive it from"
    logs = []
    for r in runs:
        w, n = run_workload(r)
        spec = catalog.gpus[r["gpu_key"]]
        dense = moe_run_gpu_hours(w, spec, n, catalog, 1.0)
        logs.append(math.log(dense / float(r["gpu_hours"])))
    factor = math.exp(sum(logs) / len(logs))
    return factor, (f"x{factor:.2f} for a mixture of experts: the geometric mean of predicted-as-dense / published "
                    f"GPU-hours over {len(runs)} published MoE runs ({', '.join(r['run'] for r in runs)})")
