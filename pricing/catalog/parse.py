"""Reading and writing instance rows as CSV: the one shape of shipped files, the refreshed cache and user catalogs.

Every value is checked here, column by column, with a message naming the file, line and
column of a bad one: this is where rows enter, so nothing downstream validates them
again. A 200k-row file is read as a stream, a chunk at a time, with the cyclic garbage
collector paused (:func:`paused_gc`).
"""

from __future__ import annotations

import csv
import gc
import io
import itertools
import math
import operator
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import date
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from pricing.catalog.rows import FIELDS, PRICE_FIELDS, UNKNOWN_REGION, AsOfKind, InstanceType, Layer, Stock
from pricing.errors import InputError
from pricing.files import write_private
from pricing.money import Currency
from pricing.text import printable

# The one CSV shape of every cloud's instance rows: shipped files, the refreshed cache and
# user catalogs alike (``provider`` may be left out of a shipped file: its name says it).
INSTANCE_COLUMNS = (
    "provider", "instance_type", "family", "gpu", "gpu_count", "vcpu", "mem_gb", "region", "zone", "zones",
    "currency", "hourly", "hourly_high", "monthly", "monthly_high", "spot", "spot_high", "reserved_1y",
    "reserved_3y", "stock", "as_of_kind", "source", "as_of", "notes",
)
_REQUIRED = ("instance_type", "gpu", "gpu_count", "region", "currency", "source", "as_of")


@contextmanager
def paused_gc(*, freeze: bool = False) -> Iterator[None]:
    """Pause the cyclic garbage collector for the block (nesting is fine).

    Building many long-lived objects at once (a 200k-row catalog, a plan of a million
    options): CPython's collector runs after every few hundred new container objects and,
    as the heap grows, walks its older generations again and again; a 10k-offer plan spent
    half its time there, a 200k-row catalog a third of its parse. What these phases build
    holds no reference cycles, and objects still free by reference counting.

    ``freeze=True`` then moves every object that exists into the permanent generation:
    for a command that ends soon after, so neither a later collection nor the one at
    exit walks a million options again. A library call leaves it False: freezing would
    also keep any pending cyclic garbage of the caller for good.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if freeze:
                gc.freeze()
            gc.enable()


# The sane range of each catalog number (docs/limits.md, "Catalog files"): past them a row is a typo or a unit
# mix-up (cents, per-year prices, GPUs per region), and a price of 0 would win every plan at 0.00.
MAX_PRICE = Decimal(10_000_000)  # per instance-hour or -month, in the row's currency
# Below a tenth of a cent an hour no GPU offer sells (the cheapest shipped price is 0.058): a 1E-9 "price" (a unit
# mix-up, a hostile answer) would otherwise win every plan at 0.00
MIN_PRICE = Decimal("0.001")
MAX_GPU_COUNT = 128.0  # GPUs in one instance; the largest sold today has 16
MAX_VCPU = 65_536
MAX_MEM_GB = 100_000.0


class _RowError(ValueError):
    """A bad value in one row; the parser adds the file and line."""


def _price(column: str) -> Callable[[str], Decimal | None]:
    def convert(text: str) -> Decimal | None:
        if not text or not text.strip():
            return None
        try:
            value = Decimal(text)
        except InvalidOperation:
            raise _RowError(f"{column}: {text.strip()!r} is not a number") from None
        if not value.is_finite():
            raise _RowError(f"{column}: {text.strip()!r} is not a finite number")
        if value < 0:
            raise _RowError(f"{column}: a price is negative ({text.strip()})")
        if value == 0:
            raise _RowError(f"{column}: a price of 0 is no offer; leave the cell empty where the instance is not "
                            "sold that way")
        if value < MIN_PRICE:
            raise _RowError(f"{column}: {text.strip()} is below {MIN_PRICE} per instance-hour or -month; check the "
                            "unit (thousands? a per-second price?)")
        if value > MAX_PRICE:
            raise _RowError(f"{column}: {text.strip()} is above {MAX_PRICE:,} per instance-hour or -month; "
                            "check the unit (cents? a year?)")
        return value

    return convert


def _number(column: str, kind: type[float], *, positive: bool = False, default: float | None = None,
            high: float = math.inf) -> Callable[[str], float]:
    """A float column, or an int one (``kind=int``): finite, not negative, above 0 if ``positive``, at most ``high``."""

    def convert(text: str) -> float:
        if default is not None and not text.strip():
            return default
        try:
            value = kind(text)
        except ValueError:
            what = "a whole number" if kind is int else "a number"
            raise _RowError(f"{column}: {text.strip()!r} is not {what}") from None
        if not math.isfinite(value) or value < 0 or (positive and value == 0):
            raise _RowError(f"{column}: {text.strip()!r} must be {'above' if positive else 'at least'} 0")
        if value > high:
            raise _RowError(f"{column}: {text.strip()!r} is above {high:,g}, the most one instance has")
        return value

    return convert


def _iso_date(text: str) -> date:
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise _RowError(f"as_of: {text.strip()!r} is not a date (YYYY-MM-DD)") from None


def _stock(text: str) -> Stock:
    try:
        return Stock(text or Stock.UNKNOWN)
    except ValueError:
        raise _RowError(f"stock: {text!r} is not one of {', '.join(s.value for s in Stock)}") from None


def _as_of_kind(text: str) -> AsOfKind:
    try:
        return AsOfKind(text or AsOfKind.PRICE_DATE)
    except ValueError:
        raise _RowError(f"as_of_kind: {text!r} is not one of {', '.join(k.value for k in AsOfKind)}") from None


def _currency(text: str) -> Currency:
    try:
        return Currency.parse(text)
    except InputError as exc:
        raise _RowError(f"currency: {exc.message}") from None


def _uncomment(lines: Iterable[str]) -> Iterator[str]:
    """The lines, each '#' line (a comment) replaced by an empty one so line numbers match the file.

    Read 1,024 lines at a time and looked through in C (a 50k-row catalog has no comment lines; a
    generator step per line was ~15 million instructions of reading it).
    """
    it = iter(lines)

    def blocks() -> Iterator[list[str]]:
        while block := list(itertools.islice(it, 1024)):
            if any(map(str.startswith, block, itertools.repeat("#"))):
                block = ["\n" if line.startswith("#") else line for line in block]
            yield block

    return itertools.chain.from_iterable(blocks())


_FIRST = operator.itemgetter(0)
_CHUNK = 4096  # rows converted together: column-wise work in C, bounded memory for raw text


class _LineError(Exception):
    def __init__(self, index: int, detail: str) -> None:
        super().__init__(detail)
        self.index = index
        self.detail = detail


def _nonempty(column: str, convert: Callable[[str], str]) -> Callable[[str], str]:
    def checked(text: str) -> str:
        value = convert(text)
        if not value:
            raise _RowError(f"no {column}: fill the {column} column")
        return value

    return checked


def _prices(column: str, texts: Sequence[str]) -> list[Decimal | None]:
    """A price column; checked in bulk, and value by value (for the message) only when that fails."""
    try:
        values = [Decimal(t) if t else None for t in texts]
        given = [v for v in values if v is not None]
        # min and max in C: a NaN raises (InvalidOperation), a negative or infinite end fails the test
        if not given or (min(given) > 0 and max(given) <= MAX_PRICE):
            return values
    except (InvalidOperation, ValueError):
        pass
    convert = _price(column)
    out = []
    for k, text in enumerate(texts):
        try:
            out.append(convert(text))
        except _RowError as exc:
            raise _LineError(k, str(exc)) from None
    return out


class _Columns:
    """Turns chunks of CSV rows into checked :class:`InstanceType` field values, column by column.

    Catalogs repeat most values (providers, GPUs, regions, sources, dates): each distinct
    text of such a column is converted and checked once per file and the result shared,
    which keeps a 200k-row file fast to read and small in memory. Prices are mostly
    distinct and are converted in bulk instead.
    """

    def __init__(self, header: list[str], *, layer: Layer, provider: str | None) -> None:
        col = {name: i for i, name in enumerate(header)}
        fallback = provider or ""
        # Text loses control characters as it is read (once per distinct value): an escape sequence in a name
        # would otherwise reach every table, CSV and message that shows it
        converters: dict[str, Callable[[str], Any] | None] = {
            "source": printable,
            "as_of": _iso_date,
            "notes": printable,
            "provider": _nonempty("provider", lambda s: printable(s or fallback).strip().lower()),
            "instance_type": _nonempty("instance_type", lambda s: printable(s).strip()),
            "family": lambda s: printable(s).strip(),
            "gpu": _nonempty("gpu", lambda s: printable(s).strip()),
            "gpu_count": _number("gpu_count", float, positive=True, high=MAX_GPU_COUNT),
            "vcpu": _number("vcpu", int, default=0, high=MAX_VCPU),
            "mem_gb": _number("mem_gb", float, default=0.0, high=MAX_MEM_GB),
            "region": lambda s: printable(s).strip() or UNKNOWN_REGION,
            "zone": lambda s: printable(s).strip(),
            "zones": lambda s: tuple(z for z in printable(s).split(";") if z),
            "currency": _currency,
            **dict.fromkeys(PRICE_FIELDS),  # None: converted by _prices
            "stock": _stock,
            "as_of_kind": _as_of_kind,
        }
        # In InstanceType's field order; "layer" is no column: every row gets this file's layer.
        read = [f for f in FIELDS if f != "layer"]
        # (field, column index or -1 when the file lacks it, memo of text -> value, converter)
        self.plan: list[tuple[str, int, dict[str, Any], Callable[[str], Any] | None]] = [
            (f, col.get(f, -1), {}, converters[f]) for f in read]
        self.family, self.instance_type = read.index("family"), read.index("instance_type")
        self.layer_at = FIELDS.index("layer")
        self.width = len(header)
        self.layer = layer

    def rows(self, chunk: list[list[str]]) -> Iterator[InstanceType]:
        """Each row of ``chunk`` as an :class:`InstanceType`; a bad one raises :class:`_LineError`."""
        width, n = self.width, len(chunk)
        if set(map(len, chunk)) != {width}:
            for k, r in enumerate(chunk):
                if len(r) != width:
                    chunk[k] = (r + [""] * width)[:width]
        cols = list(zip(*chunk))
        blank = ("",) * n
        columns: list[Iterable[Any]] = []
        for field, i, memo, convert in self.plan:
            texts = cols[i] if i >= 0 else blank
            if convert is None:
                columns.append(_prices(field, texts) if any(texts) else [None] * n)
                continue
            if not any(texts) and "" in memo:  # an empty column (zone, stock, notes, ...): one value, shared
                columns.append([memo[""]] * n)
                continue
            try:
                columns.append(list(map(memo.__getitem__, texts)))
                continue
            except KeyError:
                pass
            for k, text in enumerate(texts):
                if text not in memo:
                    try:
                        memo[text] = convert(text)
                    except _RowError as exc:
                        raise _LineError(k, str(exc)) from None
            columns.append(list(map(memo.__getitem__, texts)))
        family, types = columns[self.family], columns[self.instance_type]
        if "" in family:  # a row without a family is in the one its type's prefix names
            columns[self.family] = [f or t.split(".")[0].strip() for f, t in zip(family, types, strict=True)]
        columns.insert(self.layer_at, itertools.repeat(self.layer, n))
        # zip lines each row's values up in field order, in C; _make takes them as they are
        return map(InstanceType._make, zip(*columns))


def parse_instances(
    text: str | Iterable[str],
    *,
    origin: str,
    layer: Layer,
    provider: str | None = None,
) -> list[InstanceType]:
    """Instance rows from CSV (text, or its lines such as an open file) in :data:`INSTANCE_COLUMNS`.

    A bad row names ``origin``, its line and column. Every value is checked by explicit
    conversions, the same values pydantic's validation of the row's types accepts (the
    tests hold the two to each other).
    """
    reader = csv.reader(_uncomment(text.splitlines(keepends=True) if isinstance(text, str) else text))
    try:
        with paused_gc():
            return _read_rows(reader, origin=origin, layer=layer, provider=provider)
    except (csv.Error, UnicodeDecodeError) as exc:
        raise InputError(f"{origin} line {reader.line_num}: not a readable CSV ({exc})",
                         "a catalog CSV is UTF-8 text with the columns of `gpuplan offers -o csv`") from None


def _read_rows(reader: Any, *, origin: str, layer: Layer, provider: str | None) -> list[InstanceType]:
    """The rows after the header, converted a chunk at a time: column-wise work in C, bounded raw text."""
    header: list[str] = next((r for r in reader if r), [])
    missing = [c for c in _REQUIRED if c not in header]
    if provider is None and "provider" not in header:
        missing.insert(0, "provider")
    if missing:
        raise InputError(f"{origin}: missing column(s) {', '.join(missing)}",
                         f"a catalog CSV has the columns {','.join(INSTANCE_COLUMNS)}")
    columns = _Columns(header, layer=layer, provider=provider)
    out: list[InstanceType] = []
    while True:
        start = reader.line_num
        chunk = list(itertools.islice(reader, _CHUNK))
        if not chunk:
            return out
        lines: Sequence[int]
        # (all in C: each row non-empty, and each first value non-blank)
        if reader.line_num - start == len(chunk) and all(chunk) and all(map(str.strip, map(_FIRST, chunk))):
            lines = range(start + 1, start + 1 + len(chunk))  # one line a row, none blank: the common file
        else:
            chunk, lines = _nonblank(chunk, start)
            if not chunk:
                continue
        try:
            out.extend(columns.rows(chunk))
        except _LineError as exc:
            raise InputError(f"{origin} line {lines[exc.index]}: {exc.detail}", "fix the row or remove it") from None


def _nonblank(chunk: list[list[str]], start: int) -> tuple[list[list[str]], list[int]]:
    """The rows that hold a value, each with the file line it ends on (a quoted value may span lines)."""
    kept, lines = [], []
    line = start
    for r in chunk:
        line += 1 + sum(v.count("\n") + v.count("\r") - v.count("\r\n") for v in r)
        if r and (r[0].strip() or any(v.strip() for v in r)):
            kept.append(r)
            lines.append(line)
    return kept, lines


def instances_csv(rows: Iterable[InstanceType]) -> str:
    """Rows in :data:`INSTANCE_COLUMNS`, as price fetchers write the cache and `offers -o csv` writes them."""
    return "".join(instances_csv_chunks(rows))


def instances_csv_chunks(rows: Iterable[InstanceType], chunk: int = 1000) -> Iterator[str]:
    """:func:`instances_csv` in pieces of ``chunk`` rows, for writing as they come."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(INSTANCE_COLUMNS)
    # The csv writer writes None as "" and anything else as str() (StrEnums as their values): each row goes to it
    # as its fields in column order, with the two fields that need another spelling replaced.
    at = [InstanceType._fields.index(c) for c in INSTANCE_COLUMNS]
    zones, as_of = INSTANCE_COLUMNS.index("zones"), INSTANCE_COLUMNS.index("as_of")
    batch: list[list[Any]] = []
    for i in rows:
        v = [i[k] for k in at]
        v[zones] = ";".join(i.zones)
        v[as_of] = i.as_of.isoformat()
        batch.append(v)
        if len(batch) == chunk:
            w.writerows(batch)
            batch.clear()
            yield buf.getvalue()
            buf.seek(0)
            buf.truncate()
    w.writerows(batch)
    yield buf.getvalue()


def write_instances(path: Path, rows: Iterable[InstanceType]) -> None:
    """Write rows atomically (a reader never sees half a file), private to the user (0600 in 0700 folders)."""
    write_private(path, instances_csv(rows))


MAX_CATALOG_BYTES = 512 * 2**20  # ten times a 200k-row catalog


def read_instance_file(path: Path, layer: Layer) -> list[InstanceType]:
    """A catalog CSV's rows, read as a stream: a 200k-row file never sits in memory as text."""
    provider = path.parent.name if layer is Layer.CACHE else None
    try:
        import stat

        info = path.stat()
        # /dev/zero, a FIFO or a runaway file would be read until memory runs out (the process was killed)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_CATALOG_BYTES:
            why = "is not a regular file" if not stat.S_ISREG(info.st_mode) else \
                f"is {info.st_size // 2**20} MiB, over the {MAX_CATALOG_BYTES // 2**20} MiB a catalog may be"
            raise InputError(f"catalog file {path} {why}", "give a CSV file with --catalog or in the config file")
        with path.open(encoding="utf-8", newline="") as f:
            return parse_instances(f, origin=str(path), layer=layer, provider=provider)
    except OSError as exc:
        raise InputError(f"cannot read catalog file {path}: {exc.strerror or exc}",
                         "check the path given with --catalog or in the config file") from None
