"""How spend is shown as a page: the month's cost per project, owner, provider or type, as bars and a table."""

from __future__ import annotations

import html
from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal

from gpuplan.render.tco import CSS
from gpuplan.render.tco_chart import PALETTE
from launch.spend import SpendRow


def svg_bars(rows: Sequence[SpendRow], width: int = 900) -> str:
    """One horizontal bar per row, longest the dearest, each labelled with its cost."""
    bar, gap, left, right = 22, 8, 220, 140
    top = max((r.cost.amount for r in rows), default=Decimal(0)) or Decimal(1)
    height = len(rows) * (bar + gap) + gap
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" role="img" '
             f'aria-label="spend by row">']
    for i, r in enumerate(rows):
        y = gap + i * (bar + gap)
        w = float(r.cost.amount / top) * (width - left - right)
        parts.append(f'<text x="{left - 8}" y="{y + bar * 0.7:.1f}" text-anchor="end" font-size="13">'
                     f"{html.escape(r.key)}</text>")
        parts.append(f'<rect x="{left}" y="{y}" width="{max(w, 1):.1f}" height="{bar}" '
                     f'fill="{PALETTE[i % len(PALETTE)]}"/>')
        parts.append(f'<text x="{left + max(w, 1) + 6:.1f}" y="{y + bar * 0.7:.1f}" font-size="13">'
                     f"{r.cost.amount:,.2f} {html.escape(str(r.cost.currency))}</text>")
    parts.append("</svg>")
    return "".join(parts)


def html_page(rows: Sequence[SpendRow], *, month: str, by: str, currency: str, total: Decimal,
              at: datetime) -> str:
    body = "".join(f'<tr><td>{html.escape(r.key)}</td><td class="r">{r.launches}</td>'
                   f'<td class="r">{r.cost.amount:,.2f}</td></tr>' for r in rows)
    table = (f'<table><thead><tr><th>{html.escape(by)}</th><th class="r">launches</th>'
             f'<th class="r">cost ({html.escape(currency)})</th></tr></thead><tbody>{body}</tbody></table>')
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>gpuplan spend {html.escape(month)}</title><style>{CSS}</style></head><body>"
            f"<h1>GPU spend in {html.escape(month)}, by {html.escape(by)}</h1>"
            f'<p class="verdict"><strong>Total:</strong> {total:,.2f} {html.escape(currency)} to '
            f"{at:%Y-%m-%d %H:%M} UTC</p>"
            f'<div class="chart">{svg_bars(rows)}</div>{table}'
            '<p class="caption">From gpuplan\'s ledger: each machine\'s recorded run time at its launch\'s unit price '
            "and billing rule, with the disks and addresses it was quoted with; subscriptions in the month bought. "
            "The provider's bill (discounts, credits, taxes) prevails.</p></body></html>\n")
