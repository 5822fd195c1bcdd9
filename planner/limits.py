"""The sane range of every quantity a user can type, in one table.

A value outside its range is a typo or a unit mix-up (GPU-seconds for GPU-hours, a
budget in cents), never a plan: gpuplan refuses it with exit 2 instead of computing
30-digit costs or overflowing Decimal's 28-digit context. The ranges are wide enough
for any real job and are documented in ``docs/limits.md`` (a test keeps the two equal).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, NamedTuple

from pydantic import BaseModel

from pricing.errors import InputError
from pricing.money import to_decimal


class Bound(NamedTuple):
    """``low < value <= high`` (``low <= value`` where ``low_inclusive``), in ``unit``. A plain tuple: the table
    of bounds is built on every start."""

    low: Decimal
    high: Decimal
    unit: str
    low_inclusive: bool = False
    flag: str | None = None  # the flag's name where it is not --<key with dashes>

    def contains(self, d: Decimal) -> bool:
        above = d >= self.low if self.low_inclusive else d > self.low
        return above and d <= self.high

    def text(self) -> str:
        """'more than 0 and at most 1000000000 GPU-hours'."""
        if self.low == 0:
            low = "zero or more" if self.low_inclusive else "positive"
        else:
            low = f"at least {grouped(self.low)}" if self.low_inclusive else f"more than {grouped(self.low)}"
        return f"{low} and at most {grouped(self.high)} {self.unit}".rstrip()


def _b(low: str | int, high: str | int, unit: str, *, inclusive: bool = False, flag: str | None = None) -> Bound:
    return Bound(low=Decimal(low), high=Decimal(high), unit=unit, low_inclusive=inclusive, flag=flag)


# Keys are the field names of settings, constraints, workloads and TCO scenarios, so one
# table checks flags, environment variables, config files, workload and scenario files.
BOUNDS: dict[str, Bound] = {
    # plan
    "gpu_hours": _b(0, "1e9", "GPU-hours"),
    "deadline": _b(0, 87600, "hours (10 years)"),
    "budget": _b(0, "1e12", "in its currency"),
    "min_vram": _b(0, 10000, "GB"),
    "max_gpus": _b(0, "1e6", "GPUs"),
    "limit": _b(0, "1e6", "rows", inclusive=True),
    # settings
    "hours_per_month": _b(1, 744, "hours (31 days)", inclusive=True),
    "spot_overhead": _b(0, 10, "fraction of run time", inclusive=True),
    "checkpoint_every": _b(0, 8760, "hours (a year)"),
    "fx_rate": _b("0.000001", "1e6", "units of the quote currency", inclusive=True, flag="--fx"),
    # workloads (flags, or the fields of a --workload file)
    "params": _b(0, "1e14", "parameters"),
    "tokens": _b(0, "1e15", "tokens"),
    "images": _b(0, "1e13", "images"),
    "epochs": _b(0, 10000, "epochs"),
    "seq_len": _b(1, "1e7", "tokens", inclusive=True),
    "context": _b(1, "1e8", "tokens", inclusive=True),
    "micro_batch": _b(1, "1e6", "sequences", inclusive=True, flag="--batch"),
    "batch": _b(1, "1e6", "sequences or images", inclusive=True),
    "layers": _b(1, 10000, "layers", inclusive=True),
    "hidden": _b(1, "1e6", "", inclusive=True),
    "heads": _b(1, "1e5", "heads", inclusive=True),
    "kv_heads": _b(1, "1e5", "heads", inclusive=True),
    "vocab": _b(1, "1e8", "tokens", inclusive=True),
    "ffn_hidden": _b(1, "1e7", "", inclusive=True, flag="ffn_hidden"),  # a workload-file key, no flag
    "active_params": _b(0, "1e14", "parameters"),
    "experts": _b(2, 100000, "experts", inclusive=True),
    "experts_per_token": _b(1, 100000, "experts", inclusive=True),
    "lora_rank": _b(1, 100000, "", inclusive=True),
    "overhead": _b(0, 10, "fraction of run time", inclusive=True),
    "overhead_gb": _b(0, 10000, "GB", inclusive=True),
    "gpus": _b(1, "1e6", "GPUs", inclusive=True),
    # serving (estimate, plan and tco --serve, and service files)
    "rate": _b(0, "1e7", "requests per second"),
    "prompt_tokens": _b(1, "1e7", "tokens", inclusive=True),
    "output_tokens": _b(1, "1e7", "tokens", inclusive=True),
    "ttft": _b(0, 3600, "seconds"),
    "tpot": _b(0, 3600, "seconds"),
    "peak_ratio": _b(1, 1000, "x the average rate", inclusive=True),
    "max_batch": _b(1, 65536, "sequences", inclusive=True),
    "max_load": _b(0, 1, "of the fleet's capacity"),
    # tco
    "usage": _b(0, "1e9", "GPU-hours per month"),
    "hours_per_day": _b(0, 24, "hours"),
    "days_per_month": _b(0, 31, "days"),
    "months": _b(1, 120, "months (10 years)", inclusive=True),
    "card_price": _b(0, "1e9", "per card", inclusive=True),
    "host_price": _b(0, "1e10", "", inclusive=True),
    "host_watts": _b(0, "1e7", "W", inclusive=True),
    "dataset_gb": _b(0, "1e8", "GB", inclusive=True),
    "cores_per_gpu": _b(0, 1024, "cores"),
    "pue": _b(1, 5, "", inclusive=True),
    "kwh_price": _b(0, 100, "per kWh", inclusive=True),
    "idle_fraction": _b(0, 1, "of TDP", inclusive=True),
    "depreciation_years": _b(0, 50, "years"),
    "resale": _b(0, 1, "of the price", inclusive=True),
    "maintenance": _b(0, 1, "of the price per year", inclusive=True),
    "colo_price": _b(0, "1e6", "per kW per month", inclusive=True),
}


def plain(d: Decimal) -> str:
    """A Decimal without exponent or trailing zeros: 1E+9 -> 1000000000, 0.10 -> 0.1."""
    text = f"{d:f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def grouped(d: Decimal) -> str:
    """``plain`` with thousands separators, for messages and docs: 1,000,000,000."""
    whole, _, frac = plain(d).partition(".")
    return f"{int(whole):,}" + (f".{frac}" if frac else "")


def flag_of(key: str) -> str:
    b = BOUNDS[key]
    return b.flag or "--" + key.replace("_", "-")


def check(key: str, d: Decimal, what: str | None = None) -> None:
    """Raise unless ``d`` is inside ``BOUNDS[key]``; ``what`` names the value (default: flag and value)."""
    b = BOUNDS[key]
    if not b.contains(d):
        shown = plain(d) if len(plain(d)) <= 12 else f"{float(d):.3g}"
        raise InputError(f"{what or flag_of(key) + ' ' + shown} is out of range: it must be {b.text()}",
                         "docs/limits.md lists every range and why")


def bounded(value: object, key: str, what: str | None = None) -> Decimal:
    """``value`` as a finite Decimal inside ``BOUNDS[key]``, written without an exponent.

    The exponent goes so that ``2e2`` reads back as ``200`` everywhere it is echoed.
    """
    d = to_decimal(value, flag_of(key))
    if what is None and isinstance(value, str):
        what = f"{flag_of(key)} {value.strip()}"  # as typed: 1e26, not 27 digits
    check(key, d, what)
    return Decimal(f"{d:f}")


def check_fields(model: BaseModel, prefix: str = "") -> None:
    """Check every numeric field of ``model`` (and nested models) that has a bound."""
    for name in type(model).model_fields:
        value: Any = getattr(model, name)
        if isinstance(value, BaseModel):
            check_fields(value, prefix)
        elif name in BOUNDS and isinstance(value, int | float | Decimal) and not isinstance(value, bool):
            check(name, to_decimal(value, flag_of(name)))
