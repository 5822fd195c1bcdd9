"""Total cost of ownership: buying cards versus renting, month by month over a horizon.

Pure logic on Decimal money in one display currency, in four sections: the work each
option does (:mod:`planner.tco.work`), owned hardware (:mod:`planner.tco.owned`), renting
(:mod:`planner.tco.rent`) and the comparison (here); rendering lives in
:mod:`gpuplan.render.tco`. The formulas (worked by hand in ``docs/tco.md``, which the
tests reproduce):

Usage counts work, as in ``gpuplan plan``: W reference GPU-hours a month (hours on the
reference GPU, for a workload class and precision). An option whose GPUs each run at
``speed`` times the reference and scale at efficiency ``e`` over its interconnect does
``w = speed x e`` reference GPU-hours per GPU-hour, so W takes it W / w GPU-hours.

Owned hardware, ``n`` cards, utilization ``u`` = W / (w x n x hours per month):

- CAPEX          = n x card price + host price
- CAPEX_net      = CAPEX x (1 - resale fraction)             resale at the end of the life
- average watts  = (TDP x u + TDP x idle fraction x (1 - u)) x n + host watts
- energy/month   = average watts / 1000 x PUE x price per kWh x hours per month
- fixed/month    = maintenance fraction x CAPEX / 12 + colocation per kW x peak kW
- opex/month     = energy/month + fixed/month
- CAPEX/month    = CAPEX_net x ceil(H / life months) / H     over the horizon of H months, as paid
- cost per GPU-hour  = (CAPEX/month + opex/month) / (n x u x hours per month)
- cost per reference GPU-hour of work = cost per GPU-hour / w

Cash view for the horizon, month by month as money leaves and comes back: the whole CAPEX
in month 1 (and again at the start of every new life when the horizon outlasts the
depreciation years), opex every month, and the resale value back when the hardware is sold:
at the end of its life, or in the horizon's last month. The resale fraction was measured on
cards about 2 years old, so it is the value at either point. Break-even on cash is CAPEX /
(rent - opex) months, before any resale; the horizon's totals are CAPEX_net per life begun.

Renting: W becomes instance hours W / (w x GPUs per instance), and each month is quoted by the
provider's billing rule (hourly and spot per second, spot
with the restart overhead, monthly in whole subscriptions, reserved for every hour of
the term; a term that outlasts the horizon is still owed, in the last month).

The break-even month is the first month whose cumulative buy cost is at or below the
rental's; ``None`` when that never happens within the horizon; the break-even utilization
uses the same horizon, so the two agree. Costs per unit are per
reference GPU-hour of work, so options on different GPUs compare like for like.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from pydantic import BaseModel, ConfigDict

from pricing.billing import BillingMode, rule_for
from pricing.catalog import Catalog
from pricing.errors import InputError
from pricing.money import Currency, Fx, money_text
from providers.listprice import RENT_MODES
from planner.tco.host import figure, tco_defaults, tco_profiles
from planner.limits import check
from planner.tco.lines import PER_HOUR_PLACES, ZERO, TcoLine, TcoOption, When, cumulative, line
from planner.tco.owned import CONDITIONS, Owned, buy_option, card_price, make_owned, parse_buy
from pricing.bill import Extras
from planner.plan.model import ESTIMATED_SPOT
from planner.tco.rent import monthly_vs_hourly_hours, pick_offer, rent_option
from planner.tco.scenario import Scenario
from planner.tco.work import WorkRate, WorkUnit, work_rate

__all__ = ["CONDITIONS", "RENT_MODES", "Breakeven", "Owned", "Scenario", "TcoLine", "TcoOption", "TcoResult", "When",
           "breakeven_month", "build_tco", "buy_option", "card_price", "cumulative", "line", "make_owned",
           "monthly_vs_hourly_hours", "parse_buy", "pick_offer", "rent_option"]


def breakeven_month(buy_cum: list[Decimal], rent_cum: list[Decimal]) -> int | None:
    """The first month (1-based) whose cumulative buy cost is at or below the rental's."""
    for i, (b, r) in enumerate(zip(buy_cum, rent_cum, strict=True)):
        if b <= r:
            return i + 1
    return None


class Breakeven(BaseModel):
    model_config = ConfigDict(frozen=True)

    buy: str
    vs: str
    month: int | None
    months_formula: Decimal | None  # CAPEX / (rent - opex): cash, resale not yet back; may lie past the horizon
    utilization: Decimal | None     # u where owned cost per unit of work = the rental's at this usage


class TcoResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    currency: Currency
    months: int
    usage_gpu_hours: Decimal  # reference GPU-hours of work a month
    unit: WorkUnit
    options: list[TcoOption]
    breakeven: list[Breakeven]
    monthly_vs_hourly_hours: dict[str, Decimal | None]
    owned_curves: dict[str, list[tuple[Decimal, Decimal]]]
    assumptions: dict[str, Any]
    verdict: str


def parse_modes(names: list[str] | None) -> tuple[BillingMode, ...] | None:
    if not names:
        return None
    out = []
    for n in (v.strip().lower() for item in names for v in item.split(",") if v.strip()):
        try:
            mode = BillingMode(n)
        except ValueError:
            mode = None
        if mode is None or mode is BillingMode.BUY:
            known = ", ".join(m.value for m in RENT_MODES)
            raise InputError(f"unknown rental billing mode {n!r}", f"use {known}")
        out.append(mode)
    return tuple(dict.fromkeys(out))


def usage_of(sc: Scenario, machine: WorkRate | None, unit: WorkUnit) -> tuple[Decimal, str]:
    """Reference GPU-hours of work a month: --usage, or hours/day x days on the first machine."""
    if sc.usage is not None:
        if sc.hours_per_day is not None or sc.days_per_month is not None:
            raise InputError("give either --usage or --hours-per-day/--days-per-month, not both")
        if not sc.usage.is_finite() or sc.usage <= 0:
            raise InputError(f"--usage must be positive GPU-hours per month, got {sc.usage}")
        return sc.usage, f"{sc.usage:g} {unit.label} per month"
    if sc.hours_per_day is None and sc.days_per_month is None:
        raise InputError("no usage given",
                         "e.g. --usage 300 (GPU-hours per month) or --hours-per-day 8 --days-per-month 22")
    hpd = sc.hours_per_day if sc.hours_per_day is not None else Decimal(24)
    days = sc.days_per_month if sc.days_per_month is not None else Decimal(30)
    if not (hpd.is_finite() and days.is_finite()) or not (0 < hpd <= 24) or not (0 < days <= 31):
        raise InputError("--hours-per-day must be in (0, 24] and --days-per-month in (0, 31]")
    if machine is None:
        raise InputError("--hours-per-day needs a machine to count GPUs on: add --buy or --vs")
    usage = (hpd * days * machine.per_machine_hour).quantize(Decimal("0.01"))
    return usage, (f"{hpd:g} h/day x {days:g} days on {machine.gpu_count:g}x {machine.gpu}, which does "
                   f"{machine.per_machine_hour:.4g} reference GPU-hours an hour = {usage:g} {unit.label} per month")


def work_unit(sc: Scenario, default_ref_gpu: str, catalog: Catalog) -> WorkUnit:
    """The unit the usage is in: the scenario's reference GPU, class and precision, else the defaults."""
    from planner.perf.speed import SpeedPrecision, WorkloadClass
    from planner.units import parse_enum

    return WorkUnit(ref_gpu=catalog.gpu(sc.ref_gpu or default_ref_gpu).key,
                    workload_class=parse_enum(WorkloadClass, sc.workload_class, "--class") or WorkloadClass.TRANSFORMER,
                    precision=parse_enum(SpeedPrecision, sc.precision, "--precision") or SpeedPrecision.MIXED)


def rent_extras(sc: Scenario) -> Extras:
    """The rest of a rental's bill from the scenario: the plan's defaults (a 256 GB disk) where it says nothing."""
    given = {k: v for k, v in {"disk_gb": sc.disk_gb, "egress_gb": sc.egress_gb, "storage_gb": sc.storage_gb,
                               "bandwidth_mbps": sc.bandwidth_mbps}.items() if v is not None}
    return Extras(**given)


def build_tco(sc: Scenario, *, currency: Currency, fx: Fx, hours_per_month: Decimal, spot_overhead: Decimal,
              catalog: Catalog, ref_gpu: str | None = None) -> TcoResult:
    """Every option of the scenario over its horizon, the break-evens and a verdict.

    ``ref_gpu`` is the settings' reference GPU, used when the scenario names none.
    """
    from planner.settings import DEFAULT_REF_GPU

    cat = catalog
    check("months", Decimal(sc.months), f"--months {sc.months}")
    if not sc.buy and not sc.vs:
        raise InputError("nothing to compare", "add --buy '4x RTX-4090' and/or --vs p3.16xlarge")
    if hours_per_month <= 0:
        raise InputError("--hours-per-month must be positive")
    unit = work_unit(sc, ref_gpu or DEFAULT_REF_GPU, cat)
    buys = [(cat.gpu(name), count) for count, name in (parse_buy(b) for b in sc.buy)]
    rentals = [pick_offer(cat, name, sc.region) for name in sc.vs]
    buy_rates = [work_rate(cat, unit, spec.key, count, spec.interconnect.among(count))
                 for spec, count in buys]
    rent_rates = [work_rate(cat, unit, offer.gpu, offer.gpu_count, offer.interconnect) for offer, _ in rentals]
    usage, usage_label = usage_of(sc, (buy_rates + rent_rates)[0] if buy_rates or rent_rates else None, unit)
    modes = parse_modes(sc.billing)
    months = sc.months
    extras = rent_extras(sc)

    owned = [make_owned(spec, count, sc, currency=currency, fx=fx, hours_per_month=hours_per_month, catalog=cat,
                        work_per_gpu_hour=rate.per_gpu_hour)
             for (spec, count), rate in zip(buys, buy_rates, strict=True)]
    for o in owned:
        u = o.utilization(usage)
        if u > 1:
            most = o.work_per_gpu_hour * o.n * hours_per_month
            raise InputError(f"{usage:g} reference GPU-hours of work a month is more than {o.name} can deliver "
                             f"({most:.6g})", "buy more cards or lower --usage")
    options = [buy_option(o, usage, months, [rate.note(unit, usage)]) for o, rate in zip(owned, buy_rates, strict=True)]
    skipped: list[str] = []
    mvh: dict[str, Decimal | None] = {}
    for (offer, notes), rate in zip(rentals, rent_rates, strict=True):
        mvh[offer.name] = monthly_vs_hourly_hours(offer)
        for mode in modes or RENT_MODES:
            if mode not in offer.rates or rule_for(offer.provider, mode) is None:
                if modes:
                    skipped.append(f"{offer.name} has no {mode} price")
                continue
            if mode in offer.estimated and not sc.spot_estimates:
                skipped.append(f"{offer.name} {mode}: {ESTIMATED_SPOT}")
                continue
            options.append(rent_option(offer, mode, usage, months, currency=currency, fx=fx,
                                       hours_per_month=hours_per_month, spot_overhead=spot_overhead, catalog=cat,
                                       notes=[*notes, rate.note(unit, usage)], work_per_hour=rate.per_machine_hour,
                                       extras=extras, disk_kept=not sc.disk_with_machine))

    breakevens = []
    for o, b in zip(owned, options[: len(owned)], strict=True):
        u = o.utilization(usage)
        for r in options[len(owned):]:
            steady = r.monthly_cost[0]
            gap = steady - o.opex_per_month(u)
            breakevens.append(Breakeven(
                buy=b.name, vs=r.name, month=breakeven_month(b.cumulative_cost, r.cumulative_cost),
                months_formula=o.capex / gap if gap > 0 else None,
                utilization=o.breakeven_utilization(steady / usage, months),
            ))
    # Over the horizon, like the totals: at this usage's utilization the curve reads the option's cost per unit.
    curves = {f"buy {o.name}": [(u, o.cost_per_work_hour(u, months) or ZERO)
                                for u in sorted({Decimal(k) / 20 for k in range(1, 21)} | {o.utilization(usage)})]
              for o in owned}
    result_assumptions = assumptions(sc, owned, usage_label, currency, fx, hours_per_month, spot_overhead, cat, unit)
    if skipped:
        result_assumptions["skipped"] = skipped
    return TcoResult(currency=currency, months=months, usage_gpu_hours=usage, unit=unit, options=options,
                     breakeven=breakevens, monthly_vs_hourly_hours=mvh, owned_curves=curves,
                     assumptions=result_assumptions,
                     verdict=verdict(options, breakevens, usage, months, currency, unit))


def verdict(options: list[TcoOption], breakevens: list[Breakeven], usage: Decimal, months: int,
            currency: Currency, unit: WorkUnit) -> str:
    """One sentence (two at most) a person can act on."""
    best = min(options, key=lambda o: o.total_cost)
    head = (f"Over {months} months at {usage:g} {unit.ref_gpu} GPU-hours of work a month, the cheapest option is "
            f"{best.name} at {money_text(best.total_cost, currency)} "
            f"({money_text(best.cost_per_ref_gpu_hour or ZERO, currency, places=PER_HOUR_PLACES)} per {unit.ref_gpu} "
            f"GPU-hour of work{', estimated price' if best.estimate else ''}).")
    buys = [o for o in options if o.kind is BillingMode.BUY]
    rents = [o for o in options if o.kind is not BillingMode.BUY]
    if not buys or not rents:
        return head
    buy = min(buys, key=lambda o: o.total_cost)
    mine = [b for b in breakevens if b.buy == buy.name]
    paid = sorted((b for b in mine if b.month is not None), key=lambda b: b.month or 0)
    never = [b.vs for b in mine if b.month is None]
    if best.kind is BillingMode.BUY:
        tail = f"Buying pays for itself against every rental, soonest in month {paid[0].month} vs {paid[0].vs}."
        if never:
            tail = f"Buying beats {len(paid)} of {len(mine)} rentals; it never catches up with {', '.join(never)}."
    elif paid:
        tail = (f"{_cap(buy.name)} overtakes {', '.join(f'{b.vs} in month {b.month}' for b in paid[:3])}, "
                f"but never catches up with {best.name} within {months} months.")
    else:
        tail = f"{_cap(buy.name)} never catches up with any rental within {months} months."
    if best.kind is BillingMode.SPOT:
        steady = [o for o in options if o.kind is not BillingMode.SPOT]
        if steady:
            alt = min(steady, key=lambda o: o.total_cost)
            tail += (f" Spot can be interrupted; without it the cheapest is {alt.name} at "
                     f"{money_text(alt.total_cost, currency)}.")
    return f"{head} {tail}"


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def assumptions(sc: Scenario, owned: list[Owned], usage_label: str, currency: Currency, fx: Fx,
                hours_per_month: Decimal, spot_overhead: Decimal, catalog: Catalog, unit: WorkUnit) -> dict[str, Any]:
    """Every input the numbers rest on, with its source or 'given'."""
    given = {"pue": sc.pue, "maintenance_fraction": sc.maintenance, "resale_fraction": sc.resale,
             "depreciation_years": sc.depreciation_years, "gpu_idle_fraction": sc.idle_fraction,
             "colocation_usd_per_kw_month": sc.colo_price, "cpu_cores_per_gpu": sc.cores_per_gpu,
             "dataset_gb": sc.dataset_gb}
    # One profile's figures stand in for the defaults they name; with builds of several profiles, the first's
    # (each build's own values are under "buy <name>").
    prof = tco_profiles().get(owned[0].profile or "") if owned else None
    defaults = []
    for key in tco_defaults():
        d = figure(key, prof)
        entry: dict[str, Any] = {"key": key, "value": str(d.value), "unit": d.unit, "source": d.source,
                                 "as_of": d.as_of.isoformat(), "assumption": d.assumption}
        if prof is not None and key in prof.figures:
            entry["profile"] = prof.name
        if given.get(key) is not None:
            entry.update(value=str(given[key]), source="given by the user", assumption=False)
        defaults.append(entry)
    out: dict[str, Any] = {
        "usage": usage_label,
        "hours_per_month": str(hours_per_month),
        "spot_overhead": str(spot_overhead),
        "catalog_as_of": catalog.as_of.isoformat(),
        "prices_as_of": catalog.as_of_statement(),
        "fx": [r.label() for r in fx.used()],
        "ref_gpu": unit.ref_gpu,
        "workload_class": unit.workload_class.value,
        "precision": unit.precision.value,
        "usage_counts_work": (f"usage is {unit.label}; each option's hours are usage / (relative speed x "
                              "multi-GPU scaling efficiency), per GPU, and costs per unit are per reference "
                              "GPU-hour of work"),
        "resale_counted": "as cash back when the hardware is sold: at the end of its life or in the horizon's "
                          "last month, at the resale fraction",
        "power": "the box is on all month: GPUs and the host CPU at TDP while busy and at their idle fractions "
                 "otherwise",
        "defaults": defaults,
        "profiles": {o.name: o.profile for o in owned},
    }
    for o in owned:
        # Decimals, not text: the JSON writer puts them at the contract's precision (a price
        # converted between currencies has 28 digits).
        out[f"buy {o.name}"] = {
            "card_price": o.card_price.amount, "card_source": o.card_source, "card_as_of": o.card_as_of,
            "host": "sized" if o.host.sized else "given", "host_ram_gb": o.host.ram_gb,
            "host_cpu_cores": o.host.cpu_cores,
            "host_nvme_tb": o.host.nvme_tb, "host_watts": o.host.watts, "host_price": o.host_price.amount,
            "tdp_w": o.tdp_w, "pue": o.pue, "kwh_price": o.kwh_price.amount, "kwh_source": o.kwh_label,
            "depreciation_years": o.depreciation_years, "resale_fraction": o.resale_fraction,
            "maintenance_fraction": o.maintenance_fraction, "profile": o.profile,
            "cpu_idle_fraction": o.cpu_idle_fraction,
            "colo_per_kw_month": None if o.colo_per_kw_month is None else o.colo_per_kw_month.amount,
            "capex": o.capex, "capex_net": o.capex_net,
            "work_per_gpu_hour": o.work_per_gpu_hour,
        }
    return out
