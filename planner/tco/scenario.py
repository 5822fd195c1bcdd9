"""The inputs of ``gpuplan tco``, from flags or a TOML scenario file (same names)."""

from __future__ import annotations

from decimal import Decimal

from pydantic import BaseModel, ConfigDict


class Scenario(BaseModel):
    """Everything ``gpuplan tco`` takes, from flags or a TOML scenario file (same names)."""

    model_config = ConfigDict(extra="forbid")

    usage: Decimal | None = None  # GPU-hours of work a month on the reference GPU
    ref_gpu: str | None = None  # default: the settings' ref_gpu
    workload_class: str | None = None  # "class" in a scenario file, --class on the command line
    precision: str | None = None
    hours_per_day: Decimal | None = None
    days_per_month: Decimal | None = None
    months: int = 36
    buy: list[str] = []
    vs: list[str] = []
    region: str | None = None
    billing: list[str] | None = None
    condition: str | None = None
    card_price: Decimal | None = None
    host_price: Decimal | None = None
    host_watts: Decimal | None = None
    dataset_gb: Decimal | None = None
    cores_per_gpu: Decimal | None = None
    pue: Decimal | None = None
    kwh_price: Decimal | None = None
    idle_fraction: Decimal | None = None
    depreciation_years: Decimal | None = None
    resale: Decimal | None = None
    maintenance: Decimal | None = None
    profile: str | None = None  # workstation or colocated (planner/data/tco_profiles.toml); None: by card count
    colo: bool = False
    spot_estimates: bool = False  # compare spot prices gpuplan estimated where no source lists one
    colo_price: Decimal | None = None
    currency: str | None = None
    fx: list[str] | None = None
    hours_per_month: Decimal | None = None
    spot_overhead: Decimal | None = None
    # the rest of a rental's bill, per instance and month (see pricing.bill): None takes the plan's defaults
    disk_gb: Decimal | None = None
    # False: a rental's disk is kept for the project and bills all month; True: it lives only with the
    # machine and bills while it runs
    disk_with_machine: bool = False
    egress_gb: Decimal | None = None  # a month
    storage_gb: Decimal | None = None  # kept all month
    bandwidth_mbps: Decimal | None = None
