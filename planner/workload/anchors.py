"""The sourced utilisation anchors (``planner/data/mfu.csv``) and the dense peak each is measured against.

Apart from :mod:`planner.workload.estimate` so that the models fitted on the anchors
(:mod:`planner.workload.utilisation`, :mod:`planner.workload.fp8`) and the estimate that uses them need not import
each other.
"""

from __future__ import annotations

from functools import lru_cache

from pydantic import BaseModel, ConfigDict

from pricing.catalog import Catalog, GpuSpec
from pricing.datafiles import data_rows
from pricing.errors import InputError
from planner.workload.spec import Precision

FP8_ARCHS = frozenset({"Hopper", "Ada Lovelace", "Blackwell"})
TF32_ARCHS = frozenset({"Ampere", "Ada Lovelace", "Hopper", "Blackwell"})


class MfuAnchor(BaseModel):
    model_config = ConfigDict(frozen=True)

    run: str
    gpu_key: str
    gpu_count: int | None
    mfu: float | None
    hfu: float | None
    tflops_per_gpu: float | None
    precision: str
    recompute: str
    source: str

    @property
    def fp8(self) -> bool:
        return self.precision == "fp8"

    def utilization(self, catalog: Catalog) -> float | None:
        """Hardware FLOP utilization: HFU, else MFU, else TFLOP/s over the dense peak."""
        if self.hfu is not None:
            return self.hfu
        if self.mfu is not None:
            return self.mfu
        if self.tflops_per_gpu is not None:
            peak, _ = peak_tflops(catalog.gpus[self.gpu_key], Precision.FP8 if self.fp8 else Precision.BF16)
            return self.tflops_per_gpu / peak
        return None


def _opt(text: str) -> float | None:
    return float(text) if text.strip() else None


@lru_cache(maxsize=1)
def mfu_anchors() -> tuple[MfuAnchor, ...]:
    return tuple(
        MfuAnchor(
            run=r["run"], gpu_key=r["gpu_key"], gpu_count=int(r["gpu_count"]) if r["gpu_count"] else None,
            mfu=_opt(r["mfu"]), hfu=_opt(r["hfu"]), tflops_per_gpu=_opt(r["tflops_per_gpu"]),
            precision=r["precision"], recompute=r["recompute"], source=r["source"],
        )
        for r in data_rows("mfu.csv", "planner.data")
    )


def peak_tflops(spec: GpuSpec, precision: Precision) -> tuple[float, str]:
    """Dense peak TFLOP/s for the precision, and which spec figure it is."""
    tensor = spec.tensor_fp16_tflops
    if precision is Precision.FP8:
        if spec.arch not in FP8_ARCHS or tensor is None:
            raise InputError(f"{spec.key} ({spec.arch}) has no FP8 tensor cores", "use --precision bf16")
        return 2 * tensor, "FP8 dense = 2x FP16 dense tensor"
    if precision is Precision.FP32:
        if spec.arch in TF32_ARCHS and tensor is not None:
            return tensor / 2, "TF32 dense = 1/2 FP16 dense tensor"
        if spec.fp32_tflops is None:
            raise InputError(f"no FP32 TFLOPS for {spec.key} in the catalog")
        return spec.fp32_tflops, "FP32"
    if tensor is not None:
        return tensor, "FP16/BF16 dense tensor"
    if spec.fp32_tflops is None:
        raise InputError(f"no TFLOPS figure for {spec.key} in the catalog")
    return spec.fp32_tflops, "FP32 (no tensor-core figure in the catalog)"
