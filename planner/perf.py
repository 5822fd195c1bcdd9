"""How fast each GPU is relative to another, per workload class and precision.

Measured first: the shipped Lambda benchmark rows (``data/benchmarks.csv``) are fitted
with a log-linear model, log(throughput) = speed[gpu] + difficulty[suite, model], by
alternating least squares, so every suite and model contributes and GPUs that never
ran in the same suite are still linked through the ones that did. A GPU with no rows
for the class and precision gets a spec-based estimate: the measured speed of the
nearest GPU of the same architecture, scaled by the ratio of the spec that bounds the
class (tensor TFLOPS for CNNs, which are compute-bound; the geometric mean of tensor
TFLOPS and memory bandwidth for transformers, which are memory-bound). Each answer
says which of the two it is.
"""

from __future__ import annotations

import math
from collections import defaultdict
from enum import StrEnum
from functools import lru_cache
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict

from pricing.catalog import Catalog, GpuSpec, data_rows


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


class Speed(BaseModel):
    """Throughput of one GPU relative to a reference GPU (1.0 = as fast)."""

    model_config = ConfigDict(frozen=True)

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


@lru_cache(maxsize=8)
def measured_log_speeds(catalog: Catalog, cls: WorkloadClass, precision: SpeedPrecision) -> dict[str, float]:
    """Fitted log speed per catalog GPU key for one class and precision."""
    rows = [
        (SAME_SPEED.get(r.gpu_key, r.gpu_key) or r.gpu, f"{r.suite}|{r.model}", r.throughput)
        for r in benchmark_rows()
        if r.model in CLASS_MODELS[cls]
        and r.precision == precision.benchmark_label
        and r.throughput
        and r.suite not in EXCLUDED_SUITES
    ]
    fitted = fit_speeds(rows)
    keys = set(catalog.gpus)
    return {g: s for g, s in fitted.items() if g in keys}


def spec_metric(spec: GpuSpec, cls: WorkloadClass, precision: SpeedPrecision) -> float | None:
    """The spec figure that bounds this class's throughput, or None if the catalog lacks it."""
    compute = spec.tensor_fp16_tflops if precision is SpeedPrecision.MIXED else spec.fp32_tflops
    if compute is None:
        compute = spec.fp32_tflops  # no tensor cores: mixed precision runs on the FP32 units
    if cls is WorkloadClass.CNN or compute is None:
        return compute
    if spec.mem_bw_gbs is None:
        return None
    return math.sqrt(compute * spec.mem_bw_gbs)


@lru_cache(maxsize=1024)
def log_speed(catalog: Catalog, gpu: str, cls: WorkloadClass, precision: SpeedPrecision) -> tuple[float, bool, str]:
    """(log speed, measured?, basis) for one GPU, falling back to the spec estimate."""
    measured = measured_log_speeds(catalog, cls, precision)
    gpu = SAME_SPEED.get(gpu, gpu)
    if gpu in measured:
        return measured[gpu], True, "measured (Lambda benchmark fit)"
    spec = catalog.gpus[gpu]
    metric = spec_metric(spec, cls, precision)
    anchors = [
        (k, s, m)
        for k, s in measured.items()
        if (m := spec_metric(catalog.gpus[k], cls, precision)) is not None
    ]
    if metric is None or not anchors:
        metric = spec.mem_bw_gbs
        anchors = [(k, s, m) for k, s in measured.items() if (m := catalog.gpus[k].mem_bw_gbs)]
        if metric is None or not anchors:
            raise ValueError(f"no benchmark or spec figure to estimate {gpu}")
    same_arch = [a for a in anchors if catalog.gpus[a[0]].arch == spec.arch] or anchors
    key, s, m = min(same_arch, key=lambda a: abs(math.log(a[2] / metric)))
    return s + math.log(metric / m), False, f"spec-based estimate scaled from {key}"


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
