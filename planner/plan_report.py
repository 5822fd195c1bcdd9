"""How a plan is shown: its JSON contract (``gpuplan plan --json``) and its table, CSV and Markdown."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from planner.plan import Plan
from planner.report import Column, OutputFormat, dump_json, render_rows


def _fmt_hours(h: Decimal) -> str:
    return f"{h:,.1f}" if h >= 1 else f"{h:.2f}"


def _gpus(count: float, gpu: str) -> str:
    return f"{count:g}x {gpu}"


def _range(o: Any) -> dict[str, Any] | None:
    """Model workloads: {low, expected, high} of GPU-hours, wall hours and cost; None for --gpu-hours plans."""
    r = o.range
    if r is None:
        return None
    return {
        "gpu_hours": {"low": round(float(r.gpu_hours[0]), 4), "expected": round(float(o.gpu_hours), 4),
                      "high": round(float(r.gpu_hours[1]), 4)},
        "wall_hours": {"low": round(float(r.wall_hours[0]), 4), "expected": round(float(o.wall_hours), 4),
                       "high": round(float(r.wall_hours[1]), 4)},
        "cost": {"low": str(r.cost[0].rounded()), "expected": str(o.cost.rounded()), "high": str(r.cost[1].rounded())},
    }


def plan_payload(p: Plan) -> dict[str, Any]:
    """The stable JSON contract of ``gpuplan plan``."""

    def opt(o: Any) -> dict[str, Any]:
        return {
            "provider": o.provider,
            "offer": o.offer,
            "region": o.region,
            "gpu": o.gpu,
            "gpu_count": o.gpu_count,
            "billing": o.billing,
            "nodes": o.nodes,
            "gpus_total": o.gpus_total,
            "zone": o.zone,
            "live": o.live,
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
            "range": _range(o),
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


def render_plan(p: Plan, fmt: OutputFormat, limit: int, explain: bool, title: str) -> str | None:
    """The plan as text in ``fmt``; a rich table prints itself and returns None."""
    from planner.console import stdout

    if fmt is OutputFormat.JSON:
        return dump_json(plan_payload(p))
    cols = [Column(key=k, header=h, justify=j) for k, h, j in PLAN_COLUMNS]

    def row(i: int, o: Any) -> dict[str, Any]:
        return {
            "rank": i,
            "provider": o.provider,
            "offer": o.offer,
            # A spot price is one zone's: name it where the run would go.
            "region": f"{o.region} {o.zone}" if o.billing == "spot" and o.zone else o.region,
            "gpus": _gpus(o.gpu_count, o.gpu) if o.nodes == 1 else f"{o.nodes} x {_gpus(o.gpu_count, o.gpu)}",
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
        return render_rows(rows, cols, fmt, title=title)
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
        f"{Decimal(a.get('spot_overhead', '0')):.0%}, prices {a.get('prices_as_of') or 'as of ' + str(a.get('catalog_as_of'))}; "
        f"FX {'; '.join(a.get('fx', [])[:1]) or 'none'}.[/dim]",
        highlight=False,
    )
    if (rng := a.get("estimate_range")) is not None:
        out.print(f"[dim]Hours and costs are expected values; the calibrated range is x{rng['low']:.2f} to "
                  f"x{rng['high']:.2f} of them ({rng['basis'].split(' (')[0]}); --json gives low/high per option.[/dim]",
                  highlight=False)
    if explain and p.excluded:
        ex = [{"offer": f"{e.provider} {e.offer}", "billing": e.billing or "all", "reason": e.reason} for e in p.excluded]
        render_rows(ex, [Column(key="offer", header="offer"), Column(key="billing", header="billing"),
                         Column(key="reason", header="excluded because")], fmt, title="Excluded")
    elif p.excluded:
        out.print(f"[dim]{len(p.excluded)} option(s) excluded: --explain lists them with reasons.[/dim]", highlight=False)
    return None
