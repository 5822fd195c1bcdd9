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

import difflib
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import date
from decimal import Decimal
from functools import cached_property, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pricing.catalog.layers import (LayerInfo, cache_files, check_discount, discount_note, discounted,
                                    merge_instances, percent_off)
from pricing.catalog.parse import read_instance_file
from pricing.catalog.rows import LOCAL, AsOfKind, CardPrice, ElectricityPrice, GpuSpec, InstanceType, Layer
from pricing.catalog.shipped import shipped_cards, shipped_electricity, shipped_gpus, shipped_instances
from pricing.errors import InputError, UnknownNameError
from pricing.money import Currency

if TYPE_CHECKING:
    from pricing.network import NetworkSpec


def normalize(name: str) -> str:
    """Fold a GPU name so 'Tesla V100 32GB', 'v100-32gb' and 'V100_32GB' compare equal."""
    text = name.lower().replace("_", " ").replace("-", " ")
    text = re.sub(r"\b(nvidia|tesla|geforce)\b", " ", text)
    return re.sub(r"\s+", "-", text.strip())


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
        # a tuple: the catalog is a value, and tuple() of a tuple is the same tuple, not a copy
        self.instances: tuple[InstanceType, ...] = tuple(instances)
        self.cards = cards or []
        self.electricity = electricity or []
        self.layers = layers
        unknown = sorted({r.gpu for r in self.instances} - gpus.keys())
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
        layers: list[Sequence[InstanceType]] = [base.instances]
        info = list(base.layers)
        for path in cache_files(cache) if cache is not None else []:
            rows = read_instance_file(path, Layer.CACHE)
            layers.append(rows)
            info.append(LayerInfo(layer=Layer.CACHE, origin=str(path), rows=len(rows),
                                  as_of=max({r.as_of for r in rows}, default=None)))
        for path in user_files:
            rows = read_instance_file(Path(path), Layer.USER)
            layers.append(rows)
            info.append(LayerInfo(layer=Layer.USER, origin=str(path), rows=len(rows),
                                  as_of=max({r.as_of for r in rows}, default=None)))
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

        instances = discounted(self.instances, discounts, note)
        cards = self.cards
        if LOCAL in discounts:
            cards = [c.model_copy(update={"price": c.price * discounts[LOCAL], "notes": note(LOCAL, c.notes)})
                     for c in self.cards]
        per_provider = Counter(r.provider for r in self.instances)
        counts = {name: per_provider[name] for name in discounts}
        if LOCAL in discounts:
            counts[LOCAL] = len(self.cards)
        layers = self.layers + tuple(
            LayerInfo(layer=Layer.DISCOUNT, rows=counts[name],
                      origin=f"enterprise discount {name}={factor} ({percent_off(factor)} every {name} price)")
            for name, factor in discounts.items())
        return Catalog(gpus=self.gpus, instances=instances, cards=cards, electricity=self.electricity,
                       layers=layers, networks=self._networks)

    @cached_property
    def providers(self) -> tuple[str, ...]:
        """Every provider with rows, in first-seen order, then buying cards."""
        names = list(dict.fromkeys(r.provider for r in self.instances))
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
        wanted = name.strip().lower()
        found = [r for r in self.instances if r.instance_type.lower() == wanted]
        if not found:
            names = sorted({r.instance_type for r in self.instances})
            close = difflib.get_close_matches(name, names, n=4, cutoff=0.5)
            raise UnknownNameError("instance type", name, close, "gpuplan offers")
        return found

    def default_electricity(self, currency: Currency) -> ElectricityPrice | None:
        """The electricity price marked default for ``currency`` in the data file."""
        return next((e for e in self.electricity if e.default and e.currency == currency), None)

    @cached_property
    def as_of(self) -> date:
        """The newest date of any price in the catalog."""
        dates = [*{r.as_of for r in self.instances}, *(c.as_of for c in self.cards)]
        return max(dates)

    def as_of_statement(self, providers: Iterable[str] | None = None) -> str:
        """When each cloud's prices are from: their own date, or the day a copy was read where the source gives none."""
        wanted = None if providers is None else set(providers)
        parts = []
        for p, rows in self.instances_by_provider.items():
            if wanted is not None and p not in wanted:
                continue
            newest = max(r.as_of for r in rows).isoformat()
            if all(r.as_of_kind is AsOfKind.READ_DATE for r in rows):
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
    def instances_by_provider(self) -> dict[str, list[InstanceType]]:
        """provider -> its rows, in catalog order: grouped once, not walked whole per provider."""
        out: dict[str, list[InstanceType]] = {}
        for row in self.instances:
            out.setdefault(row.provider, []).append(row)
        return out

    @cached_property
    def live_providers(self) -> frozenset[str]:
        """Providers with refreshed (cache) rows: their regions, zones and spot prices are live."""
        return frozenset(r.provider for r in self.instances if r.layer is Layer.CACHE)


@lru_cache(maxsize=1)
def _shipped() -> Catalog:
    """The shipped snapshot, kept between runs by the program (pricing.derived): parsing ~800 rows of seven
    clouds and the GPU, card and electricity files was ~10 ms of every cold command; loading it kept, ~2 ms."""
    from pathlib import Path

    from pricing.datafiles import data_path
    from pricing.derived import derived

    data = data_path()
    code = Path(__file__).parent
    sources = [*sorted(data.glob("*.csv")), *sorted((data / "instances").glob("*.csv")), *sorted(data.glob("*.toml")),
               *sorted(code.glob("*.py")), *sorted(code.parent.glob("*.py"))]
    from pricing.catalog.rows import Interconnect, Stock
    from pricing.money import Currency

    parts = derived("shipped-catalog", sources, _parse_shipped, types=(
        GpuSpec, InstanceType, CardPrice, ElectricityPrice, LayerInfo, Interconnect, Stock, Layer, AsOfKind, Currency))
    return Catalog(**parts)


def _parse_shipped() -> dict[str, Any]:
    """The shipped catalog's parts, as :class:`Catalog` takes them (and as they are kept)."""
    instances = list(shipped_instances())
    return {"gpus": shipped_gpus(), "instances": instances, "cards": shipped_cards(),
            "electricity": shipped_electricity(),
            "layers": (LayerInfo(layer=Layer.SHIPPED, origin="shipped snapshot", rows=len(instances),
                                 as_of=max(r.as_of for r in instances)),)}
