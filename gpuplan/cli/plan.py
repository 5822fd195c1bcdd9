"""``gpuplan plan``: rank every way to get the work done."""

# No `from __future__ import annotations`: typer evaluates option annotations at run time.

from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from pricing.errors import InputError
from gpuplan.cli.app import command_app
from gpuplan.cli.extras_opts import (
    BandwidthOpt, DiskGbOpt, DiskTypeOpt, EgressGbOpt, SetupMinutesOpt, StorageGbOpt, extras_from,
)
from gpuplan.cli.serve_opts import (
    HORIZON, LOAD, MODEL as SERVE_MODEL, ServingFlags, refuse_without_serve, takes_serving,
)
from gpuplan.cli.options import (
    MODEL_AND_TRAINING, RUN, SERVED_MODEL, CatalogOpt, CurrencyOpt, DiscountOpt, FxOpt, GpuFilterOpt, HoursPerMonthOpt,
    JsonOpt, MinVramOpt, OutputOpt, ProviderOpt, RegionOpt, SpotEstimatesOpt, SpotPriceOpt, WideOpt, WorkloadFlags,
    build_constraints, catalog_from, emit, settings_from, takes_workload, use_wide,
)

app = command_app()  # the root loads this module when one of its commands runs (gpuplan.cli.app)


@app.command()
@takes_workload(MODEL_AND_TRAINING, RUN)
@takes_serving(SERVE_MODEL, LOAD, HORIZON)
def plan(
    gpu_hours: Annotated[Optional[str], typer.Option(
        "--gpu-hours", help="Work to do, in GPU-hours on the reference GPU.")] = None,
    *,
    workload: WorkloadFlags,  # --help lists the flags of MODEL_AND_TRAINING and RUN here (takes_workload)
    ref_gpu: Annotated[Optional[str], typer.Option(
        "--ref-gpu", help="GPU the GPU-hours were measured on. [default: V100-SXM2-32GB]")] = None,
    workload_class: Annotated[str, typer.Option(
        "--class", help="Workload class for relative speed: transformer or cnn.")] = "transformer",
    precision: Annotated[str, typer.Option(
        "--precision", help="mixed (fp16/bf16 AMP) or fp32; with a workload also bf16, fp16, fp8.")] = "mixed",
    deadline: Annotated[Optional[str], typer.Option("--deadline", help="Latest finish, e.g. 36h, 3d, 2w.")] = None,
    budget: Annotated[Optional[str], typer.Option(
        "--budget", help="Most you will spend, e.g. 5000 or '30000 CNY' (with --serve: per month).")] = None,
    min_vram: MinVramOpt = None,
    provider: ProviderOpt = None,
    billing: Annotated[Optional[list[str]], typer.Option(
        "--billing", help="hourly, monthly, spot, reserved_1y, reserved_3y, buy (repeatable).")] = None,
    region: RegionOpt = None,
    gpu: GpuFilterOpt = None,
    max_gpus: Annotated[Optional[float], typer.Option(
        "--max-gpus", help="Most GPUs in one option (all nodes together).")] = None,
    nodes: Annotated[Optional[int], typer.Option(
        "--nodes", help="Pin the number of identical nodes per option.")] = None,
    max_nodes: Annotated[Optional[int], typer.Option(
        "--max-nodes", help="Most identical nodes in one option. [default: 64]")] = None,
    export: Annotated[Optional[tuple[str, Path]], typer.Option(
        "--export", help="Write the winner for an engine: --export skypilot task.yaml, or dstack .dstack.yml.",
        metavar="ENGINE FILE")] = None,
    spot_overhead: Annotated[Optional[float], typer.Option(
        "--spot-overhead", help="Extra run time on one spot machine for restarts, e.g. 0.1 = 10%, with a checkpoint "
                                "every hour; more nodes lose more.")] = None,
    checkpoint_every: Annotated[Optional[str], typer.Option(
        "--checkpoint-every", help="Time between checkpoints of a spot run, e.g. 30m or 2h: lost work grows with it "
                                   "and with nodes. [default: 1h]")] = None,
    spot_price: SpotPriceOpt = None,
    spot_estimates: SpotEstimatesOpt = False,
    catalog: CatalogOpt = None,
    discount: DiscountOpt = None,
    currency: CurrencyOpt = None,
    fx: FxOpt = None,
    hours_per_month: HoursPerMonthOpt = None,
    limit: Annotated[Optional[int], typer.Option(
        "--limit", help="Options to show; 0 shows all. [default: 25 in the table, all in --json, csv and "
                        "markdown]")] = None,
    explain: Annotated[bool, typer.Option("--explain", help="Also list excluded options and why.")] = False,
    disk_gb: DiskGbOpt = None,
    disk_type: DiskTypeOpt = None,
    egress_gb: EgressGbOpt = None,
    storage_gb: StorageGbOpt = None,
    setup_minutes: SetupMinutesOpt = None,
    bandwidth_mbps: BandwidthOpt = None,
    serving: ServingFlags,  # --help lists the serving flags here (takes_serving)
    output: OutputOpt = None,
    as_json: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """Rank every way to get the work done: each cloud offer and card purchase, under each billing mode.
    With --serve, the cheapest fleets that serve a model at --rate, per month."""
    from pricing.catalog import paused_gc
    from planner.limits import bounded
    from planner.plan import make_plan
    from planner.units import parse_duration
    from gpuplan.render.plan import render_plan
    from gpuplan.render.table import pick_format

    fmt = pick_format(output, as_json)
    use_wide(wide)
    if limit is not None:
        bounded(limit, "limit")
    if (serve := serving.get("serve")) is not None:
        if gpu_hours is not None or any(v is not None for k, v in workload.items() if k not in SERVED_MODEL):
            raise InputError("--serve plans a service; --gpu-hours and the training flags plan a job",
                             "give one of the two")
        if deadline is not None or nodes is not None or checkpoint_every is not None:
            raise InputError("--deadline, --nodes and --checkpoint-every apply to training plans",
                             "drop them with --serve")
        engine = _engine(export)
        s = settings_from(currency, fx, hours_per_month, discount, spot_price=spot_price)
        cat = catalog_from(s, catalog)
        c = build_constraints(deadline=None, budget=budget, min_vram=min_vram, provider=provider, billing=billing,
                              region=region, gpu=gpu, max_gpus=max_gpus, settings=s, catalog=cat)
        flags = {k: v for k, v in serving.items() if k not in ("serve", "months", "allow_spot")}
        _serve_plan(serve, {**flags, **{k: workload.get(k) for k in SERVED_MODEL}}, precision,
                    c.model_copy(update={"spot_estimates": spot_estimates}), s, cat,
                    months=serving.get("months"), allow_spot=bool(serving.get("allow_spot")), fmt=fmt, limit=limit,
                    explain=explain,
                    export=(engine, export[1]) if engine is not None and export is not None else None)
        return
    refuse_without_serve(serving)
    extras = extras_from(disk_gb, disk_type, egress_gb, storage_gb, setup_minutes, bandwidth_mbps)
    s = settings_from(
        currency, fx, hours_per_month, discount,
        spot_overhead=None if spot_overhead is None else Decimal(repr(spot_overhead)),
        ref_gpu=ref_gpu, spot_price=spot_price,
        checkpoint_every=None if checkpoint_every is None else parse_duration(
            checkpoint_every, "--checkpoint-every", bound="checkpoint_every"),
    )
    with paused_gc(freeze=True):  # the command ends after this block (see pricing.catalog.parse)
        cat = catalog_from(s, catalog)
        demand, title, facts = _demand(
            cat, s, gpu_hours=gpu_hours, workload_class=workload_class, precision=precision,
            workload=workload,
        )
        engine = _engine(export)
        c = build_constraints(deadline=deadline, budget=budget, min_vram=min_vram, provider=provider, billing=billing,
                              region=region, gpu=gpu, max_gpus=max_gpus, settings=s, catalog=cat)
        c = c.model_copy(update={**_node_limits(nodes, max_nodes), "spot_estimates": spot_estimates})
        p = make_plan(demand, c, s, catalog=cat, extras=extras)
        if engine is not None and export is not None:
            from gpuplan.console import stderr
            from gpuplan.render.export import export as write_export, run_command, task_name

            path = write_export(p, engine, export[1], name=task_name(facts),
                                gpu_memory_gb=cat.gpus[p.cheapest.gpu].vram_gb)
            stderr().print(f"wrote {engine} task for {p.cheapest.nodes} x {p.cheapest.offer} to {path}; run it: "
                           f"{run_command(engine, str(p.cheapest.billing), path)}", highlight=False, markup=False)
        from gpuplan.last_plan import remember

        remember(p)
        emit(render_plan(p, fmt, limit, explain, title))




def _serve_plan(serve: str, serving: dict[str, Any], precision: str, c: Any, s: Any, cat: Any, *,
                months: int | None, allow_spot: bool, fmt: Any, limit: int | None, explain: bool,
                export: tuple[Any, Path] | None) -> None:
    """``plan --serve``: parse, call :func:`planner.serve.fleet.serve_plan`, render."""
    from gpuplan.render.serve import render_serve_plan
    from planner.serve.fleet import DEFAULT_MONTHS, serve_plan
    from planner.serve.inputs import serve_workload_from_options

    w = serve_workload_from_options(serve, precision=None if precision == "mixed" else precision, **serving)
    p = serve_plan(w, c, s, catalog=cat, months=DEFAULT_MONTHS if months is None else months, allow_spot=allow_spot)
    if export is not None:
        from gpuplan.console import stderr
        from gpuplan.render.export import task_name
        from gpuplan.render.serve_export import export_service

        model = w.arch.name if w.arch.name != "custom" else f"custom-{_count(w.arch.params)}"
        name = task_name((model, "serve", f"{_count(w.rate or 0)}rps", str(w.weights)))
        path, rank, f = export_service(p, export[0], export[1], name=name,
                                       gpu_memory_gb={k: g.vram_gb for k, g in cat.gpus.items()})
        stderr().print(f"wrote {export[0]} service for {f.instances} x {f.offer} {f.billing} (the plan's #{rank}) "
                       f"to {path}", highlight=False, markup=False)
    from gpuplan.last_plan import remember_serve

    remember_serve(p)  # kept apart: `launch --from-plan` names it rather than start an older training plan
    emit(render_serve_plan(p, fmt, limit, explain))


def _engine(export: tuple[str, Path] | None) -> Any:
    """The engine named by --export, checked before any planning."""
    if export is None:
        return None
    from gpuplan.render.export import Engine
    from planner.units import parse_enum

    return parse_enum(Engine, export[0], "--export engine")


def _node_limits(nodes: int | None, max_nodes: int | None) -> dict[str, int]:
    from planner.plan.model import DEFAULT_MAX_NODES

    out: dict[str, int] = {}
    if nodes is not None:
        if not 1 <= nodes <= 4096:
            raise InputError(f"--nodes must be between 1 and 4096, got {nodes}")
        out["nodes"] = nodes
        out["max_nodes"] = nodes
    if max_nodes is not None:
        if not 1 <= max_nodes <= 4096:
            raise InputError(f"--max-nodes must be between 1 and 4096, got {max_nodes}")
        if nodes is not None and nodes > max_nodes:
            raise InputError(f"--nodes {nodes} is above --max-nodes {max_nodes}")
        out["max_nodes"] = max_nodes
    out.setdefault("max_nodes", DEFAULT_MAX_NODES)
    return out


def _count(x: float) -> str:
    """A count for a run name, which takes no dots: 2e11 -> 200b, 1281167 -> 1p28m, 46.7e9 -> 46p7b."""
    scale, unit = next(((s, u) for s, u in ((1e12, "t"), (1e9, "b"), (1e6, "m"), (1e3, "k")) if x >= s), (1, ""))
    return f"{x / scale:.3g}{unit}".replace(".", "p").replace("e+", "e")


# Flags that tune a workload but name none: with only these, plan has no workload to cost.
_TUNING = frozenset({"seq_len", "batch", "optimizer", "recompute", "sharding", "mfu", "overhead", "epochs",
                     "global_batch"})


def _demand(cat: Any, s: Any, *, gpu_hours: str | None, workload_class: str, precision: str,
            workload: WorkloadFlags) -> tuple[Any, str, tuple[str, ...]]:
    """The plan's demand, its title and the facts an exported task is named by (most telling first),
    from --gpu-hours or a workload (never both)."""
    from planner.plan.demand import RefGpuHours
    from planner.perf.speed import SpeedPrecision, WorkloadClass
    from planner.limits import bounded, check_fields
    from planner.units import parse_enum, positive

    model_given = any(v is not None for k, v in workload.items() if k not in _TUNING)
    if gpu_hours is not None and model_given:
        raise InputError("give either --gpu-hours or a workload (--model/--params/--workload), not both")
    if gpu_hours is None and not model_given:
        raise InputError("nothing to plan: give --gpu-hours or a workload",
                         "e.g. gpuplan plan --gpu-hours 200, or gpuplan plan --model llama-2-7b --tokens 2e10")
    if not model_given:
        cls = parse_enum(WorkloadClass, workload_class, "--class")
        prec = parse_enum(SpeedPrecision, precision, "--precision")
        positive(gpu_hours, "--gpu-hours")
        hours = bounded(gpu_hours, "gpu_hours")
        demand = RefGpuHours(gpu_hours=hours, ref_gpu=cat.gpu(s.ref_gpu).key,
                             catalog=cat, workload_class=cls, precision=prec)
        title = f"Ways to get {demand.gpu_hours:g} GPU-hours of {cls} work ({prec}) measured on {demand.ref_gpu}"
        return demand, title, (str(cls), f"{demand.gpu_hours:g}-gpu-hours", str(prec), f"on-{demand.ref_gpu}")
    from planner.plan.workload_demand import WorkloadDemand
    from planner.workload.spec import InferenceWorkload, TrainingWorkload
    from planner.workload.inputs import workload_from_options

    w = workload_from_options(precision=precision if precision != "mixed" else None, **workload)
    check_fields(w)
    if isinstance(w, InferenceWorkload):
        raise InputError("plan costs training work", "use `gpuplan fit --infer` for inference memory")
    if isinstance(w, TrainingWorkload) and w.tokens is None:
        raise InputError("a transformer workload needs --tokens to plan", "e.g. --tokens 2e10")
    if not isinstance(w, TrainingWorkload) and w.images is None:
        raise InputError("an image workload needs --images to plan", "e.g. --images 1281167 --epochs 90")
    if isinstance(w, TrainingWorkload):
        how = "" if w.method.value == "full" else f" with {w.method.value} rank {w.lora_rank}"
        size = f"{w.arch.params:.3g} params" + (f", {w.arch.active_params:.3g} active" if w.arch.moe else "")
        title = f"Ways to train {w.arch.name} ({size}){how} on {w.tokens:.3g} tokens ({w.precision})"
        model = w.arch.name if w.arch.name != "custom" else f"custom-{_count(w.arch.params)}"
        facts: tuple[str, ...] = (model, *([] if w.method.value == "full" else [f"{w.method.value}-r{w.lora_rank}"]),
                                  f"{_count(w.tokens)}-tokens", str(w.precision))
    else:
        title = f"Ways to train {w.model} on {w.images:,.0f} images x {w.epochs:g} epochs ({w.precision})"
        facts = (w.model, f"{_count(w.images)}-images", f"{w.epochs:g}-epochs", str(w.precision))
    return WorkloadDemand(w, cat), title, facts

