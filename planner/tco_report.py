"""Rendering a TCO result: JSON payload, tables, Markdown, a self-contained HTML page, a chart.

All renderers read the same :func:`sections`, so the terminal table, the Markdown file
and the HTML page never disagree. The HTML page carries its own CSS and an inline SVG
chart drawn here (no matplotlib, no external URL), so it works from a bare install
and prints well; ``--chart FILE.png|.svg`` uses matplotlib (the ``chart`` extra).
"""

from __future__ import annotations

import html
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from pricing.errors import InputError
from pricing.money import round_cents
from planner.report import Column
from pricing.billing import BillingMode
from pricing.line_items import quantity_text
from planner.tco import TcoLine, TcoOption, TcoResult

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf")


def cents(d: Decimal) -> str:
    return str(round_cents(d))


def shown(d: Decimal | None, places: int = 2) -> str | None:
    return None if d is None else f"{d.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP):,}"


def _line_json(i: TcoLine) -> dict[str, Any]:
    return {"description": i.description, "quantity": str(i.quantity.quantize(Decimal("0.000001")).normalize()), "unit": i.unit,
            "unit_price": str(i.unit_price.amount), "cost": cents(i.cost.amount), "when": i.when.value}


def payload(r: TcoResult) -> dict[str, Any]:
    """The JSON contract of ``gpuplan tco --json``: money as decimal strings."""
    return {
        "currency": r.currency.value,
        "months": r.months,
        "usage_gpu_hours_per_month": str(r.usage_gpu_hours),
        "usage_unit": r.unit.label,
        "assumptions": r.assumptions,
        "options": [
            {
                "name": o.name, "kind": o.kind.value, "provider": o.provider, "region": o.region, "gpu": o.gpu,
                "gpu_count": o.gpu_count, "native_currency": o.native_currency.value, "estimate": o.estimate,
                "monthly_cost": [cents(m) for m in o.monthly_cost],
                "cumulative_cost": [cents(m) for m in o.cumulative_cost],
                "total_cost": cents(o.total_cost),
                "cost_per_ref_gpu_hour": None if o.cost_per_ref_gpu_hour is None
                else str(o.cost_per_ref_gpu_hour.quantize(Decimal("0.0001"))),
                "line_items": [_line_json(i) for i in o.lines],
                "notes": o.notes,
            }
            for o in r.options
        ],
        "breakeven": [
            {"buy": b.buy, "vs": b.vs, "month": b.month,
             "months_formula": None if b.months_formula is None else str(b.months_formula.quantize(Decimal("0.01"))),
             "utilization": None if b.utilization is None else str(b.utilization.quantize(Decimal("0.0001")))}
            for b in r.breakeven
        ],
        "monthly_vs_hourly_hours": {k: None if v is None else str(v.quantize(Decimal("0.01")))
                                    for k, v in r.monthly_vs_hourly_hours.items()},
        "owned_cost_per_ref_gpu_hour": {k: [{"utilization": str(u), "cost": str(c.quantize(Decimal("0.0001")))}
                                        for u, c in pts] for k, pts in r.owned_curves.items()},
        "verdict": r.verdict,
    }


class Section(BaseModel):
    """One table of the report: (key, header, right-aligned?) columns and rows of text."""

    title: str
    columns: list[tuple[str, str, bool]]
    rows: list[dict[str, Any]]
    caption: str = ""

    def cols(self) -> list[Column]:
        return [Column(key=k, header=h, justify="right" if right else "left") for k, h, right in self.columns]


def _option_label(o: TcoOption) -> str:
    return o.name + ("*" if o.estimate else "")


def sections(r: TcoResult) -> list[Section]:
    c = r.currency
    steps = sorted({m for m in (1, 6, 12, 24, 36, 48, 60, r.months) if m <= r.months})
    out = [
        Section(
            title=(f"Buy vs rent over {r.months} months at {r.usage_gpu_hours:g} {r.unit.ref_gpu} GPU-hours of work "
                   f"a month (costs in {c})"),
            columns=[("option", "option", False), ("kind", "kind", False), ("gpus", "GPUs", False),
                     ("region", "region", False), ("first", "month 1", True), ("later", "later months", True),
                     ("total", f"total {r.months} mo", True), ("per_gpu_h", "per ref GPU-h", True)],
            rows=[{"option": _option_label(o), "kind": o.kind.value, "gpus": f"{o.gpu_count:g}x {o.gpu}",
                   "region": o.region or "-", "first": shown(o.monthly_cost[0]),
                   "later": shown(o.monthly_cost[1]) if len(o.monthly_cost) > 1 else "-",
                   "total": shown(o.total_cost), "per_gpu_h": shown(o.cost_per_ref_gpu_hour, 4)}
                  for o in sorted(r.options, key=lambda o: o.total_cost)],
            caption=("* estimated price. Buy: month 1 pays the hardware net of its resale value. Per ref GPU-h: per "
                     f"{r.unit.ref_gpu} GPU-hour of work, each option's hours scaled by its speed and scaling."),
        ),
    ]
    if r.breakeven:
        out.append(Section(
            title="Break-even: when buying overtakes each rental",
            columns=[("buy", "buy", False), ("vs", "vs", False), ("month", "break-even month", True),
                     ("formula", "CAPEX_net / (rent - opex)", True), ("util", "break-even utilization", True)],
            rows=[{"buy": b.buy, "vs": b.vs, "month": str(b.month) if b.month else f"never in {r.months}",
                   "formula": shown(b.months_formula, 1) or "never",
                   "util": f"{b.utilization:.1%}" if b.utilization is not None else "above 100%"}
                  for b in r.breakeven],
            caption="Break-even utilization: where the owned cost per unit of work meets the rental's at this usage.",
        ))
    if r.monthly_vs_hourly_hours:
        out.append(Section(
            title="Monthly subscription vs pay-as-you-go (hours per month per instance)",
            columns=[("instance", "instance", False), ("hours", "monthly beats hourly above", True)],
            rows=[{"instance": k, "hours": f"{v:,.1f} h" if v is not None else "no monthly price"}
                  for k, v in r.monthly_vs_hourly_hours.items()],
            caption="= monthly price / hourly price, per instance.",
        ))
    out.append(Section(
        title=f"Cumulative cost ({c})",
        columns=[("option", "option", False)] + [(f"m{m}", f"month {m}", True) for m in steps],
        rows=[{"option": _option_label(o), **{f"m{m}": shown(o.cumulative_cost[m - 1]) for m in steps}}
              for o in r.options],
    ))
    for name, pts in r.owned_curves.items():
        picks = [p for p in pts if p[0] in (Decimal("0.1"), Decimal("0.25"), Decimal("0.5"), Decimal("0.75"), Decimal(1))]
        out.append(Section(
            title=f"{name}: cost per {r.unit.ref_gpu} GPU-hour of work by utilization ({c})",
            columns=[(f"u{u}", f"{u:.0%}", True) for u, _ in picks],
            rows=[{f"u{u}": shown(v, 4) for u, v in picks}],
        ))
    out.append(Section(
        title=f"Line items (quantity x unit price = cost, {c})",
        columns=[("option", "option", False), ("item", "item", False), ("qty", "quantity", True),
                 ("unit", "unit", False), ("price", "unit price", True), ("cost", "cost", True),
                 ("when", "paid", False)],
        rows=[{"option": o.name, "item": i.description, "qty": quantity_text(i.quantity),
               "unit": i.unit, "price": f"{i.unit_price.amount:,.6g}" if i.unit_price.amount < 1
               else f"{i.unit_price.amount:,.4f}".rstrip("0").rstrip("."),
               "cost": shown(i.cost.amount), "when": i.when.value}
              for o in r.options for i in o.lines],
    ))
    notes = [{"option": o.name, "note": n} for o in r.options for n in o.notes]
    if notes:
        out.append(Section(title="Notes", columns=[("option", "option", False), ("note", "note", False)], rows=notes))
    return out


def assumption_lines(r: TcoResult) -> list[str]:
    a = r.assumptions
    lines = [f"Usage: {a['usage']}; {a['hours_per_month']} hours per month; spot restart overhead "
             f"{Decimal(a['spot_overhead']):.0%}; prices {a['prices_as_of']}.",
             f"FX: {'; '.join(a['fx']) or 'none'}.",
             f"Resale counted {a['resale_counted']}. Power: {a['power']}.",
             f"Work, not hours: {a['usage_counts_work']}."]
    for d in a["defaults"]:
        flag = " [ASSUMPTION]" if d["assumption"] else ""
        lines.append(f"{d['key']} = {d['value']} {d['unit']}{flag}: {d['source']} ({d['as_of']})")
    return lines


# ---------------------------------------------------------------- terminal


def print_tables(r: TcoResult) -> None:
    from planner.console import stdout
    from planner.report import OutputFormat, render_rows

    for s in sections(r):
        render_rows(s.rows, s.cols(), OutputFormat.TABLE, title=s.title, caption=s.caption)
    out = stdout()
    out.print(f"[bold]Verdict:[/bold] {r.verdict}", highlight=False)
    out.print("[dim]Estimate. " + " ".join(assumption_lines(r)[:4]) + " `--json` lists every default and its source.[/dim]",
              highlight=False)


def cumulative_csv(r: TcoResult) -> str:
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["month", *(o.name for o in r.options)])
    for m in range(r.months):
        w.writerow([m + 1, *(cents(o.cumulative_cost[m]) for o in r.options)])
    return buf.getvalue()


# ---------------------------------------------------------------- markdown


def markdown(r: TcoResult) -> str:
    from planner.report import OutputFormat, render_rows

    parts = [f"# GPU cost of ownership: buy vs rent ({r.months} months)", "", f"**Verdict:** {r.verdict}", ""]
    for s in sections(r):
        parts.append(render_rows(s.rows, s.cols(), OutputFormat.MARKDOWN, title=s.title, caption=s.caption) or "")
    parts += ["## Assumptions", "", *(f"- {x}" for x in assumption_lines(r)), "",
              "All figures are estimates; discounts, credits and taxes apply on the bill.", ""]
    return "\n".join(parts)


# ---------------------------------------------------------------- html

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:1100px;color:#222;padding:0 1rem}
h1{font-size:1.5rem}h2{font-size:1.1rem;margin-top:1.6rem;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.5rem 0;font-size:.85rem}
th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}
td.r,th.r{text-align:right;font-variant-numeric:tabular-nums}
th{background:#f3f3f3}.verdict{background:#eef6ee;border-left:4px solid #2ca02c;padding:.6rem 1rem}
.caption{color:#555;font-size:.8rem}.chart svg{max-width:100%;height:auto}
ul.assumptions{font-size:.8rem;color:#333}
@media print{body{margin:0;max-width:none;font-size:10pt}h2{page-break-after:avoid}
table,.chart{page-break-inside:avoid}.verdict{border-left-color:#000;background:none}}
"""


def _html_table(s: Section) -> str:
    head = "".join(f'<th class="{"r" if right else ""}">{html.escape(h)}</th>' for _, h, right in s.columns)
    body = "".join(
        "<tr>" + "".join(f'<td class="{"r" if right else ""}">{html.escape(str(row.get(k) if row.get(k) is not None else "-"))}</td>'
                         for k, _, right in s.columns) + "</tr>"
        for row in s.rows
    )
    cap = f'<p class="caption">{html.escape(s.caption)}</p>' if s.caption else ""
    return f"<h2>{html.escape(s.title)}</h2><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{cap}"


def svg_chart(r: TcoResult, width: int = 860, height: int = 420) -> str:
    """Cumulative cost per option, break-even points marked, as inline SVG (no URLs)."""
    left, right, top, bottom = 80, 250, 20, 50
    pw, ph = width - left - right, height - top - bottom
    top_cost = max((o.cumulative_cost[-1] for o in r.options), default=Decimal(1)) or Decimal(1)
    ymax = float(top_cost) * 1.05
    n = r.months

    def x(m: float) -> float:
        return left + (m / n) * pw if n else left

    def y(v: float) -> float:
        return top + ph - (v / ymax) * ph

    # No xmlns: inline SVG in HTML5 needs none, and the page then holds no URL at all but cited sources.
    out = [f'<svg viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
           f'role="img" aria-label="Cumulative cost per option"><rect width="100%" height="100%" fill="white"/>']
    for k in range(6):
        grid = ymax * k / 5
        out.append(f'<line x1="{left}" y1="{y(grid):.1f}" x2="{left + pw}" y2="{y(grid):.1f}" stroke="#ddd"/>'
                   f'<text x="{left - 6}" y="{y(grid) + 4:.1f}" font-size="11" text-anchor="end">{grid:,.0f}</text>')
    tick = max(1, round(n / 12))
    for m in range(0, n + 1, tick):
        out.append(f'<text x="{x(m):.1f}" y="{top + ph + 16}" font-size="11" text-anchor="middle">{m}</text>')
    out.append(f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" stroke="#333"/>'
               f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + ph}" stroke="#333"/>'
               f'<text x="{left + pw / 2}" y="{height - 10}" font-size="12" text-anchor="middle">month</text>'
               f'<text x="16" y="{top + ph / 2}" font-size="12" text-anchor="middle" '
               f'transform="rotate(-90 16 {top + ph / 2})">cumulative cost ({r.currency})</text>')
    colors = {}
    for i, o in enumerate(r.options):
        color = PALETTE[i % len(PALETTE)]
        colors[o.name] = color
        pts = " ".join(f"{x(m):.1f},{y(float(v)):.1f}" for m, v in [(0, Decimal(0)), *((k + 1, c) for k, c in enumerate(o.cumulative_cost))])
        dash = ' stroke-dasharray="6 3"' if o.kind is not BillingMode.BUY and o.estimate else ""
        width_ = 3 if o.kind is BillingMode.BUY else 2
        out.append(f'<polyline fill="none" stroke="{color}" stroke-width="{width_}"{dash} points="{pts}"/>')
        ly = top + 14 + i * 18
        out.append(f'<line x1="{left + pw + 12}" y1="{ly - 4}" x2="{left + pw + 34}" y2="{ly - 4}" stroke="{color}" '
                   f'stroke-width="3"{dash}/><text x="{left + pw + 40}" y="{ly}" font-size="11">{html.escape(_option_label(o))}</text>')
    by_name = {o.name: o for o in r.options}
    for b in r.breakeven:
        if b.month is None:
            continue
        at = float(by_name[b.buy].cumulative_cost[b.month - 1])
        out.append(f'<circle cx="{x(b.month):.1f}" cy="{y(at):.1f}" r="5" fill="none" stroke="black" stroke-width="2">'
                   f'<title>{html.escape(b.buy)} overtakes {html.escape(b.vs)} in month {b.month}</title></circle>'
                   f'<text x="{x(b.month) + 7:.1f}" y="{y(at) - 7:.1f}" font-size="10">m{b.month}</text>')
    out.append("</svg>")
    return "".join(out)


def html_page(r: TcoResult) -> str:
    body = [f"<h1>GPU cost of ownership: buy vs rent over {r.months} months</h1>",
            f'<p class="verdict"><strong>Verdict:</strong> {html.escape(r.verdict)}</p>',
            '<h2>Cumulative cost</h2><div class="chart">', svg_chart(r),
            '</div><p class="caption">Circles mark the month buying overtakes a rental. Dashed lines: estimated prices.</p>']
    body += [_html_table(s) for s in sections(r)]
    body.append('<h2>Assumptions</h2><ul class="assumptions">'
                + "".join(f"<li>{html.escape(x)}</li>" for x in assumption_lines(r)) + "</ul>")
    body.append('<p class="caption">Estimate generated by gpuplan from its shipped price snapshot; '
                "discounts, credits and taxes apply on the bill.</p>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<title>gpuplan TCO report</title>"
            f"<style>{_CSS}</style></head><body>{''.join(body)}</body></html>\n")


# ---------------------------------------------------------------- matplotlib chart


def chart_format(path: Path) -> str:
    """png or svg, from the file name; anything else is an input error."""
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in ("png", "svg"):
        raise InputError(f"cannot write a chart as {path.name!r}", "end the file name in .png or .svg")
    return fmt


def write_chart(r: TcoResult, path: Path) -> None:
    """Cumulative cost over months per option with break-evens marked, as PNG or SVG."""
    fmt = chart_format(path)
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display: render straight to a file
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        raise InputError("--chart needs matplotlib, which is not installed",
                         "pip install 'gpuplan[chart]' (the HTML report has its own chart)") from None
    fig, ax = plt.subplots(figsize=(10, 5.5), dpi=100)
    try:
        months = list(range(0, r.months + 1))
        for o in r.options:
            style = "--" if o.estimate else "-"
            ax.plot(months, [0.0, *(float(v) for v in o.cumulative_cost)], style,
                    linewidth=2.5 if o.kind is BillingMode.BUY else 1.6, label=_option_label(o))
        by_name = {o.name: o for o in r.options}
        for b in r.breakeven:
            if b.month is not None:
                v = float(by_name[b.buy].cumulative_cost[b.month - 1])
                ax.plot([b.month], [v], "o", markersize=8, markerfacecolor="none", markeredgecolor="black")
                ax.annotate(f"m{b.month}", (b.month, v), textcoords="offset points", xytext=(6, 6), fontsize=8)
        ax.set_xlabel("month")
        ax.set_ylabel(f"cumulative cost ({r.currency})")
        ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _pos: f"{v:,.0f}"))
        ax.set_title(f"Buy vs rent at {r.usage_gpu_hours:g} {r.unit.ref_gpu} GPU-hours of work a month")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8, loc="upper left")
        fig.tight_layout()
        # Fixed metadata keeps the file reproducible (no creation date).
        meta = {"Date": None} if fmt == "svg" else {"Software": "gpuplan"}
        fig.savefig(path, format=fmt, metadata=meta)
    finally:
        plt.close(fig)
