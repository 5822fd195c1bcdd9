"""How ``gpuplan offers`` shows the offer list: a table that fits the terminal, or Markdown."""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from pricing.money import money_text
from gpuplan.render.table import Column, OutputFormat, keep_telling_apart, render_rows
from planner.settings import Settings


def _money(v: Decimal | None, places: int = 2) -> str | None:
    return None if v is None else money_text(v, places=places, rounding=ROUND_HALF_EVEN)


def render_offers(items: list[dict[str, Any]], fmt: OutputFormat, s: Settings, *, limit: int = 0) -> str | None:
    """The offers as a table (its first ``limit`` rows; 0: all) or as markdown (all rows)."""
    shown = items[:limit] if fmt is OutputFormat.TABLE and limit > 0 else items
    rows = [
        {**i, "gpus": f"{i['gpu_count']:g}x {i['gpu']}", "hourly": _money(i["hourly"]),
         "per_gpu_hour": _money(i["per_gpu_hour"]), "per_gb_vram_hour": _money(i["per_gb_vram_hour"], 4),
         "monthly": _money(i["monthly"]),
         "spot": (_money(i["spot"]) or "") + ("*" if i["spot_estimated"] else "") or None,
         "buy": _money(i["buy"])}
        for i in shown
    ]
    cols = [Column(key="provider", header="provider", priority=4), Column(key="offer", header="offer", priority=0),
            Column(key="region", header="region", priority=2), Column(key="gpus", header="GPUs", priority=2),
            Column(key="hourly", header="per hour", justify="right", priority=1),
            Column(key="per_gpu_hour", header="per GPU-h", justify="right", priority=0),
            Column(key="per_gb_vram_hour", header="per GB-VRAM-h", justify="right", priority=5),
            Column(key="monthly", header="per month", justify="right", priority=3),
            Column(key="spot", header="spot/h", justify="right", priority=3),
            Column(key="buy", header="buy (per card)", justify="right", priority=1)]
    notes = ["- = no public price in the catalog."]
    if len(shown) < len(items):
        # A table of 50k offers takes rich half a minute to draw and nobody reads it.
        notes.insert(0, f"{len(items) - len(shown):,} more offer(s): --limit 0 shows all, -o csv or --json lists them.")
    if any(i["spot_estimated"] for i in shown):
        notes.append("Spot marked * is an estimated price.")
    cols = keep_telling_apart(rows, cols, "region", ("provider", "offer"))
    return render_rows(rows, cols, fmt, title=f"Offers (prices in {s.currency})", caption=" ".join(notes))


def render_groups(groups: list[dict[str, Any]], by: str, fmt: OutputFormat, s: Settings) -> str | None:
    """``offers --group-by``: one row per GPU or provider."""
    other = "providers" if by == "gpu" else "gpus"
    if fmt is OutputFormat.CSV:  # numbers a program reads: plain decimals, empty where there is none
        from pricing.money import decimal_json

        def money(v: Decimal | None) -> str | None:
            return None if v is None else decimal_json(v)
    else:
        money = _money
    rows = [{by: g[by], "offers": g["offers"], other: ", ".join(g[other]),
             "per_gpu_hour": money(g["cheapest_per_gpu_hour"]), "cheapest": g["cheapest_offer"],
             "spot": money(g["cheapest_spot_per_gpu_hour"]), "cheapest_spot": g["cheapest_spot_offer"],
             "buy": money(g["cheapest_card"])}
            for g in groups]
    cols = [Column(key=by, header=by, priority=0), Column(key="offers", header="offers", justify="right", priority=2),
            Column(key=other, header=other, priority=3),
            Column(key="per_gpu_hour", header="from per GPU-h", justify="right", priority=0),
            Column(key="cheapest", header="cheapest on demand", priority=1),
            Column(key="spot", header="spot per GPU-h", justify="right", priority=1),
            Column(key="cheapest_spot", header="cheapest spot", priority=4),
            Column(key="buy", header="buy (per card)", justify="right", priority=2)]
    return render_rows(rows, cols, fmt, title=f"Offers by {by} (prices in {s.currency} per GPU-hour)",
                       caption="- = no price of that kind; estimated spot prices are left out.")
