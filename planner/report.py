"""Rendering tables of results as a rich table, JSON, CSV or Markdown.

Data goes to stdout, messages to stderr. JSON carries no ANSI codes, money as decimal
strings, and the caller's top-level ``currency`` and ``assumptions``.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from datetime import date
from decimal import Decimal
from enum import Enum, StrEnum
from typing import Any

from pydantic import BaseModel

from pricing.errors import InputError


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
    """Plain JSON types; Decimals become strings so no precision is lost."""
    if isinstance(value, BaseModel):
        return jsonable(value.model_dump())
    if isinstance(value, Decimal):
        return str(value)
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


def dump_json(payload: Any) -> str:
    """Indented for a person at a terminal; compact when piped, where size and speed matter.

    Plain values go straight to the encoder; only Decimals, models and dates take the
    slower ``jsonable`` path (StrEnums are already strings).
    """
    import sys

    indent = 2 if sys.stdout.isatty() else None
    return json.dumps(payload, indent=indent, ensure_ascii=False, default=_json_default)


class Column(BaseModel):
    key: str
    header: str
    justify: str = "left"


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, Enum):
        return str(value.value)
    return str(value)


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
    from rich.table import Table

    from planner.console import stdout

    table = Table(title=title or None, caption=caption or None, caption_justify="left")
    for c in columns:
        table.add_column(c.header, justify=c.justify)  # type: ignore[arg-type]
    for r in rows:
        table.add_row(*(_cell(r.get(c.key)) for c in columns))
    stdout().print(table)
    return None
