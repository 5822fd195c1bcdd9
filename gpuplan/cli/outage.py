"""``ls`` and ``down`` while the team's PostgreSQL ledger is unreachable: the cloud's tags instead (launch.journal).

The tags say which launch a machine belongs to and when its TTL ends, not whose it is: so ``down``
ends launches by id and ``--expired`` ones, and ``--all`` only with ``--all-owners`` (every gpuplan machine
the credentials can see). What is ended is journaled locally and replayed into the database later.
"""

# No `from __future__ import annotations`: typer evaluates option annotations at run time.

import os
import sys
import time
from datetime import UTC, datetime
from typing import Any

import typer

from pricing.errors import GpuplanError, InputError


def open_or_outage(open_ledger: Any) -> tuple[Any, Any]:
    """(the ledger, None), or (None, the LedgerUnreachable) when the database cannot be reached."""
    from launch.journal import LedgerUnreachable

    try:
        return open_ledger(read_only_ok=True), None
    except LedgerUnreachable as exc:
        return None, exc


def _places(provider: str | None, region: str | None) -> set[tuple[str, str]]:
    from gpuplan.paths import ledger_file
    from launch.places import search_places

    extra = {(provider.strip().lower(), region)} if provider and region else set()
    return search_places(extra, ledger_file().with_name("places.json"), os.environ)


def _found(client_for: Any, provider: str | None, region: str | None, why: Any) -> list[Any]:
    from gpuplan.cli.launch_shared import say
    from launch.journal import tagged

    say(f"warning: {why.message}; reading the cloud's tags instead (the ledger learns what `down` ends when it is "
        "back)")
    faults: list[str] = []
    places = _places(provider, region)
    if not places:
        say("warning: no region to look in: give --provider and --region")
    machines = tagged(client_for, places, faults)
    for f in faults:
        say(f"warning: not read: {f}")
    return machines


def ls_from_cloud(why: Any, client_for: Any, provider: str | None, region: str | None, as_json: bool) -> None:
    from gpuplan.cli.options import emit
    from gpuplan.render.table import dump_json

    machines = _found(client_for, provider, region, why)
    rows = [{"launch_id": m.launch_id, "provider": m.provider, "region": m.region, "instance_id": m.info.instance_id,
             "state": m.info.state.value, "expires": m.info.tags.get("gpuplan:expires", "")} for m in machines]
    if as_json:
        emit(dump_json({"launches": [], "from_cloud_tags": rows}))
        return
    for r in rows:
        print(f"{r['launch_id']}: {r['provider']} {r['region']} {r['instance_id']} {r['state']}"
              + (f", expires {r['expires']}" if r["expires"] else ""))
    if not rows:
        print("no machine tagged by gpuplan found")


def down_from_cloud(why: Any, client_for: Any, ids: list[str] | None, all_: bool, all_owners: bool, expired_: bool,
                    yes: bool, timeout: float, poll: float, as_json: bool) -> None:
    import socket

    from gpuplan.cli.launch_shared import say
    from gpuplan.cli.options import emit
    from gpuplan.paths import ledger_file
    from gpuplan.render.table import dump_json
    from launch.journal import end

    if all_ and not all_owners:
        raise InputError(f"{why.message}, and the cloud's tags do not say whose a machine is",
                         "end launches by id (`gpuplan down ID`), --expired ones, or every gpuplan machine these "
                         "credentials see with --all --all-owners")
    machines = _found(client_for, None, None, why)
    at = datetime.now(UTC)
    if ids:
        machines = [m for m in machines if any(m.launch_id.startswith(k) or m.info.instance_id == k for k in ids)]
    elif expired_:
        machines = [m for m in machines if m.expired(at)]
    if not machines:
        say("nothing to end")
        if as_json:
            emit(dump_json({"ended": [], "not_ended": []}))
        return
    names = ", ".join(f"{m.info.instance_id} (gpuplan:id={m.launch_id})" for m in machines)
    if not yes and not expired_:
        if not sys.stdin.isatty():
            raise InputError("refusing to terminate without a confirmation: there is no terminal to ask on",
                             "pass --yes")
        if not typer.confirm(f"Terminate {names}?", default=False, err=True):
            raise InputError("nothing ended")
    journal = ledger_file().with_name("ledger-journal.jsonl")
    end(client_for, machines, journal, host=socket.gethostname())
    left = _wait(client_for, machines, timeout, poll)
    ended = [m.info.instance_id for m in machines if m.info.instance_id not in left]
    if as_json:
        emit(dump_json({"ended": ended, "not_ended": left}))
    else:
        for m in machines:
            done = "ended" if m.info.instance_id in ended else "still ending"
            print(f"{done} {m.info.instance_id} (launch {m.launch_id}); journaled in {journal} for the ledger")
    if left:
        raise GpuplanError(f"{len(left)} machine(s) not seen to end: {', '.join(left)}",
                           "they may still bill: run the same `gpuplan down` again")


def _wait(client_for: Any, machines: list[Any], timeout: float, poll: float) -> list[str]:
    """The instance ids still not ended after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    live = {(m.provider, m.region): [x.info.instance_id for x in machines if (x.provider, x.region) ==
                                     (m.provider, m.region)] for m in machines}
    while True:
        for place, ids in list(live.items()):
            try:
                infos = client_for(*place).describe(ids)
            except GpuplanError:
                continue
            live[place] = [i.instance_id for i in infos if not i.state.is_final]
        left = [i for ids in live.values() for i in ids]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(poll)
