"""The TCO defaults file and the host that carries the cards.

``data/tco_defaults.toml`` holds one figure per key, each with ``source``, ``as_of``
and an ``assumption`` flag (true where no source was found). A host is either given
(price and watts) or sized by three rules: host RAM >= total VRAM (rounded up to
32 GB DIMMs), ``cpu_cores_per_gpu`` cores per GPU for data loading, and NVMe of
``nvme_per_dataset`` x the dataset, in whole TB. Sized parts are priced in USD (the
defaults' currency); the caller converts them, so this module never touches FX.
"""

from __future__ import annotations

import math
import tomllib
from datetime import date
from decimal import Decimal
from functools import lru_cache
from importlib import resources

from pydantic import BaseModel, ConfigDict

from pricing.errors import InputError
from pricing.money import Currency, Money
from pricing.line_items import LineItem


class Default(BaseModel):
    """One figure of the TCO model, with where it came from."""

    model_config = ConfigDict(frozen=True)

    key: str
    value: Decimal
    unit: str
    source: str
    as_of: date
    assumption: bool
    note: str = ""


@lru_cache(maxsize=1)
def tco_defaults() -> dict[str, Default]:
    """Every figure in ``planner/data/tco_defaults.toml``, by key."""
    text = resources.files("planner.data").joinpath("tco_defaults.toml").read_text(encoding="utf-8")
    return {key: Default(key=key, **body) for key, body in tomllib.loads(text).items()}


class Profile(BaseModel):
    """Where owned hardware lives (``data/tco_profiles.toml``): the defaults it replaces, and colocation or not."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    colo: bool
    figures: dict[str, Default]


@lru_cache(maxsize=1)
def tco_profiles() -> dict[str, Profile]:
    """Every profile in ``planner/data/tco_profiles.toml``, by name."""
    text = resources.files("planner.data").joinpath("tco_profiles.toml").read_text(encoding="utf-8")
    out = {}
    for name, body in tomllib.loads(text).items():
        figures = {k: Default(key=k, **v) for k, v in body.items() if isinstance(v, dict)}
        out[name] = Profile(name=name, description=body["description"], colo=body["colo"], figures=figures)
    return out


def profile(name: str) -> Profile:
    found = tco_profiles().get(name.strip().lower())
    if found is None:
        raise InputError(f"unknown TCO profile {name!r}", f"use one of: {', '.join(tco_profiles())}")
    return found


# A workstation chassis holds 4 dual-slot cards (host_base_usd's source): a build of more is a server.
WORKSTATION_CARDS = 4


def default_profile(cards: int, colo: bool) -> Profile:
    """The profile a build gets when none is named: a workstation of up to 4 cards, else (or with --colo) a server
    in a colocation facility."""
    return profile("colocated" if colo or cards > WORKSTATION_CARDS else "workstation")


def figure(key: str, prof: Profile | None = None) -> Default:
    """A model figure with its source: the profile's where it names one, else the default."""
    if prof is not None and key in prof.figures:
        return prof.figures[key]
    return tco_defaults()[key]


def default(key: str, prof: Profile | None = None) -> Decimal:
    return figure(key, prof).value


def usd(key: str) -> Money:
    """A default that is a USD price, as Money."""
    return Money(amount=default(key), currency=Currency.USD)


class Host(BaseModel):
    """The machine around the cards: its parts (or one given price) and its draw."""

    model_config = ConfigDict(frozen=True)

    ram_gb: int | None = None
    cpu_cores: int | None = None
    nvme_tb: int | None = None
    watts: Decimal  # at full load
    parts: tuple[LineItem, ...]
    sized: bool
    cpu_watts: Decimal = Decimal(0)  # the CPU's share of ``watts`` (its TDP): it idles with the GPUs



def size_host(
    gpu_count: int,
    vram_gb: float,
    *,
    dataset_gb: Decimal | None = None,
    cores_per_gpu: Decimal | None = None,
) -> Host:
    """A host sized for ``gpu_count`` cards of ``vram_gb`` each, priced from the defaults."""
    if gpu_count < 1:
        raise InputError("a host needs at least one GPU")
    dataset = default("dataset_gb") if dataset_gb is None else dataset_gb
    per_gpu = default("cpu_cores_per_gpu") if cores_per_gpu is None else cores_per_gpu
    if dataset < 0 or per_gpu <= 0:
        raise InputError("--dataset-gb must be zero or more and --cores-per-gpu positive")
    vram_total = Decimal(repr(vram_gb)) * gpu_count * default("ram_per_vram")
    ram_gb = max(32, 32 * math.ceil(vram_total / 32))
    cores = math.ceil(per_gpu * gpu_count)
    nvme_tb = max(1, math.ceil(dataset * default("nvme_per_dataset") / 1000))
    bases = math.ceil(gpu_count / WORKSTATION_CARDS)
    parts = (
        LineItem.priced(f"board, chassis, PSU, cooling (one per {WORKSTATION_CARDS} cards)", Decimal(bases), "hosts",
                        usd("host_base_usd")),
        LineItem.priced(f"CPU ({per_gpu:g} cores per GPU)", Decimal(cores), "cores", usd("cpu_usd_per_core")),
        LineItem.priced("RAM (>= total VRAM)", Decimal(ram_gb), "GB", usd("ram_usd_per_gb")),
        LineItem.priced(f"NVMe ({default('nvme_per_dataset'):g} x {dataset:g} GB dataset)", Decimal(nvme_tb), "TB",
                        usd("nvme_usd_per_tb")),
    )
    cpu = cores * default("cpu_watts_per_core")
    return Host(ram_gb=ram_gb, cpu_cores=cores, nvme_tb=nvme_tb, watts=default("host_base_watts") * bases + cpu,
                parts=parts, sized=True, cpu_watts=cpu)


def given_host(price: Money, watts: Decimal) -> Host:
    """A host whose price and draw the user states."""
    if price.amount < 0 or watts < 0:
        raise InputError("--host-price and --host-watts must be zero or more")
    part = LineItem.priced("host (given)", Decimal(1), "host", price)
    return Host(watts=watts, parts=(part,), sized=False)
