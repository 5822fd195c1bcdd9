"""How ``spend --billed`` is shown: each launch's estimate beside its bill, as a table, JSON or a page."""

from __future__ import annotations

import html
from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any

from gpuplan.render.tco import CSS
from launch.billed import CloudBill, LaunchBill
from pricing.money import money_json, money_text


def mark(row: LaunchBill) -> str:
    """ALARM (billed after its recorded end), DIFF (flagged difference) or nothing."""
    return "ALARM" if row.alarm else "DIFF" if row.flagged else ""


# What `--by` groups launches by, as `spend` does.
KEYS = {"project": lambda r: r.project or "-", "owner": lambda r: r.owner or "-", "provider": lambda r: r.provider,
        "instance-type": lambda r: r.instance_type}


def totals(rows: Sequence[LaunchBill], by: str) -> list[dict[str, Any]]:
    """Estimated, billed and difference per ``by`` and currency; a group with no bill read has billed None."""
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for r in rows:
        key = (KEYS[by](r.record), r.currency.value)
        g = groups.setdefault(key, {by: key[0], "currency": key[1], "launches": 0, "estimated": Decimal(0),
                                    "billed": None, "flagged": 0, "alarms": 0})
        g["launches"] += 1
        g["estimated"] += r.estimated
        if r.billed is not None:
            g["billed"] = (g["billed"] or Decimal(0)) + r.billed
        g["flagged"] += r.flagged
        g["alarms"] += r.alarm is not None
    out = []
    for g in sorted(groups.values(), key=lambda g: (-g["estimated"], g[by])):
        billed = g["billed"]
        out.append({**g, "estimated": money_json(g["estimated"]),
                    "billed": None if billed is None else money_json(billed),
                    "difference": None if billed is None else money_json(billed - Decimal(g["estimated"]))})
    return out


def payload(month: str, at: datetime, clouds: Sequence[CloudBill], rows: Sequence[LaunchBill],
            by: str = "project") -> dict[str, Any]:
    """The JSON contract of ``spend --billed``: amounts in each launch's own currency, as strings."""
    return {
        "month": month, "to": at.isoformat(timespec="seconds"), "by": by, "totals": totals(rows, by),
        "clouds": [{"provider": c.provider, "source": c.source or None,
                    "read_at": None if c.read_at is None else c.read_at.isoformat(timespec="seconds"),
                    "kept_from_earlier_read": c.kept, "unavailable": c.unavailable, "notes": list(c.notes)}
                   for c in clouds],
        "launches": [{
            "id": r.record.id, "provider": r.record.provider, "project": r.record.project or None,
            "owner": r.record.owner or None, "currency": r.currency.value,
            "estimated": money_json(r.estimated),
            "billed": None if r.billed is None else money_json(r.billed),
            "difference": None if r.difference is None else money_json(r.difference),
            "billed_through": None if r.through is None else r.through.isoformat(),
            "lines": {k: money_json(v) for k, v in sorted(r.lines.items())},
            "flagged": r.flagged, "alarm": r.alarm, "why": r.why} for r in rows],
    }


def table_rows(rows: Sequence[LaunchBill]) -> list[dict[str, str]]:
    out = []
    for r in rows:
        cur = r.currency.value
        out.append({"id": r.record.id, "provider": r.record.provider, "project": r.record.project or "-",
                    "estimated": money_text(r.estimated, cur),
                    "billed": "-" if r.billed is None else money_text(r.billed, cur),
                    "difference": "-" if r.difference is None else money_text(r.difference, cur),
                    "mark": mark(r), "why": "; ".join(([r.alarm] if r.alarm else []) + r.why) or "-"})
    return out


def html_page(month: str, at: datetime, clouds: Sequence[CloudBill], rows: Sequence[LaunchBill]) -> str:
    def cell(text: str, cls: str = "") -> str:
        return f'<td{f" class={cls!r}" if cls else ""}>{html.escape(text)}</td>'

    body = "".join("<tr>" + "".join(cell(v, "r" if k in ("estimated", "billed", "difference") else
                                         "w" if k == "why" else "") for k, v in t.items()) + "</tr>"
                   for t in table_rows(rows))
    head = "".join(f"<th>{h}</th>" for h in ("launch", "provider", "project", "estimated", "billed", "difference",
                                             "", "why"))
    said = "".join(f"<li>{html.escape(c.provider)}: {html.escape(_cloud_line(c))}</li>" for c in clouds)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>gpuplan billed spend {html.escape(month)}</title><style>{CSS}</style></head><body>"
            f"<h1>Billed against estimated, {html.escape(month)}</h1><ul>{said}</ul>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
            f'<p class="caption">To {at:%Y-%m-%d %H:%M} UTC. The estimate covers the days each bill covers; '
            "DIFF: over 10% and over 1 USD apart; ALARM: billed after the ledger says the machines ended.</p>"
            "</body></html>\n")


def _cloud_line(c: CloudBill) -> str:
    if c.unavailable:
        return c.unavailable
    when = "" if c.read_at is None else f"{c.read_at:%Y-%m-%d %H:%M} UTC"
    return f"{c.source}, read {when}" + (" (kept from today's earlier read; --refresh asks again)" if c.kept else "")


def cloud_lines(clouds: Sequence[CloudBill]) -> list[str]:
    """What to say once above the table: where each cloud's figures came from, caveats and notes."""
    out = [f"{c.provider}: {_cloud_line(c)}" for c in clouds]
    for c in clouds:
        out += [f"note: {n}" for n in c.notes]
    caveats = dict.fromkeys(v for c in clouds for v in c.caveats)
    return out + [f"note: {v}" for v in caveats]
