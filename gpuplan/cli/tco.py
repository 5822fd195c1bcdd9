"""``gpuplan tco``: buy cards or rent instances, month by month over a horizon.

Flags and the TOML ``--scenario`` file take the same names (dashes become underscores);
flags win. Numbers are read as text and turned into Decimal so no float enters money.
"""

# No `from __future__ import annotations`: typer evaluates option annotations at run time.
import tomllib
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from pricing.errors import InputError, first_error
from gpuplan.cli.app import command_app
from gpuplan.cli.serve_opts import LOAD, MODEL as SERVE_MODEL, ServingFlags, refuse_without_serve, takes_serving
from gpuplan.cli.options import (
    SERVED_MODEL, CatalogOpt, CurrencyOpt, DiscountOpt, FxOpt, JsonOpt, OutputOpt, SpotEstimatesOpt, WideOpt,
    WorkloadFlags,
    catalog_from, emit, not_empty, parse_multi, takes_workload, use_wide, write_file,
)

app = command_app()  # the root loads this module when one of its commands runs (gpuplan.cli.app)


def _opt(flag: str, help: str, metavar: str = "NUMBER") -> Any:
    return typer.Option(flag, help=help, metavar=metavar)


def load_scenario(path: Path) -> dict[str, Any]:
    """The keys of a TOML scenario file, checked against the flags."""
    from planner.tco.compare import Scenario

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"scenario file {path} does not exist") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"cannot read scenario file {path}: {exc}") from None
    data = {k.replace("-", "_"): v for k, v in data.items()}
    if "class" in data:  # the flag's name; the field avoids the Python keyword
        data["workload_class"] = data.pop("class")
    unknown = sorted(set(data) - set(Scenario.model_fields))
    if unknown:
        known = ["class" if k == "workload_class" else k for k in Scenario.model_fields]
        raise InputError(f"scenario file {path} has unknown keys: {', '.join(unknown)}",
                         f"known keys: {', '.join(known)}")
    for key in ("buy", "vs", "billing", "fx"):
        if isinstance(data.get(key), str):
            data[key] = [data[key]]
    return data


def make_scenario(flags: dict[str, Any], scenario_file: Path | None) -> Any:
    """Scenario file values, overridden by every flag that was given."""
    from pydantic import ValidationError

    from planner.limits import check_fields
    from planner.tco.compare import Scenario

    merged: dict[str, Any] = load_scenario(scenario_file) if scenario_file else {}
    for key, value in flags.items():
        if value is None or value == [] or value is False:
            continue
        merged[key] = parse_multi(value, "--" + key) if key in ("buy", "billing", "vs") else value
    for key, value in list(merged.items()):
        if key in Scenario.model_fields and isinstance(value, float):
            merged[key] = repr(value)  # TOML floats: keep the digits the user wrote
    try:
        sc = Scenario(**merged)
    except ValidationError as exc:
        where, msg = first_error(exc)
        flag = "class" if where == "workload_class" else where.replace("_", "-")
        raise InputError(f"bad value for --{flag}: {msg}",
                         "check the flag or the scenario file") from None
    check_fields(sc)
    # 3e2 and 300 are the same usage: echo it as 300 in labels and JSON.
    return sc.model_copy(update={k: Decimal(f"{v:f}") for k, v in sc if isinstance(v, Decimal)})



@app.command()
@takes_workload(SERVED_MODEL)
@takes_serving(SERVE_MODEL, LOAD)
def tco(
    usage: Annotated[Optional[str], _opt(
        "--usage", "GPU-hours of work per month on the reference GPU (--ref-gpu), e.g. 300.")] = None,
    ref_gpu: Annotated[Optional[str], _opt(
        "--ref-gpu", "GPU the usage is measured on. [default: V100-SXM2-32GB]", "GPU")] = None,
    workload_class: Annotated[Optional[str], _opt(
        "--class", "Workload class for relative speed: transformer or cnn. [default: transformer]", "CLASS")] = None,
    precision: Annotated[Optional[str], _opt(
        "--precision", "mixed (fp16/bf16 AMP) or fp32. [default: mixed]", "PRECISION")] = None,
    hours_per_day: Annotated[Optional[str], _opt(
        "--hours-per-day", "Or: hours a day the whole machine runs (with --days-per-month).")] = None,
    days_per_month: Annotated[Optional[str], _opt("--days-per-month", "Days a month it runs. [default: 30]")] = None,
    months: Annotated[Optional[int], typer.Option("--months", help="Horizon in months. [default: 36]")] = None,
    buy: Annotated[Optional[list[str]], _opt(
        "--buy", "Cards to buy, e.g. '4x RTX-4090' (repeatable).", "COUNTxGPU")] = None,
    vs: Annotated[Optional[list[str]], _opt(
        "--vs", "Instance type to rent, e.g. p3.16xlarge (repeatable).", "INSTANCE")] = None,
    region: Annotated[Optional[str], _opt(
        "--region", "Region or zone of the rentals. [default: first with a price]", "REGION")] = None,
    billing: Annotated[Optional[list[str]], _opt(
        "--billing", "Rental modes: hourly, monthly, spot, reserved_1y, reserved_3y (repeatable). "
        "[default: every priced one]", "MODE")] = None,
    condition: Annotated[Optional[str], _opt(
        "--condition", "Card condition: new, market or used. [default: new, else market, else used]", "TEXT")] = None,
    card_price: Annotated[Optional[str], _opt(
        "--card-price", "Price of one card in the display currency (overrides the catalog).")] = None,
    host_price: Annotated[Optional[str], _opt(
        "--host-price", "Price of the host without cards (skips auto-sizing).")] = None,
    host_watts: Annotated[Optional[str], _opt(
        "--host-watts", "Host draw in W without the GPUs (skips auto-sizing).")] = None,
    dataset_gb: Annotated[Optional[str], _opt("--dataset-gb", "Dataset size for NVMe sizing. [default: 1000]")] = None,
    cores_per_gpu: Annotated[Optional[str], _opt(
        "--cores-per-gpu", "CPU cores per GPU for sizing. [default: 4]")] = None,
    pue: Annotated[Optional[str], _opt("--pue", "Power usage effectiveness. [default: 1.58, Uptime 2023]")] = None,
    kwh_price: Annotated[Optional[str], _opt(
        "--kwh-price", "Electricity price per kWh in the display currency. [default: sourced per currency]")] = None,
    idle_fraction: Annotated[Optional[str], _opt(
        "--idle-fraction", "GPU idle draw as a fraction of TDP. [default: 0.10, a measured idle A40]")] = None,
    depreciation_years: Annotated[Optional[str], _opt(
        "--depreciation-years", "Life of the hardware in years. [default: 5, "
        "server life in Amazon's FY2024 10-K]")] = None,
    resale: Annotated[Optional[str], _opt(
        "--resale", "Resale value at the end of the life, fraction of the price. [default: 0.24]")] = None,
    maintenance: Annotated[Optional[str], _opt(
        "--maintenance", "Maintenance per year, fraction of the price. [default: 0.20]")] = None,
    profile: Annotated[Optional[str], typer.Option(
        "--profile", help="Where the bought hardware lives: workstation (under a desk: PUE 1.0, "
        "cards under warranty) or colocated (a server in a colocation facility). "
        "[default: workstation up to 4 cards, else colocated]")] = None,
    colo: Annotated[bool, typer.Option(
        "--colo", help="Host in a colocation facility at the sourced $/kW/month (the colocated profile).")] = False,
    spot_estimates: SpotEstimatesOpt = False,
    colo_price: Annotated[Optional[str], _opt(
        "--colo-price", "Colocation price per kW per month in the display currency (implies --colo).")] = None,
    spot_overhead: Annotated[Optional[str], _opt(
        "--spot-overhead", "Extra run time on spot for restarts. [default: 0.10]")] = None,
    disk_gb: Annotated[Optional[str], _opt(
        "--disk-gb", "Rentals: disk per instance in GB, kept for the project, billed all month. [default: 256]",
    )] = None,
    disk_with_machine: Annotated[bool, typer.Option("--disk-with-machine", help=(
        "Rentals: the disk lives only with the machine (deleted with it), billed only while it runs."))] = False,
    egress_gb: Annotated[Optional[str], _opt(
        "--egress-gb", "Rentals: GB sent to the internet a month. [default: 0]")] = None,
    storage_gb: Annotated[Optional[str], _opt(
        "--storage-gb", "Rentals: GB kept in object storage all month. [default: 0]")] = None,
    bandwidth_mbps: Annotated[Optional[str], _opt(
        "--bandwidth-mbps", "Rentals: Tencent public bandwidth per instance. [default: 5]")] = None,
    scenario: Annotated[Optional[Path], typer.Option(
        "--scenario", help="TOML file with any of these options (flags win).", metavar="FILE")] = None,
    currency: CurrencyOpt = None,
    fx: FxOpt = None,
    hours_per_month: Annotated[Optional[str], _opt("--hours-per-month", "Hours in a month. [default: 730]")] = None,
    catalog: CatalogOpt = None,
    discount: DiscountOpt = None,
    output: OutputOpt = None,
    as_json: JsonOpt = False,
    wide: WideOpt = False,
    markdown_file: Annotated[Optional[Path], typer.Option(
        "--markdown", help="Also write the report as Markdown.", metavar="FILE")] = None,
    html_file: Annotated[Optional[Path], typer.Option(
        "--html", help="Also write a self-contained HTML report with the chart.", metavar="FILE")] = None,
    chart_file: Annotated[Optional[list[Path]], typer.Option(
        "--chart", help="Also write the cumulative-cost chart (.png or .svg; needs gpuplan[chart]; "
        "repeatable).", metavar="FILE")] = None,
    *,
    workload: WorkloadFlags,  # the served model's size and experts (--params, --active-params, ...: takes_workload)
    serving: ServingFlags,  # --help lists the serving flags here (takes_serving)
) -> None:
    """Buy vs rent over time: cumulative cost per option, break-even month and utilization, a verdict.
    With --serve, owning the fleet that serves a model at --rate against renting it."""
    from pricing.money import to_decimal
    from gpuplan.console import stderr
    from gpuplan.render.table import OutputFormat, dump_json, pick_format
    from gpuplan.settings import load_settings
    from planner.tco.compare import build_tco
    from gpuplan.render.tco import (
        chart_format,
        cumulative_csv,
        html_page,
        markdown,
        payload,
        print_tables,
        require_matplotlib,
        write_chart,
    )

    fmt = pick_format(output, as_json)
    use_wide(wide)
    charts = list(dict.fromkeys(chart_file or ()))  # every --chart is written; the same file once
    for chart in charts:
        chart_format(chart)  # fail before any costing
    if charts:
        require_matplotlib()  # and before writing any file: all the reports asked for, or none
    numbers = {"usage": usage, "hours_per_day": hours_per_day, "days_per_month": days_per_month,
               "card_price": card_price, "host_price": host_price, "host_watts": host_watts,
               "dataset_gb": dataset_gb, "cores_per_gpu": cores_per_gpu, "pue": pue, "kwh_price": kwh_price,
               "idle_fraction": idle_fraction, "depreciation_years": depreciation_years, "resale": resale,
               "maintenance": maintenance, "colo_price": colo_price, "spot_overhead": spot_overhead,
               "hours_per_month": hours_per_month, "disk_gb": disk_gb, "egress_gb": egress_gb,
               "storage_gb": storage_gb, "bandwidth_mbps": bandwidth_mbps}
    flags: dict[str, Any] = {k: None if v is None else to_decimal(v, "--" + k.replace("_", "-"))
                             for k, v in numbers.items()}
    flags.update(months=months, buy=buy, vs=vs, region=not_empty(region, "--region"), billing=billing,
                 condition=not_empty(condition, "--condition"), colo=colo, spot_estimates=spot_estimates,
                 profile=not_empty(profile, "--profile"), disk_with_machine=disk_with_machine,
                 currency=currency, fx=fx,
                 ref_gpu=not_empty(ref_gpu, "--ref-gpu"), workload_class=not_empty(workload_class, "--class"),
                 precision=not_empty(precision, "--precision"))
    refuse_without_serve(serving)
    serve, model = serving.get("serve"), {k: workload.get(k) for k in SERVED_MODEL}
    if serve is None and (given := sorted(k for k, v in model.items() if v is not None)):
        raise InputError(f"--{given[0].replace('_', '-')} describes a served model; training TCO is given as --usage",
                         "add --serve custom (or --serve PRESET to override its size)")
    if serve is not None:
        if usage is not None or charts or markdown_file or html_file:
            raise InputError("--usage, --chart, --markdown and --html belong to training TCO",
                             "drop them with --serve (use --json or -o csv)")
        _serve_tco(serve, {**{k: v for k, v in serving.items() if k not in ("serve", "allow_spot")}, **model}, flags,
                   scenario, discount=discount, catalog=catalog, allow_spot=bool(serving.get("allow_spot")), fmt=fmt)
        return
    sc = make_scenario(flags, scenario)
    settings = load_settings(currency=sc.currency, fx=tuple(sc.fx) if sc.fx else None,
                             hours_per_month=sc.hours_per_month, spot_overhead=sc.spot_overhead,
                             discount=tuple(discount) if discount else None)
    result = build_tco(sc, currency=settings.currency, fx=settings.fx_table(),
                       hours_per_month=settings.hours_per_month, spot_overhead=settings.spot_overhead,
                       catalog=catalog_from(settings, catalog), ref_gpu=settings.ref_gpu)
    written = []
    for path, text in ((markdown_file, markdown), (html_file, html_page)):
        if path is not None:
            write_file(path, text(result))
            written.append(str(path))
    for chart in charts:
        write_chart(result, chart)
        written.append(str(chart))
    if fmt is OutputFormat.JSON:
        emit(dump_json(payload(result)))
    elif fmt is OutputFormat.MARKDOWN:
        emit(markdown(result))
    elif fmt is OutputFormat.CSV:
        emit(cumulative_csv(result))
    else:
        print_tables(result)
    for w in written:
        stderr().print(f"wrote {w}", highlight=False)


def _serve_tco(serve: str, serving: dict[str, Any], flags: dict[str, Any], scenario: Path | None, *,
               discount: Any, catalog: Any, allow_spot: bool, fmt: Any) -> None:
    """``tco --serve``: parse, size the fleets with the serving plan, compare them month by month, render."""
    from gpuplan.cli.options import build_constraints
    from gpuplan.render.serve import render_serve_tco
    from gpuplan.settings import load_settings
    from planner.serve.fleet import serve_plan
    from planner.serve.inputs import serve_workload_from_options
    from planner.serve.tco import serve_tco

    hours = flags.pop("hours_per_day")
    sc = make_scenario({**flags, "hours_per_day": None}, scenario)
    settings = load_settings(currency=sc.currency, fx=tuple(sc.fx) if sc.fx else None,
                             hours_per_month=sc.hours_per_month, spot_overhead=sc.spot_overhead,
                             discount=tuple(discount) if discount else None)
    cat = catalog_from(settings, catalog)
    w = serve_workload_from_options(serve, precision=None if sc.precision in (None, "mixed") else sc.precision,
                                    hours_per_day=None if hours is None else float(hours), **serving)
    if w.rate is None:
        raise InputError("tco --serve needs the load", "give --rate, e.g. --rate 20 (requests per second)")
    billing = list(sc.billing or [])
    c = build_constraints(deadline=None, budget=None, min_vram=None, provider=None,
                          billing=[*billing, "buy"] if billing else None, region=[sc.region] if sc.region else None,
                          gpu=None, max_gpus=None, settings=settings, catalog=cat)
    p = serve_plan(w, c.model_copy(update={"spot_estimates": sc.spot_estimates}), settings, catalog=cat,
                   months=sc.months, allow_spot=allow_spot, owned_scenario=sc)
    emit(render_serve_tco(serve_tco(p, cat, buy=list(sc.buy), vs=list(sc.vs)), fmt))
