"""Total cost of ownership: buying cards versus renting, month by month over a horizon.

Pure logic on Decimal money in one display currency; rendering lives in
:mod:`planner.tco_report` and the command in :mod:`planner.cli_tco`. The formulas
(worked by hand in ``docs/tco.md``, which the tests reproduce):

Owned hardware, ``n`` cards, utilization ``u`` = usage GPU-hours / (n x hours per month):

- CAPEX          = n x card price + host price
- CAPEX_net      = CAPEX x (1 - resale fraction)             resale at the end of the life
- average watts  = (TDP x u + TDP x idle fraction x (1 - u)) x n + host watts
- energy/month   = average watts / 1000 x PUE x price per kWh x hours per month
- fixed/month    = maintenance fraction x CAPEX / 12 + colocation per kW x peak kW
- opex/month     = energy/month + fixed/month
- cost per delivered GPU-hour = (CAPEX_net / (years x 12) + opex/month) / (n x u x hours per month)

Cash view for the horizon: CAPEX_net is paid in month 1 (and again at the start of every
new life when the horizon outlasts the depreciation years), opex every month. Counting
the resale up front is the conventional break-even formula, CAPEX_net / (rent - opex);
sold before the end of its life the hardware would fetch more, so buying is shown
conservatively for horizons shorter than the life.

Renting: the usage's GPU-hours become instance hours by the instance's GPU count, and
each month is quoted by the provider's billing rule (hourly and spot per second, spot
with the restart overhead, monthly in whole subscriptions, reserved for every hour of
the term; a term that outlasts the horizon is still owed, in the last month).

The break-even month is the first month whose cumulative buy cost is at or below the
rental's; ``None`` when that never happens within the horizon. GPU-hours count the same
on every GPU model here: speed differences are ``gpuplan plan``'s business.
"""

from __future__ import annotations

import math
import re
from datetime import date
from decimal import Decimal
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict

from pricing.billing import HOURS_PER_MONTH, BillingMode, rule_for
from pricing.catalog import Catalog, GpuSpec, default_catalog
from pricing.errors import InputError, PriceMissingError
from pricing.money import Currency, Fx, Money, round_cents
from providers import get_provider
from providers.base import LineItem, Offer
from providers.local import newest_prices
from planner.host import Host, default, given_host, size_host, tco_defaults
from planner.plan import region_matches

ZERO = Decimal(0)
RENT_MODES = (BillingMode.HOURLY, BillingMode.MONTHLY, BillingMode.SPOT, BillingMode.RESERVED_1Y,
              BillingMode.RESERVED_3Y)
CONDITIONS = ("new", "market", "used")  # preference order when --condition is not given


class OptionKind(StrEnum):
    BUY = "buy"
    HOURLY = "hourly"
    MONTHLY = "monthly"
    SPOT = "spot"
    RESERVED_1Y = "reserved_1y"
    RESERVED_3Y = "reserved_3y"


class When(StrEnum):
    ONCE = "once"
    PER_MONTH = "per month"
    PER_LIFE = "per life"
    END = "at the horizon"


class TcoLine(LineItem):
    """A quote's line item (quantity x unit price = cost) that also says when it is paid."""

    when: When


def line(description: str, quantity: Decimal, unit: str, unit_price: Money, when: When) -> TcoLine:
    return TcoLine.priced(description, quantity, unit, unit_price, when=when)


# ---------------------------------------------------------------- owned hardware


class Owned(BaseModel):
    """N cards of one kind in a host, with every input of the owned-cost formulas.

    Money is in the display currency; the catalog price it came from is in ``card_native``.
    """

    model_config = ConfigDict(frozen=True)

    name: str
    gpu: str
    gpu_count: int
    vram_gb: float
    card_price: Money
    card_native: Money
    card_source: str
    card_as_of: date
    host: Host
    host_price: Money
    tdp_w: Decimal
    idle_fraction: Decimal
    pue: Decimal
    kwh_price: Money
    kwh_label: str
    depreciation_years: Decimal
    resale_fraction: Decimal
    maintenance_fraction: Decimal
    colo_per_kw_month: Money | None = None
    hours_per_month: Decimal

    @property
    def currency(self) -> Currency:
        return self.card_price.currency

    @property
    def n(self) -> Decimal:
        return Decimal(self.gpu_count)

    @property
    def capex(self) -> Decimal:
        return self.card_price.amount * self.n + self.host_price.amount

    @property
    def resale_value(self) -> Decimal:
        return self.capex * self.resale_fraction

    @property
    def capex_net(self) -> Decimal:
        return self.capex - self.resale_value

    @property
    def life_months(self) -> int:
        return max(1, math.ceil(self.depreciation_years * 12))

    def utilization(self, usage_gpu_hours: Decimal) -> Decimal:
        return usage_gpu_hours / (self.n * self.hours_per_month)

    def average_watts(self, u: Decimal) -> Decimal:
        per_gpu = self.tdp_w * u + self.tdp_w * self.idle_fraction * (1 - u)
        return per_gpu * self.n + self.host.watts

    @property
    def peak_kw(self) -> Decimal:
        return (self.tdp_w * self.n + self.host.watts) / 1000

    def energy_kwh_per_month(self, u: Decimal) -> Decimal:
        """Metered energy including the facility overhead (PUE)."""
        return self.average_watts(u) / 1000 * self.pue * self.hours_per_month

    def energy_per_month(self, u: Decimal) -> Decimal:
        return self.energy_kwh_per_month(u) * self.kwh_price.amount

    @property
    def maintenance_per_month(self) -> Decimal:
        return self.maintenance_fraction * self.capex / 12

    @property
    def colo_per_month(self) -> Decimal:
        return ZERO if self.colo_per_kw_month is None else self.colo_per_kw_month.amount * self.peak_kw

    def opex_per_month(self, u: Decimal) -> Decimal:
        return self.energy_per_month(u) + self.maintenance_per_month + self.colo_per_month

    @property
    def depreciation_per_month(self) -> Decimal:
        return self.capex_net / (self.depreciation_years * 12)

    def cost_per_gpu_hour(self, u: Decimal) -> Decimal | None:
        """Owned cost per delivered GPU-hour at utilization ``u`` (None at zero use)."""
        if u <= 0:
            return None
        return (self.depreciation_per_month + self.opex_per_month(u)) / (self.n * u * self.hours_per_month)

    def monthly_costs(self, u: Decimal, months: int) -> list[Decimal]:
        """Cash per month: CAPEX_net at the start of each life, opex every month."""
        opex = self.opex_per_month(u)
        return [opex + (self.capex_net if i % self.life_months == 0 else ZERO) for i in range(months)]

    def breakeven_utilization(self, rate_per_gpu_hour: Decimal) -> Decimal | None:
        """The u at which the owned cost per GPU-hour equals ``rate_per_gpu_hour``.

        Solves (dep + fixed + e0 + e1 u) = r n u H for u, where e0 is the energy at
        u = 0 and e1 its slope; None when renting stays cheaper even at u = 1.
        """
        e0 = self.energy_per_month(ZERO)
        e1 = self.energy_per_month(Decimal(1)) - e0
        fixed = self.depreciation_per_month + self.maintenance_per_month + self.colo_per_month
        denominator = rate_per_gpu_hour * self.n * self.hours_per_month - e1
        if denominator <= 0:
            return None
        u = (fixed + e0) / denominator
        return u if u <= 1 else None

    def lines(self, u: Decimal) -> list[TcoLine]:
        c = self.currency
        out = [line(f"{self.gpu} card", self.n, "cards", self.card_price, When.ONCE)]
        out += self._host_lines()
        out.append(line(f"resale at the end of {self.depreciation_years:g} years ({self.resale_fraction:.0%})",
                        Decimal(-1), "credit", Money(amount=self.resale_value, currency=c), When.PER_LIFE))
        out.append(line(f"energy ({self.average_watts(u):.0f} W average x PUE {self.pue:g}, {self.kwh_label})",
                        self.energy_kwh_per_month(u), "kWh", self.kwh_price, When.PER_MONTH))
        if self.maintenance_fraction:
            out.append(line(f"maintenance ({self.maintenance_fraction:.0%} of CAPEX per year)",
                            Decimal(1), "month", Money(amount=self.maintenance_per_month, currency=c),
                            When.PER_MONTH))
        if self.colo_per_kw_month is not None:
            out.append(line("colocation (peak IT load)", self.peak_kw, "kW-months", self.colo_per_kw_month,
                            When.PER_MONTH))
        return out

    def host_parts_native(self) -> Decimal:
        return sum((p.cost.amount for p in self.host.parts), ZERO)

    def _host_lines(self) -> list[TcoLine]:
        # Parts are priced in their own currency (USD defaults); show them converted at the
        # same rate the host total was, so the lines add up to the CAPEX.
        native = self.host_parts_native()
        factor = self.host_price.amount / native if native else Decimal(1)
        return [line(p.description, p.quantity, p.unit,
                     Money(amount=p.unit_price.amount * factor, currency=self.currency), When.ONCE)
                for p in self.host.parts]


_BUY = re.compile(r"\s*(?:(\d+)\s*[x×*]\s*)?([A-Za-z].*?)\s*")


def parse_buy(text: str) -> tuple[int, str]:
    """``"4x RTX-4090"`` -> (4, "RTX-4090"); a bare name means one card."""
    m = _BUY.fullmatch(text)
    if not m:
        raise InputError(f"cannot read --buy {text!r}", "write it like '4x RTX-4090' (count x GPU name)")
    count = int(m.group(1) or 1)
    if count < 1 or count > 64:
        raise InputError(f"--buy {text!r}: the card count must be 1 to 64")
    return count, m.group(2)


def card_price(catalog: Catalog, gpu: str, condition: str | None) -> tuple[Money, str, date, str]:
    """The newest catalog price of ``gpu`` (preferring new cards), with its source."""
    prices = newest_prices(catalog)
    wanted = (condition,) if condition else CONDITIONS
    for cond in wanted:
        card = prices.get((gpu, cond))
        if card is not None:
            return card.money(), card.source, card.as_of, cond
    have = sorted(c for g, c in prices if g == gpu)
    hint = (f"conditions with a price: {', '.join(have)}" if have else "give one with --card-price, e.g. --card-price 1600")
    raise PriceMissingError(f"no {condition + ' ' if condition else ''}card price for {gpu} in the catalog", hint)


# ---------------------------------------------------------------- renting


class TcoOption(BaseModel):
    """One way to get the usage done over the horizon."""

    model_config = ConfigDict(frozen=True)

    name: str
    kind: OptionKind
    provider: str
    region: str | None = None
    gpu: str
    gpu_count: float
    native_currency: Currency
    monthly_cost: list[Decimal]
    cumulative_cost: list[Decimal]
    total_cost: Decimal
    cost_per_gpu_hour: Decimal | None
    estimate: bool = False
    lines: list[TcoLine]
    notes: list[str] = []


def cumulative(monthly: list[Decimal]) -> list[Decimal]:
    out, total = [], ZERO
    for m in monthly:
        total += m
        out.append(total)
    return out


def _option(name: str, kind: OptionKind, monthly: list[Decimal], usage: Decimal, **kw: Any) -> TcoOption:
    cum = cumulative(monthly)
    months = len(monthly)
    per_gpu_h = cum[-1] / (usage * months) if usage > 0 and months else None
    return TcoOption(name=name, kind=kind, monthly_cost=monthly, cumulative_cost=cum, total_cost=cum[-1],
                     cost_per_gpu_hour=per_gpu_h, **kw)


def pick_offer(catalog: Catalog, name: str, region: str | None) -> tuple[Offer, list[str]]:
    """The offer for instance ``name``: in ``region`` if given, else the first priced region."""
    first = catalog.instance(name)[0]  # unknown names raise with suggestions
    offers = [o for o in get_provider(first.provider).list_offers(catalog) if o.name == first.instance_type]
    if region:
        chosen = [o for o in offers if region_matches(o, (region,))]
        if not chosen:
            regions = ", ".join(sorted({o.region for o in offers}))
            raise InputError(f"{first.instance_type} has no row for region {region!r}", f"its regions: {regions}")
    else:
        chosen = [o for o in offers if any(m in o.rates for m in RENT_MODES)] or offers
    offer = chosen[0]
    notes = []
    if len(offers) > 1:
        why = "as asked" if region else "the first region with a price; --region picks another"
        notes.append(f"region {offer.region} ({why})")
    return offer, notes


def monthly_vs_hourly_hours(offer: Offer) -> Decimal | None:
    """Hours per month above which the monthly subscription beats pay-as-you-go."""
    hourly, monthly = offer.rates.get(BillingMode.HOURLY), offer.rates.get(BillingMode.MONTHLY)
    return monthly / hourly if hourly and monthly is not None else None


def term_months(mode: BillingMode, term_hours: Decimal) -> int:
    return max(1, round(term_hours / HOURS_PER_MONTH))


def rent_option(
    offer: Offer,
    mode: BillingMode,
    usage: Decimal,
    months: int,
    *,
    currency: Currency,
    fx: Fx,
    hours_per_month: Decimal,
    spot_overhead: Decimal,
    notes: list[str] | None = None,
) -> TcoOption:
    """``offer`` under ``mode`` for ``usage`` GPU-hours every month, ``months`` months."""
    if mode not in offer.rates:
        raise PriceMissingError(f"{offer.label} has no {mode} price in the catalog")
    instance_hours = usage / Decimal(repr(offer.gpu_count))
    extra = list(notes or [])
    conv = fx.rate(offer.currency, currency)

    def money(amount: Decimal) -> Money:
        return Money(amount=amount * conv, currency=currency)

    lines: list[TcoLine] = []
    if mode in (BillingMode.RESERVED_1Y, BillingMode.RESERVED_3Y):
        rule = rule_for(offer.provider.value, mode)
        if rule is None or rule.term_hours is None:
            raise PriceMissingError(f"{offer.provider} has no {mode} billing rule")
        term = term_months(mode, rule.term_hours)
        instances = max(1, math.ceil(instance_hours / hours_per_month))
        hours = rule.term_hours / term * instances
        per_month = offer.rates[mode] * hours
        monthly = [per_month * conv] * months
        owed = (-months) % term
        if owed:
            monthly[-1] += per_month * owed * conv
            extra.append(f"the {term}-month term runs past the horizon: {owed} more month(s) are owed, "
                         "counted in the last month")
        lines.append(line(f"{offer.name} {mode} (every hour of the term)", hours, "hours",
                          money(offer.rates[mode]), When.PER_MONTH))
        if rule.note:
            extra.append(rule.note)
    else:
        wall = instance_hours * (1 + spot_overhead) if mode is BillingMode.SPOT else instance_hours
        q = get_provider(offer.provider).quote(offer, mode, wall, hours_per_month=hours_per_month)
        monthly = [q.cost.amount * conv] * months
        lines += [line(i.description, i.quantity, i.unit, money(i.unit_price.amount), When.PER_MONTH)
                  for i in q.line_items]
        extra += list(q.notes)
        if mode is BillingMode.SPOT:
            extra.append(f"{spot_overhead:.0%} extra run time for restarts after interruptions")
    estimate = mode in offer.estimated
    if estimate and not any("ESTIMATE" in n for n in extra):
        extra.append(f"ESTIMATED {mode} price")
    if offer.currency != currency:
        extra.append(f"priced in {offer.currency}, converted at 1 {offer.currency} = {conv:.6g} {currency}")
    return _option(f"{offer.name} {mode}", OptionKind(mode.value), monthly, usage, provider=offer.provider.value,
                   region=offer.region, gpu=offer.gpu, gpu_count=offer.gpu_count, native_currency=offer.currency,
                   estimate=estimate, lines=lines, notes=extra)


def buy_option(owned: Owned, usage: Decimal, months: int) -> TcoOption:
    u = owned.utilization(usage)
    notes = [f"utilization {u:.1%} of {owned.gpu_count} GPUs x {owned.hours_per_month:g} h",
             f"card price {owned.card_native} ({owned.card_source}, {owned.card_as_of})"]
    if months > owned.life_months:
        notes.append(f"the horizon outlasts the {owned.depreciation_years:g}-year life: the hardware is bought "
                     f"again every {owned.life_months} months")
    if not owned.host.sized:
        notes.append("host price and watts as given")
    return _option(f"buy {owned.name}", OptionKind.BUY, owned.monthly_costs(u, months), usage, provider="local",
                   region=None, gpu=owned.gpu, gpu_count=owned.gpu_count, native_currency=owned.card_native.currency,
                   lines=owned.lines(u), notes=notes)


# ---------------------------------------------------------------- comparison


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
    months_formula: Decimal | None  # CAPEX_net / (rent - opex), may lie past the horizon
    utilization: Decimal | None     # u where owned cost per GPU-hour = the rental's at this usage


class TcoResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    currency: Currency
    months: int
    usage_gpu_hours: Decimal
    options: list[TcoOption]
    breakeven: list[Breakeven]
    monthly_vs_hourly_hours: dict[str, Decimal | None]
    owned_curves: dict[str, list[tuple[Decimal, Decimal]]]
    assumptions: dict[str, Any]
    verdict: str


class Scenario(BaseModel):
    """Everything ``gpuplan tco`` takes, from flags or a TOML scenario file (same names)."""

    model_config = ConfigDict(extra="forbid")

    usage: Decimal | None = None
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
    colo: bool = False
    colo_price: Decimal | None = None
    currency: str | None = None
    fx: list[str] | None = None
    hours_per_month: Decimal | None = None
    spot_overhead: Decimal | None = None


def _check_fraction(value: Decimal, flag: str, *, upper: Decimal | None = Decimal(1)) -> Decimal:
    if value < 0 or (upper is not None and value > upper):
        top = f" and at most {upper}" if upper is not None else ""
        raise InputError(f"{flag} must be zero or more{top}, got {value}")
    return value


def _pick(given: Decimal | None, key: str) -> Decimal:
    return default(key) if given is None else given


def make_owned(
    spec: GpuSpec,
    count: int,
    sc: Scenario,
    *,
    currency: Currency,
    fx: Fx,
    hours_per_month: Decimal,
    catalog: Catalog,
) -> Owned:
    if spec.tdp_w is None:
        raise PriceMissingError(f"{spec.key} has no TDP in the catalog", "its power draw cannot be estimated")
    if sc.card_price is not None:
        native = Money(amount=_check_fraction(sc.card_price, "--card-price", upper=None), currency=currency)
        source, as_of = "given with --card-price", date.today()
    else:
        native, source, as_of, _ = card_price(catalog, spec.key, sc.condition)
    if sc.host_price is not None or sc.host_watts is not None:
        host = given_host(Money(amount=sc.host_price or ZERO, currency=currency), sc.host_watts or ZERO)
    else:
        host = size_host(count, spec.vram_gb, dataset_gb=sc.dataset_gb, cores_per_gpu=sc.cores_per_gpu)
    host_total = sum((fx.convert(p.cost, currency).amount for p in host.parts), ZERO)
    if sc.kwh_price is not None:
        kwh = Money(amount=_check_fraction(sc.kwh_price, "--kwh-price", upper=None), currency=currency)
        kwh_label = f"{sc.kwh_price} {currency}/kWh given"
    else:
        power = catalog.default_electricity(currency) or catalog.default_electricity(Currency.USD)
        if power is None:
            raise PriceMissingError("no default electricity price in the catalog", "give one with --kwh-price")
        kwh = fx.convert(Money(amount=power.price_per_kwh, currency=power.currency), currency)
        kwh_label = f"{power.region} {power.customer_class} {power.price_per_kwh} {power.currency}/kWh, {power.as_of}"
    years = _pick(sc.depreciation_years, "depreciation_years")
    if years <= 0:
        raise InputError(f"--depreciation-years must be positive, got {years}")
    pue = _pick(sc.pue, "pue")
    if pue < 1:
        raise InputError(f"--pue must be at least 1 (facility power includes the IT load), got {pue}")
    colo = None
    if sc.colo or sc.colo_price is not None:
        rate = sc.colo_price if sc.colo_price is not None else None
        colo = (Money(amount=_check_fraction(rate, "--colo-price", upper=None), currency=currency) if rate is not None
                else fx.convert(Money(amount=default("colocation_usd_per_kw_month"), currency=Currency.USD), currency))
    return Owned(
        name=f"{count}x {spec.key}", gpu=spec.key, gpu_count=count, vram_gb=spec.vram_gb,
        card_price=fx.convert(native, currency), card_native=native, card_source=source, card_as_of=as_of,
        host=host, host_price=Money(amount=host_total, currency=currency), tdp_w=Decimal(repr(spec.tdp_w)),
        idle_fraction=_check_fraction(_pick(sc.idle_fraction, "gpu_idle_fraction"), "--idle-fraction"),
        pue=pue, kwh_price=kwh, kwh_label=kwh_label, depreciation_years=years,
        resale_fraction=_check_fraction(_pick(sc.resale, "resale_fraction"), "--resale"),
        maintenance_fraction=_check_fraction(_pick(sc.maintenance, "maintenance_fraction"), "--maintenance"),
        colo_per_kw_month=colo, hours_per_month=hours_per_month,
    )


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


def usage_of(sc: Scenario, gpus_per_unit: float | None) -> tuple[Decimal, str]:
    """GPU-hours per month from --usage, or hours/day x days x the reference GPU count."""
    if sc.usage is not None:
        if sc.hours_per_day is not None or sc.days_per_month is not None:
            raise InputError("give either --usage or --hours-per-day/--days-per-month, not both")
        if sc.usage <= 0:
            raise InputError(f"--usage must be positive GPU-hours per month, got {sc.usage}")
        return sc.usage, f"{sc.usage:g} GPU-hours per month"
    if sc.hours_per_day is None and sc.days_per_month is None:
        raise InputError("no usage given", "e.g. --usage 300 (GPU-hours per month) or --hours-per-day 8 --days-per-month 22")
    hpd = sc.hours_per_day if sc.hours_per_day is not None else Decimal(24)
    days = sc.days_per_month if sc.days_per_month is not None else Decimal(30)
    if not (0 < hpd <= 24) or not (0 < days <= 31):
        raise InputError("--hours-per-day must be in (0, 24] and --days-per-month in (0, 31]")
    if gpus_per_unit is None:
        raise InputError("--hours-per-day needs a machine to count GPUs on: add --buy or --vs")
    usage = hpd * days * Decimal(repr(gpus_per_unit))
    return usage, f"{hpd:g} h/day x {days:g} days x {gpus_per_unit:g} GPUs = {usage:g} GPU-hours per month"


def build_tco(sc: Scenario, *, currency: Currency, fx: Fx, hours_per_month: Decimal, spot_overhead: Decimal,
              catalog: Catalog | None = None) -> TcoResult:
    """Every option of the scenario over its horizon, the break-evens and a verdict."""
    cat = catalog or default_catalog()
    if sc.months < 1 or sc.months > 240:
        raise InputError(f"--months must be 1 to 240, got {sc.months}")
    if not sc.buy and not sc.vs:
        raise InputError("nothing to compare", "add --buy '4x RTX-4090' and/or --vs p3.16xlarge")
    if hours_per_month <= 0:
        raise InputError("--hours-per-month must be positive")
    buys = [(cat.gpu(name), count) for count, name in (parse_buy(b) for b in sc.buy)]
    rentals = [pick_offer(cat, name, sc.region) for name in sc.vs]
    reference = buys[0][1] if buys else rentals[0][0].gpu_count
    usage, usage_label = usage_of(sc, reference)
    modes = parse_modes(sc.billing)
    months = sc.months

    owned = [make_owned(spec, count, sc, currency=currency, fx=fx, hours_per_month=hours_per_month, catalog=cat)
             for spec, count in buys]
    for o in owned:
        u = o.utilization(usage)
        if u > 1:
            raise InputError(f"{usage:g} GPU-hours per month is more than {o.name} can deliver "
                             f"({o.gpu_count * hours_per_month:g})", "buy more cards or lower --usage")
    options = [buy_option(o, usage, months) for o in owned]
    skipped: list[str] = []
    mvh: dict[str, Decimal | None] = {}
    for offer, notes in rentals:
        mvh[offer.name] = monthly_vs_hourly_hours(offer)
        for mode in modes or RENT_MODES:
            if mode not in offer.rates or rule_for(offer.provider.value, mode) is None:
                if modes:
                    skipped.append(f"{offer.name} has no {mode} price")
                continue
            options.append(rent_option(offer, mode, usage, months, currency=currency, fx=fx,
                                       hours_per_month=hours_per_month, spot_overhead=spot_overhead, notes=notes))

    breakevens = []
    for o, b in zip(owned, options[: len(owned)], strict=True):
        u = o.utilization(usage)
        for r in options[len(owned):]:
            steady = r.monthly_cost[0]
            gap = steady - o.opex_per_month(u)
            breakevens.append(Breakeven(
                buy=b.name, vs=r.name, month=breakeven_month(b.cumulative_cost, r.cumulative_cost),
                months_formula=o.capex_net / gap if gap > 0 else None,
                utilization=o.breakeven_utilization(steady / usage),
            ))
    curves = {f"buy {o.name}": [(u, o.cost_per_gpu_hour(u) or ZERO)
                                for u in (Decimal(k) / 20 for k in range(1, 21))] for o in owned}
    result_assumptions = assumptions(sc, owned, usage_label, currency, fx, hours_per_month, spot_overhead, cat)
    if skipped:
        result_assumptions["skipped"] = skipped
    return TcoResult(currency=currency, months=months, usage_gpu_hours=usage, options=options,
                     breakeven=breakevens, monthly_vs_hourly_hours=mvh, owned_curves=curves,
                     assumptions=result_assumptions, verdict=verdict(options, breakevens, usage, months, currency))


def money_text(amount: Decimal, currency: Currency) -> str:
    return f"{round_cents(amount):,} {currency}"


def verdict(options: list[TcoOption], breakevens: list[Breakeven], usage: Decimal, months: int,
            currency: Currency) -> str:
    """One sentence (two at most) a person can act on."""
    best = min(options, key=lambda o: o.total_cost)
    head = (f"Over {months} months at {usage:g} GPU-hours a month, the cheapest option is {best.name} at "
            f"{money_text(best.total_cost, currency)} ({money_text(best.cost_per_gpu_hour or ZERO, currency)} "
            f"per GPU-hour{', estimated price' if best.estimate else ''}).")
    buys = [o for o in options if o.kind is OptionKind.BUY]
    rents = [o for o in options if o.kind is not OptionKind.BUY]
    if not buys or not rents:
        return head
    buy = min(buys, key=lambda o: o.total_cost)
    mine = [b for b in breakevens if b.buy == buy.name]
    paid = sorted((b for b in mine if b.month is not None), key=lambda b: b.month or 0)
    never = [b.vs for b in mine if b.month is None]
    if best.kind is OptionKind.BUY:
        tail = f"Buying pays for itself against every rental, soonest in month {paid[0].month} vs {paid[0].vs}."
        if never:
            tail = f"Buying beats {len(paid)} of {len(mine)} rentals; it never catches up with {', '.join(never)}."
    elif paid:
        tail = (f"{_cap(buy.name)} overtakes {', '.join(f'{b.vs} in month {b.month}' for b in paid[:3])}, "
                f"but never catches up with {best.name} within {months} months.")
    else:
        tail = f"{_cap(buy.name)} never catches up with any rental within {months} months."
    if best.kind is OptionKind.SPOT:
        steady = [o for o in options if o.kind is not OptionKind.SPOT]
        if steady:
            alt = min(steady, key=lambda o: o.total_cost)
            tail += (f" Spot can be interrupted; without it the cheapest is {alt.name} at "
                     f"{money_text(alt.total_cost, currency)}.")
    return f"{head} {tail}"


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def assumptions(sc: Scenario, owned: list[Owned], usage_label: str, currency: Currency, fx: Fx,
                hours_per_month: Decimal, spot_overhead: Decimal, catalog: Catalog) -> dict[str, Any]:
    """Every input the numbers rest on, with its source or 'given'."""
    given = {"pue": sc.pue, "maintenance_fraction": sc.maintenance, "resale_fraction": sc.resale,
             "depreciation_years": sc.depreciation_years, "gpu_idle_fraction": sc.idle_fraction,
             "colocation_usd_per_kw_month": sc.colo_price, "cpu_cores_per_gpu": sc.cores_per_gpu,
             "dataset_gb": sc.dataset_gb}
    defaults = []
    for key, d in tco_defaults().items():
        entry: dict[str, Any] = {"key": key, "value": str(d.value), "unit": d.unit, "source": d.source,
                                 "as_of": d.as_of.isoformat(), "assumption": d.assumption}
        if given.get(key) is not None:
            entry.update(value=str(given[key]), source="given by the user", assumption=False)
        defaults.append(entry)
    out: dict[str, Any] = {
        "usage": usage_label,
        "hours_per_month": str(hours_per_month),
        "spot_overhead": str(spot_overhead),
        "catalog_as_of": catalog.as_of.isoformat(),
        "fx": [r.label() for r in fx.used()],
        "gpu_hours_equal_across_gpus": True,
        "resale_counted": "up front, at the end-of-life value (conservative for horizons shorter than the life)",
        "power": "the box is on all month: GPUs at TDP while busy and at the idle fraction otherwise",
        "defaults": defaults,
    }
    for o in owned:
        out[f"buy {o.name}"] = {
            "card_price": str(o.card_price.amount), "card_source": o.card_source, "card_as_of": o.card_as_of,
            "host": "sized" if o.host.sized else "given", "host_ram_gb": o.host.ram_gb, "host_cpu_cores": o.host.cpu_cores,
            "host_nvme_tb": o.host.nvme_tb, "host_watts": str(o.host.watts), "host_price": str(o.host_price.amount),
            "tdp_w": str(o.tdp_w), "pue": str(o.pue), "kwh_price": str(o.kwh_price.amount), "kwh_source": o.kwh_label,
            "depreciation_years": str(o.depreciation_years), "resale_fraction": str(o.resale_fraction),
            "maintenance_fraction": str(o.maintenance_fraction),
            "colo_per_kw_month": None if o.colo_per_kw_month is None else str(o.colo_per_kw_month.amount),
            "capex": str(o.capex), "capex_net": str(o.capex_net),
        }
    return out
