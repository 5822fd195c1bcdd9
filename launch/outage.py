"""When the team's database is away: the machines read from the clouds by their tags, and ended there.

Every machine gpuplan starts carries ``gpuplan:managed`` and ``gpuplan:id`` (its launch), so the clouds
alone say which launches hold live machines. ``ls`` and ``down`` fall back to this when PostgreSQL cannot
be reached (:func:`unreachable`); ``down`` writes every change to the local journal
(:mod:`launch.journal`), which the next command that reaches the database replays into it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from datetime import datetime

from pydantic import BaseModel

from launch.journal import ENDED, ENDING, Journal
from launch.ledger import now
from pricing.errors import GpuplanError
from pricing.text import printable
from providers.capabilities import (
    TAG_EXPIRES,
    TAG_ID,
    TAG_MANAGED,
    ComputeClient,
    InstanceInfo,
)

ClientFor = Callable[[str, str], ComputeClient]
# SQLSTATE classes of a server that is going or gone: connection exceptions, and shutdown or start-up.
_GONE_STATES = ("08", "57P01", "57P02", "57P03")


def unreachable(exc: BaseException) -> bool:
    """Whether ``exc`` (or what it was raised from) is the database being out of reach: refused, timed out, closed
    or shutting down. A server that answered (a wrong password, a missing database) is not: that needs fixing."""
    try:
        import psycopg
    except ImportError:
        return False
    seen: BaseException | None = exc
    for _ in range(5):  # the ledger raises its own error from the driver's: look a few links down
        if seen is None:
            return False
        if isinstance(seen, psycopg.OperationalError):
            state = seen.sqlstate or ""
            if state:
                return state.startswith(_GONE_STATES)
            text = str(seen)
            # libpq's connection errors carry no SQLSTATE; the server's own refusals are marked FATAL
            return "FATAL:" not in text or "the database system is" in text
        seen = seen.__cause__ or seen.__context__
    return False


class CloudLaunch(BaseModel):
    """A launch as the clouds show it: its live machines, grouped by their tag gpuplan:id."""

    id: str
    provider: str
    region: str
    machines: list[InstanceInfo]
    expires_at: datetime | None = None

    @property
    def instance_type(self) -> str:
        return ", ".join(sorted({m.instance_type for m in self.machines if m.instance_type})) or "?"

    @property
    def zone(self) -> str:
        return ", ".join(sorted({m.zone for m in self.machines if m.zone})) or self.region


class Ended(BaseModel):
    launch: CloudLaunch
    ended: list[str] = []
    still: list[str] = []  # asked to end, not seen ended before the wait ran out
    note: str = ""


def read_cloud(places: Iterable[tuple[str, str]], client_for: ClientFor) -> tuple[list[CloudLaunch], list[str]]:
    """Live machines tagged by gpuplan in each place, by launch; and a note per place that could not be read."""
    found: dict[str, CloudLaunch] = {}
    notes: list[str] = []
    seen: set[str] = set()
    for provider, region in sorted(set(places)):
        try:
            machines = client_for(provider, region).list_by_tag(TAG_MANAGED, "true")
        except Exception as exc:  # noqa: BLE001 - one unreadable cloud must not hide the others' machines
            notes.append(f"{provider} {region}: not read: {_fault(exc)}")
            continue
        for m in machines:
            if m.state.is_final or m.instance_id in seen:
                continue
            seen.add(m.instance_id)
            launch_id = m.tags.get(TAG_ID, "") or f"untagged-{m.instance_id}"
            c = found.setdefault(launch_id, CloudLaunch(id=launch_id, provider=provider, region=region, machines=[],
                                                        expires_at=_when(m.tags.get(TAG_EXPIRES))))
            c.machines.append(m)
    return sorted(found.values(), key=lambda c: (c.provider, c.region, c.id)), notes


def end_at_cloud(launches: list[CloudLaunch], client_for: ClientFor, journal: Journal, ledger: str, *,
                 timeout: float, poll: float, sleep: Callable[[float], None] = time.sleep) -> list[Ended]:
    """Ask the cloud to end every launch's machines, then wait for them all; each step journaled as it is done.

    As ``down`` does with the ledger: one launch's fault never keeps another from being asked.
    """
    asked: list[tuple[CloudLaunch, list[str]]] = []
    out: dict[str, Ended] = {}
    for c in launches:
        ids = [m.instance_id for m in c.machines if not m.state.is_final]
        try:
            if ids:
                client_for(c.provider, c.region).terminate(ids)
            # journaled once asked (a failed ask changed nothing); a kill just before leaves the cloud's own word,
            # which the next `ls` with the database back reads
            for m in c.machines:
                journal.add(ledger, c.id, c.provider, c.region, m.instance_id, m.zone, ENDING, m.launched_at, now())
        except Exception as exc:  # noqa: BLE001 - the other launches still get asked
            out[c.id] = Ended(launch=c, still=ids, note=f"not ended: {_fault(exc)}")
            continue
        asked.append((c, ids))
    deadline = time.monotonic() + timeout
    for c, ids in asked:
        zones = {m.instance_id: m for m in c.machines}
        left = list(ids)
        try:
            while left:
                for i in client_for(c.provider, c.region).describe(left):
                    if i.state.is_final and i.instance_id in left:
                        m = zones.get(i.instance_id)
                        journal.add(ledger, c.id, c.provider, c.region, i.instance_id, m.zone if m else i.zone,
                                    ENDED, m.launched_at if m else None, now())
                        left.remove(i.instance_id)
                if not left or time.monotonic() > deadline:
                    break
                sleep(poll)
        except Exception as exc:  # noqa: BLE001 - as above
            out[c.id] = Ended(launch=c, ended=[i for i in ids if i not in left], still=left,
                              note=f"asked to terminate, state unknown: {_fault(exc)}")
            continue
        note = f"still ending: {', '.join(left)} asked to terminate, not yet terminated" if left else ""
        out[c.id] = Ended(launch=c, ended=[i for i in ids if i not in left], still=left, note=note)
    return [out[c.id] for c in launches]


def _when(text: str | None) -> datetime | None:
    try:
        return datetime.fromisoformat(text) if text else None
    except ValueError:
        return None


def _fault(exc: Exception) -> str:
    return exc.message if isinstance(exc, GpuplanError) else printable(f"{type(exc).__name__}: {exc}")
