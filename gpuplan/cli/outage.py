"""``ls`` and ``down`` while the team's ledger database is unreachable: the clouds read by tag, ends journaled.

:func:`cloud_fallback` wraps the two commands: when the PostgreSQL ledger cannot be reached (at open or
mid-command; a wrong password or a missing database is not an outage and still stops the command), the
command is done again from the clouds (:mod:`launch.outage`) in the places launches from here went (kept
in the local journal) and the regions the cloud configuration names. ``down`` records every change in
the journal; the next command that reaches the database replays it (:func:`gpuplan.ledger.open_ledger`).
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import Any, TypeVar

from gpuplan.cli.launch_shared import clients, env_seconds, mine, say
from pricing.errors import GpuplanError, InputError, StateError

F = TypeVar("F", bound=Callable[..., Any])


def cloud_fallback(command: str) -> Callable[[F], F]:
    """Run the command; if the ledger database turns out unreachable, run ``command``'s cloud-side version."""

    def wrap(fn: F) -> F:
        @functools.wraps(fn)
        def run(**kwargs: Any) -> Any:
            try:
                return fn(**kwargs)
            except Exception as exc:
                from launch.outage import unreachable

                if not unreachable(exc):
                    raise
                why = _reason(exc)
            (_ls if command == "ls" else _down)(why, **kwargs)
            return None

        return run  # type: ignore[return-value]

    return wrap


def _url() -> str:
    from gpuplan.settings import load_settings

    return load_settings().ledger_url.strip()


def _reason(exc: Exception) -> str:
    """Why the database could not be used, in one line, with no password in it whatever the driver quoted."""
    import re
    from urllib.parse import quote, unquote

    from psycopg.conninfo import conninfo_to_dict

    from pricing.text import printable, without_url_credentials

    text = exc.message if isinstance(exc, GpuplanError) else f"the ledger database failed: {exc}"
    text = without_url_credentials(" ".join(printable(text).split()))
    try:
        password = str(conninfo_to_dict(_url()).get("password") or "")
    except Exception:  # noqa: BLE001 - a URL the driver cannot read has no password it could have quoted
        password = ""
    text = re.sub(r"(password=)[^&\s]*", r"\1***", text)  # a password in the URL's query, in whatever quoting
    for secret in sorted({password, unquote(password), quote(password, safe="")} - {""}, key=len, reverse=True):
        text = text.replace(secret, "***")
    return text


def _journal() -> Any:
    from gpuplan.ledger import journal_file
    from launch.journal import Journal

    return Journal(journal_file())


def _places(why: str, journal: Any, provider: str | None, region: str | None) -> set[tuple[str, str]]:
    from gpuplan.paths import ledger_file
    from launch.places import search_places

    # the places launches from here went, those reconcile remembers beside the ledger, and the environment's regions
    places = search_places(journal.places() if journal is not None else set(),
                           ledger_file().with_name("places.json"), os.environ)
    if provider and region:
        places.add((provider.strip().lower(), region.strip()))
    if not places:
        raise StateError(f"{why}; and no place to look for its machines at the clouds is known (no launch was "
                         "made from here)", "give --provider and --region to read one region's tagged machines, "
                         "or run the command again when the database is back")
    return places


def _read(why: str, provider: str | None, region: str | None) -> tuple[Any, list[Any], dict[str, str], str]:
    from launch.outage import read_cloud

    try:
        journal = _journal()
    except Exception as exc:  # noqa: BLE001 - an unwritable folder or a damaged file: the environment's regions remain
        say(f"warning: the local journal cannot be opened: {exc}")
        journal = None
    places = _places(why, journal, provider, region)
    where = ", ".join(f"{p} {r}" for p, r in sorted(places))
    say(f"warning: {why}")
    say(f"the ledger database is unreachable: machines read from the clouds by their tag gpuplan:id in {where} "
        "(prices, owners and ended launches are in the database, not shown)")
    found, notes = read_cloud(places, clients())
    for n in notes:
        say(f"warning: {n}")
    return journal, found, journal.launched_here() if journal is not None else {}, where


def _yours(found: list[Any], here: dict[str, str], all_owners: bool) -> list[Any]:
    """Launches made from here by you (the cloud's tags name no owner), or every one found with --all-owners."""
    return found if all_owners else [c for c in found if c.id in here and here[c.id] in mine()]


def _ls(why: str, *, reconcile: bool = False, provider: str | None = None, region: str | None = None,
        show_all: bool = False, all_owners: bool = False, as_json: bool = False, wide: bool = False) -> None:
    from gpuplan.cli.options import emit, use_wide
    from gpuplan.render.table import Column, OutputFormat, dump_json, render_rows

    use_wide(wide)
    journal, found, here, where = _read(why, provider, region)
    rows = _yours(found, here, all_owners)
    if as_json:
        emit(dump_json({"ledger_unreachable": why, "searched": where, "launches": [
            {"id": c.id, "provider": c.provider, "region": c.region, "zone": c.zone, "instance_type": c.instance_type,
             "instance_ids": [m.instance_id for m in c.machines], "launched_here": c.id in here,
             "machines": [{"instance_id": m.instance_id, "state": m.state.value} for m in c.machines],
             "expires_at": None if c.expires_at is None else c.expires_at.isoformat()} for c in rows],
            "untracked": []}))
    else:
        table = [{"id": c.id, "provider": c.provider, "where": c.zone, "what": f"{len(c.machines)}x {c.instance_type}",
                  "machines": ", ".join(f"{m.instance_id}={m.state.value}" for m in c.machines),
                  "expires": "-" if c.expires_at is None else f"{c.expires_at:%m-%d %H:%M}"} for c in rows]
        cols = [Column(key=k, header=h, priority=pr, droppable=pr != 0) for k, h, pr in (
                ("id", "launch", 0), ("provider", "provider", 3), ("where", "where", 2), ("what", "what", 2),
                ("machines", "machines", 0), ("expires", "expires UTC", 1))]
        emit(render_rows(table, cols, OutputFormat.TABLE, title="Machines at the clouds (ledger database unreachable)",
                         caption="" if table else "no live machine of yours found"))
    if others := len(found) - len(rows):
        say(f"{others} launch(es) not made from here by you hold machines there: --all-owners lists them")
    if journal is not None:
        journal.db.close()


def _down(why: str, *, ids: list[str] | None = None, all_: bool = False, all_owners: bool = False,
          expired_: bool = False, untracked: bool = False, provider: str | None = None, region: str | None = None,
          yes: bool = False, wait_timeout: str = "10m", as_json: bool = False) -> None:
    from gpuplan.cli.options import emit
    from gpuplan.render.table import dump_json
    from launch.journal import database_key
    from launch.ledger import now
    from launch.outage import end_at_cloud
    from planner.units import parse_duration

    if untracked:
        raise StateError(f"{why}; which machines the database lacks cannot be told while it is away",
                         "`gpuplan down --all --all-owners` ends every machine gpuplan tagged where launches went, "
                         "or run `gpuplan down --untracked` again when the database is back")
    timeout = float(parse_duration(wait_timeout, "--wait-timeout")) * 3600
    poll = env_seconds()
    journal, found, here, where = _read(why, None, None)
    if journal is None:
        raise StateError(f"{why}; the local journal cannot be written, so an end at the cloud could not be recorded",
                         "make the data folder writable, or run the command again when the database is back")
    with journal:
        if ids:
            records = [_match(found, key, where) for key in ids]
        elif all_:
            records = _yours(found, here, all_owners)
        else:
            at = now()
            records = [c for c in found if c.expires_at is not None and c.expires_at <= at]
        if not records:
            say("nothing to end at the clouds searched")
            if as_json:
                emit(dump_json({"ended": [], "ledger_unreachable": why}))
            return
        names = ", ".join(f"{c.id} ({len(c.machines)}x {c.instance_type} in {c.provider} {c.zone})" for c in records)
        if not yes and not expired_:
            if not sys.stdin.isatty():
                raise InputError("refusing to terminate without a confirmation: there is no terminal to ask on",
                                 "pass --yes")
            import typer

            if not typer.confirm(f"Terminate {names}?", default=False, err=True):
                raise InputError("nothing ended")
        ended = end_at_cloud(records, clients(), journal, database_key(_url()), timeout=timeout, poll=poll)
        for f in journal.failed:
            say(f"warning: not journaled ({f}); the next `gpuplan ls` with the database back reads it from the cloud")
    left = [e for e in ended if e.still or e.note.startswith("not ended")]
    if as_json:
        emit(dump_json({"ledger_unreachable": why, "ended": [
            {"id": e.launch.id, "provider": e.launch.provider, "region": e.launch.region, "instance_ids": e.ended,
             "still_ending": e.still, "note": e.note} for e in ended], "not_ended": [e.launch.id for e in left]}))
    else:
        for e in ended:
            if e.ended or not e.still:
                print(f"ended {e.launch.id} at the cloud: {', '.join(e.ended) or 'no machines'}; journaled, written "
                      "to the ledger database when it is back")
            if e.note:
                print(f"{e.launch.id}: {e.note}")
    if left:
        raise GpuplanError(f"{len(left)} of {len(ended)} launch(es) not seen to end: "
                           f"{', '.join(e.launch.id for e in left)}",
                           "they may still bill: run the same `gpuplan down` again")


def _match(found: list[Any], key: str, where: str) -> Any:
    """A launch found at the clouds by its id, a unique id prefix, or one of its instance ids."""
    hits = [c for c in found if c.id == key] or [c for c in found if key and c.id.startswith(key)] or \
        [c for c in found if key in {m.instance_id for m in c.machines}]
    if len(hits) != 1:
        why = "matches several launches" if hits else f"holds no live machine at the clouds searched ({where})"
        raise InputError(f"{key!r} {why}", "`gpuplan ls` lists what the clouds show while the database is away")
    return hits[0]
