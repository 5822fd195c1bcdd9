"""What every converter of a published catalog into a shipped ``pricing/data/instances/<cloud>.csv`` shares.

A converter reads one published file (SkyPilot's catalog of a cloud, a price list), keeps the
GPU instance types gpuplan has a spec row for, and writes the one catalog shape; every type it
leaves out is reported with why (a GPU with no spec row, a price it cannot trust), never guessed.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from collections.abc import Callable
from dataclasses import dataclass

from pricing.catalog import INSTANCE_COLUMNS

# The shipped files' columns: the provider is the file's name, and list prices carry no stock.
COLUMNS = tuple(c for c in INSTANCE_COLUMNS if c not in ("provider", "stock"))


@dataclass(frozen=True)
class Skipped:
    instance_type: str
    reason: str


Rows = Callable[..., tuple[list[dict[str, str]], list[Skipped]]]


def to_csv(found: list[dict[str, str]]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n", extrasaction="raise")
    w.writeheader()
    for r in found:
        w.writerow({c: r.get(c, "") for c in COLUMNS})
    return buf.getvalue()


def main(doc: str, rows: Rows, argv: list[str], *, source_help: str = "the commit the file was read at",
         date: str = "read", date_help: str = "the date it was read (YYYY-MM-DD), the rows' as_of") -> int:
    """``python -m <converter> FILE --commit SHA --<date> DATE > <cloud>.csv``; left-out types go to stderr.

    ``date`` names the rows' date and the keyword ``rows`` takes it by: ``read`` for a source that dates
    nothing, another name where the source's own date is used."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    p.add_argument("source_file")
    p.add_argument("--commit", required=True, help=source_help)
    p.add_argument(f"--{date}", required=True, help=date_help)
    a = p.parse_args(argv)
    with open(a.source_file, encoding="utf-8") as f:
        found, skipped = rows(f, commit=a.commit, **{date: getattr(a, date)})
    sys.stdout.write(to_csv(found))
    for s in skipped:
        print(f"left out {s.instance_type}: {s.reason}", file=sys.stderr)
    return 0

