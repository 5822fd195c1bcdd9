"""``gpuplan fit`` and ``gpuplan estimate``: memory fit and run time from a model description.

Both take the workload as flags (``--model llama-2-7b --tokens 2e10``) or as a TOML file
(``--workload examples/llama2-7b-finetune.toml``), built by
:func:`planner.workload.inputs.workload_from_options`, which ``gpuplan plan`` shares.
"""

# No `from __future__ import annotations`: typer evaluates option annotations at run time.

from decimal import Decimal
from typing import Annotated, Any, Optional

import typer

from pricing.errors import InputError
from gpuplan.cli.app import command_app
from gpuplan.cli.serve_opts import MODEL as SERVE_MODEL, ServingFlags, given, takes_serving
from gpuplan.cli.options import (
    MEMORY, MODEL_AND_TRAINING, RUN, SHAPE, TRAINING_ONLY, JsonOpt, OutputOpt, WideOpt, WorkloadFlags, catalog_from,
    emit, parse_multi, settings_from, takes_workload, use_wide,
)

app = command_app()  # the root loads this module when one of its commands runs (gpuplan.cli.app)


def _gpu_specs(cat: Any, names: list[str] | None) -> list[Any]:
    if flat := parse_multi(names, "--gpu"):
        return list({s.key: s for n in flat for s in cat.gpu_family(n)}.values())
    return sorted(cat.gpus.values(), key=lambda g: (g.vram_gb, g.key))



@app.command()
@takes_workload(MODEL_AND_TRAINING, SHAPE, MEMORY)
def fit(
    *,
    workload: WorkloadFlags,  # --help lists the flags of MODEL_AND_TRAINING, SHAPE and MEMORY here (takes_workload)
    gpu: Annotated[Optional[list[str]], typer.Option(
        "--gpu", help="Only these GPUs (repeatable; a family such as h100 selects every variant). "
                      "[default: all]")] = None,
    gpus: Annotated[int, typer.Option("--gpus", help="GPUs the job is spread over (sharding needs more than 1).")] = 1,
    list_models: Annotated[bool, typer.Option("--list-models", help="List the model presets and exit.")] = False,
    output: OutputOpt = None,
    as_json: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """Memory per GPU (weights, gradients, optimizer, activations), whether it fits, the max batch, and the fewest \
GPUs when sharded."""
    from planner.workload.fit import fit_entries, fit_payload, workload_notes
    from planner.limits import check, check_fields
    from gpuplan.render.table import Column, OutputFormat, dump_json, pick_format, render_rows
    from planner.workload.inputs import workload_from_options

    fmt = pick_format(output, as_json)
    use_wide(wide)
    if list_models:
        _list_models(fmt)
        return
    if gpus < 1:
        raise InputError(f"--gpus must be 1 or more, got {gpus}")
    check("gpus", Decimal(gpus))
    w = workload_from_options(**workload)
    check_fields(w)
    cat = catalog_from(settings_from())
    entries = fit_entries(w, _gpu_specs(cat, gpu), gpus, cat)
    if fmt is OutputFormat.JSON:
        emit(dump_json(fit_payload(w, entries)))
        return
    rows = []
    for e in entries:
        m = e["memory_gb"]
        few = e.get("fewest_gpus") or {}
        rows.append({
            "gpu": e["gpu"], "vram": f"{e['vram_gb']:g}", "usable": f"{e.get('usable_gb', e['vram_gb']):g}",
            "fits": "yes" if e["fits"] else "no",
            "max_batch": e["max_batch_size"], "weights": _gb(m["weights"]), "grads": _gb(m["gradients"]),
            "optim": _gb(m["optimizer"]), "act": _gb(m.get("activations_per_sample") or m.get("kv_cache_per_sample")),
            "total": _gb(m["total"]),
            "layout": _layout_text(e.get("layout") or {}),
            "fewest": few.get("gpus"),
        })
    cols = [Column(key="gpu", header="GPU", priority=0),
            Column(key="vram", header="VRAM GB", justify="right", priority=2),
            Column(key="usable", header="usable", justify="right", priority=3),
            Column(key="fits", header="fits", priority=0),
            Column(key="max_batch", header="max batch", justify="right", priority=1),
            Column(key="weights", header="weights", justify="right", priority=3),
            Column(key="grads", header="grads", justify="right", priority=4),
            Column(key="optim", header="optimizer", justify="right", priority=4),
            Column(key="act", header="act/KV per sample", justify="right", priority=3),
            Column(key="total", header="total", justify="right", priority=0),
            Column(key="layout", header="layout", priority=2),
            Column(key="fewest", header="fewest GPUs sharded", justify="right", priority=1)]
    from planner.workload.spec import Method, TrainingWorkload

    arch = getattr(w, "arch", None)
    name = str(getattr(arch, "name", None) or getattr(w, "model", "workload"))
    if arch is not None and arch.shape_inferred:
        name += (f" ({arch.params:.3g} params, shape inferred: {arch.layers} layers x {arch.hidden} hidden, "
                 f"{arch.heads} heads)")
    if isinstance(w, TrainingWorkload) and w.method is not Method.FULL:
        name += f", {w.method.value} rank {w.lora_rank}"
    notes = " ".join(f"Note: {n}." for n in workload_notes(w))
    notes += "".join(f" Note: {e['gpu']}: {e['headroom_note']}." for e in entries if e.get("headroom_note"))
    notes += "".join(f" Note: {e['gpu']}: {e['offload_note']}." for e in entries if e.get("offload_note"))
    emit(render_rows(rows, cols, fmt, title=f"Memory fit of {name} per GPU ({gpus} GPU{'s' if gpus > 1 else ''}), GB",
                      caption="GB = GiB. total is at --batch if given, else at the max batch (batch 1 if none fits); "
                              "JSON: total_at_batch. usable: the memory a process can use, which the fit is against "
                              "(measured where a figure ships, else the label's)." + (f" {notes}" if notes else "")))

@app.command()
@takes_workload(MODEL_AND_TRAINING, RUN, SHAPE)
@takes_serving(SERVE_MODEL)
def estimate(
    gpu: Annotated[str, typer.Option("--gpu", help="GPU type, e.g. A100-80GB, v100, 'rtx 2080 ti'.")],
    gpus: Annotated[float, typer.Option("--gpus", help="Number of GPUs.")] = 1,
    *,
    workload: WorkloadFlags,  # --help lists the flags of MODEL_AND_TRAINING, RUN and SHAPE here (takes_workload)
    serving: ServingFlags,  # --help lists the serving flags of SERVE_MODEL here (takes_serving)
    output: OutputOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """GPU-hours and wall-clock time of a training workload on GPUS x GPU, with a calibrated low-high range;
    with --serve, the output tokens/s a served model reaches there (--precision takes bf16, fp16, fp8, int8, int4)."""
    import math

    if (serve := serving.get("serve")) is not None:
        flags = {k: v for k, v in serving.items() if k != "serve"}
        _serve_estimate(serve, gpu, gpus, workload, output, as_json, **flags)
        return
    if given(serving):
        raise InputError("--prompt-tokens, --output-tokens, --ttft, --tpot, --percentile, --kv-precision and "
                         "--max-batch describe serving", "add --serve MODEL")

    from planner.workload.estimate import estimate_images
    from planner.limits import check, check_fields
    from gpuplan.render.table import Column, OutputFormat, dump_json, pick_format, render_rows
    from planner.workload.spec import InferenceWorkload, TrainingWorkload
    from planner.workload.inputs import workload_from_options

    fmt = pick_format(output, as_json)
    if not math.isfinite(gpus) or gpus <= 0:
        raise InputError(f"--gpus must be positive, got {gpus:g}")
    check("gpus", Decimal(repr(gpus)))
    cat = catalog_from(settings_from())
    spec = cat.gpu(gpu)
    w = workload_from_options(**workload)
    check_fields(w)
    notes: list[str] = []
    scaling: dict[str, Any] | None = None
    if isinstance(w, InferenceWorkload):
        raise InputError("estimate covers training", "use `gpuplan fit --infer` for inference memory")
    if isinstance(w, TrainingWorkload):
        from planner.plan.estimate_cluster import estimate_with_layout
        from planner.plan.moe_share import share

        est, scaling = estimate_with_layout(w, spec, gpus, cat, moe_factor=share(w, cat), notes=notes)
    else:
        est = estimate_images(w, spec, gpus, spec.interconnect, catalog=cat)
    from planner.workload.fit import model_summary
    from planner.workload.ranges import estimate_payload, range_for

    rng = range_for(w, spec, gpus, cat)
    payload = {**estimate_payload(est, rng), "notes": [*est.notes, *notes], "workload": w.model_dump(mode="json")}
    if scaling is not None:
        payload["scaling"] = scaling
    if (summary := model_summary(w)) is not None:
        payload["model"] = summary
        payload["shape_inferred"] = summary["shape"]["inferred"]
    if fmt is OutputFormat.JSON:
        emit(dump_json(payload))
        return
    gh, wh = rng.of(est.gpu_hours), rng.of(est.wall_hours)
    rows = [{"what": "GPU-hours", "value": f"{gh['expected']:,.1f} expected, {gh['low']:,.1f} to {gh['high']:,.1f}"},
            {"what": "wall-clock", "value": f"{wh['expected']:,.1f} h ({wh['expected'] / 24:,.1f} days) expected, "
                                            f"{wh['low']:,.1f} to {wh['high']:,.1f} h, on {gpus:g}x {spec.key}"},
            {"what": "range", "value": rng.basis}]
    if est.flops is not None:
        rows.append({"what": "training FLOPs", "value": f"{est.flops:.3e}"})
    rows += [{"what": k, "value": _value_text(v)} for k, v in est.assumptions.items()]
    rows += [{"what": "note", "value": n} for n in payload["notes"]]
    emit(render_rows(rows, [Column(key="what", header="what", priority=0), Column(key="value", header="value")], fmt,
                      title="Estimate"))


def _serve_estimate(serve: str, gpu: str, gpus: float, workload: WorkloadFlags, output: Any, as_json: bool,
                    **flags: Any) -> None:
    """``estimate --serve``: parse, call :func:`planner.serve.estimate.serve_estimate`, render."""
    import math

    from gpuplan.render.table import Column, OutputFormat, dump_json, pick_format, render_rows
    from planner.serve.estimate import serve_estimate
    from planner.serve.inputs import serve_workload_from_options

    fmt = pick_format(output, as_json)
    given = sorted(k for k in TRAINING_ONLY if workload.get(k) not in (None, False))  # type: ignore[misc]
    if given:
        flag = "--" + given[0].replace("_", "-").replace("workload-file", "workload")
        raise InputError(f"{flag} describes training; --serve names the served model",
                         "drop it, or drop --serve to estimate training")
    if not math.isfinite(gpus) or gpus < 1 or gpus != int(gpus) or gpus > 64:
        raise InputError(f"--gpus for serving must be a whole number from 1 to 64 (one machine), got {gpus:g}")
    w = serve_workload_from_options(
        serve, params=workload.get("params"), layers=workload.get("layers"), hidden=workload.get("hidden"),
        heads=workload.get("heads"), kv_heads=workload.get("kv_heads"), vocab=workload.get("vocab"),
        precision=workload.get("precision"), active_params=workload.get("active_params"),
        experts=workload.get("experts"), experts_per_token=workload.get("experts_per_token"), **flags)
    cat = catalog_from(settings_from())
    spec = cat.gpu(gpu)
    payload = serve_estimate(w, spec, int(gpus), spec.interconnect.among(gpus))  # a bridge pairs two, no more
    if fmt is OutputFormat.JSON:
        emit(dump_json(payload))
        return
    rows = [{"what": "model", "value": f"{w.arch.name} ({w.arch.params / 1e9:.1f}B), {w.weights} weights, "
                                      f"{w.kv} KV cache, {payload['memory']['weights_gib']:,.1f} GiB of weights"},
            {"what": "request", "value": f"{w.prompt_tokens:,} prompt + {w.output_tokens:,} output tokens"}]
    if not payload["fits"]:
        rows.append({"what": "does not fit", "value": payload["reason"]})
    for key, label in (("max_throughput", "max throughput"), ("at_targets", "at the targets")):
        part = payload.get(key)
        if not part:
            continue
        if "reason" in part:
            rows.append({"what": label, "value": part["reason"]})
            continue
        t, r, lay = part["output_tokens_per_s"], part["requests_per_s"], part["layout"]
        rows.append({"what": label, "value": f"{t['expected']:,.0f} output tokens/s ({t['low']:,.0f} to "
                                             f"{t['high']:,.0f}), {r['expected']:,.2f} requests/s"})
        rows.append({"what": "  layout", "value": f"{lay['replicas']} replica(s) x TP {lay['tensor_parallel']}, batch "
                                                  f"{lay['batch_per_replica']} (memory allows "
                                                  f"{lay['max_batch_by_memory']}; "
                                                  f"limited by {lay['batch_limited_by']})"})
        rows.append({"what": "  latency", "value": f"TTFT {w.percentile} {lay['ttft_s'] * 1000:,.0f} ms, "
                                                   f"TPOT {lay['tpot_s'] * 1000:,.1f} ms"})
    rows.append({"what": "range", "value": payload["range"]})
    rows += [{"what": "note", "value": n} for n in payload["notes"]]
    emit(render_rows(rows, [Column(key="what", header="what", priority=0), Column(key="value", header="value")], fmt,
                     title=f"Serving estimate on {int(gpus)}x {spec.key}"))


def _value_text(v: Any) -> str:
    """A whole number as people write it (7,000,000,000 params, not 7000000000.0); anything else as it is."""
    if isinstance(v, float) and v.is_integer():
        return f"{int(v):,}"
    return str(v)


def _layout_text(lay: dict[str, Any]) -> str:
    """'ZeRO-3 + full recompute' from fit's layout; each part named, so 'full' never reads as full sharding."""
    parts = []
    sharding, recompute = lay.get("sharding") or "none", lay.get("recompute") or "none"
    if sharding != "none":
        parts.append(sharding.upper().replace("ZERO", "ZeRO-"))
    if lay.get("offload"):
        parts.append("CPU offload")
    if recompute != "none":
        parts.append(f"{recompute} recompute")
    return " + ".join(parts) or "-"


def _gb(v: float | None) -> str | None:
    return None if v is None else f"{v:,.2f}"


def _list_models(fmt: Any) -> None:
    from gpuplan.render.table import Column, OutputFormat, dump_json, render_rows
    from planner.workload.presets import presets

    ps = list(presets().values())
    if fmt is OutputFormat.JSON:
        emit(dump_json({"models": [p.model_dump(mode="json") for p in ps]}))
        return
    rows = [{"name": p.name, "kind": p.kind.value, "params": f"{p.params / 1e9:.2f}B", "layers": p.layers,
             "hidden": p.hidden, "heads": p.heads, "kv_heads": p.kv_heads, "source": p.source[:60]} for p in ps]
    order = {"name": 0, "params": 1, "kind": 2, "layers": 3, "hidden": 3, "heads": 4, "kv_heads": 4, "source": 5}
    cols = [Column(key=k, header=k, priority=order[k])
            for k in ("name", "kind", "params", "layers", "hidden", "heads", "kv_heads", "source")]
    emit(render_rows(rows, cols, fmt, title="Model presets"))
