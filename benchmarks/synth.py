"""Synthetic catalogs for the scale benchmarks: real GPU keys and instance shapes, made-up prices.

Every row is a region-wide offer (``zone`` empty, ``zones`` listing where it sells), so
the number of rows is the number of offers the planner sees. Shapes come from the shipped
catalog (AWS and Tencent instance types) plus generated ``gN.<count>x<gpu>`` types for
three more providers, one of them billing in CNY; regions follow cloud naming
(``us-east-7``, ``ap-southeast-12``) with lettered zones. Prices are the shipped price per
GPU-hour of the GPU (or 0.012 USD per dense FP16 tensor TFLOPS-hour where none ships),
times the GPU count, times a regional factor of 0.85-1.35; spot, monthly and reserved
rates are fixed fractions of it in the ranges clouds publish. None of it is a real
price: every row's source says so, and nothing here ships or is read by gpuplan.
"""

from __future__ import annotations

import csv
import random
import statistics
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from pricing.catalog import INSTANCE_COLUMNS, Catalog
from pricing.money import Currency

SOURCE = "synthetic benchmark row (made-up price, benchmarks/synth.py)"
AS_OF = "2026-12-01"
GEOS = ("us", "eu", "ap", "sa", "me", "af", "ca", "cn")
DIRECTIONS = ("east", "west", "north", "south", "central", "northeast", "southeast")
COUNTS = (1, 2, 4, 8)


@dataclass(frozen=True)
class Shape:
    provider: str
    instance_type: str
    family: str
    gpu: str
    gpu_count: float
    vcpu: int
    mem_gb: float
    currency: Currency
    usd_per_gpu_hour: float
    monthly: bool  # bills monthly subscriptions (the Tencent style)
    reserved: bool  # sells 1- and 3-year reservations (the AWS style)
    spot: bool


def region_name(i: int) -> str:
    """The i-th region: us-east-1, eu-east-1, ... then us-east-2 and so on (never repeats)."""
    geo = GEOS[i % len(GEOS)]
    direction = DIRECTIONS[(i // len(GEOS)) % len(DIRECTIONS)]
    return f"{geo}-{direction}-{i // (len(GEOS) * len(DIRECTIONS)) + 1}"


def _usd_per_gpu_hour(cat: Catalog, fx_cny: float) -> dict[str, float]:
    """Median shipped hourly price per GPU per hour, in USD; FP16-scaled guess for the rest."""
    seen: dict[str, list[float]] = {}
    for row in cat.instances:
        if row.hourly is None or row.gpu_count <= 0:
            continue
        usd = float(row.hourly) / (fx_cny if row.currency is Currency.CNY else 1.0)
        seen.setdefault(row.gpu, []).append(usd / row.gpu_count)
    out = {}
    for key, spec in cat.gpus.items():
        if key in seen:
            out[key] = statistics.median(seen[key])
        else:
            out[key] = min(8.0, max(0.15, 0.012 * (spec.tensor_fp16_tflops or spec.fp32_tflops or 20)))
    return out


def shapes(cat: Catalog) -> list[Shape]:
    """The instance shapes rows are drawn from: every shipped type plus generated ones."""
    fx_cny = _fx_cny()
    price = _usd_per_gpu_hour(cat, fx_cny)
    out: list[Shape] = []
    seen: set[tuple[str, str]] = set()
    for row in cat.instances:
        # one shape per type: the same type in two shipped regions would collide in a synthetic region
        if row.hourly is None or row.gpu_count < 1 or (row.provider, row.instance_type) in seen:
            continue
        seen.add((row.provider, row.instance_type))
        usd = float(row.hourly) / (fx_cny if row.currency is Currency.CNY else 1.0)
        out.append(Shape(row.provider, row.instance_type, row.family, row.gpu, row.gpu_count, row.vcpu, row.mem_gb,
                         row.currency, usd / row.gpu_count,
                         monthly=row.provider == "tencent", reserved=row.provider == "aws", spot=True))
    for provider, currency in (("cloud-a", Currency.USD), ("cloud-b", Currency.CNY), ("lab", Currency.USD)):
        for key, spec in cat.gpus.items():
            for n in COUNTS:
                name = f"g{n}.{n}x{key.lower()}"
                out.append(Shape(provider, name, f"g{n}", key, float(n), 8 * n, max(32.0, 2 * spec.vram_gb * n),
                                 currency, price[key], monthly=currency is Currency.CNY,
                                 reserved=provider == "cloud-a", spot=provider != "lab"))
    return out


def _fx_cny() -> float:
    from pricing.money import Fx, shipped_fx_rates

    return float(Fx(list(shipped_fx_rates())).rate(Currency.USD, Currency.CNY))  # ECB's, crossed through the euro


def _money(x: float) -> str:
    return str(Decimal(repr(x)).quantize(Decimal("0.0001")))


def rows(n: int, *, seed: int = 14, catalog: Catalog | None = None) -> Iterator[list[str]]:
    """``n`` rows in :data:`INSTANCE_COLUMNS` order, each a distinct (provider, type, region)."""
    cat = catalog or Catalog.shipped()
    rng = random.Random(seed)
    fx_cny = _fx_cny()
    kinds = shapes(cat)
    made = 0
    region = 0
    while True:
        name = region_name(region)
        for s in kinds:
            if made == n:
                return
            factor = rng.uniform(0.85, 1.35)
            hourly_usd = s.usd_per_gpu_hour * s.gpu_count * factor
            fx = fx_cny if s.currency is Currency.CNY else 1.0
            hourly = hourly_usd * fx
            rec = dict.fromkeys(INSTANCE_COLUMNS, "")
            rec.update(
                provider=s.provider, instance_type=s.instance_type, family=s.family, gpu=s.gpu,
                gpu_count=f"{s.gpu_count:g}", vcpu=str(s.vcpu), mem_gb=f"{s.mem_gb:g}", region=name,
                zones=";".join(f"{name}{z}" for z in "abcdef"[: rng.randint(1, 4)]),
                currency=s.currency.value, hourly=_money(hourly), source=SOURCE, as_of=AS_OF,
            )
            if rng.random() < 0.1:
                rec["hourly_high"] = _money(hourly * rng.uniform(1.05, 1.3))
            if s.monthly:
                rec["monthly"] = _money(hourly * 730 * rng.uniform(0.5, 0.7))
            if s.spot and s.currency is Currency.USD and rng.random() < 0.7:
                spot = hourly * rng.uniform(0.25, 0.6)
                rec["spot"] = _money(spot)
                rec["spot_high"] = _money(spot * rng.uniform(1.0, 1.4))
            if s.reserved and rng.random() < 0.4:
                rec["reserved_1y"] = _money(hourly * rng.uniform(0.58, 0.7))
                rec["reserved_3y"] = _money(hourly * rng.uniform(0.38, 0.48))
            made += 1
            yield [rec[c] for c in INSTANCE_COLUMNS]
        region += 1


def write_catalog(path: Path, n: int, *, seed: int = 14, catalog: Catalog | None = None) -> Path:
    """Write ``n`` synthetic offers as a ``--catalog`` CSV."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(INSTANCE_COLUMNS)
        w.writerows(rows(n, seed=seed, catalog=catalog))
    return path
