"""What a gpuhunt catalog item is, in gpuplan's terms: which price it is and which of the catalog's GPUs it carries.

Prices. gpuhunt lists one item per (instance type, location, capacity type). ``spot`` marks spot items; the
rest are on-demand *unless* gpuhunt marks them otherwise: GCP's Dynamic Workload Scheduler calendar-mode
reservations come as non-spot items with ``provider_data["is_dws_calendar_mode"] = true`` and the flag
``gcp-dws-calendar-mode`` (gpuhunt ``providers/gcp.py``, ``CapacityType`` and ``_set_flags``). A reservation
is paid up front for a fixed window, not by the hour: gpuplan has no billing mode for it (reserved_1y/3y are
1- and 3-year commitments), so it is left out and counted, never taken as the hourly price. Flags and
provider-data keys that name reserved capacity (DWS flex-start, AWS capacity blocks) are read the same way,
so a later gpuhunt that lists them does not turn them hourly either. A flag gpuplan does not know (gpuhunt adds
one for "an item that breaks existing dstack versions", e.g. ``runpod-cluster``) leaves the item out, counted
by flag, rather than guessing what it is.

GPUs. gpuhunt names a GPU by its bare model and memory (``H100``, 80): the form factor (PCIe or SXM) is not
in it. The catalog's GPU is taken, in order, as the only catalog GPU of that model and memory; else the one
the instance's name says (``gpu_1x_h100_pcie`` -> PCIe, ``..._sxm4`` -> SXM); else the one the catalog's own
(shipped) rows give that instance type; else the catalog's alias of the bare name (its default form factor,
said in the row's notes). Names are compared without spaces, so Lambda's ``RTXA6000`` and ``QuadroRTX6000``
are the catalog's RTX A6000 and Quadro RTX 6000. Anything else is left out and listed by name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pricing.catalog import Catalog, InstanceType
from pricing.catalog.value import normalize
from pricing.errors import UnknownNameError

MEMORY_TOLERANCE = 0.10  # clouds report usable memory: 79.6 GB for an 80 GB H100 on AWS
# Flags that only hide an item from older dstack versions (gpuhunt: gcp.py _set_flags and
# _with_legacy_g4_preview, lambdalabs.py FLAG_ARM, oci.py _make_spot_offer): the item is an ordinary offer.
PLAIN_FLAGS = frozenset({"gcp-a4", "gcp-g4", "gcp-g4-preview", "lambda-arm", "oci-spot"})
RESERVATION_FLAGS = {"gcp-dws-calendar-mode": "GCP DWS calendar-mode reservation"}
RESERVATION_DATA = {"is_dws_calendar_mode": "GCP DWS calendar-mode reservation"}
# Words that name reserved capacity in a flag or provider-data key gpuhunt may add (flex-start, capacity blocks).
_RESERVED = re.compile(r"dws|calendar|flex|capacity[-_]?block|reserv", re.IGNORECASE)
_FORM_TOKENS = {"pcie": "PCIE", "sxm": "SXM", "nvl": "NVL"}  # a token of the instance name -> part of the GPU key


class Kind(StrEnum):
    HOURLY = "hourly"
    SPOT = "spot"
    LEFT_OUT = "left out"


def kind_of(item: Any) -> tuple[Kind, str]:
    """(which price an item is, and why it is left out when it is)."""
    data: Mapping[str, Any] = item.provider_data or {}
    for key, value in data.items():
        if value is True and (key in RESERVATION_DATA or _RESERVED.search(key)):
            return Kind.LEFT_OUT, RESERVATION_DATA.get(key, f"reservation ({key})") + _NO_MODE
    flags = list(item.flags or ())
    for flag in flags:
        if flag in RESERVATION_FLAGS or _RESERVED.search(flag):
            return Kind.LEFT_OUT, RESERVATION_FLAGS.get(flag, f"reservation (flag {flag})") + _NO_MODE
    if unknown := [f for f in flags if f not in PLAIN_FLAGS]:
        return Kind.LEFT_OUT, f"flag {unknown[0]} (not an offer gpuplan knows how to price)"
    return (Kind.SPOT if item.spot else Kind.HOURLY), ""


_NO_MODE = ": no billing mode for it, never taken as the hourly price"


def _compact(name: str) -> str:
    return normalize(name).replace("-", "")


@dataclass(frozen=True)
class GpuMatch:
    key: str
    how: str  # for the row's notes


class GpuMatcher:
    """The catalog's GPU of a gpuhunt item (see the module's notes), or None with the reason."""

    def __init__(self, catalog: Catalog, shipped: Iterable[InstanceType] = ()) -> None:
        self.catalog = catalog
        self.names: dict[str, set[str]] = {}
        for spec in catalog.gpus.values():
            for n in (spec.key, spec.name, *spec.aliases):
                self.names.setdefault(_compact(n), set()).add(spec.key)
            head, sep, _ = spec.key.partition("-")
            if sep and any(ch.isdigit() for ch in head):  # a model's family: H100 for H100-SXM5-80GB and -PCIE-
                self.names.setdefault(_compact(head), set()).add(spec.key)
        # The sourced rows' own GPU per (provider, instance type): what the cloud's price list says the type carries.
        self.known: dict[tuple[str, str], str] = {}
        for r in shipped:
            self.known.setdefault((r.provider, r.instance_type.lower()), r.gpu)

    def match(self, provider: str, instance: str, name: str | None, memory: float | None) -> GpuMatch | str:
        if not name or not memory:
            return "no GPU name or memory"
        found = self.names.get(_compact(name), set()) | self.names.get(_compact(f"{name}-{memory:g}gb"), set())
        fits = sorted(k for k in found if abs(self.catalog.gpus[k].vram_gb - memory) <= MEMORY_TOLERANCE
                      * self.catalog.gpus[k].vram_gb)
        if len(fits) == 1:
            return GpuMatch(fits[0], "the catalog's only GPU of that model and memory")
        if not fits:
            return "not in the catalog"
        tokens = re.split(r"[_.\-]", instance.lower())
        for token, part in _FORM_TOKENS.items():
            if any(t.startswith(token) for t in tokens):
                named = [k for k in fits if part in k]
                if len(named) == 1:
                    return GpuMatch(named[0], f"the instance name says {token}")
        known = self.known.get((provider, instance.lower()))
        if known in fits:
            return GpuMatch(known, "as the catalog's sourced rows of this instance type have it")
        for alias in (f"{name}-{memory:g}gb", name):
            try:
                key = self.catalog.gpu(alias).key
            except UnknownNameError:
                continue
            if key in fits:
                return GpuMatch(key, f"by the catalog's alias {alias!r}, its default form factor")
        return f"ambiguous: {', '.join(fits)}"
