"""``estimate --serve``: output tokens/s of a served model on one machine, with its layout and range."""

from __future__ import annotations

from typing import Any

from pricing.catalog import GpuSpec, Interconnect
from planner.serve.calibration import Calibration, gpus_measured, shipped
from planner.serve.layout import Layout, best_layout
from planner.serve.roofline import MEMORY_FRACTION
from planner.serve.spec import ServeWorkload
from planner.workload.memory import GIB


def _rates(layout: Layout, w: ServeWorkload, c: Calibration) -> dict[str, Any]:
    tokens = c.spread.of(layout.tokens_per_s)
    return {"output_tokens_per_s": {k: round(v, 1) for k, v in tokens.items()},
            "requests_per_s": {k: round(v / w.output_tokens, 3) for k, v in tokens.items()},
            "layout": layout.as_json()}


def serve_estimate(w: ServeWorkload, gpu: GpuSpec, gpus: int, interconnect: Interconnect,
                   c: Calibration | None = None) -> dict[str, Any]:
    """The JSON contract of ``gpuplan estimate --serve``: raises nothing for a model that does not fit, it says so."""
    c = c or shipped(w.engine)
    m = w.model
    notes: list[str] = []
    measured, fitted = gpus_measured()
    if c.borrowed_from is not None:
        notes.append(f"no published {w.engine.title} result with its setup stated: its figures use "
                     f"{c.borrowed_from.title}'s constants")
    if gpu.key not in measured:
        notes.append(f"no published serving result on {gpu.key}: its figures come from its datasheet bandwidth and "
                     f"FLOPs with constants fitted on {', '.join(sorted(fitted))} runs")
    if w.arch.moe:
        notes.append(f"mixture of experts: a decode step reads only the experts its tokens are routed to "
                     f"({w.arch.experts_per_token} of {w.arch.experts} per token, E(1-(1-k/E)^B) of them at batch B); "
                     "all of them stay in memory; FLOPs use the active parameters")
    if w.arch.shape_inferred:
        notes.append(f"shape inferred from the parameter count: {w.arch.layers} layers, hidden {w.arch.hidden}")
    if m.weights.tensor_multiplier(gpu.arch) == 1 and m.weights.value in ("fp8", "int8"):
        notes.append(f"{gpu.arch} has no {m.weights.value} tensor rate: weights are stored in {m.weights.value} and "
                     "the matmuls run in 16 bits")
    top = best_layout(w, gpu, gpus, interconnect, c, targets=False)
    payload: dict[str, Any] = {
        "workload": w.as_json(), "gpu": gpu.key, "gpus": gpus,
        "memory": {"weights_gib": round(m.weight_bytes / GIB, 2),
                   "kv_cache_mib_per_token": round(m.kv_bytes_per_token / 2**20, 4),
                   "usable_fraction": MEMORY_FRACTION},
        "range": c.spread.basis,
        "calibration": {"engine": w.engine.value, "memory_bandwidth_fraction": round(c.efficiency.memory, 4),
                        "compute_fraction": round(c.efficiency.compute, 4),
                        "seconds_per_pass": c.efficiency.pass_s, "seconds_per_request": c.efficiency.request_s,
                        "seconds_per_sequence_per_pass": c.efficiency.seq_s, "overlap": c.efficiency.overlap,
                        "seconds_per_allreduce": c.efficiency.allreduce_s,
                        "borrowed_from": c.borrowed_from.value if c.borrowed_from else None,
                        "fit_runs": c.fit_runs},
    }
    if isinstance(top, str):
        return {**payload, "fits": False, "reason": top, "max_throughput": None, "at_targets": None,
                "output_tokens_per_s": None, "notes": notes}
    payload |= {"fits": True, "reason": None, "max_throughput": _rates(top, w, c), "at_targets": None}
    if w.has_targets:
        at = best_layout(w, gpu, gpus, interconnect, c, targets=True)
        payload["at_targets"] = {"reason": at} if isinstance(at, str) else _rates(at, w, c)
    payload["output_tokens_per_s"] = payload["max_throughput"]["output_tokens_per_s"]
    payload["notes"] = notes
    return payload
