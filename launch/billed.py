"""The clouds' own bills beside the ledger's estimates, per launch (``gpuplan spend --billed``).

For a month: each cloud with launches in it is asked for its bill once a day (a kept read is
reused; ``refresh`` asks again), the lines are kept in the ledger, and every launch gets its
estimate over the same days the bill covers, the billed amount, the difference and why where
it is known. A difference over 10% and over 1 USD is flagged; a machine billed on a day after
the ledger says it ended is an alarm: something the ledger lost may still be running.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

from pricing.billing import BillingMode
from pricing.errors import GpuplanError
from pricing.money import Currency, Fx, Money, money_text
from providers.bills import INSTANCE, BillAnswer, BilledCost, BillReader
from launch.ledger import LaunchRecord, Ledger
from launch.spend import launch_cost

FLAG_SHARE = Decimal("0.10")  # a difference over 10% of the estimate ...
FLAG_FLOOR = Money(amount=Decimal(1), currency=Currency.USD)  # ... and over 1 USD is flagged


@dataclass(frozen=True, slots=True)
class CloudBill:
    """How one cloud's bill for the month was had: read now, kept from earlier today, or not at all (and why)."""

    provider: str
    source: str
    read_at: datetime | None
    kept: bool  # reused from an earlier read today: nothing was asked (or paid for)
    unavailable: str | None = None
    notes: tuple[str, ...] = ()
    caveats: tuple[str, ...] = ()
    through: date | None = None  # the last day any of its lines covers


@dataclass(slots=True)
class LaunchBill:
    """One launch's estimate and bill over the same days, in the launch's currency."""

    record: LaunchRecord
    estimated: Decimal
    billed: Decimal | None  # None: no bill read for its cloud
    lines: dict[str, Decimal] = field(default_factory=dict)  # billed per line (instance, disk, ...)
    through: date | None = None
    flagged: bool = False
    alarm: str | None = None
    why: list[str] = field(default_factory=list)

    @property
    def difference(self) -> Decimal | None:
        return None if self.billed is None else self.billed - self.estimated

    @property
    def currency(self) -> Currency:
        return self.record.unit_price.currency


def _month_days(window: tuple[datetime, datetime], at: datetime) -> tuple[date, date]:
    """[first day, day after the last) of the month that a bill can have figures for by ``at``."""
    start, end = window
    last = min(end.date(), at.date() + timedelta(days=1))
    return start.date(), max(last, start.date() + timedelta(days=1))


def read_bills(ledger: Ledger, readers: Callable[[str], BillReader | None], window: tuple[datetime, datetime],
               at: datetime, *, refresh: bool = False) -> dict[str, CloudBill]:
    """Each cloud's bill for the month of ``window``, read (or reused from today's read) and kept in the ledger."""
    month = f"{window[0]:%Y-%m}"
    first, after = _month_days(window, at)
    by_cloud: dict[str, dict[str, tuple[str, ...]]] = {}
    for r in ledger.launches():
        if _touches(ledger, r, window, at):
            ids = tuple(m.instance_id for m in ledger.instances(r.id))
            by_cloud.setdefault(r.provider, {})[r.id] = ids
    out: dict[str, CloudBill] = {}
    for provider, launches in sorted(by_cloud.items()):
        try:
            reader = readers(provider)
        except GpuplanError as exc:  # its SDK is not installed: say so, count its launches at the estimate
            out[provider] = CloudBill(provider, "", None, False, unavailable=f"{provider}: {exc.message}"
                                      + (f" ({exc.hint})" if exc.hint else ""))
            continue
        if reader is None:
            out[provider] = CloudBill(provider, "", None, False, unavailable=f"{provider}: no billing API in gpuplan "
                                      "yet: its launches are shown at the ledger's estimate")
            continue
        kept = ledger.bill_read(provider, month)
        if kept is not None and not refresh and kept.read_at.date() == at.date():
            out[provider] = CloudBill(provider, kept.source, kept.read_at, True, caveats=reader.caveats)
            continue
        try:
            answer = reader.read(first, after, launches)
        except GpuplanError as exc:  # a fault of the cloud's API: this cloud falls back, the others still count
            answer = BillAnswer(source="", unavailable=f"{provider}: the bill could not be read ({exc.message})")
        if answer.unavailable is not None:
            out[provider] = CloudBill(provider, answer.source, None, False, unavailable=answer.unavailable,
                                      caveats=reader.caveats)
            continue
        ledger.record_bill(provider, month, launches, first, after, answer, at)
        out[provider] = CloudBill(provider, answer.source, at, False, notes=answer.notes, caveats=reader.caveats)
    return out


def _touches(ledger: Ledger, r: LaunchRecord, window: tuple[datetime, datetime], at: datetime) -> bool:
    start, end = window
    return r.created_at < end and (launch_cost(r, ledger.instances(r.id), start, end, at) > 0
                                   or start <= r.created_at)


def _ended_day(ledger: Ledger, r: LaunchRecord) -> date | None:
    """The day the ledger says the launch's last machine ended; None while any runs (or none was recorded)."""
    machines = ledger.instances(r.id)
    if not r.state.is_final or not machines or any(m.ended_at is None for m in machines):
        return None
    return max(m.ended_at for m in machines if m.ended_at is not None).date()


def compare(ledger: Ledger, bills: dict[str, CloudBill], window: tuple[datetime, datetime], at: datetime,
            fx: Fx) -> list[LaunchBill]:
    """Every launch of the month with its estimate beside its bill, over the days the bill covers."""
    start, end = window
    out: list[LaunchBill] = []
    for r in ledger.launches():
        cloud = bills.get(r.provider)
        if cloud is None:
            continue
        machines = ledger.instances(r.id)
        if cloud.read_at is None:  # no bill: the estimate to now stands alone
            out.append(LaunchBill(r, launch_cost(r, machines, start, end, at), None))
            continue
        kept = ledger.billed(r.id, start.date(), end.date())
        # the days the bill covers: to the end of the last day the cloud has any figure for this launch, or for
        # the cloud's other launches (a launch with no line there was billed nothing)
        through = max((c.day + timedelta(days=c.days - 1) for c, _ in kept), default=None)
        cover_end = min(at, datetime.combine(through + timedelta(days=1), datetime.min.time(), tzinfo=UTC)) \
            if through is not None else at
        row = LaunchBill(r, launch_cost(r, machines, start, min(end, cover_end), at), Decimal(0), through=through)
        for cost, _ in kept:
            amount = _in_currency(cost, r.unit_price.currency, fx, row)
            row.lines[cost.line] = row.lines.get(cost.line, Decimal(0)) + amount
            row.billed = (row.billed or Decimal(0)) + amount
        _explain(ledger, row, kept, fx)
        out.append(row)
    return out


def _in_currency(cost: BilledCost, currency: Currency, fx: Fx, row: LaunchBill) -> Decimal:
    if cost.currency == currency.value:
        return cost.amount
    try:
        theirs = Currency(cost.currency)
    except ValueError:
        row.why.append(f"a line billed in {cost.currency}, which gpuplan cannot convert, is left out")
        return Decimal(0)
    row.why.append(f"lines billed in {theirs} converted at the rate in use")
    return fx.convert(Money(amount=cost.amount, currency=theirs), currency).amount


def _explain(ledger: Ledger, row: LaunchBill, kept: list[tuple[BilledCost, datetime]], fx: Fx) -> None:
    """Flag, alarm and the reasons the bill and the estimate differ, where the data shows them."""
    r = row.record
    diff = row.difference or Decimal(0)
    floor = fx.convert(FLAG_FLOOR, r.unit_price.currency).amount
    row.flagged = abs(diff) > floor and abs(diff) > FLAG_SHARE * row.estimated
    ended = _ended_day(ledger, r)
    late = sorted({c.day for c, _ in kept if ended is not None and c.day > ended and c.amount > 0})
    if late:
        row.alarm = (f"billed on {', '.join(d.isoformat() for d in late)}, after the ledger says it ended "
                     f"({ended}): a machine may still run; `gpuplan down --untracked` finds and ends it")
    if not row.flagged:
        return
    if not kept:
        row.why.append("the bill has no line for this launch: is the tag gpuplan:id active for cost allocation? "
                       "(`gpuplan spend --activate-tag`)")
    for line, amount in sorted(row.lines.items()):
        if line != INSTANCE and amount > 0 and not r.extras_unit:
            row.why.append(f"the bill has {line} ({money_text(amount, r.unit_price.currency)}) that the estimate "
                           "did not count")
    if r.billing is BillingMode.SPOT and INSTANCE in row.lines:
        row.why.append("a spot price moves: the estimate is the price at launch")
    if late:
        row.why.append("hours billed after the recorded end")
