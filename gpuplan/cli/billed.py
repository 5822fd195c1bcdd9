"""``gpuplan spend --billed``: read the clouds' bills into the ledger and show them beside its estimates."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from pathlib import Path

from gpuplan.cli.options import emit
from gpuplan.render.table import OutputFormat
from pricing.errors import InputError
from pricing.money import Fx


def spend_billed(window: tuple[datetime, datetime], at: datetime, fx: Fx, *, refresh: bool, fmt: OutputFormat,
                 html_file: Path | None, by: str = "project") -> None:
    from gpuplan.console import stderr
    from gpuplan.ledger import open_ledger
    from gpuplan.render.billed import KEYS, cloud_lines, html_page, payload, table_rows, totals
    from gpuplan.render.table import Column, dump_json, render_rows
    from launch.billed import compare, read_bills
    from providers.registry import bill_reader

    month = f"{window[0]:%Y-%m}"
    if by not in KEYS:
        raise InputError(f"unknown --by {by!r}", f"use one of {', '.join(KEYS)}")
    with open_ledger(read_only_ok=True) as ledger:
        clouds = read_bills(ledger, bill_reader, window, at, refresh=refresh)
        rows = compare(ledger, clouds, window, at, fx)
    said = cloud_lines(list(clouds.values()))
    if html_file is not None:
        from gpuplan.cli.options import write_file

        write_file(html_file, html_page(month, at, list(clouds.values()), rows))
        said.append(f"wrote {html_file}")
    for line in said:
        stderr().print(line, highlight=False, markup=False, soft_wrap=True)  # one line each, whatever the width
    if fmt is OutputFormat.JSON:
        emit(dump_json(payload(month, at, list(clouds.values()), rows, by)))
        return
    if not rows:
        print(f"no launches in {month}")
        return
    cols = [Column(key=k, header=h, justify=j, priority=p) for k, h, j, p in (
        ("id", "launch", "left", 0), ("provider", "provider", "left", 2), ("project", "project", "left", 3),
        ("estimated", "estimated", "right", 0), ("billed", "billed", "right", 0),
        ("difference", "difference", "right", 1), ("mark", "", "left", 0), ("why", "why", "left", 1))]
    text = render_rows(table_rows(rows), cols, fmt, title=f"Billed against estimated, {month}")
    if text is not None:
        emit(text)
    sums = [{by: t[by], "launches": str(t["launches"]),
             "estimated": f"{Decimal(t['estimated']):,.2f} {t['currency']}",
             "billed": "-" if t["billed"] is None else f"{Decimal(t['billed']):,.2f} {t['currency']}",
             "difference": "-" if t["difference"] is None else f"{Decimal(t['difference']):,.2f} {t['currency']}",
             "marks": " ".join(x for x in (f"{t['flagged']} DIFF" if t["flagged"] else "",
                                           f"{t['alarms']} ALARM" if t["alarms"] else "") if x) or "-"}
            for t in totals(rows, by)]
    cols = [Column(key=k, header=k, justify=j, priority=0) for k, j in (
        (by, "left"), ("launches", "right"), ("estimated", "right"), ("billed", "right"), ("difference", "right"),
        ("marks", "left"))]
    text = render_rows(sums, cols, fmt, title=f"By {by}")
    if text is not None:
        emit(text)
