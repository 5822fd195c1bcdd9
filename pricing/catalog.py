"""The shipped catalog: GPU specs, cloud instance types with list prices, cards to buy.

Everything is read from the CSV files in ``pricing/data`` (one row per figure, each
with ``source`` and ``as_of``) into pydantic models. A price that the source does not
give stays ``None`` and is reported as missing, never as zero.
"""

from __future__ import annotations

import csv
import difflib
import re
from datetime import date
from decimal import Decimal
from enum import StrEnum
from functools import cached_property, lru_cache
from importlib import resources

from pydantic import BaseModel, ConfigDict

from pricing.billing import BillingMode
from pricing.errors import UnknownNameError
from pricing.money import Currency, Money


class Interconnect(StrEnum):
    """How the GPUs of one machine talk to each other."""

    NVLINK = "nvlink"
    NVLINK_BRIDGE = "nvlink-bridge"  # a 2-GPU bridge: NVLink for pairs, PCIe beyond
    PCIE = "pcie"


class ProviderName(StrEnum):
    TENCENT = "tencent"
    AWS = "aws"
    LOCAL = "local"


class Sourced(BaseModel):
    """Every shipped row says where it came from and when."""

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
    """A cloud instance type in one region, with the list prices the source gives."""

    provider: ProviderName
    instance_type: str
    family: str
    gpu: str
    gpu_count: float
    vcpu: int
    mem_gb: float
    region: str
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


def _dec(text: str) -> Decimal | None:
    return Decimal(text) if text.strip() else None


def data_rows(name: str, package: str = "pricing.data") -> list[dict[str, str]]:
    """The rows of a shipped CSV data file; lines starting with '#' are comments."""
    text = resources.files(package).joinpath(name).read_text(encoding="utf-8")
    return list(csv.DictReader(line for line in text.splitlines() if not line.startswith("#")))


def _sourced(r: dict[str, str]) -> dict[str, object]:
    return {"source": r["source"], "as_of": date.fromisoformat(r["as_of"]), "notes": r.get("notes", "")}


def _instances(file: str, provider: ProviderName) -> list[InstanceType]:
    out = []
    for r in data_rows(file):
        out.append(
            InstanceType(
                provider=provider,
                instance_type=r["instance_type"],
                family=r["family"],
                gpu=r["gpu"],
                gpu_count=float(r["gpu_count"]),
                vcpu=int(r["vcpu"]),
                mem_gb=float(r["mem_gb"]),
                region=r["region"] or "unknown",  # the source names no region
                zones=tuple(z for z in r["zones"].split(";") if z),
                currency=Currency(r["currency"]),
                hourly=_dec(r["hourly"]),
                hourly_high=_dec(r["hourly_high"]),
                monthly=_dec(r["monthly"]),
                monthly_high=_dec(r["monthly_high"]),
                spot=_dec(r["spot"]),
                spot_high=_dec(r["spot_high"]),
                reserved_1y=_dec(r["reserved_1y"]),
                reserved_3y=_dec(r["reserved_3y"]),
                **_sourced(r),  # type: ignore[arg-type]
            )
        )
    return out


def _opt_float(text: str) -> float | None:
    return float(text) if text.strip() else None


class Catalog:
    """The whole shipped snapshot, loaded once per process."""

    @cached_property
    def gpus(self) -> dict[str, GpuSpec]:
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
    def instances(self) -> list[InstanceType]:
        return _instances("tencent_instances.csv", ProviderName.TENCENT) + _instances(
            "aws_instances.csv", ProviderName.AWS
        )

    def instance(self, name: str) -> list[InstanceType]:
        """All regional rows of one instance type, by exact (case-insensitive) name."""
        found = [i for i in self.instances if i.instance_type.lower() == name.strip().lower()]
        if not found:
            names = sorted({i.instance_type for i in self.instances})
            close = difflib.get_close_matches(name, names, n=4, cutoff=0.5)
            raise UnknownNameError("instance type", name, close, "gpuplan offers")
        return found

    @cached_property
    def cards(self) -> list[CardPrice]:
        return [
            CardPrice(
                gpu=r["gpu"],
                condition=r["condition"],
                price=Decimal(r["price"]),
                currency=Currency(r["currency"]),
                **_sourced(r),  # type: ignore[arg-type]
            )
            for r in data_rows("cards.csv")
        ]

    @cached_property
    def electricity(self) -> list[ElectricityPrice]:
        return [
            ElectricityPrice(
                region=r["region"],
                currency=Currency(r["currency"]),
                price_per_kwh=Decimal(r["price_per_kwh"]),
                customer_class=r.get("customer_class", ""),
                default=r.get("default", "") == "yes",
                **_sourced(r),  # type: ignore[arg-type]
            )
            for r in data_rows("electricity.csv")
        ]

    def default_electricity(self, currency: Currency) -> ElectricityPrice | None:
        """The electricity price marked default for ``currency`` in the data file."""
        return next((e for e in self.electricity if e.default and e.currency == currency), None)

    @cached_property
    def as_of(self) -> date:
        """The newest date of any price in the snapshot."""
        dates = [i.as_of for i in self.instances] + [c.as_of for c in self.cards]
        return max(dates)


@lru_cache(maxsize=1)
def default_catalog() -> Catalog:
    return Catalog()
