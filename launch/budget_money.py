"""The money budgets and caps are held in: one exchange rate per pair, fixed in the ledger, and amounts as shown.

A budget in USD on launches priced in CNY needs a rate, and it used to be whatever the launcher's
environment said: after "5 USD" was full, four more launches passed with ``GPUPLAN_FX=USD/CNY=727.34``.
Now the first check that needs a pair stores the shipped, sourced rate for it in the ledger
(table ``fx_rates``), and every later check, from any machine and any environment, converts at that
stored rate. A user's own rate still prices plans; it never loosens a budget.

A Tencent machine cannot be told to end itself sooner than its timer's floor (the ActionTimer must
be 5 minutes ahead; gpuplan sets it 6 ahead), so a shorter TTL is priced to that floor.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from launch.ledger import Ledger
from pricing.errors import PriceMissingError
from pricing.money import Currency, Fx, FxRate, Money, shipped_fx_rates

# Hours before which the cloud's own timer cannot end a machine, per provider (providers.tencent.compute's
# ACTION_TIMER_LEAD, 6 minutes; a test holds the two equal).
TTL_FLOOR_HOURS = {"tencent": Decimal(6) / 60}


def billed_ttl(provider: str, ttl_hours: Decimal | None) -> Decimal | None:
    """The hours a launch with ``ttl_hours`` is priced for: at least the cloud timer's floor where there is one."""
    floor = TTL_FLOOR_HOURS.get(provider)
    if ttl_hours is None or floor is None:
        return ttl_hours
    return max(ttl_hours, floor)


def ttl_floor_note(provider: str, ttl_hours: Decimal | None) -> str | None:
    billed = billed_ttl(provider, ttl_hours)
    if ttl_hours is None or billed is None or billed == ttl_hours:
        return None
    return (f"--ttl is under the {float(billed) * 60:g} minutes before which {provider}'s own timer can end the "
            f"machine: priced for {float(billed) * 60:g} minutes")


def _stored(ledger: Ledger) -> list[FxRate]:
    out = []
    for r in ledger._select("SELECT base, quote, rate, source, set_at FROM fx_rates ORDER BY base, quote"):
        try:
            out.append(FxRate(base=Currency(r["base"]), quote=Currency(r["quote"]), rate=Decimal(r["rate"]),
                              source=f"fixed in the ledger {str(r['set_at'])[:10]}: {r['source']}"))
        except (ValueError, ArithmeticError):  # a hand-edited row: that pair falls back to the shipped rate
            continue
    return out


def fixed_fx(ledger: Ledger) -> Fx:
    """The rates every budget and cap of this ledger is converted at: stored on first use, never the caller's."""
    have = _stored(ledger)
    pairs = {frozenset((r.base, r.quote)) for r in have}
    missing = [r for r in shipped_fx_rates() if frozenset((r.base, r.quote)) not in pairs]
    if missing:
        with ledger._write("fixed exchange rates") as db:
            if db is not None:
                for r in missing:
                    db.execute("INSERT INTO fx_rates (base, quote, rate, source, set_at) VALUES (?,?,?,?,?)"
                               " ON CONFLICT (base, quote) DO NOTHING",
                               (r.base.value, r.quote.value, str(r.rate), r.source,
                                datetime.now(UTC).isoformat(timespec="seconds")))
        have = _stored(ledger)  # another process may have stored its own first: its rate is the one
        pairs = {frozenset((r.base, r.quote)) for r in have}
        have += [r for r in missing if frozenset((r.base, r.quote)) not in pairs]  # a ledger that takes no write
    return Fx(have)


def differs(fixed: Fx, mine: Fx, currencies: set[Currency]) -> list[str]:
    """The pairs among ``currencies`` where the caller's rates differ from the ledger's, said as both rates."""
    out = []
    cs = sorted(currencies)
    for i, a in enumerate(cs):
        for b in cs[i + 1:]:
            try:
                theirs, ours = fixed.rate(a, b), mine.rate(a, b)
            except PriceMissingError:  # a pair one side lacks is refused where it is converted, not here
                theirs = ours = Decimal(0)
            if theirs != ours:
                out.append(f"budgets and --max-cost convert {a} to {b} at the ledger's fixed 1 {a} = "
                           f"{theirs.normalize():f} {b}, not your {ours.normalize():f}")
    return out


def cap_text(cap: Money) -> str:
    """A cap as given when it has digits past the cent (11.975 CNY), so a refusal never reads "11.98 over 11.98"."""
    from pricing.money import money_text

    if cap.amount == cap.amount.quantize(Decimal("0.01")):
        return money_text(cap.amount, cap.currency)
    return f"{cap.amount.normalize():f} {cap.currency}"
