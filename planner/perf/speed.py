"""How fast each GPU is relative to another, per workload class and precision.

Measured first: the shipped Lambda benchmark rows (``data/benchmarks.csv``) are fitted
with a log-linear model, log(throughput) = speed[gpu] + difficulty[suite, model], by
alternating least squares, so every suite and model contributes and GPUs that never
ran in the same suite are still linked through the ones that did. A GPU with no rows
for the class and precision gets a spec-based estimate: the measured speed of the
nearest measured GPU of the same architecture (nearest in log peak TFLOPS and log memory
bandwidth), scaled by the geometric mean of the two ratios. The TFLOPS are those of the
precision asked for, on both sides and never mixed: dense FP16/BF16 tensor TFLOPS
(FP32 accumulate) for mixed precision, FP32 TFLOPS for fp32. A GPU missing that figure
is compared on memory bandwidth alone. docs/performance.md has the leave-one-out error
of this rule. Each answer says whether it is measured or estimated, and from what.
"""

from __future__ import annotations

import math
from collections import defaultdict
from enum import StrEnum
from functools import lru_cache
from typing import NamedTuple


from pricing.catalog import Catalog, GpuSpec
from pricing.datafiles import data_rows


class WorkloadClass(StrEnum):
    CNN = "cnn"
    TRANSFORMER = "transformer"


class SpeedPrecision(StrEnum):
    FP32 = "fp32"
    MIXED = "mixed"  # fp16/bf16 automatic mixed precision

    @property
    def benchmark_label(self) -> str:
        return "fp16" if self is SpeedPrecision.MIXED else "fp32"


CLASS_MODELS: dict[WorkloadClass, frozenset[str]] = {
    WorkloadClass.CNN: frozenset(
        {"ResNet-50", "ResNet-152", "Inception v3", "Inception v4", "VGG16", "SSD300", "Mask R-CNN"}
    ),
    WorkloadClass.TRANSFORMER: frozenset(
        {"BERT-base SQuAD fine-tune", "BERT-large SQuAD fine-tune", "Transformer-XL base", "Transformer-XL large"}
    ),
}
# Boards with the same silicon, clocks and memory bandwidth run at the same speed; the
# V100 SXM2 16 GB rows come from a newer software stack than the 32 GB ones, and pooling
# them keeps that difference out of a hardware comparison.
SAME_SPEED = {"V100-SXM2-16GB": "V100-SXM2-32GB"}
# The 2020 blog rows do not say their precision, so they cannot join a per-precision fit.
EXCLUDED_SUITES = frozenset({"lambda-blog-2020"})


class Speed(NamedTuple):
    """Throughput of one GPU relative to a reference GPU (1.0 = as fast); a plain value, made per GPU and plan."""

    gpu: str
    ref_gpu: str
    relative: float
    measured: bool
    basis: str


class BenchmarkRow(NamedTuple):
    """One measured throughput (a plain tuple: ~1000 rows are read on every cold start)."""

    gpu_key: str
    gpu: str
    model: str
    precision: str
    batch_size: int | None
    throughput: float | None
    unit: str
    suite: str
    source: str


@lru_cache(maxsize=1)
def benchmark_rows() -> tuple[BenchmarkRow, ...]:
    out = []
    for r in data_rows("benchmarks.csv", "planner.data"):
        out.append(
            BenchmarkRow(
                gpu_key=r["gpu_key"],
                gpu=r["gpu"],
                model=r["model"],
                precision=r["precision"],
                batch_size=int(r["batch_size"]) if r["batch_size"] else None,
                throughput=float(r["throughput"]) if r["throughput"] else None,
                unit=r["unit"],
                suite=r["suite"],
                source=r["source"],
            )
        )
    return tuple(out)


def fit_speeds(rows: list[tuple[str, str, float]], iterations: int = 200) -> dict[str, float]:
    """Log speeds per GPU from (gpu, group, throughput) rows, up to a common constant.

    Alternating least squares on log t = s[gpu] + d[group]; converges when the
    bipartite graph of GPUs and groups is connected, and each component is fitted alone
    otherwise (no cross-component ratio is then meaningful; callers compare within one).
    """
    logs = [(g, k, math.log(t)) for g, k, t in rows if t > 0]
    speed: dict[str, float] = defaultdict(float)
    for _ in range(iterations):
        by_group: dict[str, list[float]] = defaultdict(list)
        for g, k, y in logs:
            by_group[k].append(y - speed[g])
        diff = {k: sum(v) / len(v) for k, v in by_group.items()}
        by_gpu: dict[str, list[float]] = defaultdict(list)
        for g, k, y in logs:
            by_gpu[g].append(y - diff[k])
        new = {g: sum(v) / len(v) for g, v in by_gpu.items()}
        shift = sum(new.values()) / len(new)
        new = {g: s - shift for g, s in new.items()}
        if all(abs(new[g] - speed[g]) < 1e-9 for g in new):
            speed = defaultdict(float, new)
            break
        speed = defaultdict(float, new)
    return dict(speed)


def _fitted(cls: WorkloadClass, precision: SpeedPrecision) -> dict[str, float]:
    rows = [
        (SAME_SPEED.get(r.gpu_key, r.gpu_key) or r.gpu, f"{r.suite}|{r.model}", r.throughput)
        for r in benchmark_rows()
        if r.model in CLASS_MODELS[cls]
        and r.precision == precision.benchmark_label
        and r.throughput
        and r.suite not in EXCLUDED_SUITES
    ]
    return fit_speeds(rows)


@lru_cache(maxsize=8)
def measured_log_speeds(catalog: Catalog, cls: WorkloadClass, precision: SpeedPrecision) -> dict[str, float]:
    """Fitted log speed per catalog GPU key for one class and precision.

    The fit depends only on the shipped benchmark rows and this module, so the program keeps it
    between runs (pricing.derived): reading the rows was most of its cost to a cold command.
    """
    from pathlib import Path

    from pricing.datafiles import data_path
    from pricing.derived import derived

    sources = [data_path("benchmarks.csv", "planner.data"), Path(__file__)]
    fitted = derived(f"speeds-{cls.value}-{precision.value}", sources, lambda: _fitted(cls, precision))
    keys = set(catalog.gpus)
    return {g: s for g, s in fitted.items() if g in keys}


# Architectures without tensor cores run mixed precision on their FP32 units; the TFLOPS
# compared are then FP32 on both sides, because every same-architecture anchor lacks
# tensor cores too.
NO_TENSOR_CORE_ARCHS = frozenset({"Kepler", "Maxwell", "Pascal"})


class SpecFigures(NamedTuple):
    """The two spec figures a speed estimate scales by (None where the catalog lacks one)."""

    tflops: float | None
    bandwidth: float | None


def spec_figures(spec: GpuSpec, precision: SpeedPrecision) -> SpecFigures:
    """Peak TFLOPS at ``precision`` and memory bandwidth, as the catalog gives them."""
    if precision is SpeedPrecision.MIXED:
        tflops = spec.tensor_fp16_tflops
        if tflops is None and spec.arch in NO_TENSOR_CORE_ARCHS:
            tflops = spec.fp32_tflops
    else:
        tflops = spec.fp32_tflops
    return SpecFigures(tflops=tflops, bandwidth=spec.mem_bw_gbs)


def _tflops_label(spec: GpuSpec, precision: SpeedPrecision) -> str:
    if precision is SpeedPrecision.FP32:
        return "FP32 TFLOPS"
    if spec.tensor_fp16_tflops is None:
        return "FP32 TFLOPS (no tensor cores)"
    return "dense FP16 tensor TFLOPS"


@lru_cache(maxsize=1024)
def log_speed(catalog: Catalog, gpu: str, cls: WorkloadClass, precision: SpeedPrecision) -> tuple[float, bool, str]:
    """(log speed, measured?, basis) for one GPU, falling back to the spec estimate."""
    measured = measured_log_speeds(catalog, cls, precision)
    gpu = SAME_SPEED.get(gpu, gpu)
    if gpu in measured:
        return measured[gpu], True, "measured (Lambda benchmark fit)"
    spec = catalog.gpus[gpu]
    mine = spec_figures(spec, precision)
    # Both figures where the GPU has both; otherwise the one it has, on both sides.
    use = [i for i, v in enumerate(mine) if v is not None]
    if not use:
        raise ValueError(f"no benchmark or spec figure to estimate {gpu}")
    anchors = [(k, s, f) for k, s in measured.items()
               if all((f := spec_figures(catalog.gpus[k], precision))[i] is not None for i in use)]
    same_arch = [a for a in anchors if catalog.gpus[a[0]].arch == spec.arch]
    pool = same_arch or anchors
    if not pool:
        raise ValueError(f"no measured GPU to estimate {gpu} from")

    def log_ratio(f: SpecFigures, i: int) -> float:
        return math.log(mine[i] / f[i])  # type: ignore[operator]

    key, s, figs = min(pool, key=lambda a: (sum(log_ratio(a[2], i) ** 2 for i in use), a[0]))
    estimate = s + sum(log_ratio(figs, i) for i in use) / len(use)
    scaled = {2: f"{_tflops_label(spec, precision)} and memory bandwidth", 1: ""}[len(use)] or (
        "memory bandwidth only (no TFLOPS figure for this precision)" if use == [1] else
        f"{_tflops_label(spec, precision)} only (no memory bandwidth figure)")
    where = f"same {spec.arch} architecture" if same_arch else f"no measured {spec.arch} GPU"
    return estimate, False, f"spec-based estimate from {key} ({where}), scaled by {scaled}"


@lru_cache(maxsize=4096)
def relative_speed(catalog: Catalog, gpu: str, ref_gpu: str, cls: WorkloadClass, precision: SpeedPrecision) -> Speed:
    """Throughput of ``gpu`` as a multiple of ``ref_gpu`` for this class and precision."""
    s, measured, basis = log_speed(catalog, gpu, cls, precision)
    r, ref_measured, _ = log_speed(catalog, ref_gpu, cls, precision)
    return Speed(
        gpu=gpu,
        ref_gpu=ref_gpu,
        relative=math.exp(s - r),
        measured=measured and ref_measured,
        basis=basis,
    )
