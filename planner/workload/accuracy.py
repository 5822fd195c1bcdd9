"""How close gpuplan's estimates come to published training runs: the rows behind docs/accuracy.md and the ranges."""

from __future__ import annotations

import statistics

from pydantic import BaseModel, ConfigDict

from pricing.catalog import Catalog
from planner.plan.moe_share import moe_run_gpu_hours, moe_utilization
from planner.workload.estimate import (
    UNREPORTED_COUNT,
    estimate_images,
    estimate_training,
    published_runs,
    run_workload,
)
from planner.workload.spec import ImageWorkload, Precision


class AccuracyRow(BaseModel):
    """One published run next to what gpuplan predicts for it."""

    model_config = ConfigDict(frozen=True)

    run: str
    kind: str  # workload class the range is calibrated per: "transformer" (mixtures of experts too) or "image"
    gpu: str
    gpus: int | None
    basis: str  # how the source gives the GPU-hours: "stated" or "gpu_count_x_days"
    predicted_gpu_hours: float | None
    published_gpu_hours: float
    error: float | None  # predicted / published - 1
    included: bool
    reason: str
    source: str


def accuracy_rows(catalog: Catalog) -> list[AccuracyRow]:
    """Every shipped published run with gpuplan's prediction, recomputed from the shipped data.

    A mixture of experts is predicted with the MoE utilisation derived from the *other* MoE runs, so its own
    GPU-hours never feed its prediction."""
    cat = catalog
    out = []
    for r in published_runs():
        spec = cat.gpus[r["gpu_key"]]
        gpus = int(r["gpu_count"]) if r["gpu_count"] else None
        n = gpus or UNREPORTED_COUNT
        precision = Precision.parse(r["precision"] or "bf16")
        predicted: float | None = None
        if r["model"] and r["images"]:
            w = ImageWorkload(model=r["model"], images=float(r["images"]), epochs=float(r["epochs"]),
                              precision=precision)
            predicted = estimate_images(w, spec, n, spec.interconnect, catalog=cat).gpu_hours
        elif r["tokens"]:
            t, _ = run_workload(r)
            factor = moe_utilization(cat, leave_out=r["run"])[0] if t.arch.moe else None
            predicted = (moe_run_gpu_hours(t, spec, n, cat, factor) if t.arch.moe
                         else estimate_training(t, spec, n, spec.interconnect, catalog=cat).gpu_hours)
        published = float(r["gpu_hours"])
        out.append(AccuracyRow(
            run=r["run"], kind="image" if r["images"] or r["model"] else "transformer", gpu=spec.key, gpus=gpus,
            basis=r["basis"], predicted_gpu_hours=predicted, published_gpu_hours=published,
            error=None if predicted is None else predicted / published - 1,
            included=r["include"] == "yes" and predicted is not None, reason=r["reason"], source=r["source"],
        ))
    return out


def accuracy_summary(rows: list[AccuracyRow]) -> dict[str, float]:
    """Median absolute error and worst ratio (max of predicted/published and its inverse) over included runs."""
    errs = [r.error for r in rows if r.included and r.error is not None]
    return {
        "runs": len(errs),
        "median_abs_error": statistics.median(abs(e) for e in errs),
        "worst_ratio": max(max(1 + e, 1 / (1 + e)) for e in errs),
    }
