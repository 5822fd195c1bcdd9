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
import re
from collections.abc import Iterable, Sequence
from datetime import date
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from functools import cached_property, lru_cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, ValidationError

from pricing.billing import BillingMode
from pricing.errors import InputError, UnknownNameError, first_error
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


class Sourced(BaseModel):
    """Every row says where it came from and when."""

    model_config = ConfigDict(frozen=True)

    source: str
    as_of: date
    notes: str = ""


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
        return {
            BillingMode.HOURLY: self.hourly,
            BillingMode.MONTHLY: self.monthly,
            BillingMode.SPOT: self.spot,
            BillingMode.RESERVED_1Y: self.reserved_1y,
            BillingMode.RESERVED_3Y: self.reserved_3y,
        }.get(mode)

    def rate_high(self, mode: BillingMode) -> Decimal | None:
        """The dearest zone's rate where the source gives a spread."""
        return {
            BillingMode.HOURLY: self.hourly_high,
            BillingMode.MONTHLY: self.monthly_high,
            BillingMode.SPOT: self.spot_high,
        }.get(mode)

    @property
    def is_vgpu_slice(self) -> bool:
        return self.gpu_count < 1

    def hourly_money(self) -> Money | None:
        return None if self.hourly is None else Money(amount=self.hourly, currency=self.currency)


# The one CSV shape of every cloud's instance rows: shipped files, the refreshed cache and
# user catalogs alike (``provider`` may be left out of a shipped file: its name says it).
INSTANCE_COLUMNS = (
    "provider", "instance_type", "family", "gpu", "gpu_count", "vcpu", "mem_gb", "region", "zone", "zones",
    "currency", "hourly", "hourly_high", "monthly", "monthly_high", "spot", "spot_high", "reserved_1y",
    "reserved_3y", "stock", "as_of_kind", "source", "as_of", "notes",
)
_REQUIRED = ("instance_type", "gpu", "gpu_count", "region", "currency", "source", "as_of")
_PRICES = ("hourly", "hourly_high", "monthly", "monthly_high", "spot", "spot_high", "reserved_1y", "reserved_3y")


def _dec(text: str | None) -> Decimal | None:
    return Decimal(text) if text and text.strip() else None


def _csv_lines(text: str) -> list[str]:
    # '#' lines are comments; keep their place so error line numbers match the file.
    return ["" if line.startswith("#") else line for line in text.splitlines()]


def parse_instances(text: str, *, origin: str, layer: Layer, provider: str | None = None) -> list[InstanceType]:
    """Instance rows from CSV text in :data:`INSTANCE_COLUMNS`; a bad row names ``origin`` and its line."""
    reader = csv.DictReader(line for line in _csv_lines(text) if True)
    missing = [c for c in _REQUIRED if c not in (reader.fieldnames or ())]
    if provider is None and "provider" not in (reader.fieldnames or ()):
        missing.insert(0, "provider")
    if missing:
        raise InputError(f"{origin}: missing column(s) {', '.join(missing)}",
                         f"a catalog CSV has the columns {','.join(INSTANCE_COLUMNS)}")
    out: list[InstanceType] = []
    for r in reader:
        if not any((v or "").strip() for v in r.values()):
            continue
        line = reader.line_num
        try:
            prices = {k: _dec(r.get(k)) for k in _PRICES}
            out.append(InstanceType(
                provider=(r.get("provider") or provider or "").strip().lower(),
                instance_type=r["instance_type"].strip(),
                family=(r.get("family") or r["instance_type"].split(".")[0]).strip(),
                gpu=r["gpu"].strip(),
                gpu_count=float(r["gpu_count"]),
                vcpu=int(r.get("vcpu") or 0),
                mem_gb=float(r.get("mem_gb") or 0),
                region=r["region"].strip() or "unknown",  # the source names no region
                zone=(r.get("zone") or "").strip(),
                zones=tuple(z for z in (r.get("zones") or "").split(";") if z),
                currency=Currency.parse(r["currency"]),
                stock=Stock(r.get("stock") or Stock.UNKNOWN),
                as_of_kind=AsOfKind(r.get("as_of_kind") or AsOfKind.PRICE_DATE),
                layer=layer,
                source=r["source"],
                as_of=date.fromisoformat(r["as_of"].strip()),
                notes=r.get("notes") or "",
                **prices,
            ))
        except (ValueError, InvalidOperation, KeyError, TypeError, InputError) as exc:
            if isinstance(exc, ValidationError):
                where, msg = first_error(exc)
                detail = f"{where}: {msg}"
            else:
                detail = str(exc) or type(exc).__name__
            raise InputError(f"{origin} line {line}: {detail}", "fix the row or remove it") from None
        if out[-1].provider == "":
            raise InputError(f"{origin} line {line}: no provider", "fill the provider column")
        if any(v is not None and v < 0 for v in prices.values()):
            raise InputError(f"{origin} line {line}: a price is negative", "prices are amounts per hour or month")
    return out


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


def merge_instances(layers: Sequence[list[InstanceType]]) -> list[InstanceType]:
    """Stack layers: a later layer's rows for an instance type in a region replace every
    earlier row of that type and region, in every zone.

    So a user's region-wide row overrides the shipped per-zone rows, and a refresh's
    per-zone rows the shipped ones. A refreshed (cache) row of a real region also retires
    the earlier rows of the same provider and instance type in a pseudo-region such as
    ``cn-mainland``: the live per-zone rows are the better answer for that type.
    """
    merged: dict[tuple[str, str, str, str], InstanceType] = {}
    for rows in layers:
        places = {(i.provider, i.instance_type.lower(), i.region) for i in rows}
        refreshed = {(i.provider, i.instance_type.lower()) for i in rows if i.layer is Layer.CACHE}
        for key, old in list(merged.items()):
            kind = (old.provider, old.instance_type.lower())
            if (*kind, old.region) in places or (
                old.layer is not Layer.CACHE and old.region in PSEUDO_REGIONS and kind in refreshed
            ):
                del merged[key]
        for i in rows:
            merged[i.key] = i
    return list(merged.values())


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


def normalize(name: str) -> str:
    """Fold a GPU name so 'Tesla V100 32GB', 'v100-32gb' and 'V100_32GB' compare equal."""
    text = name.lower().replace("_", " ").replace("-", " ")
    text = re.sub(r"\b(nvidia|tesla|geforce)\b", " ", text)
    return re.sub(r"\s+", "-", text.strip())


def data_rows(name: str, package: str = "pricing.data") -> list[dict[str, str]]:
    """The rows of a shipped CSV data file; lines starting with '#' are comments."""
    text = resources.files(package).joinpath(name).read_text(encoding="utf-8")
    return list(csv.DictReader(line for line in text.splitlines() if not line.startswith("#")))


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


def shipped_instances() -> list[InstanceType]:
    rows: list[InstanceType] = []
    for provider, text in shipped_instance_files().items():
        rows += parse_instances(text, origin=f"pricing/data/instances/{provider}.csv", layer=Layer.SHIPPED,
                                provider=provider)
    return rows


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


def read_instance_file(path: Path, layer: Layer) -> list[InstanceType]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read catalog file {path}: {exc.strerror or exc}",
                         "check the path given with --catalog or in the config file") from None
    provider = path.parent.name if layer is Layer.CACHE else None
    return parse_instances(text, origin=str(path), layer=layer, provider=provider)


class Catalog:
    """GPU specs, instance rows, card and electricity prices: one value, passed down."""

    def __init__(
        self,
        *,
        gpus: dict[str, GpuSpec],
        instances: list[InstanceType],
        cards: list[CardPrice] | None = None,
        electricity: list[ElectricityPrice] | None = None,
        layers: tuple[LayerInfo, ...] = (),
        networks: dict[tuple[str, str], NetworkSpec] | None = None,
    ) -> None:
        self._networks = networks
        self.gpus = gpus
        self.instances = instances
        self.cards = cards or []
        self.electricity = electricity or []
        self.layers = layers
        unknown = sorted({i.gpu for i in instances if i.gpu not in gpus})
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
        layers: list[list[InstanceType]] = [base.instances]
        info = list(base.layers)
        for path in cache_files(cache) if cache is not None else []:
            rows = read_instance_file(path, Layer.CACHE)
            layers.append(rows)
            info.append(LayerInfo(layer=Layer.CACHE, origin=str(path), rows=len(rows),
                                  as_of=max((r.as_of for r in rows), default=None)))
        for path in user_files:
            rows = read_instance_file(Path(path), Layer.USER)
            layers.append(rows)
            info.append(LayerInfo(layer=Layer.USER, origin=str(path), rows=len(rows),
                                  as_of=max((r.as_of for r in rows), default=None)))
        if len(layers) == 1:
            return base
        return cls(gpus=base.gpus, instances=merge_instances(layers), cards=base.cards,
                   electricity=base.electricity, layers=tuple(info))

    def with_instances(self, instances: list[InstanceType]) -> Catalog:
        """The same specs and card prices with other instance rows (fixtures, what-if runs)."""
        return Catalog(gpus=self.gpus, instances=instances, cards=self.cards, electricity=self.electricity,
                       layers=self.layers, networks=self._networks)

    def with_gpus(self, gpus: dict[str, GpuSpec]) -> Catalog:
        """The same offers and prices with other GPU specs (what-if runs, tests)."""
        return Catalog(gpus=gpus, instances=self.instances, cards=self.cards, electricity=self.electricity,
                       layers=self.layers)

    @cached_property
    def providers(self) -> tuple[str, ...]:
        """Every provider with rows, in first-seen order, then buying cards."""
        names = list(dict.fromkeys(i.provider for i in self.instances))
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
        found = [i for i in self.instances if i.instance_type.lower() == name.strip().lower()]
        if not found:
            names = sorted({i.instance_type for i in self.instances})
            close = difflib.get_close_matches(name, names, n=4, cutoff=0.5)
            raise UnknownNameError("instance type", name, close, "gpuplan offers")
        return found

    def default_electricity(self, currency: Currency) -> ElectricityPrice | None:
        """The electricity price marked default for ``currency`` in the data file."""
        return next((e for e in self.electricity if e.default and e.currency == currency), None)

    @cached_property
    def as_of(self) -> date:
        """The newest date of any price in the catalog."""
        dates = [i.as_of for i in self.instances] + [c.as_of for c in self.cards]
        return max(dates)

    def as_of_statement(self, providers: Iterable[str] | None = None) -> str:
        """When each cloud's prices are from: their own date, or the day a copy was read where the source gives none."""
        wanted = None if providers is None else set(providers)
        parts = []
        for p in dict.fromkeys(i.provider for i in self.instances):
            if wanted is not None and p not in wanted:
                continue
            rows = [i for i in self.instances if i.provider == p]
            newest = max(i.as_of for i in rows).isoformat()
            if all(i.as_of_kind is AsOfKind.READ_DATE for i in rows):
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
    def live_providers(self) -> frozenset[str]:
        """Providers with refreshed (cache) rows: their regions, zones and spot prices are live."""
        return frozenset(i.provider for i in self.instances if i.layer is Layer.CACHE)


@lru_cache(maxsize=1)
def _shipped() -> Catalog:
    instances = shipped_instances()
    return Catalog(gpus=shipped_gpus(), instances=instances, cards=shipped_cards(), electricity=shipped_electricity(),
                   layers=(LayerInfo(layer=Layer.SHIPPED, origin="shipped snapshot", rows=len(instances),
                                     as_of=max(i.as_of for i in instances)),))
