"""Calibrated ranges around a GPU-hour estimate, from how far published runs fell from it.

For every included published run (``data/published_runs.csv``) the ratio published /
predicted GPU-hours says how much more (or less) the run really spent than gpuplan's point
estimate. The range of a new estimate is that estimate times the 10th and 90th percentile
of the ratios of its workload class (transformers, image models): an 80% interval if the
runs are representative. It always contains the point estimate, which stays the
"expected" value that plans rank on.

:func:`leave_one_out` checks the calibration honestly: each run's range is computed from
the other runs only, and the share of runs inside their range is reported with the median
error in docs/accuracy.md.
"""

from __future__ import annotations

import statistics
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict

from pricing.catalog import Catalog, GpuSpec
from planner.workload.accuracy import AccuracyRow, accuracy_rows
from planner.workload.estimate import Estimate
from planner.workload.spec import Precision

LOW_PERCENTILE, HIGH_PERCENTILE = 10, 90


class Spread(BaseModel):
    """Multipliers on a point estimate: the low and high ends of its calibrated range."""

    model_config = ConfigDict(frozen=True)

    low: float
    high: float
    runs: int
    workload_class: str
    widened: str = ""  # why the range is wider than the published runs give (an unanchored architecture)

    @property
    def basis(self) -> str:
        text = (f"P{LOW_PERCENTILE}-P{HIGH_PERCENTILE} of published/predicted GPU-hours over {self.runs} published "
                f"{self.workload_class} runs (docs/accuracy.md)")
        return f"{text}{self.widened}: x{self.low:.2f} to x{self.high:.2f}"

    def widen_for(self, spec: GpuSpec, gpus: float, precision: Precision, catalog: Catalog) -> Spread:
        """This range on ``spec``: wider where its architecture has no utilisation anchor (unanchored_spread)."""
        from planner.workload.estimate import unanchored_spread

        factors = unanchored_spread(spec, gpus, precision, catalog)
        if factors is None:
            return self
        lo, hi = factors
        return self.model_copy(update={
            "low": self.low * lo, "high": self.high * hi,
            "widened": (f", widened x{lo:.2f}/x{hi:.2f} by the spread of every anchor's utilisation (no {spec.arch} "
                        "anchor in data/mfu.csv)")})

    def of(self, expected: float) -> dict[str, float]:
        return {"low": expected * self.low, "expected": expected, "high": expected * self.high}


def _percentile(values: list[float], p: int) -> float:
    """Linear-interpolation percentile (statistics.quantiles, inclusive method)."""
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[p - 1]


def spread_from(ratios: list[float], workload_class: str) -> Spread:
    """The range multipliers from published/predicted ratios; never excluding the estimate itself."""
    low = min(1.0, _percentile(ratios, LOW_PERCENTILE))
    high = max(1.0, _percentile(ratios, HIGH_PERCENTILE))
    return Spread(low=low, high=high, runs=len(ratios), workload_class=workload_class)


def _ratios(rows: list[AccuracyRow], workload_class: str) -> list[float]:
    return [1 / (1 + r.error) for r in rows if r.included and r.error is not None and r.kind == workload_class]


@lru_cache(maxsize=8)
def spread(catalog: Catalog, workload_class: str) -> Spread:
    """The calibrated range multipliers for ``workload_class`` ('transformer' or 'image')."""
    return spread_from(_ratios(accuracy_rows(catalog), workload_class), workload_class)


def range_for(workload: Any, spec: GpuSpec, gpus: float, catalog: Catalog) -> Spread:
    """The range of ``workload`` on ``gpus`` x ``spec``: its class's, widened for a transformer on a GPU whose
    architecture has no utilisation anchor unless the user gave the utilisation (--mfu)."""
    from planner.workload.spec import TrainingWorkload

    if not isinstance(workload, TrainingWorkload):
        return spread(catalog, "image")
    s = spread(catalog, "transformer")
    return s if workload.mfu is not None else s.widen_for(spec, gpus, workload.precision, catalog)


class LooRow(BaseModel):
    model_config = ConfigDict(frozen=True)

    run: str
    workload_class: str
    ratio: float  # published / predicted
    low: float
    high: float

    @property
    def inside(self) -> bool:
        return self.low <= self.ratio <= self.high


class LooSummary(BaseModel):
    model_config = ConfigDict(frozen=True)

    workload_class: str
    runs: int
    median_abs_error: float  # of the point estimate, |predicted/published - 1|
    inside: int
    median_low: float
    median_high: float

    @property
    def share_inside(self) -> float:
        return self.inside / self.runs


def leave_one_out(catalog: Catalog) -> tuple[list[LooRow], list[LooSummary]]:
    """Each included run's range from the other runs of its class, and the summary per class and overall."""
    rows = accuracy_rows(catalog)
    out: list[LooRow] = []
    for cls in ("transformer", "image"):
        included = [r for r in rows if r.included and r.error is not None and r.kind == cls]
        for i, r in enumerate(included):
            assert r.error is not None
            others = [1 / (1 + o.error) for j, o in enumerate(included) if j != i and o.error is not None]
            s = spread_from(others, cls)
            out.append(LooRow(run=r.run, workload_class=cls, ratio=1 / (1 + r.error), low=s.low, high=s.high))
    summaries = []
    for cls in ("transformer", "image", "all"):
        sel = [x for x in out if cls in ("all", x.workload_class)]
        if not sel:
            continue
        summaries.append(LooSummary(
            workload_class=cls, runs=len(sel),
            median_abs_error=statistics.median(abs(1 / x.ratio - 1) for x in sel),
            inside=sum(x.inside for x in sel),
            median_low=statistics.median(x.low for x in sel), median_high=statistics.median(x.high for x in sel),
        ))
    return out, summaries


def estimate_payload(est: Estimate, spread: Spread | None = None) -> dict[str, Any]:
    """The JSON of ``gpuplan estimate``: hours as {low, expected, high} when a calibrated spread is given."""

    def hours(v: float, digits: int) -> Any:
        if spread is None:
            return round(v, digits)
        return {k: round(x, digits) for k, x in spread.of(v).items()}

    out = {
        "gpu": est.gpu,
        "gpus": est.gpus,
        "gpu_hours": hours(est.gpu_hours, 2),
        "wall_hours": hours(est.wall_hours, 3),
        "wall_days": hours(est.wall_hours / 24, 3),
        "flops": est.flops,
        "assumptions": est.assumptions,
        "notes": list(est.notes),
    }
    if spread is not None:
        out["range_basis"] = spread.basis
    return out
