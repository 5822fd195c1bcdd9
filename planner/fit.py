"""``gpuplan fit``'s answer per GPU: memory breakdown, whether it fits, max batch, fewest GPUs sharded.

The entries are the JSON contract of ``fit --json`` (``fit_payload``); the CLI renders them.
"""

from __future__ import annotations

from typing import Any

from pricing.catalog import Catalog, GpuSpec


def fit_entries(w: Any, specs: list[GpuSpec], gpus: int, catalog: Catalog) -> list[dict[str, Any]]:
    """Per-GPU fit: memory breakdown, max batch, and the fewest GPUs when sharded."""
    from planner.memory import (
        fewest_gpus,
        image_max_batch,
        inference_memory,
        layout,
        training_memory,
    )
    from planner.workload import ImageWorkload, InferenceWorkload, Recompute, Sharding

    out = []
    for spec in specs:
        vram = spec.vram_gb
        entry: dict[str, Any] = {"gpu": spec.key, "vram_gb": vram, "gpus": gpus}
        if isinstance(w, InferenceWorkload):
            mem = inference_memory(w)
            mb = mem.max_batch(vram)
            need = w.batch or 1
            entry.update(fits=mb is None or mb >= need, max_batch_size=mb, memory_gb=mem.as_dict(need))
            per_gpu_weights = vram - mem.overhead - (mem.per_sample or 0) * need
            entry["fewest_gpus"] = {"gpus": -(-int(mem.weights * 1000) // max(1, int(per_gpu_weights * 1000)))
                                    if per_gpu_weights > 0 else None, "layout": "tensor-parallel weight split"}
        elif isinstance(w, ImageWorkload):
            p = w.preset
            from planner.memory import DEFAULT_OVERHEAD_GB, GIB, state_bytes_per_param
            from planner.workload import Optimizer

            # momentum SGD: the optimizer of the ImageNet recipes the batch sizes were measured with
            wb, gb, ob = state_bytes_per_param(w.precision, Optimizer.SGD)
            mb, basis = image_max_batch(w, spec, vram, catalog)
            entry.update(
                fits=mb is None or mb >= (w.batch or 1), max_batch_size=mb, max_batch_basis=basis,
                memory_gb={"weights": round(p.params * wb / GIB, 3), "gradients": round(p.params * gb / GIB, 3),
                           "optimizer": round(p.params * ob / GIB, 3), "activations_per_sample": None,
                           "overhead": w.overhead_gb if w.overhead_gb is not None else DEFAULT_OVERHEAD_GB, "total": None},
            )
        else:
            lay = layout(w, vram, gpus)
            if lay is None:
                rc = Recompute.FULL if w.recompute is Recompute.AUTO else w.recompute
                sh = Sharding.ZERO3 if (w.sharding is Sharding.AUTO and gpus > 1) else (
                    Sharding.NONE if w.sharding is Sharding.AUTO else w.sharding)
                mem = training_memory(w, gpus, sh, rc)
                entry.update(fits=False, max_batch_size=0, memory_gb=mem.as_dict(w.micro_batch or 1),
                             layout={"sharding": sh.value, "recompute": rc.value})
            else:
                entry.update(fits=True, max_batch_size=lay.max_batch, memory_gb=lay.memory.as_dict(w.micro_batch or lay.max_batch or 1),
                             layout={"sharding": lay.sharding.value, "recompute": lay.recompute.value})
            few = fewest_gpus(w, vram)
            entry["fewest_gpus"] = None if few is None else {
                "gpus": few.gpus, "sharding": few.sharding.value, "recompute": few.recompute.value,
                "max_batch_size": few.max_batch}
        out.append(entry)
    return out


def fit_payload(w: Any, entries: list[dict[str, Any]]) -> dict[str, Any]:
    """The JSON contract of ``gpuplan fit``."""
    return {"workload": w.model_dump(mode="json"), "gpus": entries,
            "assumptions": {"gb": "GiB (2**30 bytes)", "sources": "see planner/memory.py and docs/accuracy.md"}}
