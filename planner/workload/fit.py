"""``gpuplan fit``'s answer per GPU: memory breakdown, whether it fits, max batch, fewest GPUs sharded.

The entries are the JSON contract of ``fit --json`` (``fit_payload``); the CLI renders them.
"""

from __future__ import annotations

from typing import Any

from pricing.catalog import Catalog, GpuSpec


def fit_entries(w: Any, specs: list[GpuSpec], gpus: int, catalog: Catalog) -> list[dict[str, Any]]:
    """Per-GPU fit: memory breakdown, max batch, and the fewest GPUs when sharded."""
    from planner.workload.memory import (
        fewest_gpus,
        headroom_gb,
        image_max_batch,
        inference_memory,
        layout,
        offload_stage,
        training_memory,
        usable_vram,
    )
    from planner.workload.spec import ImageWorkload, InferenceWorkload, Offload, Recompute, Sharding

    out = []
    for spec in specs:
        vram = spec.vram_gb
        entry: dict[str, Any] = {"gpu": spec.key, "vram_gb": vram, "gpus": gpus}
        if not isinstance(w, ImageWorkload):  # image batches are measured on the card, not counted
            vram, basis = usable_vram(spec)
            entry.update(usable_gb=vram, usable_basis=basis)
        if isinstance(w, InferenceWorkload):
            mem = inference_memory(w)
            # as in training (memory.fitted), a fit keeps headroom free for transient peaks: the allocator's
            # fragmentation, CUDA graphs and the activations of a forward pass are not in the KV-cache count
            room = vram - headroom_gb(vram)
            mb = mem.max_batch(room)
            need = w.batch or 1
            at = w.batch or mb or 1  # the total is at --batch, else at the max batch, as training's is
            fits = (mb is None or mb >= need) and mem.total(need) <= room
            entry.update(fits=fits, max_batch_size=mb, memory_gb=mem.as_dict(at), total_at_batch=at,
                         used_share=round(mem.total(at) / vram, 4), headroom_gb=round(headroom_gb(vram), 3),
                         headroom_note=_infer_edge_note(mem, vram, room, need))
            per_gpu_weights = room - mem.overhead - (mem.per_sample or 0) * need
            entry["fewest_gpus"] = {"gpus": -(-int(mem.weights * 1000) // max(1, int(per_gpu_weights * 1000)))
                                    if per_gpu_weights > 0 else None, "layout": "tensor-parallel weight split"}
        elif isinstance(w, ImageWorkload):
            p = w.preset
            from planner.workload.memory import DEFAULT_OVERHEAD_GB, GIB, state_bytes_per_param
            from planner.workload.spec import Optimizer

            # momentum SGD: the optimizer of the ImageNet recipes the batch sizes were measured with
            wb, gb, ob = state_bytes_per_param(w.precision, Optimizer.SGD)
            mb, basis = image_max_batch(w, spec, vram, catalog)
            entry.update(
                fits=mb is None or mb >= (w.batch or 1), max_batch_size=mb, max_batch_basis=basis,
                memory_gb={"weights": round(p.params * wb / GIB, 3), "gradients": round(p.params * gb / GIB, 3),
                           "optimizer": round(p.params * ob / GIB, 3), "activations_per_sample": None,
                           "overhead": w.overhead_gb if w.overhead_gb is not None else DEFAULT_OVERHEAD_GB,
                           "total": None},
            )
        else:
            lay = layout(w, vram, gpus)
            if lay is None:
                rc = Recompute.FULL if w.recompute is Recompute.AUTO else w.recompute
                sh = Sharding.ZERO3 if (w.sharding is Sharding.AUTO and gpus > 1) else (
                    Sharding.NONE if w.sharding is Sharding.AUTO else w.sharding)
                stage = offload_stage(w, gpus) if w.offload is Offload.CPU else None
                pinned = stage is not None
                sh = stage or sh
                mem = training_memory(w, gpus, sh, rc, pinned)
                entry.update(fits=False, max_batch_size=0, memory_gb=mem.as_dict(w.micro_batch or 1),
                             total_at_batch=w.micro_batch or 1,
                             layout={"sharding": sh.value, "recompute": rc.value, "offload": pinned})
            else:
                at = w.micro_batch or lay.max_batch or 1
                entry.update(fits=True, max_batch_size=lay.max_batch, memory_gb=lay.memory.as_dict(at),
                             total_at_batch=at,
                             layout={"sharding": lay.sharding.value, "recompute": lay.recompute.value,
                                     "offload": lay.offload},
                             used_share=round(lay.memory.total(at) / vram, 4))
                if lay.offload:
                    entry["offload_note"] = (f"optimizer offloaded to the CPU: needs {lay.memory.host_offloaded:,.1f} "
                                             "GiB of host RAM per GPU for its optimizer states and fp32 gradients")
            entry.update(headroom_gb=round(headroom_gb(vram), 3), headroom_note=_edge_note(w, vram, gpus, lay))
            few = fewest_gpus(w, vram)
            entry["fewest_gpus"] = None if few is None else {
                "gpus": few.gpus, "sharding": few.sharding.value, "recompute": few.recompute.value,
                "max_batch_size": few.max_batch}
        out.append(entry)
    return out


def _keeps(vram: float, peaks: str) -> str:
    """The headroom a fit keeps, in words, with what its transient ``peaks`` are."""
    from planner.workload.memory import headroom_gb

    return f"keeps {headroom_gb(vram):.1f} GiB of {vram:g} free for transient peaks ({peaks})"


def _infer_edge_note(mem: Any, vram: float, room: float, need: int) -> str | None:
    """What keeping the headroom free changed for an inference fit, in words; None where it changed nothing."""
    keep = _keeps(vram, "allocator, CUDA graphs, workspaces")
    edge, kept = mem.max_batch(vram), mem.max_batch(room)
    if mem.total(need) <= vram and mem.total(need) > room:
        return (f"would fill {mem.total(need) / vram:.0%} of usable memory at batch {need}; not counted as fitting: "
                f"a fit {keep}")
    if edge is not None and kept is not None and edge > kept:
        return f"max batch {kept} rather than {edge}: the fit {keep}"
    return None


def _edge_note(w: Any, vram: float, gpus: int, lay: Any) -> str | None:
    """What keeping the headroom free changed, in words; None where it changed nothing."""
    from planner.workload.memory import layout

    edge = layout(w, vram, gpus, headroom=False)
    if edge is None:
        return None
    keep = _keeps(vram, "allocator, workspaces")
    if lay is None:
        return (f"would fill {edge.memory.total(w.micro_batch or 1) / vram:.0%} of usable memory with "
                f"{edge.describe()}; "
                f"not counted as fitting: a fit {keep}")
    if (lay.sharding, lay.recompute) != (edge.sharding, edge.recompute):
        return (f"{lay.describe()} rather than {edge.describe()}, which would fill "
                f"{edge.memory.total(w.micro_batch or edge.max_batch or 1) / vram:.0%} of usable memory: "
                f"the fit {keep}")
    if edge.max_batch is not None and lay.max_batch is not None and edge.max_batch > lay.max_batch:
        return f"max micro-batch {lay.max_batch} rather than {edge.max_batch}: the fit {keep}"
    return None


def model_summary(w: Any) -> dict[str, Any] | None:
    """What the memory and FLOPs counts assumed about a transformer: counts, method, shape and its origin."""
    from planner.workload.params import expert_params, param_groups
    from planner.workload.shapes import RULE
    from planner.workload.spec import InferenceWorkload, TrainingWorkload

    if not isinstance(w, TrainingWorkload | InferenceWorkload):
        return None
    a = w.arch
    out: dict[str, Any] = {
        "params": a.params, "active_params": a.active_params, "experts": a.experts,
        "experts_per_token": a.experts_per_token, "expert_params": expert_params(a) or None,
        "shape": {"layers": a.layers, "hidden": a.hidden, "heads": a.heads, "kv_heads": a.kv_heads, "vocab": a.vocab,
                  "ffn_hidden": a.ffn_hidden, "inferred": a.shape_inferred, "inferred_fields": list(a.inferred),
                  "rule": RULE if a.shape_inferred else None},
    }
    if isinstance(w, TrainingWorkload):
        out["method"] = w.method.value
        out["trainable_params"] = param_groups(w).adapters if w.method.value != "full" else a.params
    return out


def workload_notes(w: Any) -> list[str]:
    """One line per thing the user should know about how ``w`` was counted."""
    from planner.workload.memory import expert_parallel
    from planner.workload.params import NF4_DQ_BITS, param_groups
    from planner.workload.spec import InferenceWorkload, Method, TrainingWorkload

    if not isinstance(w, TrainingWorkload | InferenceWorkload):
        return []
    a = w.arch
    notes = []
    if a.shape_inferred:
        notes.append(f"shape inferred from {a.compute_params:.3g} parameters: {a.layers} layers, hidden {a.hidden}, "
                     f"{a.heads} heads, vocab {a.vocab} (GPT-3 family rule, docs/memory.md); give --layers/--hidden/"
                     "--heads or a preset --model for the real one")
    if a.moe:
        assert a.active_params is not None
        what = "weights" if isinstance(w, InferenceWorkload) else "weights, gradients and optimizer states"
        line = (f"mixture of experts: memory holds all {a.params / 1e9:.3g}B parameters' {what}; "
                f"FLOPs use the {a.active_params / 1e9:.3g}B active ones")
        if a.experts and isinstance(w, TrainingWorkload):
            line += (f"; the {a.experts} experts are split over the job's GPUs (expert parallel, up to "
                     f"{expert_parallel(w, a.experts)} ways)")
        elif isinstance(w, TrainingWorkload):
            line += "; experts are not split without --experts and --experts-per-token (counted as dense)"
        notes.append(line)
    if isinstance(w, TrainingWorkload) and w.method is not Method.FULL:
        g = param_groups(w)
        base = (f"NF4 with double quantization, {NF4_DQ_BITS:.3f} bits/param (QLoRA paper); embeddings and output "
                "head 16-bit" if w.method is Method.QLORA else ("bf16/fp16" if w.precision.mixed else "fp32"))
        notes.append(f"{w.method.value}: frozen base weights in {base}; only the {g.adapters / 1e6:,.1f}M rank-"
                     f"{w.lora_rank} adapter parameters ({w.lora_targets.value}) have gradients and optimizer states")
        notes.append("activations counted as for full training: an upper bound, a frozen layer need not keep its input")
    return notes


def fit_payload(w: Any, entries: list[dict[str, Any]]) -> dict[str, Any]:
    """The JSON contract of ``gpuplan fit``."""
    return {"workload": w.model_dump(mode="json"), "model": model_summary(w), "shape_inferred":
            bool(getattr(getattr(w, "arch", None), "shape_inferred", False)), "gpus": entries,
            "notes": workload_notes(w),
            "assumptions": {"gb": "GiB (2**30 bytes)",
                            "sources": "see planner/memory.py, docs/memory.md and docs/accuracy.md"}}
