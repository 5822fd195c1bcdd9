"""``gpuplan spend --billed``: read the clouds' bills into the ledger and show them beside its estimates."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from gpuplan.cli.options import emit
from gpuplan.render.table import OutputFormat
from pricing.money import Fx


def spend_billed(window: tuple[datetime, datetime], at: datetime, fx: Fx, *, refresh: bool, fmt: OutputFormat,
                 html_file: Path | None) -> None:
    from gpuplan.console import stderr
    from gpuplan.ledger import open_ledger
    from gpuplan.render.billed import cloud_lines, html_page, payload, table_rows
    from gpuplan.render.table import Column, dump_json, render_rows
    from launch.billed import compare, read_bills
    from providers.registry import bill_reader

    month = f"{window[0]:%Y-%m}"
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
        emit(dump_json(payload(month, at, list(clouds.values()), rows)))
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
