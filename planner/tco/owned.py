"""Owned hardware: cards in a host, and what they cost month by month (see planner.tco.compare)."""

from __future__ import annotations

import math
import re
from datetime import date
from decimal import Decimal

from pydantic import BaseModel, ConfigDict

from pricing.billing import BillingMode
from pricing.catalog import Catalog, GpuSpec
from pricing.errors import InputError, PriceMissingError
from pricing.money import Currency, Fx, Money
from providers.local import newest_prices
from planner.tco.host import Host, Profile, default, default_profile, given_host, profile, size_host
from planner.tco.lines import ZERO, TcoLine, TcoOption, When, _option, line
from planner.tco.scenario import Scenario

CONDITIONS = ("new", "market", "used")  # preference order when --condition is not given


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
    cpu_idle_fraction: Decimal = Decimal(1)  # of the host CPU's TDP while the GPUs idle (1: at TDP all month)
    profile: str | None = None  # where the hardware lives (planner/data/tco_profiles.toml), None: the plain defaults
    # Reference GPU-hours of work one GPU-hour of these cards does (speed x scaling, see
    # planner.tco.work); 1 when the cards are the reference GPU and scale perfectly.
    work_per_gpu_hour: Decimal = Decimal(1)

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

    def utilization(self, usage: Decimal) -> Decimal:
        """The share of the cards' hours that ``usage`` reference GPU-hours of work a month keep busy."""
        return usage / (self.work_per_gpu_hour * self.n * self.hours_per_month)

    def average_watts(self, u: Decimal) -> Decimal:
        """GPUs and the host's CPU at TDP while busy, at their idle fractions otherwise; the rest of the host flat."""
        per_gpu = self.tdp_w * u + self.tdp_w * self.idle_fraction * (1 - u)
        resting = self.host.cpu_watts * (1 - self.cpu_idle_fraction) * (1 - u)
        return per_gpu * self.n + self.host.watts - resting

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

    def capex_per_month(self, months: int | None = None) -> Decimal:
        """CAPEX_net per month: over a horizon of ``months`` as the cash view pays it (once per life
        begun), so per-GPU-hour figures match the horizon's totals; over the life when None."""
        if months is None:
            return self.depreciation_per_month
        lives = -(-months // self.life_months)
        return self.capex_net * lives / months

    def cost_per_gpu_hour(self, u: Decimal, months: int | None = None) -> Decimal | None:
        """Owned cost per delivered GPU-hour at utilization ``u`` (None at zero use)."""
        if u <= 0:
            return None
        return (self.capex_per_month(months) + self.opex_per_month(u)) / (self.n * u * self.hours_per_month)

    def cost_per_work_hour(self, u: Decimal, months: int | None = None) -> Decimal | None:
        """Owned cost per reference GPU-hour of work done at utilization ``u`` (over ``months``)."""
        per_gpu_hour = self.cost_per_gpu_hour(u, months)
        return None if per_gpu_hour is None else per_gpu_hour / self.work_per_gpu_hour

    def monthly_costs(self, u: Decimal, months: int) -> list[Decimal]:
        """Cash per month as it leaves and comes back: the whole CAPEX at the start of each life, opex every
        month, and the resale value back in the month the hardware is sold, at the end of its life or of the
        horizon, whichever comes first. Over the horizon this sums to CAPEX_net per life begun plus opex."""
        opex, life = self.opex_per_month(u), self.life_months
        out = []
        for i in range(months):
            cash = opex + (self.capex if i % life == 0 else ZERO)
            if (i + 1) % life == 0 or i == months - 1:
                cash -= self.resale_value
            out.append(cash)
        return out

    def breakeven_utilization(self, rate_per_work_hour: Decimal, months: int | None = None) -> Decimal | None:
        """The u at which the owned cost per reference GPU-hour of work (over ``months``, see
        :meth:`capex_per_month`) equals ``rate_per_work_hour``.

        Solves (dep + fixed + e0 + e1 u) = r w n u H for u, where w is the work one
        GPU-hour does, e0 the energy at u = 0 and e1 its slope; None when renting
        stays cheaper even at u = 1.
        """
        rate_per_gpu_hour = rate_per_work_hour * self.work_per_gpu_hour
        e0 = self.energy_per_month(ZERO)
        e1 = self.energy_per_month(Decimal(1)) - e0
        fixed = self.capex_per_month(months) + self.maintenance_per_month + self.colo_per_month
        denominator = rate_per_gpu_hour * self.n * self.hours_per_month - e1
        if denominator <= 0:
            return None
        u = (fixed + e0) / denominator
        return u if u <= 1 else None

    def lines(self, u: Decimal) -> list[TcoLine]:
        c = self.currency
        out = [line(f"{self.gpu} card", self.n, "cards", self.card_price, When.ONCE)]
        out += self._host_lines()
        out.append(line(f"resale when sold, at the end of the {self.depreciation_years:g}-year life or of the horizon "
                        f"({self.resale_fraction:.0%})", Decimal(-1), "credit",
                        Money(amount=self.resale_value, currency=c), When.PER_LIFE))
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


# "<count> x <name>": the count is any number-like text so "2.5x" and "-3x" are refused as
# counts rather than read as names; x, X, × and * all separate, with or without spaces.
_COUNTED = re.compile(r"\s*([-+]?[\d.]+)\s*[x×*]\s*(.*?)\s*", re.IGNORECASE)
_NAME = re.compile(r"[A-Za-z0-9].*")
_FORM = "write it like '4x RTX-4090' or '8x 4090' (count x GPU name or alias, see `gpuplan gpus`)"


def parse_buy(text: str) -> tuple[int, str]:
    """``"4x RTX-4090"`` -> (4, "RTX-4090"); ``"8 x 4090"`` -> (8, "4090"); a bare name means one card.

    The name is left for :meth:`Catalog.gpu` to resolve, so every key, name and alias it
    knows works, names that start with a digit (``4090``, ``2080 ti``) included.
    """
    m = _COUNTED.fullmatch(text)
    if m:
        count_text, name = m.groups()
        if not count_text.isdigit():
            raise InputError(f"--buy {text!r}: the card count must be a whole number from 1 to 64", _FORM)
        count = int(count_text)
    else:
        count, name = 1, text.strip()
    if not _NAME.fullmatch(name):
        raise InputError(f"cannot read --buy {text!r}", _FORM)
    if count < 1 or count > 64:
        raise InputError(f"--buy {text!r}: the card count must be 1 to 64")
    return count, name


def card_price(catalog: Catalog, gpu: str, condition: str | None) -> tuple[Money, str, date, str]:
    """The newest catalog price of ``gpu`` (preferring new cards), with its source."""
    prices = newest_prices(catalog)
    wanted = (condition,) if condition else CONDITIONS
    for cond in wanted:
        card = prices.get((gpu, cond))
        if card is not None:
            return card.money(), card.source, card.as_of, cond
    have = sorted(c for g, c in prices if g == gpu)
    hint = (f"conditions with a price: {', '.join(have)}" if have
            else "give one with --card-price, e.g. --card-price 1600")
    raise PriceMissingError(f"no {condition + ' ' if condition else ''}card price for {gpu} in the catalog", hint)


def _check_fraction(value: Decimal, flag: str, *, upper: Decimal | None = Decimal(1)) -> Decimal:
    if value < 0 or (upper is not None and value > upper):
        top = f" and at most {upper}" if upper is not None else ""
        raise InputError(f"{flag} must be zero or more{top}, got {value}")
    return value


def _pick(given: Decimal | None, key: str, prof: Profile | None = None) -> Decimal:
    return default(key, prof) if given is None else given


def make_owned(
    spec: GpuSpec,
    count: int,
    sc: Scenario,
    *,
    currency: Currency,
    fx: Fx,
    hours_per_month: Decimal,
    catalog: Catalog,
    work_per_gpu_hour: Decimal = Decimal(1),
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
    colo_asked = sc.colo or sc.colo_price is not None
    prof = profile(sc.profile) if sc.profile else default_profile(count, colo_asked)
    years = _pick(sc.depreciation_years, "depreciation_years", prof)
    if years <= 0:
        raise InputError(f"--depreciation-years must be positive, got {years}")
    pue = _pick(sc.pue, "pue", prof)
    if pue < 1:
        raise InputError(f"--pue must be at least 1 (facility power includes the IT load), got {pue}")
    colo = None
    if colo_asked or prof.colo:
        rate = sc.colo_price if sc.colo_price is not None else None
        colo = (Money(amount=_check_fraction(rate, "--colo-price", upper=None), currency=currency) if rate is not None
                else fx.convert(Money(amount=default("colocation_usd_per_kw_month"), currency=Currency.USD), currency))
    return Owned(
        name=f"{count}x {spec.key}", gpu=spec.key, gpu_count=count, vram_gb=spec.vram_gb,
        card_price=fx.convert(native, currency), card_native=native, card_source=source, card_as_of=as_of,
        host=host, host_price=Money(amount=host_total, currency=currency), tdp_w=Decimal(repr(spec.tdp_w)),
        idle_fraction=_check_fraction(_pick(sc.idle_fraction, "gpu_idle_fraction", prof), "--idle-fraction"),
        pue=pue, kwh_price=kwh, kwh_label=kwh_label, depreciation_years=years,
        resale_fraction=_check_fraction(_pick(sc.resale, "resale_fraction", prof), "--resale"),
        maintenance_fraction=_check_fraction(_pick(sc.maintenance, "maintenance_fraction", prof), "--maintenance"),
        colo_per_kw_month=colo, hours_per_month=hours_per_month, work_per_gpu_hour=work_per_gpu_hour,
        cpu_idle_fraction=default("cpu_idle_fraction", prof), profile=prof.name,
    )


def buy_option(owned: Owned, usage: Decimal, months: int, notes: list[str] | None = None) -> TcoOption:
    """Buying ``owned`` for ``usage`` reference GPU-hours of work a month over ``months``."""
    u = owned.utilization(usage)
    notes = [*(notes or []), f"utilization {u:.1%} of {owned.gpu_count} GPUs x {owned.hours_per_month:g} h",
             f"card price {owned.card_native} ({owned.card_source}, {owned.card_as_of})"]
    if owned.profile is not None:
        notes.append(f"profile {owned.profile}: {profile(owned.profile).description} (--profile names another)")
    if months > owned.life_months:
        notes.append(f"the horizon outlasts the {owned.depreciation_years:g}-year life: the hardware is bought "
                     f"again every {owned.life_months} months")
    if not owned.host.sized:
        notes.append("host price and watts as given")
    return _option(f"buy {owned.name}", BillingMode.BUY, owned.monthly_costs(u, months), usage, provider="local",
                   region=None, gpu=owned.gpu, gpu_count=owned.gpu_count, native_currency=owned.card_native.currency,
                   lines=owned.lines(u), notes=notes)
