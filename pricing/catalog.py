"""The catalog: GPU specs, cloud instance types with prices, cards to buy, as one value.

A :class:`Catalog` is built by :meth:`Catalog.load` from layers, later ones overriding
earlier ones: the snapshot shipped in ``pricing/data`` (one CSV shape per cloud under
``instances/``, every row with ``source`` and ``as_of``), the refreshed cache that the
price fetchers write (``<cache>/catalog/<provider>/<region>.csv``), then the user's own
files (``--catalog FILE``). The planner receives one catalog and passes it down; nothing
below the CLI reads a process-wide copy. A price the source does not give stays
``None`` and is reported as missing, never as zero.
"""

from __future__ import annotations

import csv
import difflib
import io
import itertools
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import date
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from functools import cached_property, lru_cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, ValidationError

from pricing.billing import BillingMode
from pricing.bulk import paused_gc, unvalidated
from pricing.errors import InputError, UnknownNameError, first_error
from pricing.datafiles import Sourced, data_rows
from pricing.money import Currency, Money

if TYPE_CHECKING:
    from pricing.network import NetworkSpec

LOCAL = "local"  # the provider name of buying cards
# Regions that stand for many real ones: a refreshed row of a real region replaces them.
PSEUDO_REGIONS = frozenset({"cn-mainland", "unknown", "global"})


class Interconnect(StrEnum):
    """How the GPUs of one machine talk to each other."""

    NVLINK = "nvlink"
    NVLINK_BRIDGE = "nvlink-bridge"  # a 2-GPU bridge: NVLink for pairs, PCIe beyond
    PCIE = "pcie"


class Stock(StrEnum):
    """Whether a zone sells the type now: only live data knows."""

    AVAILABLE = "available"
    SOLD_OUT = "sold_out"
    UNKNOWN = "unknown"


class AsOfKind(StrEnum):
    """What a row's ``as_of`` is: the price's own date, or only the day a copy was read."""

    PRICE_DATE = "price_date"  # the source dates the price, or it was observed live that day
    READ_DATE = "read_date"  # the source gives no date: as_of is when the copy was read


class Layer(StrEnum):
    SHIPPED = "shipped"
    CACHE = "cache"
    USER = "user"
    # Not a source of rows: a discount applied to the rows of the layers below (--discount).
    DISCOUNT = "discount"


class GpuSpec(Sourced):
    key: str
    name: str
    aliases: tuple[str, ...] = ()
    arch: str
    vram_gb: float
    mem_bw_gbs: float | None = None
    fp32_tflops: float | None = None
    tensor_fp16_tflops: float | None = None
    tdp_w: float | None = None
    interconnect: Interconnect = Interconnect.PCIE


# Which field holds each mode's rate: a planner asks for every mode of every row.
RATE_FIELDS = {BillingMode.HOURLY: "hourly", BillingMode.MONTHLY: "monthly", BillingMode.SPOT: "spot",
                BillingMode.RESERVED_1Y: "reserved_1y", BillingMode.RESERVED_3Y: "reserved_3y"}
HIGH_FIELDS = {BillingMode.HOURLY: "hourly_high", BillingMode.MONTHLY: "monthly_high", BillingMode.SPOT: "spot_high"}


class InstanceType(Sourced):
    """A cloud instance type in one region (or one zone, for live rows), with its prices."""

    provider: str
    instance_type: str
    family: str
    gpu: str
    gpu_count: float
    vcpu: int
    mem_gb: float
    region: str
    zone: str = ""  # set when the price is one zone's (live data); "" for a region-wide row
    zones: tuple[str, ...] = ()
    currency: Currency
    hourly: Decimal | None = None
    hourly_high: Decimal | None = None
    monthly: Decimal | None = None
    monthly_high: Decimal | None = None
    spot: Decimal | None = None
    spot_high: Decimal | None = None
    reserved_1y: Decimal | None = None
    reserved_3y: Decimal | None = None
    stock: Stock = Stock.UNKNOWN
    layer: Layer = Layer.SHIPPED
    as_of_kind: AsOfKind = AsOfKind.PRICE_DATE

    @property
    def key(self) -> tuple[str, str, str, str]:
        """Rows with the same key are the same offer: a later layer replaces an earlier one."""
        return (self.provider, self.instance_type.lower(), self.region, self.zone)

    def rate(self, mode: BillingMode) -> Decimal | None:
        """The list rate for ``mode``: per hour, or per month for monthly."""
        field = RATE_FIELDS.get(mode)
        return None if field is None else getattr(self, field)  # type: ignore[no-any-return]

    def rates(self) -> dict[BillingMode, Decimal]:
        """Every list rate the row has, in BillingMode order (as ``rate`` over every mode, in one pass)."""
        return {m: r for m, f in RATE_FIELDS.items() if (r := getattr(self, f)) is not None}

    def rates_high(self) -> dict[BillingMode, Decimal]:
        """Every dearest-zone rate the row has, in BillingMode order."""
        return {m: r for m, f in HIGH_FIELDS.items() if (r := getattr(self, f)) is not None}

    def rate_high(self, mode: BillingMode) -> Decimal | None:
        """The dearest zone's rate where the source gives a spread."""
        field = HIGH_FIELDS.get(mode)
        return None if field is None else getattr(self, field)  # type: ignore[no-any-return]

    @property
    def is_vgpu_slice(self) -> bool:
        return self.gpu_count < 1

    def hourly_money(self) -> Money | None:
        return None if self.hourly is None else Money(amount=self.hourly, currency=self.currency)


# A row as the store keeps it: its values in InstanceType field order.
Row = tuple[Any, ...]
FIELDS: tuple[str, ...] = tuple(InstanceType.model_fields)
FIELD_AT = {name: i for i, name in enumerate(FIELDS)}  # field -> its place in a Row

# The one CSV shape of every cloud's instance rows: shipped files, the refreshed cache and
# user catalogs alike (``provider`` may be left out of a shipped file: its name says it).
INSTANCE_COLUMNS = (
    "provider", "instance_type", "family", "gpu", "gpu_count", "vcpu", "mem_gb", "region", "zone", "zones",
    "currency", "hourly", "hourly_high", "monthly", "monthly_high", "spot", "spot_high", "reserved_1y",
    "reserved_3y", "stock", "as_of_kind", "source", "as_of", "notes",
)
_REQUIRED = ("instance_type", "gpu", "gpu_count", "region", "currency", "source", "as_of")
PRICE_FIELDS = ("hourly", "hourly_high", "monthly", "monthly_high", "spot", "spot_high", "reserved_1y",
                "reserved_3y")


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
        return value

    return convert


def _number(column: str, kind: type[float], *, positive: bool = False,
            default: float | None = None) -> Callable[[str], float]:
    """A float column, or an int one (``kind=int``): finite, not negative, above 0 if ``positive``."""

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
    # '#' lines are comments; an empty line takes their place so line numbers match the file.
    for line in lines:
        yield "\n" if line.startswith("#") else line


# Every parsed row sets every field, so all rows share one fields-set: a set per row
# (as validation makes) is 2 kB, more than the rest of the row.
_ALL_FIELDS = set(FIELDS)
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
        if not given or (min(given) >= 0 and max(given).is_finite()):
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
        converters: dict[str, Callable[[str], Any] | None] = {
            "source": str,
            "as_of": _iso_date,
            "notes": str,
            "provider": _nonempty("provider", lambda s: (s or fallback).strip().lower()),
            "instance_type": _nonempty("instance_type", str.strip),
            "family": str.strip,
            "gpu": _nonempty("gpu", str.strip),
            "gpu_count": _number("gpu_count", float, positive=True),
            "vcpu": _number("vcpu", int, default=0),
            "mem_gb": _number("mem_gb", float, default=0.0),
            "region": lambda s: s.strip() or "unknown",  # the source names no region
            "zone": str.strip,
            "zones": lambda s: tuple(z for z in s.split(";") if z),
            "currency": _currency,
            **dict.fromkeys(PRICE_FIELDS),  # None: converted by _prices
            "stock": _stock,
            "as_of_kind": _as_of_kind,
        }
        # In the model's field order; "layer" is no column: every row gets this file's layer.
        read = [f for f in FIELDS if f != "layer"]
        # (field, column index or -1 when the file lacks it, memo of text -> value, converter)
        self.plan: list[tuple[str, int, dict[str, Any], Callable[[str], Any] | None]] = [
            (f, col.get(f, -1), {}, converters[f]) for f in read]
        self.family, self.instance_type = read.index("family"), read.index("instance_type")
        self.layer_at = FIELD_AT["layer"]
        self.width = len(header)
        self.layer = layer

    def values(self, chunk: list[list[str]]) -> Iterator[tuple[Any, ...]]:
        """Each row's values in :class:`InstanceType` field order; a bad one raises :class:`_LineError`."""
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
        return zip(*columns)


def _construct(values: dict[str, Any]) -> InstanceType:
    """An :class:`InstanceType` from complete, checked values (see pricing.bulk.unvalidated)."""
    return unvalidated(InstanceType, values, _ALL_FIELDS)


def row_of(inst: InstanceType) -> Row:
    return tuple(inst.__dict__[f] for f in FIELDS)


def instance_of(row: Row) -> InstanceType:
    return _construct(dict(zip(FIELDS, row)))


class InstanceRows(Sequence[InstanceType]):
    """A catalog's instance rows, kept as tuples; an :class:`InstanceType` is built when one is read.

    A row as a pydantic object is ~1.1 kB (its ``__dict__`` alone 830 B), as a tuple 240 B:
    a 200k-row user catalog is 90 MB instead of 300 MB. Code that walks every row for
    one or two fields (the planner, catalog summaries) reads :meth:`rows` and :data:`FIELD_AT`
    instead of building objects.
    """

    __slots__ = ("_rows",)

    def __init__(self, rows: Iterable[Row] = ()) -> None:
        self._rows: list[Row] = rows if isinstance(rows, list) else list(rows)

    @classmethod
    def of(cls, instances: Iterable[InstanceType]) -> InstanceRows:
        if isinstance(instances, InstanceRows):
            return instances
        return cls([row_of(i) for i in instances])

    @property
    def rows(self) -> list[Row]:
        return self._rows

    def column(self, field: str) -> list[Any]:
        i = FIELD_AT[field]
        return [r[i] for r in self._rows]

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return InstanceRows(self._rows[index])
        return instance_of(self._rows[index])

    def __iter__(self) -> Iterator[InstanceType]:
        return map(instance_of, self._rows)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, InstanceRows):
            return self._rows == other._rows
        if isinstance(other, Sequence) and not isinstance(other, str):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"InstanceRows({len(self._rows)} rows)"


def parse_instances(
    text: str | Iterable[str],
    *,
    origin: str,
    layer: Layer,
    provider: str | None = None,
    validate: bool = False,
) -> InstanceRows:
    """Instance rows from CSV (text, or its lines such as an open file) in :data:`INSTANCE_COLUMNS`.

    A bad row names ``origin`` and its line. Every value is checked by explicit
    conversions; ``validate=True`` also runs pydantic's validation on each row, the
    reference the default path is tested against.
    """
    reader = csv.reader(_uncomment(text.splitlines(keepends=True) if isinstance(text, str) else text))
    try:
        with paused_gc():
            return _read_rows(reader, origin=origin, layer=layer, provider=provider, validate=validate)
    except (csv.Error, UnicodeDecodeError) as exc:
        raise InputError(f"{origin} line {reader.line_num}: not a readable CSV ({exc})",
                         "a catalog CSV is UTF-8 text with the columns of `gpuplan offers -o csv`") from None


def _read_rows(reader: Any, *, origin: str, layer: Layer, provider: str | None, validate: bool) -> InstanceRows:
    """The rows after the header, converted a chunk at a time: column-wise work in C, bounded raw text."""
    header: list[str] = next((r for r in reader if r), [])
    missing = [c for c in _REQUIRED if c not in header]
    if provider is None and "provider" not in header:
        missing.insert(0, "provider")
    if missing:
        raise InputError(f"{origin}: missing column(s) {', '.join(missing)}",
                         f"a catalog CSV has the columns {','.join(INSTANCE_COLUMNS)}")
    columns = _Columns(header, layer=layer, provider=provider)
    out: list[Row] = []
    while True:
        start = reader.line_num
        chunk = list(itertools.islice(reader, _CHUNK))
        if not chunk:
            return InstanceRows(out)
        lines: Sequence[int]
        if reader.line_num - start == len(chunk) and all(r and r[0].strip() for r in chunk):
            lines = range(start + 1, start + 1 + len(chunk))  # one line a row, none blank: the common file
        else:
            chunk, lines = _nonblank(chunk, start)
            if not chunk:
                continue
        k = 0
        try:
            if validate:
                for k, values in enumerate(columns.values(chunk)):
                    out.append(row_of(InstanceType(**dict(zip(FIELDS, values)))))
            else:
                out.extend(columns.values(chunk))
        except _LineError as exc:
            raise InputError(f"{origin} line {lines[exc.index]}: {exc.detail}", "fix the row or remove it") from None
        except ValidationError as exc:
            where, msg = first_error(exc)
            raise InputError(f"{origin} line {lines[k]}: {where}: {msg}", "fix the row or remove it") from None


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
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(INSTANCE_COLUMNS)
    for i in rows:
        d = i.model_dump()
        d["zones"] = ";".join(i.zones)
        d["as_of"] = i.as_of.isoformat()
        w.writerow(["" if d.get(c) is None else str(d[c]) for c in INSTANCE_COLUMNS])
    return buf.getvalue()


def write_instances(path: Path, rows: Iterable[InstanceType]) -> None:
    """Write rows atomically: a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(instances_csv(rows), encoding="utf-8")
    tmp.replace(path)


def merge_instances(layers: Sequence[Iterable[InstanceType]]) -> InstanceRows:
    """Stack layers: a later layer's rows for an instance type in a region replace every
    earlier row of that type and region, in every zone.

    So a user's region-wide row overrides the shipped per-zone rows, and a refresh's
    per-zone rows the shipped ones. A refreshed (cache) row of a real region also retires
    the earlier rows of the same provider and instance type in a pseudo-region such as
    ``cn-mainland``: the live per-zone rows are the better answer for that type.
    """
    pv, it, rg, zn, ly = (FIELD_AT[f] for f in ("provider", "instance_type", "region", "zone", "layer"))
    tables = [InstanceRows.of(layer).rows for layer in layers]
    lower: dict[str, str] = {}  # type names repeat: lower-case each once, and share the result

    def places(rows: list[Row], *also: int) -> Iterator[tuple[str, ...]]:
        """(provider, type lower-cased, region, then the fields at ``also``) of each row."""
        types = [r[it] for r in rows]
        lower.update((t, t.lower()) for t in set(types) - lower.keys())
        return zip([r[pv] for r in rows], map(lower.__getitem__, types), [r[rg] for r in rows],
                   *([r[i] for r in rows] for i in also))

    # A row stays unless a later layer has its type and region. The places of a later layer
    # are not collected (200k tuples for a 200k-row user file): the few rows before it are
    # looked up in it instead, with the loops in C.
    out: list[list[Row]] = []
    for i, rows in enumerate(tables):
        earlier = {p for t in tables[:i] for p in places(t)}
        hit = earlier.intersection(places(rows)) if earlier else set()
        refreshed = {(p, t) for p, t, _ in places([r for r in rows if r[ly] is Layer.CACHE])}
        if hit or refreshed:
            for k, kept in enumerate(out):
                out[k] = [r for r, place in zip(kept, places(kept), strict=True) if place not in hit and not (
                    r[ly] is not Layer.CACHE and r[rg] in PSEUDO_REGIONS and place[:2] in refreshed)]
        # Within a layer a later row of the same type, region and zone replaces an earlier one in its
        # place: what a dict does when a key is set again.
        by_key = dict(zip(places(rows, zn), rows))
        out.append(rows if len(by_key) == len(rows) else list(by_key.values()))
    return InstanceRows([r for kept in out for r in kept])


class CardPrice(Sourced):
    """What one card costs to buy."""

    gpu: str
    condition: str  # "new" or "used"
    price: Decimal
    currency: Currency

    def money(self) -> Money:
        return Money(amount=self.price, currency=self.currency)


class ElectricityPrice(Sourced):
    region: str
    currency: Currency
    price_per_kwh: Decimal
    customer_class: str = ""
    default: bool = False


def check_discount(provider: str, factor: Decimal) -> Decimal:
    """A discount factor is a fraction of the listed price: above 0, at most 1 (no discount)."""
    if not factor.is_finite() or not 0 < factor <= 1:
        raise InputError(f"discount factor for {provider} must be above 0 and at most 1, got {factor}",
                         "0.85 means 15% off the listed prices")
    return factor


def _percent_off(factor: Decimal) -> str:
    return f"{((1 - factor) * 100).normalize():f}% off"


def discount_note(provider: str, factor: Decimal) -> str:
    """What a discounted row's notes say."""
    return f"enterprise discount {provider}={factor} applied ({_percent_off(factor)} the listed price)"


def normalize(name: str) -> str:
    """Fold a GPU name so 'Tesla V100 32GB', 'v100-32gb' and 'V100_32GB' compare equal."""
    text = name.lower().replace("_", " ").replace("-", " ")
    text = re.sub(r"\b(nvidia|tesla|geforce)\b", " ", text)
    return re.sub(r"\s+", "-", text.strip())


def _sourced(r: dict[str, str]) -> dict[str, object]:
    return {"source": r["source"], "as_of": date.fromisoformat(r["as_of"]), "notes": r.get("notes", "")}


def _opt_float(text: str) -> float | None:
    return float(text) if text.strip() else None


def shipped_gpus() -> dict[str, GpuSpec]:
    specs = {}
    for r in data_rows("gpus.csv"):
        spec = GpuSpec(
            key=r["key"],
            name=r["name"],
            aliases=tuple(a for a in r["aliases"].split(";") if a),
            arch=r["arch"],
            vram_gb=float(r["vram_gb"]),
            mem_bw_gbs=_opt_float(r["mem_bw_gbs"]),
            fp32_tflops=_opt_float(r["fp32_tflops"]),
            tensor_fp16_tflops=_opt_float(r["tensor_fp16_tflops"]),
            tdp_w=_opt_float(r["tdp_w"]),
            interconnect=Interconnect(r["interconnect"]),
            **_sourced(r),  # type: ignore[arg-type]
        )
        specs[spec.key] = spec
    return specs


def shipped_instance_files() -> dict[str, str]:
    """provider name -> CSV text of its shipped instance rows (``instances/<provider>.csv``)."""
    from pricing.billing import billing_rules

    # Providers in the order the billing rules list them (the order tables show them in).
    order = list(dict.fromkeys(provider for provider, _ in billing_rules()))
    folder = resources.files("pricing.data").joinpath("instances")
    files = [f for f in folder.iterdir() if f.name.endswith(".csv")]
    files.sort(key=lambda f: (order.index(f.name[:-4]) if f.name[:-4] in order else len(order), f.name))
    return {f.name.removesuffix(".csv"): f.read_text(encoding="utf-8") for f in files}


def shipped_instances() -> InstanceRows:
    rows: list[Row] = []
    for provider, text in shipped_instance_files().items():
        rows += parse_instances(text, origin=f"pricing/data/instances/{provider}.csv", layer=Layer.SHIPPED,
                                provider=provider).rows
    return InstanceRows(rows)


def shipped_cards() -> list[CardPrice]:
    return [
        CardPrice(gpu=r["gpu"], condition=r["condition"], price=Decimal(r["price"]), currency=Currency(r["currency"]),
                  **_sourced(r))  # type: ignore[arg-type]
        for r in data_rows("cards.csv")
    ]


def shipped_electricity() -> list[ElectricityPrice]:
    return [
        ElectricityPrice(region=r["region"], currency=Currency(r["currency"]), price_per_kwh=Decimal(r["price_per_kwh"]),
                         customer_class=r.get("customer_class", ""), default=r.get("default", "") == "yes",
                         **_sourced(r))  # type: ignore[arg-type]
        for r in data_rows("electricity.csv")
    ]


class LayerInfo(BaseModel):
    """One source the catalog was built from, for 'which data did you use?'."""

    model_config = ConfigDict(frozen=True)

    layer: Layer
    origin: str  # "shipped snapshot", a cache file, a user file
    rows: int
    as_of: date | None = None


def cache_files(cache: Path) -> list[Path]:
    """Refreshed offers under ``cache``: ``<provider>/<region>.csv``, in a stable order."""
    return sorted(cache.glob("*/*.csv")) if cache.is_dir() else []


def read_instance_file(path: Path, layer: Layer) -> InstanceRows:
    """A catalog CSV's rows, read as a stream: a 200k-row file never sits in memory as text."""
    provider = path.parent.name if layer is Layer.CACHE else None
    try:
        with path.open(encoding="utf-8", newline="") as f:
            return parse_instances(f, origin=str(path), layer=layer, provider=provider)
    except OSError as exc:
        raise InputError(f"cannot read catalog file {path}: {exc.strerror or exc}",
                         "check the path given with --catalog or in the config file") from None


class Catalog:
    """GPU specs, instance rows, card and electricity prices: one value, passed down."""

    def __init__(
        self,
        *,
        gpus: dict[str, GpuSpec],
        instances: Iterable[InstanceType],
        cards: list[CardPrice] | None = None,
        electricity: list[ElectricityPrice] | None = None,
        layers: tuple[LayerInfo, ...] = (),
        networks: dict[tuple[str, str], NetworkSpec] | None = None,
    ) -> None:
        self._networks = networks
        self.gpus = gpus
        self.instances = InstanceRows.of(instances)
        self.cards = cards or []
        self.electricity = electricity or []
        self.layers = layers
        unknown = sorted(set(self.instances.column("gpu")) - gpus.keys())
        if unknown:
            raise InputError(f"catalog rows name GPU(s) the catalog does not know: {', '.join(unknown)}",
                             "use a GPU key from `gpuplan gpus`")

    @classmethod
    def shipped(cls) -> Catalog:
        """The snapshot inside the package, nothing else (read once per process: it never changes)."""
        return _shipped()

    @classmethod
    def load(cls, *, cache: Path | None = None, user_files: Sequence[Path] = ()) -> Catalog:
        """Shipped snapshot < refreshed cache (``cache``, e.g. paths.catalog_cache_dir()) < user files."""
        base = cls.shipped()
        layers: list[InstanceRows] = [base.instances]
        info = list(base.layers)
        for path in cache_files(cache) if cache is not None else []:
            rows = read_instance_file(path, Layer.CACHE)
            layers.append(rows)
            info.append(LayerInfo(layer=Layer.CACHE, origin=str(path), rows=len(rows),
                                  as_of=max(rows.column("as_of"), default=None)))
        for path in user_files:
            rows = read_instance_file(Path(path), Layer.USER)
            layers.append(rows)
            info.append(LayerInfo(layer=Layer.USER, origin=str(path), rows=len(rows),
                                  as_of=max(rows.column("as_of"), default=None)))
        if len(layers) == 1:
            return base
        return cls(gpus=base.gpus, instances=merge_instances(layers), cards=base.cards,
                   electricity=base.electricity, layers=tuple(info))

    def with_instances(self, instances: Iterable[InstanceType]) -> Catalog:
        """The same specs and card prices with other instance rows (fixtures, what-if runs)."""
        return Catalog(gpus=self.gpus, instances=instances, cards=self.cards, electricity=self.electricity,
                       layers=self.layers, networks=self._networks)

    def with_gpus(self, gpus: dict[str, GpuSpec]) -> Catalog:
        """The same offers and prices with other GPU specs (what-if runs, tests)."""
        return Catalog(gpus=gpus, instances=self.instances, cards=self.cards, electricity=self.electricity,
                       layers=self.layers)

    def with_discounts(self, discounts: Mapping[str, Decimal]) -> Catalog:
        """Every price of each named provider times its factor (an enterprise discount), said in each row's notes.

        ``discounts`` maps a provider of this catalog (``local`` discounts the cards) to a
        factor above 0 and at most 1: ``{"aws": Decimal("0.85")}`` is 15% off every AWS
        rate of every layer. The discount is listed as a layer of the catalog.
        """
        if not discounts:
            return self
        for name, factor in discounts.items():
            if name not in self.providers:
                close = difflib.get_close_matches(name, self.providers, n=3, cutoff=0.3)
                raise UnknownNameError("provider", name, close, "gpuplan offers")
            check_discount(name, factor)
        notes: dict[tuple[str, str], str] = {}

        def note(provider: str, old: str) -> str:
            key = (provider, old)
            if key not in notes:
                said = discount_note(provider, discounts[provider])
                notes[key] = f"{old}; {said}" if old else said
            return notes[key]

        instances: list[Row] = []
        pv, nt = FIELD_AT["provider"], FIELD_AT["notes"]
        prices = [FIELD_AT[f] for f in PRICE_FIELDS]
        for row in self.instances.rows:
            if row[pv] not in discounts:
                instances.append(row)
                continue
            factor = discounts[row[pv]]
            values = list(row)
            for i in prices:
                if values[i] is not None:
                    values[i] = values[i] * factor
            values[nt] = note(row[pv], row[nt])
            instances.append(tuple(values))
        cards = self.cards
        if LOCAL in discounts:
            cards = [c.model_copy(update={"price": c.price * discounts[LOCAL], "notes": note(LOCAL, c.notes)})
                     for c in self.cards]
        per_provider = Counter(self.instances.column("provider"))
        counts = {name: per_provider[name] for name in discounts}
        if LOCAL in discounts:
            counts[LOCAL] = len(self.cards)
        layers = self.layers + tuple(
            LayerInfo(layer=Layer.DISCOUNT, rows=counts[name],
                      origin=f"enterprise discount {name}={factor} ({_percent_off(factor)} every {name} price)")
            for name, factor in discounts.items())
        return Catalog(gpus=self.gpus, instances=InstanceRows(instances), cards=cards, electricity=self.electricity,
                       layers=layers, networks=self._networks)

    @cached_property
    def providers(self) -> tuple[str, ...]:
        """Every provider with rows, in first-seen order, then buying cards."""
        names = list(dict.fromkeys(self.instances.column("provider")))
        return (*names, LOCAL) if self.cards else tuple(names)

    @cached_property
    def _gpu_names(self) -> dict[str, str]:
        names: dict[str, str] = {}
        for spec in self.gpus.values():
            for n in (spec.key, spec.name, *spec.aliases):
                names.setdefault(normalize(n), spec.key)
        return names

    def gpu(self, name: str) -> GpuSpec:
        """Look a GPU up by key, name or alias, case- and punctuation-insensitively."""
        key = self._gpu_names.get(normalize(name))
        if key is None:
            close = difflib.get_close_matches(normalize(name), list(self._gpu_names), n=4, cutoff=0.5)
            keys = list(dict.fromkeys(self._gpu_names[c] for c in close))
            raise UnknownNameError("GPU", name, keys, "gpuplan gpus")
        return self.gpus[key]

    @cached_property
    def families(self) -> dict[str, tuple[str, ...]]:
        """Normalized family name -> keys of its variants, for families of two or more.

        A family is the model before its form factor and memory, the first part of the key
        when that part has a digit: V100-SXM2-16GB and V100-PCIE-32GB are V100s; V100S,
        H200 and RTX-4090 are families of their own (a lone card is no family).
        """
        out: dict[str, list[str]] = {}
        for key in self.gpus:
            head, sep, _ = key.partition("-")
            if sep and any(ch.isdigit() for ch in head):
                out.setdefault(normalize(head), []).append(key)
        return {f: tuple(keys) for f, keys in out.items() if len(keys) > 1}

    def gpu_family(self, name: str) -> list[GpuSpec]:
        """Every variant when ``name`` is a family (``v100``, ``a100``, ``h100``), else the one GPU it names.

        Filters (``--gpu`` of plan, offers and fit) use this; a single GPU (``--ref-gpu``,
        ``estimate --gpu``, ``tco --buy``) uses :meth:`gpu`, where a family name resolves
        to its alias (``v100`` is the V100-SXM2-32GB).
        """
        keys = self.families.get(normalize(name))
        if keys is None:
            return [self.gpu(name)]
        return [self.gpus[k] for k in keys]

    def instance(self, name: str) -> list[InstanceType]:
        """All regional rows of one instance type, by exact (case-insensitive) name."""
        it, wanted = FIELD_AT["instance_type"], name.strip().lower()
        found = [instance_of(r) for r in self.instances.rows if r[it].lower() == wanted]
        if not found:
            names = sorted(set(self.instances.column("instance_type")))
            close = difflib.get_close_matches(name, names, n=4, cutoff=0.5)
            raise UnknownNameError("instance type", name, close, "gpuplan offers")
        return found

    def default_electricity(self, currency: Currency) -> ElectricityPrice | None:
        """The electricity price marked default for ``currency`` in the data file."""
        return next((e for e in self.electricity if e.default and e.currency == currency), None)

    @cached_property
    def as_of(self) -> date:
        """The newest date of any price in the catalog."""
        dates = [*set(self.instances.column("as_of")), *(c.as_of for c in self.cards)]
        return max(dates)

    def as_of_statement(self, providers: Iterable[str] | None = None) -> str:
        """When each cloud's prices are from: their own date, or the day a copy was read where the source gives none."""
        wanted = None if providers is None else set(providers)
        parts = []
        ao, kind = FIELD_AT["as_of"], FIELD_AT["as_of_kind"]
        for p, table in self.instances_by_provider.items():
            if wanted is not None and p not in wanted:
                continue
            rows = table.rows
            newest = max(r[ao] for r in rows).isoformat()
            if all(r[kind] is AsOfKind.READ_DATE for r in rows):
                parts.append(f"{p} read {newest} (the source gives no price date)")
            else:
                parts.append(f"{p} as of {newest}")
        return "; ".join(parts) or f"as of {self.as_of.isoformat()}"

    @cached_property
    def networks(self) -> dict[tuple[str, str], NetworkSpec]:
        """(provider, instance type lower-cased) -> its NetworkSpec (see pricing.network)."""
        if self._networks is not None:
            return self._networks
        from pricing.network import shipped_networks

        return dict(shipped_networks())

    def network(self, provider: str, instance_type: str) -> NetworkSpec | None:
        return self.networks.get((provider, instance_type.lower()))

    @cached_property
    def instances_by_provider(self) -> dict[str, InstanceRows]:
        """provider -> its rows, in catalog order: grouped once, not walked whole per provider."""
        out: dict[str, list[Row]] = {}
        pv = FIELD_AT["provider"]
        for row in self.instances.rows:
            out.setdefault(row[pv], []).append(row)
        return {p: InstanceRows(rows) for p, rows in out.items()}

    @cached_property
    def live_providers(self) -> frozenset[str]:
        """Providers with refreshed (cache) rows: their regions, zones and spot prices are live."""
        pv, ly = FIELD_AT["provider"], FIELD_AT["layer"]
        return frozenset(r[pv] for r in self.instances.rows if r[ly] is Layer.CACHE)


@lru_cache(maxsize=1)
def _shipped() -> Catalog:
    instances = shipped_instances()
    return Catalog(gpus=shipped_gpus(), instances=instances, cards=shipped_cards(), electricity=shipped_electricity(),
                   layers=(LayerInfo(layer=Layer.SHIPPED, origin="shipped snapshot", rows=len(instances),
                                     as_of=max(instances.column("as_of"))),))
