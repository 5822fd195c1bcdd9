"""What launches cost, from the ledger alone: spend per month and the budgets launches are held to.

A machine's cost accrues from its start to its end (or now) at its launch's unit price, by the
launch's billing rule, plus the disks and addresses it was quoted with; a monthly subscription
costs its whole prepaid period in the month it was bought. A launch still in ``intent`` (no
machine recorded yet) counts its machines from the intent: they may be starting. Nothing here
asks a cloud: a team's shared ledger is the one record (``ls`` keeps it current).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from enum import StrEnum

from pricing.billing import BillingMode, rate_cost, rule_for
from pricing.errors import BudgetError, InputError
from pricing.money import Currency, Fx, Money, money_text, round_cents
from launch.ledger import InstanceRecord, LaunchRecord, LaunchState, Ledger


class Scope(StrEnum):
    """What a budget holds to: a project's launches, or one person's."""

    PROJECT = "project"
    OWNER = "owner"


def month_of(text: str | None, at: datetime) -> tuple[datetime, datetime]:
    """[start, end) of the month ``YYYY-MM`` (default: the month of ``at``), in UTC."""
    year, month = at.year, at.month
    if text is not None:
        try:
            year, month = (int(p) for p in text.strip().split("-"))
            datetime(year, month, 1)
        except ValueError:
            raise InputError(f"--month {text!r} is not a month", "write it as YYYY-MM, e.g. 2026-12") from None
    start = datetime(year, month, 1, tzinfo=UTC)
    end = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=UTC)
    return start, end


def hours_between(start: datetime, end: datetime) -> Decimal:
    """Hours from ``start`` to ``end`` (0 when ``end`` is earlier)."""
    return Decimal(max(0.0, (end - start).total_seconds())) / 3600


def accrued_cost(r: LaunchRecord, starts: list[tuple[datetime, datetime | None]], at: datetime) -> Money:
    """What the machines have cost so far, by the billing rule: prepaid months up front, else the time run."""
    more = r.extras_unit or Decimal(0)
    if r.billing is BillingMode.MONTHLY:
        return Money(amount=(r.unit_price.amount + more) * (r.months * len(starts)), currency=r.unit_price.currency)
    rule = rule_for(r.provider, r.billing)
    total = Decimal(0)
    for begun, ended in starts:
        hours = hours_between(begun, ended or at)
        total += rate_cost(rule, r.unit_price.amount, hours) if rule else r.unit_price.amount * hours
        total += more * hours  # disks and addresses bill for the time, by the second
    return Money(amount=total, currency=r.unit_price.currency)


def projected_cost(r: LaunchRecord) -> Money | None:
    more = r.extras_unit or Decimal(0)
    if r.billing is BillingMode.MONTHLY:
        return Money(amount=(r.unit_price.amount + more) * (r.months * r.count), currency=r.unit_price.currency)
    if r.expires_at is None:
        return None
    rule = rule_for(r.provider, r.billing)
    hours = hours_between(r.created_at, r.expires_at)
    one = rate_cost(rule, r.unit_price.amount, hours) if rule else r.unit_price.amount * hours
    return Money(amount=(one + more * hours) * r.count, currency=r.unit_price.currency)


def _spans(r: LaunchRecord, machines: list[InstanceRecord]) -> list[tuple[datetime, datetime | None]]:
    if machines:
        # the cloud's launch time can read a second before the intent (its clock, whole seconds): a machine
        # bills from no earlier than the launch that asked for it
        return [(max(m.started_at or r.created_at, r.created_at), m.ended_at) for m in machines]
    if r.state in (LaunchState.INTENT, LaunchState.UNKNOWN):
        return [(r.created_at, None)] * r.count  # the cloud may be starting them
    return []


def launch_cost(r: LaunchRecord, machines: list[InstanceRecord], start: datetime, end: datetime,
                at: datetime) -> Decimal:
    """What ``r`` costs within [start, end), up to ``at``, in its own currency."""
    if r.billing is BillingMode.MONTHLY:
        bought = start <= r.created_at < end
        n = len(machines) or r.count
        return (r.unit_price.amount + (r.extras_unit or Decimal(0))) * r.months * n if bought else Decimal(0)
    within = [(lo, hi) for lo, hi in ((max(b, start), min(e or at, end, at)) for b, e in _spans(r, machines))
              if hi > lo]
    return accrued_cost(r, within, at).amount  # the same rule `ls` accrues by, on each span cut to the window


@dataclass(frozen=True, slots=True)
class SpendRow:
    key: str
    launches: int
    cost: Money  # in the report's currency


BY = {"project": lambda r: r.project or "-", "owner": lambda r: r.owner or "-", "provider": lambda r: r.provider,
      "instance-type": lambda r: r.instance_type}


def spend(ledger: Ledger, *, month: tuple[datetime, datetime], by: str, fx: Fx, currency: Currency,
          at: datetime) -> list[SpendRow]:
    """The month's cost by ``by`` (project, owner, provider, instance-type), dearest first."""
    if by not in BY:
        raise InputError(f"unknown --by {by!r}", f"use one of {', '.join(BY)}")
    start, end = month
    sums: dict[str, tuple[int, Decimal]] = {}
    for r in ledger.launches():
        cost = launch_cost(r, ledger.instances(r.id), start, end, at)
        if cost == 0 and not (start <= r.created_at < end):
            continue
        amount = fx.convert(Money(amount=cost, currency=r.unit_price.currency), currency).amount
        n, total = sums.get(BY[by](r), (0, Decimal(0)))
        sums[BY[by](r)] = (n + 1, total + amount)
    rows = [SpendRow(k, n, Money(amount=v, currency=currency)) for k, (n, v) in sums.items()]
    return sorted(rows, key=lambda x: (-x.cost.amount, x.key))


def committed(ledger: Ledger, scope: Scope, name: str, *, at: datetime, fx: Fx, currency: Currency) -> Decimal:
    """The month's spend so far for ``name`` plus what its running launches will cost to their TTL."""
    billed, estimated = committed_parts(ledger, scope, name, at=at, fx=fx, currency=currency)
    return billed + estimated


def committed_parts(ledger: Ledger, scope: Scope, name: str, *, at: datetime, fx: Fx,
                    currency: Currency) -> tuple[Decimal, Decimal]:
    """(billed, estimated): the clouds' bills kept in the ledger up to each bill's last complete day, then the
    ledger's estimate of the month's spend after it and of running launches to their TTL."""
    start, end = month_of(None, at)
    billed = estimated = Decimal(0)
    for r in ledger.launches():
        if (r.project if scope is Scope.PROJECT else r.owner) != name:
            continue
        # a launch not ended costs its machines to its TTL (to the month's end without one), priced as one span:
        # spent and still to come, added up, would each round up under a rule that bills whole hours
        until = at if r.state.is_final else max(at, r.expires_at or end)
        covered, on_bill = ledger.billed_part(r.id, r.unit_price.currency.value, start, end)
        native = launch_cost(r, ledger.instances(r.id), covered, end, until)
        # each launch as `ls` and the quote show it, to the cent: five launches shown as 3.09 USD fit 15.45 USD
        estimated += round_cents(fx.convert(Money(amount=native, currency=r.unit_price.currency), currency).amount)
        billed += round_cents(fx.convert(Money(amount=on_bill, currency=r.unit_price.currency), currency).amount)
    return billed, estimated


def budget_check(project: str, owner: str, projected: Money | None, fx: Fx,
                 at: datetime) -> Callable[[Ledger], None]:
    """The check :meth:`Ledger.record_intent` runs inside its transaction (and ``launch`` once before it asks):
    refuse (exit 7) when a budget of the launch's project or owner would be passed by what is spent, what runs to
    its TTL, and this launch."""

    def check(ledger: Ledger) -> None:
        for scope, name, cap in applicable(ledger.budgets(), project, owner):
            if projected is None:
                raise BudgetError(f"{scope} {name!r} has a monthly budget of {cap}, and this launch has no end "
                                  "to price against it", "add --ttl, e.g. --ttl 12h")
            so_far = committed(ledger, scope, name, at=at, fx=fx, currency=cap.currency)
            this = round_cents(fx.convert(projected, cap.currency).amount)
            if round_cents(so_far + this) > cap.amount:
                raise BudgetError(
                    f"{scope} {name!r}: {money_text(so_far, cap.currency)} spent or committed this month + "
                    f"{money_text(this, cap.currency)} for this launch would pass its monthly budget of {cap}",
                    "shorten --ttl or lower --count, end a running launch (`gpuplan ls`), or raise the budget "
                    "(`gpuplan budget set`)")

    return check


def applicable(budgets: Iterable[tuple[str, str, Money]], project: str, owner: str) -> list[tuple[Scope, str, Money]]:
    out = []
    for scope, name, cap in budgets:
        s = Scope(scope)
        if (s is Scope.PROJECT and name == project) or (s is Scope.OWNER and name == owner):
            out.append((s, name, cap))
    return out
