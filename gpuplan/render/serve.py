"""How a serving plan is shown: a table of fleets, or its JSON and CSV contracts."""

from __future__ import annotations

from typing import Any

from pricing.money import decimal_json, money_json, money_text
from planner.serve.fleet import ServePlan
from gpuplan.render.table import Column, OutputFormat, dump_json, render_rows

COLUMNS = [
    Column(key="rank", header="#", justify="right", priority=0),
    Column(key="provider", header="provider", priority=0),
    Column(key="offer", header="offer", priority=0),
    Column(key="region", header="region", priority=3),
    Column(key="billing", header="billing", priority=0),
    Column(key="fleet", header="fleet", priority=1),
    Column(key="layout", header="per instance", priority=2),
    Column(key="capacity", header="tokens/s", justify="right", priority=2),
    Column(key="load", header="load", justify="right", priority=1),
    Column(key="ttft", header="TTFT", justify="right", priority=2),
    Column(key="per_month", header="per month", justify="right", priority=0),
    Column(key="per_million", header="per 1M tokens", justify="right", priority=1),
    Column(key="if_slow", header="if slow", justify="right", priority=3),
]


def _rows(p: ServePlan, limit: int | None, plain: bool = False) -> list[dict[str, Any]]:
    """The table's rows; ``plain`` (CSV): numbers a program reads, without separators or units."""
    shown = p.options if not limit else p.options[:limit]
    rows = []
    for i, o in enumerate(shown, 1):
        lay = o.layout
        rows.append({
            "rank": i, "provider": o.provider, "offer": o.offer, "region": o.region, "billing": str(o.billing),
            "fleet": f"{o.instances} x ({o.gpu_count} x {o.gpu})",
            "layout": f"{lay.replicas} x TP{lay.tp}, batch {lay.batch}",
            "capacity": round(o.capacity_tokens_per_s, 1) if plain else f"{o.capacity_tokens_per_s:,.0f}",
            "load": round(o.load, 4) if plain else f"{o.load:.0%}",
            "ttft": round(o.ttft_s, 4) if plain else f"{o.ttft_s * 1000:,.0f} ms",
            "per_month": money_json(o.cost_per_month.amount) if plain
            else money_text(o.cost_per_month.amount, str(o.cost_per_month.currency)),
            "per_million": decimal_json(o.cost_per_million_tokens.amount) if plain
            else money_text(o.cost_per_million_tokens.amount, None, places=3),
            "if_slow": money_json(o.cost_per_month_if_slow.amount) if plain
            else money_text(o.cost_per_month_if_slow.amount, None, places=0),
        })
    return rows


def summary(p: ServePlan) -> str:
    """One line per billing mode's cheapest fleet, and which wins."""
    best = p.best_by_billing()
    win = p.cheapest
    parts = [f"{mode} {money_text(o.cost_per_month.amount, p.currency, places=0)}/month "
             f"({o.instances} x {o.offer})" for mode, o in best.items()]
    return f"{win.billing} wins: " + "; ".join(parts)


def render_serve_plan(p: ServePlan, fmt: OutputFormat, limit: int | None, explain: bool) -> str | None:
    if fmt is OutputFormat.JSON:
        return dump_json(p.as_json(limit))
    table_limit = 25 if limit is None and fmt is OutputFormat.TABLE else limit
    w, d = p.workload, p.demand
    title = (f"Fleets serving {w.arch.name} ({w.weights}) at {w.rate:g} requests/s x {w.output_tokens} output tokens"
             f" ({d.peak_tokens_per_s:,.0f} tokens/s at the peak), cheapest per month over {p.months} months")
    targets = ", ".join(t for t in (f"TTFT {w.percentile} <= {w.ttft_s:g} s" if w.ttft_s else "",
                                    f"TPOT <= {w.tpot_s * 1000:g} ms" if w.tpot_s else "") if t) or "no latency target"
    caption = (f"{summary(p)}. {targets}; {w.hours_per_day:g} h a day. TTFT: its {w.percentile} at the peak, "
               f"queueing included; {'; '.join(p.notes)}. 'if slow': the monthly cost if the model "
               f"serves at the low end of its range ({p.range_basis}).")
    if p.cheapest.notes:
        caption += " #1: " + "; ".join(p.cheapest.notes) + "."
    if explain and p.excluded:
        reasons: dict[str, int] = {}
        for _, _, r in p.excluded:
            reasons[r] = reasons.get(r, 0) + 1
        caption += " Excluded: " + "; ".join(f"{n} x {r}" for r, n in sorted(reasons.items(), key=lambda x: -x[1]))
    return render_rows(_rows(p, table_limit, plain=fmt is OutputFormat.CSV), COLUMNS, fmt, title=title,
                       caption=caption)


def render_serve_tco(t: Any, fmt: OutputFormat) -> str | None:
    """``tco --serve``: each fleet's monthly and total cost over the horizon, break-evens and the verdict."""
    from planner.serve.tco import ServeTco

    assert isinstance(t, ServeTco)
    if fmt is OutputFormat.JSON:
        return dump_json(t.as_json())
    cur = t.plan.currency
    if fmt is OutputFormat.CSV:
        cols = [Column(key="month", header="month")] + [Column(key=o.name, header=o.name) for o in t.options]
        rows = [{"month": m + 1, **{o.name: f"{o.cumulative[m]:.2f}" for o in t.options}} for m in range(t.plan.months)]
        return render_rows(rows, cols, fmt)
    owned = next((o for o in t.options if str(o.fleet.billing) == "buy"), None)
    even = {v: m for b, v, m in t.breakeven if owned is not None and b == owned.name}
    rows = [{"option": o.name, "billing": str(o.fleet.billing),
             "gpus": f"{o.fleet.instances * o.fleet.gpu_count} x {o.fleet.gpu}",
             "month1": money_text(o.monthly[0], None), "later": money_text(o.monthly[min(1, len(o.monthly) - 1)], None),
             "total": money_text(o.total, cur), "per_million": money_text(o.per_million, None, places=3),
             "even": ("-" if o is owned or owned is None else
                      (f"month {even[o.name]}" if even.get(o.name) else "never"))} for o in t.options]
    cols = [Column(key="option", header="option", priority=0), Column(key="billing", header="billing", priority=1),
            Column(key="gpus", header="GPUs", priority=2),
            Column(key="month1", header="month 1", justify="right", priority=2),
            Column(key="later", header="then a month", justify="right", priority=1),
            Column(key="total", header=f"{t.plan.months} months", justify="right", priority=0),
            Column(key="per_million", header="per 1M tokens", justify="right", priority=1),
            Column(key="even", header="owning breaks even", priority=1)]
    return render_rows(rows, cols, fmt, title=f"Owning vs renting a {t.plan.workload.arch.name} service",
                       caption=t.verdict + f" Throughput range: {t.plan.range_basis}.")
