"""The ``gpuplan`` command line.

Every command prints data to stdout and messages to stderr, takes ``-o
table|json|csv|markdown`` (``--json`` for short), and maps gpuplan's errors to one
line and an exit code (see :mod:`pricing.errors`); ``--debug`` shows tracebacks.
Heavy modules are imported inside the commands so ``--help`` and ``plan`` stay quick.
"""

# No `from __future__ import annotations` here: typer would have to eval every option
# annotation of every command at start-up, which costs a cold `gpuplan plan` ~0.1 s.

import importlib
import sys
from decimal import Decimal
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from pricing.errors import GpuplanError, InputError

if TYPE_CHECKING:
    from planner.plan import Plan
    from planner.settings import Settings

app = typer.Typer(
    name="gpuplan",
    help="The cheapest, safest way to get GPU work done: plan, compare and cost GPUs across clouds and buying.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

_debug = False

# Commands contributed by other modules: each exposes register(app).
COMMAND_MODULES: tuple[str, ...] = ("planner.cli_workload", "planner.cli_tco")

OutputOpt = Annotated[Optional[str], typer.Option("--output", "-o", help="table, json, csv or markdown.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Shortcut for -o json.")]
CurrencyOpt = Annotated[Optional[str], typer.Option("--currency", help="Display currency: USD or CNY. [default: USD]")]
FxOpt = Annotated[
    Optional[list[str]],
    typer.Option("--fx", help="Exchange rate to use, e.g. USD/CNY=7.1 (repeatable); overrides the shipped rate."),
]
HoursPerMonthOpt = Annotated[
    Optional[float], typer.Option("--hours-per-month", help="Hours in a month for subscriptions. [default: 730]")
]


@app.callback()
def _root(
    debug: Annotated[bool, typer.Option("--debug", help="Show full tracebacks on errors.")] = False,
    no_color: Annotated[bool, typer.Option("--no-color", help="Plain output without colour.")] = False,
) -> None:
    global _debug
    _debug = debug
    if no_color:
        from planner.console import set_no_color

        set_no_color(True)


def settings_from(
    currency: str | None = None,
    fx: list[str] | None = None,
    hours_per_month: float | None = None,
    **more: Any,
) -> "Settings":
    from planner.settings import load_settings

    return load_settings(
        currency=currency,
        fx=tuple(fx) if fx else None,
        hours_per_month=None if hours_per_month is None else Decimal(repr(hours_per_month)),
        **more,
    )


def emit(text: str | None) -> None:
    if text is not None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


def _fmt_hours(h: Decimal) -> str:
    return f"{h:,.1f}" if h >= 1 else f"{h:.2f}"


def _gpus(count: float, gpu: str) -> str:
    return f"{count:g}x {gpu}"


def plan_payload(p: "Plan") -> dict[str, Any]:
    """The stable JSON contract of ``gpuplan plan``."""

    def opt(o: Any) -> dict[str, Any]:
        return {
            "provider": o.provider,
            "offer": o.offer,
            "region": o.region,
            "gpu": o.gpu,
            "gpu_count": o.gpu_count,
            "billing": o.billing,
            "wall_hours": round(float(o.wall_hours), 4),
            "gpu_hours": round(float(o.gpu_hours), 4),
            "cost": str(o.cost.rounded()),
            "native_cost": {"amount": str(o.native_cost.rounded()), "currency": o.native_cost.currency},
            "estimate": o.estimate,
            "line_items": [
                {
                    "description": i.description,
                    "quantity": str(i.quantity.normalize()),
                    "unit": i.unit,
                    "unit_price": {"amount": str(i.unit_price.amount), "currency": i.unit_price.currency},
                    "cost": {"amount": str(i.cost.rounded()), "currency": i.cost.currency},
                }
                for i in o.line_items
            ],
            "notes": list(o.notes),
        }

    return {
        "currency": p.currency,
        "assumptions": p.assumptions,
        "options": [opt(o) for o in p.options],
        "cheapest": opt(p.cheapest),
        "cheapest_by_billing": {str(m): opt(o) for m, o in p.cheapest_by_billing().items()},
        "explanation": p.explanation,
        "excluded": [e.model_dump(mode="json") for e in p.excluded],
    }


PLAN_COLUMNS = [
    ("rank", "#", "right"),
    ("provider", "provider", "left"),
    ("offer", "offer", "left"),
    ("region", "region", "left"),
    ("gpus", "GPUs", "left"),
    ("billing", "billing", "left"),
    ("wall_hours", "wall h", "right"),
    ("gpu_hours", "GPU-h", "right"),
    ("cost", "cost", "right"),
    ("native", "native cost", "right"),
]


def render_plan(p: "Plan", fmt_name: str | None, as_json: bool, limit: int, explain: bool, title: str) -> None:
    from planner.console import stdout
    from planner.report import Column, OutputFormat, dump_json, pick_format, render_rows

    fmt = pick_format(fmt_name, as_json)
    if fmt is OutputFormat.JSON:
        emit(dump_json(plan_payload(p)))
        return
    cols = [Column(key=k, header=h, justify=j) for k, h, j in PLAN_COLUMNS]

    def row(i: int, o: Any) -> dict[str, Any]:
        return {
            "rank": i,
            "provider": o.provider,
            "offer": o.offer,
            "region": o.region,
            "gpus": _gpus(o.gpu_count, o.gpu),
            "billing": f"{o.billing}{'*' if o.estimate else ''}",
            "wall_hours": _fmt_hours(o.wall_hours),
            "gpu_hours": _fmt_hours(o.gpu_hours),
            "cost": f"{o.cost.rounded():,}",
            "native": str(o.native_cost),
            "notes": "; ".join(o.notes),
        }

    rows = [row(i, o) for i, o in enumerate(p.options, 1)]
    if fmt is not OutputFormat.TABLE:
        cols.append(Column(key="notes", header="notes"))
        emit(render_rows(rows, cols, fmt, title=title))
        return
    shown = rows if limit <= 0 else rows[:limit]
    more = len(rows) - len(shown)
    caption = f"{more} more option(s): --limit 0 shows all. " if more else ""
    caption += "* estimated price."
    render_rows(shown, cols, fmt, title=f"{title} (costs in {p.currency})", caption=caption)
    winners = {id(o) for o in p.cheapest_by_billing().values()}
    best = [row(i, o) for i, o in enumerate(p.options, 1) if id(o) in winners]
    render_rows(best, cols, fmt, title="Cheapest per billing mode")
    out = stdout()
    out.print(f"[bold]Why:[/bold] {p.explanation}", highlight=False)
    a = p.assumptions
    out.print(
        f"[dim]Assumptions: {a.get('hours_per_month')} h/month, spot restart overhead "
        f"{Decimal(a.get('spot_overhead', '0')):.0%}, prices as of {a.get('catalog_as_of')}; "
        f"FX {'; '.join(a.get('fx', [])[:1]) or 'none'}.[/dim]",
        highlight=False,
    )
    if explain and p.excluded:
        ex = [{"offer": f"{e.provider} {e.offer}", "billing": e.billing or "all", "reason": e.reason} for e in p.excluded]
        render_rows(ex, [Column(key="offer", header="offer"), Column(key="billing", header="billing"),
                         Column(key="reason", header="excluded because")], fmt, title="Excluded")
    elif p.excluded:
        out.print(f"[dim]{len(p.excluded)} option(s) excluded: --explain lists them with reasons.[/dim]", highlight=False)


def parse_multi(values: list[str] | None) -> list[str] | None:
    """Repeatable options that also accept comma-separated lists."""
    if not values:
        return None
    return [v.strip() for item in values for v in item.split(",") if v.strip()]


def build_constraints(
    *,
    deadline: str | None,
    budget: str | None,
    min_vram: float | None,
    provider: list[str] | None,
    billing: list[str] | None,
    region: list[str] | None,
    gpu: list[str] | None,
    max_gpus: float | None,
    settings: "Settings",
) -> Any:
    from pricing.billing import BillingMode
    from pricing.catalog import default_catalog
    from providers import parse_provider
    from planner.plan import Constraints
    from planner.units import parse_duration, parse_money, positive

    cat = default_catalog()
    modes = None
    if (names := parse_multi(billing)) is not None:
        try:
            modes = frozenset(BillingMode(b.lower()) for b in names)
        except ValueError:
            known = ", ".join(m.value for m in BillingMode)
            raise InputError(f"unknown billing mode in {', '.join(names)}", f"use {known}") from None
    return Constraints(
        deadline_hours=parse_duration(deadline) if deadline else None,
        budget=parse_money(budget, settings.currency) if budget else None,
        min_vram_gb=float(positive(min_vram, "--min-vram")) if min_vram is not None else None,
        providers=frozenset(parse_provider(p) for p in names) if (names := parse_multi(provider)) else None,
        billing=modes,
        regions=tuple(r) if (r := parse_multi(region)) else None,
        gpus=frozenset(cat.gpu(g).key for g in names) if (names := parse_multi(gpu)) else None,
        max_gpus=float(positive(max_gpus, "--max-gpus")) if max_gpus is not None else None,
    )


@app.command()
def plan(
    gpu_hours: Annotated[Optional[str], typer.Option("--gpu-hours", help="Work to do, in GPU-hours on the reference GPU.")] = None,
    workload_file: Annotated[Optional[str], typer.Option("--workload", help="Workload TOML file instead of --gpu-hours (see examples/).")] = None,
    model: Annotated[Optional[str], typer.Option("--model", help="Model preset instead of --gpu-hours, e.g. llama-2-7b, resnet50.")] = None,
    params: Annotated[Optional[float], typer.Option("--params", help="Model parameters, e.g. 7e9 (with --tokens).")] = None,
    tokens: Annotated[Optional[float], typer.Option("--tokens", help="Training tokens, e.g. 2e10 (transformer workloads).")] = None,
    seq_len: Annotated[Optional[int], typer.Option("--seq-len", help="Training sequence length. [default: 2048]")] = None,
    batch: Annotated[Optional[int], typer.Option("--batch", help="Micro-batch per GPU that must fit.")] = None,
    optimizer: Annotated[Optional[str], typer.Option("--optimizer", help="adamw, sgd, adafactor or adam8bit. [default: adamw]")] = None,
    recompute: Annotated[Optional[str], typer.Option("--recompute", help="auto, none, selective or full. [default: auto]")] = None,
    sharding: Annotated[Optional[str], typer.Option("--sharding", help="auto, none, zero1, zero2, zero3 or fsdp. [default: auto]")] = None,
    mfu: Annotated[Optional[float], typer.Option("--mfu", help="Model FLOPs utilization (default: per GPU generation).")] = None,
    overhead: Annotated[Optional[float], typer.Option("--overhead", help="Goodput overhead, e.g. 0.1 (default: derived).")] = None,
    images: Annotated[Optional[float], typer.Option("--images", help="Dataset images (image models), e.g. 1281167.")] = None,
    epochs: Annotated[Optional[float], typer.Option("--epochs", help="Epochs over the images. [default: 1]")] = None,
    ref_gpu: Annotated[Optional[str], typer.Option("--ref-gpu", help="GPU the GPU-hours were measured on. [default: V100-SXM2-32GB]")] = None,
    workload_class: Annotated[str, typer.Option("--class", help="Workload class for relative speed: transformer or cnn.")] = "transformer",
    precision: Annotated[str, typer.Option("--precision", help="mixed (fp16/bf16 AMP) or fp32; with a workload also bf16, fp16, fp8.")] = "mixed",
    deadline: Annotated[Optional[str], typer.Option("--deadline", help="Latest finish, e.g. 36h, 3d, 2w.")] = None,
    budget: Annotated[Optional[str], typer.Option("--budget", help="Most you will spend, e.g. 5000 or '30000 CNY'.")] = None,
    min_vram: Annotated[Optional[float], typer.Option("--min-vram", help="Least VRAM per GPU, in GB.")] = None,
    provider: Annotated[Optional[list[str]], typer.Option("--provider", help="tencent, aws or local (repeatable).")] = None,
    billing: Annotated[Optional[list[str]], typer.Option("--billing", help="hourly, monthly, spot, reserved_1y, reserved_3y, buy (repeatable).")] = None,
    region: Annotated[Optional[list[str]], typer.Option("--region", help="Region or zone prefix, e.g. us-east-1, ap-guangzhou (repeatable).")] = None,
    gpu: Annotated[Optional[list[str]], typer.Option("--gpu", help="Only these GPUs (repeatable; names are forgiving).")] = None,
    max_gpus: Annotated[Optional[float], typer.Option("--max-gpus", help="Most GPUs in one option.")] = None,
    spot_overhead: Annotated[Optional[float], typer.Option("--spot-overhead", help="Extra run time on spot for restarts, e.g. 0.1 = 10%.")] = None,
    currency: CurrencyOpt = None,
    fx: FxOpt = None,
    hours_per_month: HoursPerMonthOpt = None,
    limit: Annotated[int, typer.Option("--limit", help="Rows in the table; 0 shows all.")] = 25,
    explain: Annotated[bool, typer.Option("--explain", help="Also list excluded options and why.")] = False,
    output: OutputOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Rank every way to get the work done: each cloud offer and card purchase, under each billing mode."""
    from planner.perf import Precision, WorkloadClass
    from planner.plan import RefGpuHours, make_plan
    from planner.units import positive
    from pricing.catalog import default_catalog

    s = settings_from(
        currency, fx, hours_per_month,
        spot_overhead=None if spot_overhead is None else Decimal(repr(spot_overhead)),
        ref_gpu=ref_gpu,
    )
    model_given = any(v is not None for v in (workload_file, model, params, tokens, images))
    if gpu_hours is not None and model_given:
        raise InputError("give either --gpu-hours or a workload (--model/--params/--workload), not both")
    if gpu_hours is None and not model_given:
        raise InputError("nothing to plan: give --gpu-hours or a workload",
                         "e.g. gpuplan plan --gpu-hours 200, or gpuplan plan --model llama-2-7b --tokens 2e10")
    cat = default_catalog()
    demand: Any
    if model_given:
        from planner.cli_workload import workload_from_options
        from planner.estimate import WorkloadDemand
        from planner.workload import InferenceWorkload, TrainingWorkload

        w = workload_from_options(
            workload_file=workload_file, model=model, params=params, tokens=tokens, seq_len=seq_len, batch=batch,
            precision=precision if precision != "mixed" else None, optimizer=optimizer, recompute=recompute,
            sharding=sharding, mfu=mfu, overhead=overhead, images=images, epochs=epochs,
        )
        if isinstance(w, InferenceWorkload):
            raise InputError("plan costs training work", "use `gpuplan fit --infer` for inference memory")
        if isinstance(w, TrainingWorkload) and w.tokens is None:
            raise InputError("a transformer workload needs --tokens to plan", "e.g. --tokens 2e10")
        if not isinstance(w, TrainingWorkload) and w.images is None:
            raise InputError("an image workload needs --images to plan", "e.g. --images 1281167 --epochs 90")
        demand = WorkloadDemand(workload=w)
        if isinstance(w, TrainingWorkload):
            title = f"Ways to train {w.arch.name} ({w.arch.params:.3g} params) on {w.tokens:.3g} tokens ({w.precision})"
        else:
            title = f"Ways to train {w.model} on {w.images:,.0f} images x {w.epochs:g} epochs ({w.precision})"
    else:
        cls = parse_enum(WorkloadClass, workload_class, "--class")
        prec = parse_enum(Precision, precision, "--precision")
        demand = RefGpuHours(gpu_hours=positive(gpu_hours, "--gpu-hours"), ref_gpu=cat.gpu(s.ref_gpu).key,
                             workload_class=cls, precision=prec)
        title = f"Ways to get {demand.gpu_hours:g} GPU-hours of {cls} work ({prec}) measured on {demand.ref_gpu}"
    c = build_constraints(deadline=deadline, budget=budget, min_vram=min_vram, provider=provider, billing=billing,
                          region=region, gpu=gpu, max_gpus=max_gpus, settings=s)
    p = make_plan(demand, c, s, catalog=cat)
    render_plan(p, output, as_json, limit, explain, title)


def parse_enum(enum: Any, value: str | None, flag: str) -> Any:
    """An enum member from a flag value, forgiving case and dashes (zero-3 is zero3); None stays None."""
    if value is None:
        return None
    try:
        return enum(value.strip().lower().replace("-", ""))
    except ValueError:
        known = ", ".join(e.value for e in enum)
        raise InputError(f"unknown {flag} {value!r}", f"use one of {known}") from None


@app.command()
def gpus(
    output: OutputOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The GPU spec table: VRAM, bandwidth, FP32 and dense tensor TFLOPS, TDP, interconnect."""
    from pricing.catalog import default_catalog
    from planner.report import Column, OutputFormat, dump_json, pick_format, render_rows

    fmt = pick_format(output, as_json)
    specs = sorted(default_catalog().gpus.values(), key=lambda g: (g.vram_gb, g.key))
    if fmt is OutputFormat.JSON:
        emit(dump_json({"gpus": [g.model_dump() for g in specs]}))
        return
    rows = [
        {
            "key": g.key, "name": g.name, "arch": g.arch, "vram_gb": f"{g.vram_gb:g}",
            "mem_bw_gbs": g.mem_bw_gbs and f"{g.mem_bw_gbs:g}", "fp32": g.fp32_tflops and f"{g.fp32_tflops:g}",
            "tensor": g.tensor_fp16_tflops and f"{g.tensor_fp16_tflops:g}", "tdp_w": g.tdp_w and f"{g.tdp_w:g}",
            "interconnect": g.interconnect, "aliases": ", ".join(g.aliases),
        }
        for g in specs
    ]
    cols = [Column(key="key", header="GPU"), Column(key="arch", header="arch"),
            Column(key="vram_gb", header="VRAM GB", justify="right"),
            Column(key="mem_bw_gbs", header="BW GB/s", justify="right"),
            Column(key="fp32", header="FP32 TFLOPS", justify="right"),
            Column(key="tensor", header="FP16 tensor TFLOPS (dense)", justify="right"),
            Column(key="tdp_w", header="TDP W", justify="right"), Column(key="interconnect", header="interconnect"),
            Column(key="aliases", header="also known as")]
    emit(render_rows(rows, cols, fmt, title="GPUs in the catalog", caption="- = not in the sources; `gpuplan gpus --json` gives every source."))


@app.command()
def offers(
    provider: Annotated[Optional[list[str]], typer.Option("--provider", help="tencent, aws or local (repeatable).")] = None,
    gpu: Annotated[Optional[list[str]], typer.Option("--gpu", help="Only these GPUs (repeatable).")] = None,
    region: Annotated[Optional[list[str]], typer.Option("--region", help="Region or zone prefix (repeatable).")] = None,
    min_vram: Annotated[Optional[float], typer.Option("--min-vram", help="Least VRAM per GPU, in GB.")] = None,
    currency: CurrencyOpt = None,
    fx: FxOpt = None,
    output: OutputOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Instances and cards with price per instance-hour, per GPU-hour and per GB-of-VRAM-hour."""
    from pricing.billing import BillingMode
    from pricing.catalog import default_catalog
    from pricing.money import Money
    from providers import all_providers
    from planner.plan import offer_filter
    from planner.report import Column, OutputFormat, dump_json, pick_format, render_rows

    fmt = pick_format(output, as_json)
    s = settings_from(currency, fx)
    c = build_constraints(deadline=None, budget=None, min_vram=min_vram, provider=provider, billing=None,
                          region=region, gpu=gpu, max_gpus=None, settings=s)
    cat = default_catalog()
    fxt = s.fx_table()
    items: list[dict[str, Any]] = []
    for prov in all_providers():
        if c.providers is not None and prov.name not in c.providers:
            continue
        for o in prov.list_offers(cat):
            spec = cat.gpus[o.gpu]
            vram = spec.vram_gb * o.gpu_count
            if offer_filter(o, spec, c, priced=False) is not None:
                continue

            def shown(mode: BillingMode, per: float = 1.0, _o: Any = o) -> Decimal | None:
                rate = _o.rates.get(mode)
                if rate is None:
                    return None
                m = fxt.convert(Money(amount=rate, currency=_o.currency), s.currency)
                return m.amount / Decimal(repr(per))

            hourly = shown(BillingMode.HOURLY)
            items.append({
                "provider": o.provider, "offer": o.name, "region": o.region, "gpu": o.gpu, "gpu_count": o.gpu_count,
                "vram_gb_total": vram, "vcpu": o.vcpu, "mem_gb": o.mem_gb, "native_currency": o.currency,
                "hourly": hourly, "per_gpu_hour": shown(BillingMode.HOURLY, o.gpu_count),
                "per_gb_vram_hour": shown(BillingMode.HOURLY, vram), "monthly": shown(BillingMode.MONTHLY),
                "spot": shown(BillingMode.SPOT), "spot_estimated": BillingMode.SPOT in o.estimated,
                "reserved_1y": shown(BillingMode.RESERVED_1Y), "reserved_3y": shown(BillingMode.RESERVED_3Y),
                "buy": shown(BillingMode.BUY), "native_rates": {m.value: str(r) for m, r in o.rates.items()},
                "source": o.source, "as_of": o.as_of,
            })
    big = Decimal("1e30")
    items.sort(key=lambda i: (i["per_gpu_hour"] if i["per_gpu_hour"] is not None else big, i["buy"] or big))
    if fmt is OutputFormat.JSON:
        emit(dump_json({"currency": s.currency, "fx": [r.label() for r in fxt.used()], "offers": items}))
        return

    def money(v: Decimal | None, places: int = 2) -> str | None:
        return None if v is None else f"{v:,.{places}f}"

    rows = [
        {**i, "gpus": _gpus(i["gpu_count"], i["gpu"]), "hourly": money(i["hourly"]),
         "per_gpu_hour": money(i["per_gpu_hour"]), "per_gb_vram_hour": money(i["per_gb_vram_hour"], 4),
         "monthly": money(i["monthly"]), "spot": (money(i["spot"]) or "") + ("*" if i["spot_estimated"] else "") or None,
         "buy": money(i["buy"])}
        for i in items
    ]
    cols = [Column(key="provider", header="provider"), Column(key="offer", header="offer"),
            Column(key="region", header="region"), Column(key="gpus", header="GPUs"),
            Column(key="hourly", header="per hour", justify="right"),
            Column(key="per_gpu_hour", header="per GPU-h", justify="right"),
            Column(key="per_gb_vram_hour", header="per GB-VRAM-h", justify="right"),
            Column(key="monthly", header="per month", justify="right"),
            Column(key="spot", header="spot/h", justify="right"), Column(key="buy", header="buy (per card)", justify="right")]
    emit(render_rows(rows, cols, fmt, title=f"Offers (prices in {s.currency})",
                     caption="- = no public price in the catalog; * = estimated spot price."))


config_app = typer.Typer(help="Show where gpuplan keeps its settings and what they are.", no_args_is_help=True)
app.add_typer(config_app, name="config")


@config_app.command("show")
def config_show(as_json: JsonOpt = False) -> None:
    """The effective settings after flags, environment and config file."""
    from planner.report import dump_json
    from planner.settings import cache_dir, config_file, data_dir, load_settings

    s = load_settings()
    payload = {"config_file": str(config_file()), "cache_dir": str(cache_dir()), "data_dir": str(data_dir()),
               "settings": {k: v for k, v in s.model_dump().items() if k != "fx"},
               "fx": [r.label() for r in s.fx_table().used()]}
    emit(dump_json(payload))


for _name in COMMAND_MODULES:
    importlib.import_module(_name).register(app)


def main() -> None:
    """Console entry point: run the app, turning gpuplan errors into one line and an exit code."""
    try:
        app()
    except GpuplanError as exc:
        if _debug:
            raise
        from rich.markup import escape

        from planner.console import stderr

        # Messages quote user input and package names like gpuplan[chart]: never markup.
        stderr().print(f"[bold red]error:[/bold red] {escape(exc.message)}", highlight=False)
        if exc.hint:
            stderr().print(f"hint: {escape(exc.hint)}", highlight=False)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as exc:  # a bug: say so in one line, keep the traceback behind --debug
        if _debug:
            raise
        sys.stderr.write(f"internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback)\n")
        sys.exit(1)
