"""Rendering tables of results as a rich table, JSON, CSV or Markdown.

Data goes to stdout, messages to stderr. JSON carries no ANSI codes, money as decimal
strings, and the caller's top-level ``currency`` and ``assumptions``.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable, Iterator, Sequence
from datetime import date
from decimal import Decimal
from enum import Enum, StrEnum
from typing import Any, NamedTuple

from pydantic import BaseModel

from pricing.errors import InputError
from pricing.text import printable
from pricing.money import DECIMAL_PLACES, decimal_json, money_json  # noqa: F401  (the JSON contract helpers)


class OutputFormat(StrEnum):
    TABLE = "table"
    JSON = "json"
    CSV = "csv"
    MARKDOWN = "markdown"


def pick_format(output: str | None, as_json: bool) -> OutputFormat:
    if as_json:
        return OutputFormat.JSON
    try:
        return OutputFormat((output or "table").lower())
    except ValueError:
        known = ", ".join(f.value for f in OutputFormat)
        raise InputError(f"unknown output format {output!r}", f"use one of {known}") from None


def jsonable(value: Any) -> Any:
    """Plain JSON types; Decimals become decimal strings (see :func:`decimal_json`)."""
    if isinstance(value, BaseModel):
        return jsonable(value.model_dump())
    if isinstance(value, Decimal):
        return decimal_json(value)
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(jsonable(k)): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [jsonable(v) for v in value]
    return value


def _json_default(value: Any) -> Any:
    if isinstance(value, BaseModel | Decimal | Enum | date | set | frozenset | tuple):
        return jsonable(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def whole(value: float) -> float | int:
    """One float as ``no_exponents`` writes it: a whole number as an integer."""
    return int(value) if math.isfinite(value) and value.is_integer() else value


def no_exponents(value: Any) -> Any:
    """Whole floats as integers: 8 GPUs are ``8``, not ``8.0``, and 8.4e22 FLOPs are written out, not ``8.4e+22``."""
    if isinstance(value, float):
        return int(value) if math.isfinite(value) and value.is_integer() else value
    if isinstance(value, dict):
        return {k: no_exponents(v) for k, v in value.items()}
    if isinstance(value, list):
        return [no_exponents(v) for v in value]
    return value


def dump_json(payload: Any, *, exact: bool = False, indent: bool | None = None) -> str:
    """Indented for a person at a terminal; compact when piped, where size and speed matter (``indent``: say
    which, whatever stdout is).

    Every object payload starts with ``"gpuplan_version"``, so a saved answer says which
    gpuplan gave it.

    Plain values go straight to the encoder; only Decimals, models and dates take the
    slower ``jsonable`` path (StrEnums are already strings). ``exact``: the payload already
    writes whole floats as integers (``whole``), so the walk over it that ensures that is
    skipped (a 45,000-option plan spent half a second in it).
    """
    import sys

    from gpuplan import __version__

    if isinstance(payload, dict):
        payload = {"gpuplan_version": __version__, **payload}
    if not exact:
        payload = no_exponents(payload)
    if sys.stdout.isatty() if indent is None else indent:
        import json

        return json.dumps(payload, indent=2, ensure_ascii=False, default=_json_default)
    return compact_json(payload)


def compact_json(value: Any) -> str:
    """``value`` as compact JSON text (no spaces), as written to a pipe or a file.

    orjson writes a plan's options ~2.5x faster than the standard library (60 MB for a 50k-offer
    plan); what orjson refuses, such as an integer past 64 bits (8.4e22 FLOPs written out), goes
    to the standard library with the same separators.
    """
    import orjson

    try:
        return orjson.dumps(value, default=_json_default, option=orjson.OPT_NON_STR_KEYS).decode()
    except (orjson.JSONEncodeError, TypeError):
        import json

        return json.dumps(value, ensure_ascii=False, default=_json_default, separators=(",", ":"))


_SLOT = "\u0000gpuplan-stream\u0000"


def dump_json_streamed(payload: dict[str, Any], key: str, count: int,
                       items: Callable[[int, int], Iterator[Any]]) -> Iterator[str]:
    """``dump_json(payload | {key: list(items(0, count))}, exact=True)``, piece by piece: the list is never held
    whole, and where it is long its second half is worked out on a second core (gpuplan.render.halves).

    A 200k-row plan's options as one list of dicts and one string took gigabytes; written as they are
    built, each option is gone once written. Indented (a terminal) it is built whole, as ``dump_json``.
    """
    import sys

    if sys.stdout.isatty():
        yield dump_json({**payload, key: list(items(0, count))}, exact=True)
        return
    from gpuplan.render.halves import in_halves

    def text(start: int, stop: int) -> Iterator[str]:
        for i, item in enumerate(items(start, stop), start):
            yield ("," if i else "") + compact_json(item)

    head, tail = dump_json({**payload, key: _SLOT}, exact=True).split(compact_json(_SLOT), 1)
    yield head + "["
    yield from in_halves(count, text)
    yield "]" + tail


class Column(NamedTuple):
    """A table column. ``priority`` 0 is never cut, wrapped or dropped (an offer's name, its cost);
    on a narrow terminal the others wrap at spaces, then the highest numbers are dropped first,
    except a column that must stay (``droppable=False``: the reason of an exclusion)."""

    key: str
    header: str
    justify: str = "left"
    priority: int = 1
    droppable: bool = True


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, Enum):
        return str(value.value)
    # a name from a CSV, the config or a provider may carry escape sequences (clear screen, window title)
    return printable(str(value))


def csv_streamed(count: int, rows: Callable[[int, int], Iterator[dict[str, Any]]], columns: Sequence[Column],
                 chunk: int = 1000) -> Iterator[str]:
    """``render_rows(list(rows(0, count)), columns, CSV)``, in pieces of ``chunk`` rows, a long second half
    worked out on a second core (gpuplan.render.halves)."""
    from gpuplan.render.halves import in_halves

    def text(start: int, stop: int) -> Iterator[str]:
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        for n, r in enumerate(rows(start, stop), 1):
            writer.writerow([_cell(r.get(c.key)) for c in columns])
            if n % chunk == 0:
                yield buf.getvalue()
                buf.seek(0)
                buf.truncate()
        yield buf.getvalue()

    head = io.StringIO()
    csv.writer(head, lineterminator="\n").writerow([c.key for c in columns])
    yield head.getvalue()
    yield from in_halves(count, text)


def render_rows(
    rows: Sequence[dict[str, Any]],
    columns: Sequence[Column],
    fmt: OutputFormat,
    *,
    title: str = "",
    caption: str = "",
) -> str | None:
    """CSV and Markdown as text; for TABLE, print with rich and return None."""
    if fmt is OutputFormat.CSV:
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow([c.key for c in columns])
        for r in rows:
            writer.writerow([_cell(r.get(c.key)) for c in columns])
        return buf.getvalue()
    if fmt is OutputFormat.MARKDOWN:
        lines = [f"## {title}", ""] if title else []
        lines.append("| " + " | ".join(c.header for c in columns) + " |")
        lines.append("|" + "|".join("---:" if c.justify == "right" else "---" for c in columns) + "|")
        for r in rows:
            lines.append("| " + " | ".join(_cell(r.get(c.key)).replace("|", "\\|") for c in columns) + " |")
        if caption:
            lines += ["", caption]
        return "\n".join(lines) + "\n"
    _print_table(rows, columns, title=title, caption=caption)
    return None


def _print_table(rows: Sequence[dict[str, Any]], columns: Sequence[Column], *, title: str, caption: str) -> None:
    from gpuplan.console import stdout, stdout_at, wide
    from gpuplan.render.grid import Grid, fits
    from gpuplan.render.layout import KEEP, fit_columns

    out = stdout()
    cells = [[_cell(r.get(c.key)) for c in columns] for r in rows]
    layout = fit_columns([c.header for c in columns], cells,
                         [c.priority if c.droppable or c.priority == 0 else KEEP for c in columns],
                         None if wide() else out.width)
    if layout.dropped:
        hidden = ", ".join(columns[i].header for i in layout.dropped)
        caption = (caption + " " if caption else "") + f"Not shown at this width: {hidden} (--wide shows all)."
    headers = [columns[i].header for i in layout.shown]
    shown = [[row[i] for i in layout.shown] for row in cells]
    table: Any
    if fits(headers, shown, layout.widths):
        table = Grid(headers, [columns[i].justify for i in layout.shown], layout.widths, shown,
                     title=title or None, caption=caption or None)
    else:
        from rich.table import Table
        from rich.text import Text

        table = Table(title=title or None, caption=caption or None, caption_justify="left")
        for header, i, w in zip(headers, layout.shown, layout.widths, strict=True):
            # Widths come from the layout (essential ones hold their longest cell), so rich never shrinks a column.
            table.add_column(header, justify=columns[i].justify, width=w, overflow="fold")  # type: ignore[arg-type]
        for row in shown:
            table.add_row(*(Text(c) for c in row))  # data, printed as given: no [markup] in an offer's name
    # A table wider than the terminal (--wide, or essential columns alone too wide) is printed
    # whole, to wrap in the terminal, rather than cut by rich.
    (out if layout.total <= out.width else stdout_at(layout.total)).print(table)


def keep_telling_apart(rows: list[dict[str, Any]], cols: list[Column], key: str,
                       same: tuple[str, ...]) -> list[Column]:
    """``cols`` with column ``key`` made undroppable when some rows agree on every ``same`` column.

    At 80 columns the region goes first, and two p4d.24xlarge spot rows at different prices
    then look like one offer listed twice: the region is what tells them apart.
    """
    seen = {tuple(r.get(k) for k in same) for r in rows}
    if len(seen) == len(rows):
        return cols
    return [c._replace(droppable=False) if c.key == key else c for c in cols]
