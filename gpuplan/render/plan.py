"""How a plan is shown: its JSON contract (``gpuplan plan --json``) and its table, CSV and Markdown."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from pricing.catalog import UNKNOWN_REGION
from pricing.money import money_text
from providers.lazy import read
from planner.plan import Plan
from gpuplan.render.table import (Column, OutputFormat, csv_streamed, decimal_json, dump_json_streamed,
                                  keep_telling_apart, money_json, no_exponents, render_rows, whole)


def _fmt_hours(h: Decimal) -> str:
    return f"{h:,.1f}" if h >= 1 else f"{h:.2f}"


def where(region: str, zone: str | None) -> str:
    """'ap-guangzhou (ap-guangzhou-3)' where the zone is known, else the region; '-' where the source names none."""
    if region == UNKNOWN_REGION:
        return "-"
    return f"{region} ({zone})" if zone and zone != region else region


def _gpus(count: float, gpu: str) -> str:
    return f"{count:g}x {gpu}"


def _h(hours: Decimal) -> float | int:
    """Hours for JSON: 4 places, a whole number as an integer."""
    return whole(round(float(hours), 4))


def _range(o: Any) -> dict[str, Any] | None:
    """Model workloads: {low, expected, high} of GPU-hours, wall hours and cost; None for --gpu-hours plans."""
    r = o.range
    if r is None:
        return None
    return {
        "gpu_hours": {"low": _h(r.gpu_hours[0]), "expected": _h(o.gpu_hours), "high": _h(r.gpu_hours[1])},
        "wall_hours": {"low": _h(r.wall_hours[0]), "expected": _h(o.wall_hours), "high": _h(r.wall_hours[1])},
        "cost": {"low": str(r.cost[0].rounded()), "expected": str(o.cost.rounded()), "high": str(r.cost[1].rounded())},
    }


def _extras_cell(o: Any) -> str:
    """The extras' share of the whole bill, '+' where some item is not priced (the share is then a floor)."""
    if o.instance_cost is None or (not o.extras and not o.not_priced):
        return ""
    share = o.extras_cost.amount / o.cost.amount if o.cost.amount else Decimal(0)
    if not o.extras:  # nothing priced, some items not: "0%+" read as a measured nothing
        return "+"
    shown = "<1%" if 0 < share < Decimal("0.005") else f"{share:.0%}"  # a 256 GB disk is not "0%" of the bill
    return shown + ("+" if o.not_priced else "")


def plan_payload(p: Plan, limit: int = 0) -> dict[str, Any]:
    """The stable JSON contract of ``gpuplan plan``: every option, or the first ``limit`` (0: all).

    Whole floats are written as integers here, field by field (``dump_json(..., exact=True)``).
    """
    listed = p.options if limit <= 0 else p.options[:limit]
    return {**_payload_around(p), "options": [option_json(o) for o in listed]}


def _count(p: Plan, limit: int) -> int:
    """How many options a JSON or CSV answer writes: the first ``limit`` (0: all)."""
    return len(p.options) if limit <= 0 else min(limit, len(p.options))


def plan_json(p: Plan, limit: int = 0) -> Iterator[str]:
    """``plan_payload`` as JSON text, the options written as they are built (the CLI's ``--json``)."""
    count = _count(p, limit)
    return dump_json_streamed(_payload_around(p), "options", count,
                              lambda start, stop: map(option_json, read(p.options, start, stop)))


def _payload_around(p: Plan) -> dict[str, Any]:
    """Everything of the contract but the options, in the contract's key order ("options" third)."""
    return {
        "currency": p.currency,
        "assumptions": no_exponents(p.assumptions),
        "options": None,
        "options_total": len(p.options),
        "cheapest": option_json(p.cheapest),
        "cheapest_by_billing": {str(m): option_json(o) for m, o in p.cheapest_by_billing().items()},
        "explanation": no_exponents(p.explanation),
        "excluded": [exclusion_json(e) for e in p.excluded],
    }


def exclusion_json(e: Any) -> dict[str, Any]:
    """One excluded option in the JSON contract: its fields in order, all text or null (a 50k-row plan excludes
    thousands, and dataclasses.asdict's deep copy of each was a tenth of a second)."""
    return {"provider": e.provider, "offer": e.offer, "region": e.region, "zone": e.zone, "billing": e.billing,
            "rule": e.rule, "reason": e.reason}


def option_json(o: Any) -> dict[str, Any]:
    """One option in the JSON contract."""
    cost = money_json(o.cost.amount)  # also its total, and its instance cost where that is the whole cost
    instance = o.instance_cost
    return {
        "provider": o.provider,
        "offer": o.offer,
        "region": o.region,
        "gpu": o.gpu,
        "gpu_count": whole(o.gpu_count),
        "billing": o.billing,
        "nodes": o.nodes,
        "gpus_total": whole(o.gpus_total),
        "zone": o.zone,
        "live": o.live,
        "wall_hours": _h(o.wall_hours),
        "gpu_hours": _h(o.gpu_hours),
        "cost": cost,
        "native_cost": {"amount": money_json(o.native_cost.amount), "currency": o.native_cost.currency},
        "estimate": o.estimate,
        "line_items": [
            {
                "description": i.description,
                "quantity": decimal_json(i.quantity),
                "unit": i.unit,
                "unit_price": {"amount": decimal_json(i.unit_price.amount), "currency": i.unit_price.currency},
                "cost": {"amount": money_json(i.cost.amount), "currency": i.cost.currency},
            }
            for i in o.line_items
        ],
        "instance_cost": cost if instance is None or instance is o.cost else money_json(instance.amount),
        "extras": [_extra_json(i) for i in o.extras],
        "not_priced": list(o.not_priced),
        "total": cost,
        "notes": list(o.notes),
        "range": _range(o),
        **({"scaling": no_exponents(o.scaling)} if o.scaling is not None else {}),
    }


def _extra_json(i: Any) -> dict[str, Any]:
    """One extras line in the JSON contract, made once per line: a plan's options of one cloud, mode and run
    time share their disk, address and traffic lines (planner.plan.costing), so a 50k-offer plan has few."""
    if (kept := _EXTRAS_JSON.get(id(i))) is not None and kept[0] is i:
        return kept[1]
    out = {
        "item": i.item,
        "description": i.description,
        "quantity": decimal_json(i.quantity),
        "unit": i.unit,
        "rate": {"amount": decimal_json(i.unit_price.amount), "currency": i.unit_price.currency},
        "amount": {"amount": money_json(i.cost.amount), "currency": i.cost.currency},
        "source": i.source,
    }
    if len(_EXTRAS_JSON) >= 4096:  # set-up lines are one per option: keep the memory bounded
        _EXTRAS_JSON.clear()
    _EXTRAS_JSON[id(i)] = (i, out)  # the line is kept with its id, so the id cannot be reused while kept
    return out


_EXTRAS_JSON: dict[int, tuple[Any, dict[str, Any]]] = {}


# (key, header, justify, priority): priority 0 is never cut; on a narrow terminal the
# highest numbers are dropped first (see gpuplan.render.layout).
PLAN_COLUMNS = [
    ("rank", "#", "right", 4),
    ("provider", "provider", "left", 4),
    ("offer", "offer", "left", 0),
    ("region", "region", "left", 3),
    ("gpus", "GPUs", "left", 2),
    ("billing", "billing", "left", 1),
    ("wall_hours", "wall h", "right", 2),
    ("gpu_hours", "GPU-h", "right", 5),
    ("cost", "cost", "right", 0),
    ("extras", "extras", "right", 4),  # before "#" among equals: at 100 columns the table is as wide as before
    ("native", "native cost", "right", 6),
]
ESTIMATED = "Billing marked * is an estimated price."


TABLE_ROWS = 25  # the table's rows when --limit is not given; JSON, CSV and Markdown then list every option


def render_plan(p: Plan, fmt: OutputFormat, limit: int | None, explain: bool,
                title: str) -> str | Iterator[str] | None:
    """The plan as text in ``fmt``; a rich table prints itself and returns None.

    ``limit`` None: the table shows TABLE_ROWS rows and the other formats every option; a number (0: all) is
    honoured by every format, so a script asking for the top 25 does not pay for 45,000.
    """
    from gpuplan.console import stdout

    if fmt is OutputFormat.JSON:
        return plan_json(p, limit or 0)
    cols = [Column(key=k, header=h, justify=j, priority=pr) for k, h, j, pr in PLAN_COLUMNS]

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
            "cost": money_text(o.cost.amount),
            "extras": _extras_cell(o),
            "native": str(o.native_cost),
            "notes": "; ".join(o.notes),
        }

    if fmt is OutputFormat.CSV:  # written as the options are built: a 200k-row plan is never held whole
        count = _count(p, limit or 0)
        return csv_streamed(count, lambda start, stop: (row(i, o)
                                                        for i, o in enumerate(read(p.options, start, stop), start + 1)),
                            [*cols, Column(key="notes", header="notes")])
    if fmt is not OutputFormat.TABLE:
        listed = p.options if not limit else p.options[:limit]
        rows = [row(i, o) for i, o in enumerate(listed, 1)]
        cols.append(Column(key="notes", header="notes"))
        text = render_rows(rows, cols, fmt, title=title)
        if fmt is OutputFormat.MARKDOWN and any(o.estimate for o in p.options):
            text = (text or "") + "\n" + ESTIMATED + "\n"
        return text
    # The table shows --limit rows: formatting the rest (tens of thousands at scale) is wasted.
    limit = TABLE_ROWS if limit is None else limit
    shown_options = p.options if limit <= 0 else p.options[:limit]
    shown = [row(i, o) for i, o in enumerate(shown_options, 1)]
    more = len(p.options) - len(shown)
    notes = [f"{more} more option(s): --limit 0 shows all."] if more else []
    if any(o.estimate for o in shown_options):
        notes.append(ESTIMATED)
    same = ("provider", "offer", "billing")
    render_rows(shown, keep_telling_apart(shown, cols, "region", same), fmt, title=f"{title} (costs in {p.currency})",
                caption=" ".join(notes))
    best_options = [(rank + 1, o) for rank, o in p.ranked_by_billing().values()]  # in rank order
    best = [row(i, o) for i, o in best_options]
    render_rows(best, keep_telling_apart(best, cols, "region", same), fmt, title="Cheapest per billing mode",
                caption=ESTIMATED if any(o.estimate for _, o in best_options) else "")
    out = stdout()
    out.print(f"[bold]Why:[/bold] {p.explanation}", highlight=False)
    a = p.assumptions
    out.print(
        f"[dim]Assumptions: {a.get('hours_per_month')} h/month, spot restart overhead "
        f"{Decimal(a.get('spot_overhead', '0')):.0%}, prices "
        f"{a.get('prices_as_of') or 'as of ' + str(a.get('catalog_as_of'))}; "
        f"FX {'; '.join(a.get('fx', [])[:1]) or 'none'}.[/dim]",
        highlight=False,
    )
    if (ex := a.get("extras")) is not None:
        out.print(f"[dim]Costs are the whole bill; 'extras' is the share of disks ({ex['disk_gb']} GB per node), "
                  f"public addresses, egress ({ex['egress_gb']} GB), stored data ({ex['storage_gb']} GB), set-up "
                  f"({ex['setup_minutes']} min) and Tencent bandwidth ({ex['bandwidth_mbps']} Mbps); "
                  "'+' marks items not priced (--json lists them; a lone '+': none priced).[/dim]", highlight=False)
    if (rng := a.get("estimate_range")) is not None:
        out.print(f"[dim]Hours and costs are expected values; the calibrated range is x{rng['low']:.2f} to "
                  f"x{rng['high']:.2f} of them ({rng['basis'].split(' (')[0]}); --json gives low/high per "
                  "option.[/dim]",
                  highlight=False)
    if explain and p.excluded:
        ex = [{"offer": f"{e.provider} {e.offer}", "where": where(e.region, e.zone), "billing": e.billing or "all",
               "reason": e.reason} for e in p.excluded]
        # The region stays, or a row excluded in one region reads as contradicting the table.
        render_rows(ex, [Column(key="offer", header="offer", priority=0),
                         Column(key="where", header="region (zone)", droppable=False),
                         Column(key="billing", header="billing", priority=0),
                         Column(key="reason", header="excluded because", droppable=False)], fmt, title="Excluded")
    elif p.excluded:
        guessed = sum(1 for e in p.excluded if e.rule == "estimate")
        why = f" ({guessed} for an estimated spot price: --spot-estimates ranks them)" if guessed else ""
        out.print(f"[dim]{len(p.excluded)} option(s) excluded{why}: --explain lists them with reasons.[/dim]",
                  highlight=False)
    return None
