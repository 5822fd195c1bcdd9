"""``gpuplan fit`` and ``gpuplan estimate``: memory fit and run time from a model description.

Both take the workload as flags (``--model llama-2-7b --tokens 2e10``) or as a TOML file
(``--workload examples/llama2-7b-finetune.toml``); :func:`workload_from_options` is
shared with ``gpuplan plan``. Heavy modules are imported inside the commands.
"""

# No `from __future__ import annotations` here: typer would have to eval every option
# annotation of every command at start-up, which costs a cold `gpuplan plan` ~0.1 s.

from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from pricing.errors import InputError

if TYPE_CHECKING:
    from planner.workload import ImageWorkload, InferenceWorkload, TrainingWorkload

WorkloadFileOpt = Annotated[Optional[str], typer.Option("--workload", help="Workload TOML file (see examples/).")]
ModelOpt = Annotated[Optional[str], typer.Option("--model", help="Preset name, e.g. llama-2-7b, bert-large, resnet50.")]
ParamsOpt = Annotated[Optional[float], typer.Option("--params", help="Parameters, e.g. 7e9 (overrides the preset).")]
LayersOpt = Annotated[Optional[int], typer.Option("--layers", help="Transformer layers.")]
HiddenOpt = Annotated[Optional[int], typer.Option("--hidden", help="Hidden size.")]
HeadsOpt = Annotated[Optional[int], typer.Option("--heads", help="Attention heads.")]
KvHeadsOpt = Annotated[Optional[int], typer.Option("--kv-heads", help="Key/value heads (GQA).")]
VocabOpt = Annotated[Optional[int], typer.Option("--vocab", help="Vocabulary size.")]
TokensOpt = Annotated[Optional[float], typer.Option("--tokens", help="Training tokens, e.g. 2e10.")]
SeqLenOpt = Annotated[Optional[int], typer.Option("--seq-len", help="Training sequence length. [default: 2048]")]
BatchOpt = Annotated[Optional[int], typer.Option("--batch", help="Micro-batch per GPU (training) or sequences (inference).")]
PrecisionOpt = Annotated[Optional[str], typer.Option("--precision", help="fp32, fp16, bf16 or fp8. [default: bf16]")]
OptimizerOpt = Annotated[Optional[str], typer.Option("--optimizer", help="adamw, sgd, adafactor or adam8bit. [default: adamw]")]
RecomputeOpt = Annotated[Optional[str], typer.Option("--recompute", help="auto, none, selective or full. [default: auto]")]
FlashOpt = Annotated[Optional[bool], typer.Option("--flash/--no-flash", help="Flash attention. [default: on]")]
ShardingOpt = Annotated[Optional[str], typer.Option("--sharding", help="auto, none, zero1, zero2, zero3 or fsdp. [default: auto]")]
MfuOpt = Annotated[Optional[float], typer.Option("--mfu", help="Model FLOPs utilization, e.g. 0.4 (default: per GPU generation).")]
OverheadOpt = Annotated[Optional[float], typer.Option("--overhead", help="Goodput overhead, e.g. 0.1 = 10% (default: derived).")]
OverheadGbOpt = Annotated[Optional[float], typer.Option("--overhead-gb", help="Framework memory per GPU in GB. [default: 1.25]")]
ImagesOpt = Annotated[Optional[float], typer.Option("--images", help="Dataset images, e.g. 1281167 (image models).")]
EpochsOpt = Annotated[Optional[float], typer.Option("--epochs", help="Epochs over the images. [default: 1]")]
InferOpt = Annotated[bool, typer.Option("--infer", help="Inference (weights + KV cache) instead of training.")]
WeightBitsOpt = Annotated[Optional[int], typer.Option("--weight-bits", help="Inference weight bits: 16, 8 or 4. [default: 16]")]
ContextOpt = Annotated[Optional[int], typer.Option("--context", help="Inference context length. [default: 4096]")]


def workload_from_options(
    *,
    workload_file: str | None = None,
    model: str | None = None,
    params: float | None = None,
    layers: int | None = None,
    hidden: int | None = None,
    heads: int | None = None,
    kv_heads: int | None = None,
    vocab: int | None = None,
    tokens: float | None = None,
    seq_len: int | None = None,
    batch: int | None = None,
    precision: str | None = None,
    optimizer: str | None = None,
    recompute: str | None = None,
    flash: bool | None = None,
    sharding: str | None = None,
    mfu: float | None = None,
    overhead: float | None = None,
    overhead_gb: float | None = None,
    images: float | None = None,
    epochs: float | None = None,
    infer: bool = False,
    weight_bits: int | None = None,
    context: int | None = None,
) -> "TrainingWorkload | InferenceWorkload | ImageWorkload":
    """One workload from a TOML file or from flags (not both)."""
    from planner.cli import parse_enum
    from planner.workload import (
        ImageWorkload,
        InferenceWorkload,
        ModelKind,
        Optimizer,
        Precision,
        Recompute,
        Sharding,
        TrainingWorkload,
        arch_for,
        build,
        count,
        load_workload,
        preset,
    )

    if workload_file is not None:
        if model is not None or params is not None:
            raise InputError("give either --workload or --model/--params, not both")
        w = load_workload(workload_file)
        if w.kind == "gpu-hours":
            raise InputError("this command needs a model workload, not plain GPU-hours",
                             "use `gpuplan plan --gpu-hours` for those")
        return w  # type: ignore[return-value]
    prec = Precision.parse(precision) if precision else None
    tokens, images, params = count(tokens, "--tokens"), count(images, "--images"), count(params, "--params")
    if (model is not None and preset(model).kind is ModelKind.IMAGE) or images is not None:
        if model is None:
            raise InputError("--images needs an image model", "e.g. --model resnet50")
        return build(ImageWorkload, model=preset(model).name, images=images, epochs=epochs, precision=prec,
                     batch=batch, overhead=overhead, overhead_gb=overhead_gb)
    arch = arch_for(model, params, layers=layers, hidden=hidden, heads=heads, kv_heads=kv_heads, vocab=vocab)
    if infer:
        return build(InferenceWorkload, arch=arch, weight_bits=weight_bits, context=context, batch=batch,
                     overhead_gb=overhead_gb)

    return build(
        TrainingWorkload, arch=arch, tokens=tokens, seq_len=seq_len, micro_batch=batch, precision=prec,
        optimizer=parse_enum(Optimizer, optimizer, "--optimizer"),
        recompute=parse_enum(Recompute, recompute, "--recompute"),
        flash_attention=flash, sharding=parse_enum(Sharding, sharding, "--sharding"), mfu=mfu, overhead=overhead,
        overhead_gb=overhead_gb,
    )


def _gpu_specs(names: list[str] | None) -> list[Any]:
    from pricing.catalog import default_catalog
    from planner.cli import parse_multi

    cat = default_catalog()
    if flat := parse_multi(names):
        return list({s.key: s for s in (cat.gpu(n) for n in flat)}.values())
    return sorted(cat.gpus.values(), key=lambda g: (g.vram_gb, g.key))


def fit_entries(w: Any, specs: list[Any], gpus: int) -> list[dict[str, Any]]:
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
            mb, basis = image_max_batch(w, spec, vram)
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


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
    # Imported here, not at the top: planner.cli imports this module while it loads.
    from planner.cli import JsonOpt, OutputOpt, emit

    @app.command()
    def fit(
        workload_file: WorkloadFileOpt = None,
        model: ModelOpt = None,
        params: ParamsOpt = None,
        layers: LayersOpt = None,
        hidden: HiddenOpt = None,
        heads: HeadsOpt = None,
        kv_heads: KvHeadsOpt = None,
        vocab: VocabOpt = None,
        seq_len: SeqLenOpt = None,
        batch: BatchOpt = None,
        precision: PrecisionOpt = None,
        optimizer: OptimizerOpt = None,
        recompute: RecomputeOpt = None,
        flash: FlashOpt = None,
        sharding: ShardingOpt = None,
        overhead_gb: OverheadGbOpt = None,
        infer: InferOpt = False,
        weight_bits: WeightBitsOpt = None,
        context: ContextOpt = None,
        gpu: Annotated[Optional[list[str]], typer.Option("--gpu", help="Only these GPUs (repeatable). [default: all]")] = None,
        gpus: Annotated[int, typer.Option("--gpus", help="GPUs the job is spread over (sharding needs more than 1).")] = 1,
        list_models: Annotated[bool, typer.Option("--list-models", help="List the model presets and exit.")] = False,
        output: OutputOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Memory per GPU (weights, gradients, optimizer, activations), whether it fits, the max batch, and the fewest GPUs when sharded."""
        from planner.report import Column, OutputFormat, dump_json, pick_format, render_rows

        fmt = pick_format(output, as_json)
        if list_models:
            _list_models(fmt)
            return
        if gpus < 1:
            raise InputError(f"--gpus must be 1 or more, got {gpus}")
        w = workload_from_options(
            workload_file=workload_file, model=model, params=params, layers=layers, hidden=hidden, heads=heads,
            kv_heads=kv_heads, vocab=vocab, seq_len=seq_len, batch=batch, precision=precision, optimizer=optimizer,
            recompute=recompute, flash=flash, sharding=sharding, overhead_gb=overhead_gb, infer=infer,
            weight_bits=weight_bits, context=context,
        )
        entries = fit_entries(w, _gpu_specs(gpu), gpus)
        if fmt is OutputFormat.JSON:
            emit(dump_json({"workload": w.model_dump(mode="json"), "gpus": entries,
                             "assumptions": {"gb": "GiB (2**30 bytes)", "sources": "see planner/memory.py and docs/accuracy.md"}}))
            return
        rows = []
        for e in entries:
            m = e["memory_gb"]
            few = e.get("fewest_gpus") or {}
            rows.append({
                "gpu": e["gpu"], "vram": f"{e['vram_gb']:g}", "fits": "yes" if e["fits"] else "no",
                "max_batch": e["max_batch_size"], "weights": _gb(m["weights"]), "grads": _gb(m["gradients"]),
                "optim": _gb(m["optimizer"]), "act": _gb(m.get("activations_per_sample") or m.get("kv_cache_per_sample")),
                "total": _gb(m["total"]),
                "layout": " + ".join(v for v in (e.get("layout") or {}).values() if v not in ("none",)) or "-",
                "fewest": few.get("gpus"),
            })
        cols = [Column(key="gpu", header="GPU"), Column(key="vram", header="VRAM GB", justify="right"),
                Column(key="fits", header="fits"), Column(key="max_batch", header="max batch", justify="right"),
                Column(key="weights", header="weights", justify="right"), Column(key="grads", header="grads", justify="right"),
                Column(key="optim", header="optimizer", justify="right"),
                Column(key="act", header="act/KV per sample", justify="right"),
                Column(key="total", header="total", justify="right"), Column(key="layout", header="layout"),
                Column(key="fewest", header="fewest GPUs sharded", justify="right")]
        name = getattr(getattr(w, "arch", None), "name", None) or getattr(w, "model", "workload")
        emit(render_rows(rows, cols, fmt, title=f"Memory fit of {name} per GPU ({gpus} GPU{'s' if gpus > 1 else ''}), GB",
                          caption="GB = GiB. total is at the max batch (or batch 1 if it does not fit)."))

    @app.command()
    def estimate(
        gpu: Annotated[str, typer.Option("--gpu", help="GPU type, e.g. A100-80GB, v100, 'rtx 2080 ti'.")],
        gpus: Annotated[float, typer.Option("--gpus", help="Number of GPUs.")] = 1,
        workload_file: WorkloadFileOpt = None,
        model: ModelOpt = None,
        params: ParamsOpt = None,
        layers: LayersOpt = None,
        hidden: HiddenOpt = None,
        heads: HeadsOpt = None,
        kv_heads: KvHeadsOpt = None,
        vocab: VocabOpt = None,
        tokens: TokensOpt = None,
        seq_len: SeqLenOpt = None,
        batch: BatchOpt = None,
        precision: PrecisionOpt = None,
        optimizer: OptimizerOpt = None,
        recompute: RecomputeOpt = None,
        flash: FlashOpt = None,
        sharding: ShardingOpt = None,
        mfu: MfuOpt = None,
        overhead: OverheadOpt = None,
        images: ImagesOpt = None,
        epochs: EpochsOpt = None,
        output: OutputOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """GPU-hours and wall-clock time of a training workload on GPUS x GPU."""
        import math

        from pricing.catalog import default_catalog
        from planner.estimate import estimate_images, estimate_training
        from planner.memory import layout
        from planner.report import Column, OutputFormat, dump_json, pick_format, render_rows
        from planner.workload import InferenceWorkload, TrainingWorkload

        fmt = pick_format(output, as_json)
        if not math.isfinite(gpus) or gpus <= 0:
            raise InputError(f"--gpus must be positive, got {gpus:g}")
        spec = default_catalog().gpu(gpu)
        w = workload_from_options(
            workload_file=workload_file, model=model, params=params, layers=layers, hidden=hidden, heads=heads,
            kv_heads=kv_heads, vocab=vocab, tokens=tokens, seq_len=seq_len, batch=batch, precision=precision,
            optimizer=optimizer, recompute=recompute, flash=flash, sharding=sharding, mfu=mfu, overhead=overhead,
            images=images, epochs=epochs,
        )
        notes: list[str] = []
        if isinstance(w, InferenceWorkload):
            raise InputError("estimate covers training", "use `gpuplan fit --infer` for inference memory")
        if isinstance(w, TrainingWorkload):
            lay = layout(w, spec.vram_gb, max(1, int(gpus)))
            if lay is None:
                notes.append(f"does not fit in {int(gpus)}x {spec.key} memory: `gpuplan fit` says how many GPUs it needs")
            elif lay.sharding.value != "none" or lay.recompute.value != "none":
                notes.append(f"fits with {lay.describe()}")
            est = estimate_training(w, spec, gpus, spec.interconnect, lay.recompute if lay else None)
        else:
            est = estimate_images(w, spec, gpus, spec.interconnect)
        payload = {**est.payload(), "notes": [*est.notes, *notes], "workload": w.model_dump(mode="json")}
        if fmt is OutputFormat.JSON:
            emit(dump_json(payload))
            return
        rows = [{"what": "GPU-hours", "value": f"{est.gpu_hours:,.1f}"},
                {"what": "wall-clock", "value": f"{est.wall_hours:,.1f} h ({est.wall_hours / 24:,.1f} days) on {gpus:g}x {spec.key}"}]
        if est.flops is not None:
            rows.append({"what": "training FLOPs", "value": f"{est.flops:.3e}"})
        rows += [{"what": k, "value": str(v)} for k, v in est.assumptions.items()]
        rows += [{"what": "note", "value": n} for n in payload["notes"]]
        emit(render_rows(rows, [Column(key="what", header="what"), Column(key="value", header="value")], fmt,
                          title="Estimate"))


def _gb(v: float | None) -> str | None:
    return None if v is None else f"{v:,.2f}"


def _list_models(fmt: Any) -> None:
    from planner.cli import emit
    from planner.report import Column, OutputFormat, dump_json, render_rows
    from planner.workload import presets

    ps = list(presets().values())
    if fmt is OutputFormat.JSON:
        emit(dump_json({"models": [p.model_dump(mode="json") for p in ps]}))
        return
    rows = [{"name": p.name, "kind": p.kind.value, "params": f"{p.params / 1e9:.2f}B", "layers": p.layers,
             "hidden": p.hidden, "heads": p.heads, "kv_heads": p.kv_heads, "source": p.source[:60]} for p in ps]
    cols = [Column(key=k, header=k) for k in ("name", "kind", "params", "layers", "hidden", "heads", "kv_heads", "source")]
    emit(render_rows(rows, cols, fmt, title="Model presets"))
