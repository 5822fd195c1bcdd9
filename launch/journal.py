"""When the team's PostgreSQL ledger is unreachable: find machines by their cloud tags, end them, journal it locally.

A database outage during a launch used to leave a started machine that nothing could end until the
database returned (the SQLite ledger has a read-only fallback; PostgreSQL had none). Every machine
carries ``gpuplan:id`` (its launch) and ``gpuplan:expires``, so `ls` and `down` can work from the
cloud alone: list what is tagged, end a launch's machines by its id, end what is past its TTL
(``down --expired`` from cron keeps the TTLs during the outage). What `down` ends is appended to a
local journal (JSON lines, 0600), replayed into the database by the first command that reaches it
again, then set aside: the ledger learns the end and its time, as if it had been there.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pricing.errors import StateError
from pricing.files import private_dir
from pricing.text import printable
from providers.capabilities import (
    TAG_EXPIRES,
    TAG_ID,
    TAG_MANAGED,
    ComputeClient,
    InstanceInfo,
    InstanceState,
)


class LedgerUnreachable(StateError):
    """The ledger's database cannot be reached (not damaged): ls and down can fall back to the cloud's tags."""


@dataclass(frozen=True)
class Tagged:
    """A machine gpuplan tagged, where it was found."""

    provider: str
    region: str
    info: InstanceInfo

    @property
    def launch_id(self) -> str:
        return self.info.tags.get(TAG_ID, "?")

    def expired(self, at: datetime) -> bool:
        try:
            ends = datetime.fromisoformat(self.info.tags.get(TAG_EXPIRES, ""))
        except ValueError:
            return False
        return (ends if ends.tzinfo else ends.replace(tzinfo=UTC)) <= at


def tagged(client_for: Callable[[str, str], ComputeClient], places: Iterable[tuple[str, str]],
           faults: list[str]) -> list[Tagged]:
    """Every live machine gpuplan tagged in ``places``; a place that cannot be read is added to ``faults``."""
    out: list[Tagged] = []
    for provider, region in sorted(set(places)):
        try:
            found = client_for(provider, region).list_by_tag(TAG_MANAGED, "true")
        except Exception as exc:  # noqa: BLE001 - one unreadable cloud must not hide the others
            faults.append(f"{provider} {region}: {printable(str(getattr(exc, 'message', exc)))}")
            continue
        out += [Tagged(provider, region, i) for i in found if not i.state.is_final]
    return out


def end(client_for: Callable[[str, str], ComputeClient], machines: list[Tagged], journal: Path, *,
        host: str) -> list[str]:
    """Ask the cloud to end ``machines`` and journal each ask; the instance ids asked to end."""
    asked: list[str] = []
    by_place: dict[tuple[str, str], list[Tagged]] = {}
    for m in machines:
        by_place.setdefault((m.provider, m.region), []).append(m)
    for (provider, region), ms in sorted(by_place.items()):
        ids = [m.info.instance_id for m in ms]
        at = datetime.now(UTC).isoformat(timespec="seconds")
        client_for(provider, region).terminate(ids)
        for m in ms:
            append(journal, {"launch_id": m.launch_id, "instance_id": m.info.instance_id, "provider": provider,
                             "region": region, "asked_at": at, "host": host})
        asked += ids
    return asked


def append(journal: Path, entry: dict[str, Any]) -> None:
    """One line, written and synced before the next machine is ended (a crash loses at most the line under way)."""
    private_dir(journal.parent)
    fd = os.open(journal, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, (json.dumps(entry, sort_keys=True) + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)


def entries(journal: Path) -> list[dict[str, str]]:
    try:
        lines = journal.read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if isinstance(e, dict) and all(isinstance(e.get(k), str) for k in ("launch_id", "instance_id", "asked_at")):
            out.append(e)
    return out


def replay(ledger: Any, journal: Path) -> list[str]:
    """Write the journal's ends into ``ledger`` (a launch it does not know is said, not invented), then set the
    journal aside; what was done, one line each."""
    from launch.ledger import LaunchState

    done: list[str] = []
    launches: dict[str, list[dict[str, str]]] = {}
    for e in entries(journal):
        launches.setdefault(e["launch_id"], []).append(e)
    for launch_id, es in launches.items():
        try:
            record = ledger.launch(launch_id)
        except Exception:  # noqa: BLE001 - not in this ledger: a machine another ledger (or none) knew
            done.append(f"{', '.join(e['instance_id'] for e in es)} (tag gpuplan:id={launch_id}): not in this ledger")
            continue
        asked = min(datetime.fromisoformat(e["asked_at"]) for e in es)
        ledger.set_end_asked(record.id, asked)  # the machines' end time: the outage's `down`, not this replay
        ledger.record_instances(record.id, [InstanceInfo(instance_id=e["instance_id"],
                                                         state=InstanceState.TERMINATING) for e in es])
        ledger.set_state(record.id, LaunchState.TERMINATING,
                         f"asked to end during a ledger outage by {es[0].get('host', '?')} at {asked:%Y-%m-%d %H:%M}")
        done.append(f"{launch_id}: ended during the outage at {asked:%Y-%m-%d %H:%M} UTC (now recorded; `gpuplan ls` "
                    "confirms the end)")
    if launches:
        journal.replace(journal.with_name(journal.name + f".replayed-{datetime.now(UTC):%Y%m%dT%H%M%S}"))
    return done
