"""Rendering a TCO result: JSON payload, tables, Markdown, a self-contained HTML page.

All renderers read the same :func:`sections`, so the terminal table, the Markdown file
and the HTML page never disagree. The HTML page carries its own CSS and the inline SVG
chart of :mod:`gpuplan.render.tco_chart` (no matplotlib, no external URL), so it works from a
bare install and prints well; ``--chart FILE.png|.svg`` draws the same chart with
matplotlib (the ``chart`` extra), in the same colours.
"""

from __future__ import annotations

import html
from decimal import Decimal
from typing import Any

from pydantic import BaseModel

from pricing.line_items import quantity_text
from pricing.money import money_text
from gpuplan.render.table import Column, decimal_json, money_json
from planner.tco.compare import TcoLine, TcoOption, TcoResult
from planner.tco.lines import PER_HOUR_PLACES
from gpuplan.render.tco_chart import (
    STYLE_NOTE, chart_format, option_colors, require_matplotlib, svg_chart, write_chart,
)

__all__ = ["chart_format", "cumulative_csv", "html_page", "markdown", "payload", "print_tables",
           "require_matplotlib", "sections", "svg_chart", "write_chart"]
ESTIMATED = "Options marked * have an estimated price."


def cents(d: Decimal) -> str:
    return money_json(d)


def shown(d: Decimal | None, places: int = 2) -> str | None:
    return None if d is None else money_text(d, places=places)


def _line_json(i: TcoLine) -> dict[str, Any]:
    return {"description": i.description, "quantity": decimal_json(i.quantity), "unit": i.unit,
            "unit_price": decimal_json(i.unit_price.amount), "cost": cents(i.cost.amount), "when": i.when.value}


def payload(r: TcoResult) -> dict[str, Any]:
    """The JSON contract of ``gpuplan tco --json``: money as decimal strings."""
    return {
        "currency": r.currency.value,
        "months": r.months,
        "usage_gpu_hours_per_month": decimal_json(r.usage_gpu_hours),
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
                else decimal_json(o.cost_per_ref_gpu_hour, 4),
                "line_items": [_line_json(i) for i in o.lines],
                "notes": o.notes,
            }
            for o in r.options
        ],
        "breakeven": [
            {"buy": b.buy, "vs": b.vs, "month": b.month,
             "months_formula": None if b.months_formula is None else decimal_json(b.months_formula, 2),
             "utilization": None if b.utilization is None else decimal_json(b.utilization, 4)}
            for b in r.breakeven
        ],
        "monthly_vs_hourly_hours": {k: None if v is None else decimal_json(v, 2)
                                    for k, v in r.monthly_vs_hourly_hours.items()},
        "owned_cost_per_ref_gpu_hour": {k: [{"utilization": decimal_json(u, 4), "cost": decimal_json(c, 4)}
                                        for u, c in pts] for k, pts in r.owned_curves.items()},
        "verdict": r.verdict,
    }


class Section(BaseModel):
    """One table of the report: (key, header, right-aligned?) columns and rows of text.

    ``priority`` ranks columns for a narrow terminal (0: never cut; see gpuplan.render.layout,
    default 2) and ``keep`` names the ones that wrap but are never dropped; ``wrap`` names
    the columns whose text may wrap in HTML (the rest stay on one line, so
    "8x V100-SXM2-32GB" never breaks at its hyphens).
    """

    title: str
    columns: list[tuple[str, str, bool]]
    rows: list[dict[str, Any]]
    caption: str = ""
    priority: dict[str, int] = {}
    keep: list[str] = []
    wrap: list[str] = []

    def cols(self) -> list[Column]:
        return [Column(key=k, header=h, justify="right" if right else "left", priority=self.priority.get(k, 2),
                       droppable=k not in self.keep)
                for k, h, right in self.columns]


def _option_label(o: TcoOption) -> str:
    return o.name + ("*" if o.estimate else "")


def _per_hour(d: Decimal | None) -> str | None:
    return None if d is None else money_text(d, places=PER_HOUR_PLACES)


def _this_usage(r: TcoResult, name: str, pts: list[tuple[Decimal, Decimal]]) -> Decimal | None:
    """The curve point at the scenario's own utilization: the one whose cost is the option's own cost per unit
    (the curves include that utilization, so the match is exact but for Decimal rounding)."""
    o = next((o for o in r.options if o.name == name), None)
    if o is None or o.cost_per_ref_gpu_hour is None or not pts:
        return None
    per_unit = o.cost_per_ref_gpu_hour
    return min(pts, key=lambda p: abs(p[1] - per_unit))[0]


def sections(r: TcoResult) -> list[Section]:
    c = r.currency
    steps = sorted({m for m in (1, 6, 12, 24, 36, 48, 60, r.months) if m <= r.months})
    estimated = any(o.estimate for o in r.options)
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
                   "total": shown(o.total_cost), "per_gpu_h": _per_hour(o.cost_per_ref_gpu_hour)}
                  for o in sorted(r.options, key=lambda o: o.total_cost)],
            caption=" ".join([("Buy: month 1 pays the whole hardware; its resale value comes back in the last month "
                               "(and at the end of each life). Per ref GPU-h: per "
                               f"{r.unit.ref_gpu} GPU-hour of work, each option's hours scaled by its speed and "
                               "scaling; the horizon's total over the work done."),
                              *([ESTIMATED] if estimated else [])]),
            priority={"option": 0, "total": 0, "per_gpu_h": 1, "kind": 2, "first": 3, "later": 3, "gpus": 4,
                      "region": 4},
            wrap=["option"],
        ),
    ]
    if r.breakeven:
        out.append(Section(
            title="Break-even: when buying overtakes each rental",
            columns=[("buy", "buy", False), ("vs", "vs", False), ("month", "break-even month", True),
                     ("formula", "CAPEX / (rent - opex)", True), ("util", "break-even utilization", True)],
            rows=[{"buy": b.buy, "vs": b.vs, "month": str(b.month) if b.month else f"never in {r.months}",
                   "formula": shown(b.months_formula, 1) or "never",
                   "util": f"{b.utilization:.1%}" if b.utilization is not None else "above 100%"}
                  for b in r.breakeven],
            caption=f"Break-even utilization: where the owned cost per unit of work over these {r.months} months "
                    "meets the rental's at this usage.",
            priority={"buy": 0, "vs": 0, "month": 1, "util": 1, "formula": 3},
            wrap=["buy", "vs"],
        ))
    if r.monthly_vs_hourly_hours:
        out.append(Section(
            title="Monthly subscription vs pay-as-you-go (hours per month per instance)",
            columns=[("instance", "instance", False), ("hours", "monthly beats hourly above", True)],
            rows=[{"instance": k, "hours": f"{v:,.1f} h" if v is not None else "no monthly price"}
                  for k, v in r.monthly_vs_hourly_hours.items()],
            caption="= monthly price / hourly price, per instance.",
            priority={"instance": 0, "hours": 0},
        ))
    out.append(Section(
        title=f"Cumulative cost ({c})",
        columns=[("option", "option", False)] + [(f"m{m}", f"month {m}", True) for m in steps],
        rows=[{"option": _option_label(o), **{f"m{m}": shown(o.cumulative_cost[m - 1]) for m in steps}}
              for o in r.options],
        caption=ESTIMATED if estimated else "",
        priority={"option": 0, f"m{r.months}": 0, "m1": 3},
        wrap=["option"],
    ))
    standard = (Decimal("0.1"), Decimal("0.25"), Decimal("0.5"), Decimal("0.75"), Decimal(1))
    for name, pts in r.owned_curves.items():
        here = _this_usage(r, name, pts)
        picks = [p for p in pts if p[0] in standard or p[0] == here]
        out.append(Section(
            title=f"{name}: cost per {r.unit.ref_gpu} GPU-hour of work by utilization, over {r.months} months ({c})",
            columns=[(f"u{u}", f"{u:.1%} (this usage)" if u == here else f"{u:.0%}", True) for u, _ in picks],
            rows=[{f"u{u}": _per_hour(v) for u, v in picks}],
            priority={f"u{here}": 0},
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
        priority={"option": 0, "cost": 0, "item": 1, "qty": 2, "price": 2, "unit": 3, "when": 3},
        keep=["item"], wrap=["option", "item"],
    ))
    notes = [{"option": o.name, "note": n} for o in r.options for n in o.notes]
    if notes:
        out.append(Section(title="Notes", columns=[("option", "option", False), ("note", "note", False)], rows=notes,
                           priority={"option": 0, "note": 1}, keep=["note"], wrap=["option", "note"]))
    return out


def assumption_lines(r: TcoResult) -> list[str]:
    a = r.assumptions
    lines = [f"Usage: {a['usage']}; {a['hours_per_month']} hours per month; spot restart overhead "
             f"{Decimal(a['spot_overhead']):.0%}; prices {a['prices_as_of']}.",
             f"FX: {'; '.join(a['fx']) or 'none'}.",
             f"Resale counted {a['resale_counted']}. Power: {a['power']}.",
             f"Work, not hours: {a['usage_counts_work']}."]
    lines += [f"Not compared: {x}." for x in a.get("skipped", [])]
    for d in a["defaults"]:
        flag = " [ASSUMPTION]" if d["assumption"] else ""
        lines.append(f"{d['key']} = {d['value']} {d['unit']}{flag}: {d['source']} ({d['as_of']})")
    return lines


# ---------------------------------------------------------------- terminal


def print_tables(r: TcoResult) -> None:
    from gpuplan.console import stdout
    from gpuplan.render.table import OutputFormat, render_rows

    for s in sections(r):
        render_rows(s.rows, s.cols(), OutputFormat.TABLE, title=s.title, caption=s.caption)
    out = stdout()
    out.print(f"[bold]Verdict:[/bold] {r.verdict}", highlight=False)
    for x in r.assumptions.get("skipped", []):
        out.print(f"Not compared: {x}.", highlight=False, markup=False)
    out.print("[dim]Estimate. " + " ".join(assumption_lines(r)[:4])
              + " `--json` lists every default and its source.[/dim]",
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
    from gpuplan.render.table import OutputFormat, render_rows

    parts = [f"# GPU cost of ownership: buy vs rent ({r.months} months)", "", f"**Verdict:** {r.verdict}", ""]
    for s in sections(r):
        parts.append(render_rows(s.rows, s.cols(), OutputFormat.MARKDOWN, title=s.title, caption=s.caption) or "")
    parts += ["## Assumptions", "", *(f"- {x}" for x in assumption_lines(r)), "",
              "All figures are estimates; discounts, credits and taxes apply on the bill.", ""]
    return "\n".join(parts)


# ---------------------------------------------------------------- html

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:1100px;\
color:#222;padding:0 1rem}
h1{font-size:1.5rem;margin:0 0 .6rem}h2{font-size:1.1rem;margin-top:1.6rem;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.5rem 0;font-size:.85rem}
th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top;white-space:nowrap}
td.w{white-space:normal;min-width:9rem}th{white-space:normal}
td.r,th.r{text-align:right;font-variant-numeric:tabular-nums}
th{background:#f3f3f3}.verdict{background:#eef6ee;border-left:4px solid #2ca02c;padding:.6rem 1rem}
.sw{display:inline-block;width:.8em;height:.8em;margin-right:.4em;vertical-align:-.05em;border-radius:2px}
.caption{color:#555;font-size:.8rem}.chart svg{width:100%;max-width:900px;height:auto}
ul.assumptions{font-size:.8rem;color:#333}
.scroll{overflow-x:auto;max-width:100%}
@media screen and (max-width:800px){body{margin:1rem auto}td.w{min-width:6rem}}
@page{size:A4;margin:12mm}
@media print{body{margin:0;max-width:none;font-size:9.5pt;padding:0}h1{font-size:15pt}\
h2{break-after:avoid;margin-top:1rem}
table{font-size:8pt}tr,.chart{break-inside:avoid}thead{display:table-header-group}
.verdict{border-left-color:#000;background:none;padding:.2rem .8rem}.chart svg{max-height:88mm}
td,th{padding:.15rem .35rem}}
"""


def _html_table(s: Section, colors: dict[str, str]) -> str:
    head = "".join(f'<th class="{"r" if right else ""}">{html.escape(h)}</th>' for _, h, right in s.columns)

    def cell(key: str, right: bool, value: Any) -> str:
        text = html.escape(str(value if value is not None else "-"))
        classes = " ".join(c for c in ("r" if right else "", "w" if key in s.wrap else "") if c)
        # The option's colour in the chart, so a row and its line are found at a glance.
        color = colors.get(str(value).rstrip("*")) if key in ("option", "vs", "buy") else None
        swatch = f'<span class="sw" style="background:{color}"></span>' if color else ""
        return f'<td class="{classes}">{swatch}{text}</td>'

    body = "".join("<tr>" + "".join(cell(k, right, row.get(k)) for k, _, right in s.columns) + "</tr>"
                   for row in s.rows)
    cap = f'<p class="caption">{html.escape(s.caption)}</p>' if s.caption else ""
    # a wide table scrolls in its own box on a narrow screen (760 px) instead of pushing the page sideways
    return (f'<h2>{html.escape(s.title)}</h2><div class="scroll"><table><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>{cap}")


def html_page(r: TcoResult) -> str:
    colors = option_colors(r)
    tables = [_html_table(s, colors) for s in sections(r)]
    # The summary table, then the chart: the first printed page holds the answer, not a gap.
    body = [f"<h1>GPU cost of ownership: buy vs rent over {r.months} months</h1>",
            f'<p class="verdict"><strong>Verdict:</strong> {html.escape(r.verdict)}</p>',
            tables[0],
            f'<h2>Cumulative cost ({html.escape(r.currency)}, log scale)</h2><div class="chart">', svg_chart(r),
            (f'</div><p class="caption">Each line is labelled with its total at month {r.months}. Log scale: every '
             "gridline step multiplies the cost, so cheap and dear options both keep their shape. "
             f"{html.escape(STYLE_NOTE)}</p>"),
            *tables[1:]]
    body.append('<h2>Assumptions</h2><ul class="assumptions">'
                + "".join(f"<li>{html.escape(x)}</li>" for x in assumption_lines(r)) + "</ul>")
    body.append('<p class="caption">Estimate generated by gpuplan from its shipped price snapshot; '
                "discounts, credits and taxes apply on the bill.</p>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<title>gpuplan TCO report</title>"
            f"<style>{CSS}</style></head><body>{''.join(body)}</body></html>\n")
