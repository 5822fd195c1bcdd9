"""``gpuplan ls``, ``gpuplan down``, ``gpuplan ssh`` and ``gpuplan logs``: see what was launched, reach it, end it.

``down`` waits until the provider says a machine is gone and records it; nothing is ended without a
confirmation (``--yes``).
"""

# No `from __future__ import annotations`: typer evaluates option annotations at run time.

import os
import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from pricing.errors import GpuplanError, InputError
from gpuplan.cli.app import command_app
from gpuplan.cli.launch_shared import (
    HALF_EVEN, YesOpt, clients, env_seconds, mine, say, say_unrecorded, waiting,
)
from gpuplan.cli.options import JsonOpt, WideOpt, emit, use_wide
from gpuplan.cli.outage import cloud_fallback
from gpuplan.ledger import open_ledger

app = command_app()  # the root loads this module when one of its commands runs (gpuplan.cli.app)


@app.command("ls")
@cloud_fallback("ls")  # the team database unreachable: the clouds by tag
def ls(
    reconcile: Annotated[bool, typer.Option(
        "--reconcile", help="Also find machines tagged by gpuplan that the ledger lacks.")] = False,
    provider: Annotated[Optional[str], typer.Option(
        "--provider", help="With --reconcile: where to look (default: "
        "every provider and region in the ledger).")] = None,
    region: Annotated[Optional[str], typer.Option("--region", help="With --reconcile: region to look in.")] = None,
    show_all: Annotated[bool, typer.Option("--all", help="Include ended launches.")] = False,
    all_owners: Annotated[bool, typer.Option(
        "--all-owners", help="Everyone's launches in a shared ledger, not only yours.")] = False,
    as_json: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """Every machine gpuplan launched: provider state, age, cost so far and cost to TTL."""
    use_wide(wide)
    from gpuplan.render.launch import status_payload
    from launch.service import status
    from gpuplan.render.table import Column, OutputFormat, dump_json, render_rows
    from pricing.money import money_text

    client_for = clients()
    with open_ledger(read_only_ok=True) as ledger:
        ledger.skip_unreadable = True  # one unreadable row must not hide every other machine
        owners = None if all_owners else mine()
        rows = status(ledger, client_for, include_final=show_all, owners=owners)
        ended = 0 if show_all else len([r for r in ledger.launches() if r.state.is_final and
                                        (owners is None or r.owner in owners)])
        others = 0 if owners is None else len({r.id for r in ledger.launches(include_final=show_all)
                                                if r.owner not in owners})
        empty = f"nothing running; {ended} ended launch(es): `gpuplan ls --all` lists them" if ended else \
            "nothing launched"
        untracked: list[Any] = []
        failed: list[tuple[str, str, GpuplanError]] = []
        asked = None
        if reconcile:
            # every region ever launched in, not only the live launches' (none in a new or set-aside ledger)
            places = _places(ledger)
            if provider and region:
                asked = (provider.strip().lower(), region)
                places.add(asked)
            elif provider or region:
                raise InputError("--reconcile needs both --provider and --region to look somewhere new")
            found, failed = _look_everywhere(ledger, client_for, places)
            untracked = [(p, reg, i) for p, reg, machines in found for i in machines]
        say_unrecorded(ledger)
        _say_unreadable(ledger)
    if as_json:
        emit(dump_json({"launches": [status_payload(r) for r in rows],
                        "untracked": [{"provider": p, "region": reg, "instance_id": i.instance_id,
                                       "state": i.state.value, "tags": i.tags} for p, reg, i in untracked],
                        "not_looked": [{"provider": p, "region": reg, "error": str(e)} for p, reg, e in failed]}))
        _said_not_looked(failed, asked)
        return
    table = [{"id": r.record.id, "provider": r.record.provider, "what": f"{r.record.count}x {r.record.instance_type}",
              "where": r.record.zone or r.record.region, "billing": r.record.billing.value,
              "state": r.record.state.value,
              "machines": ", ".join(f"{i.instance_id}={i.state.value}" for i in r.instances) or "-",
              "age": f"{r.age_hours:.1f} h",
              "cost": money_text(r.accrued.amount, r.accrued.currency, rounding=HALF_EVEN),
              "to_ttl": "-" if r.projected is None else money_text(r.projected.amount, r.projected.currency,
                                                                   rounding=HALF_EVEN),
              "expires": "-" if r.record.expires_at is None else
                         f"{r.record.expires_at:%m-%d %H:%M}" + (" EXPIRED" if r.expired else ""),
              "teardown": r.record.teardown or "-", "owner": r.record.owner or "-",
              "project": r.record.project or "-"}
             for r in rows]
    # On a narrow terminal the launch id, its machines, state and cost stay (they are what `down` needs).
    cols = [Column(key=k, header=h, priority=pr, droppable=pr != 1) for k, h, pr in (
            ("id", "launch", 0), ("provider", "provider", 5), ("what", "what", 2), ("where", "where", 3),
            ("billing", "billing", 4), ("state", "state", 0), ("machines", "machines", 1), ("age", "age", 4),
            ("cost", "cost so far", 0), ("to_ttl", "cost to TTL", 3), ("expires", "expires UTC", 2),
            ("teardown", "ends itself", 3), ("owner", "owner", 5), ("project", "project", 5))]
    if others:
        empty = (empty + "; " if not table else "") + f"{others} launch(es) of others in this ledger: --all-owners"
    if table:
        emit(render_rows(table, cols, OutputFormat.TABLE, title="Launches", caption=empty if others else ""))
    else:
        emit(empty)  # one line, not an empty table's frame

    for p, reg, i in untracked:
        say(f"untracked: {p} {reg} {i.instance_id} ({i.state}), tag gpuplan:id={i.tags.get('gpuplan:id', '?')}: "
             f"not in this ledger; end it with `gpuplan down --untracked --provider {p} --region {reg}`")
    for r in rows:
        for n in r.notes:
            say(f"{r.record.id}: {n}")
    _said_not_looked(failed, asked)


def _look_everywhere(ledger: Any, client_for: Any, places: set[tuple[str, str]]) -> tuple[
        list[tuple[str, str, list[Any]]], list[tuple[str, str, GpuplanError]]]:
    """Tagged machines the ledger lacks, per provider and region; a place that cannot be read (no credentials,
    no network) is kept aside with its error, so it never hides what the other places hold."""
    from launch.untracked import reconcile as find_untracked

    found: list[tuple[str, str, list[Any]]] = []
    failed: list[tuple[str, str, GpuplanError]] = []
    for p, reg in sorted(places):
        try:
            found.append((p, reg, find_untracked(ledger, client_for(p, reg), p, reg)))
        except GpuplanError as exc:
            failed.append((p, reg, exc))
    return found, failed


def _said_not_looked(failed: list[tuple[str, str, GpuplanError]], asked: tuple[str, str] | None) -> None:
    """Say each place not looked in; the place the user named (--provider/--region) failing is the command's error."""
    for p, reg, exc in failed:
        if (p, reg) != asked:
            say(f"warning: could not look for untracked machines in {p} {reg}: {exc}")
    for p, reg, exc in failed:
        if (p, reg) == asked:
            raise exc


@app.command()
@cloud_fallback("down")  # ends at the clouds, journaled for the database
def down(
    ids: Annotated[Optional[list[str]], typer.Argument(help="Launch ids (or instance ids) to end.")] = None,
    all_: Annotated[bool, typer.Option("--all", help="End every launch of yours that is not ended.")] = False,
    all_owners: Annotated[bool, typer.Option(
        "--all-owners", help="With --all: everyone's launches in a shared ledger.")] = False,
    expired_: Annotated[bool, typer.Option(
        "--expired", help="End launches past their --ttl, everyone's (for cron).")] = False,
    untracked: Annotated[bool, typer.Option(
        "--untracked", help="End machines tagged by gpuplan that the ledger lacks "
        "(what `ls --reconcile` lists).")] = False,
    provider: Annotated[str | None, typer.Option(
        "--provider", help="With --untracked: also look here (with --region).")] = None,
    region: Annotated[str | None, typer.Option("--region", help="With --untracked: region to look in.")] = None,
    yes: YesOpt = False,
    wait_timeout: Annotated[str, typer.Option(
        "--wait-timeout", help="How long to wait for TERMINATED, e.g. 10m.")] = "10m",
    as_json: JsonOpt = False,
) -> None:
    """Terminate launches, wait until the provider says they are gone, and record it."""
    from gpuplan.render.launch import status_payload
    from launch.service import down as take_down, expired
    from gpuplan.render.table import dump_json
    from planner.units import parse_duration
    from pricing.money import money_text

    if sum((bool(ids), all_, expired_, untracked)) != 1:
        raise InputError("say what to end: launch ids, --all or --expired, or --untracked (one of them)")
    if (provider or region) and not untracked:
        raise InputError("--provider and --region go with --untracked")
    if all_owners and not all_:
        raise InputError("--all-owners goes with --all")
    if bool(provider) != bool(region):
        raise InputError("--untracked needs both --provider and --region to look somewhere new")
    timeout = float(parse_duration(wait_timeout, "--wait-timeout")) * 3600
    poll = env_seconds()
    if untracked:
        _down_untracked(provider, region, yes, timeout, poll, as_json)
        return
    with open_ledger(read_only_ok=True) as ledger:
        ledger.skip_unreadable = True  # one unreadable row must not keep the others from ending
        if ids:
            records = [ledger.launch(i) for i in ids]
            for key, r in zip(ids, records, strict=True):
                if key != r.id:
                    say(f"{key!r} is launch {r.id}")
        elif all_:
            yours = None if all_owners else mine()
            records = [r for r in ledger.launches(include_final=False) if yours is None or r.owner in yours]
        else:
            records = expired(ledger)
        if not records:
            _say_unreadable(ledger)
            say("nothing to end")
            if as_json:
                emit(dump_json({"ended": []}))
            return
        names = ", ".join(f"{r.id} ({r.count}x {r.instance_type})" for r in records)
        if not yes and not expired_:
            if not sys.stdin.isatty():
                raise InputError("refusing to terminate without a confirmation: there is no terminal to ask on",
                                 "pass --yes")
            if not typer.confirm(f"Terminate {names}?", default=False, err=True):
                say("nothing ended")  # the user's answer, not an error: exit 0
                raise typer.Exit(0)
        # ending a GPU machine takes minutes (3 min 20 s seen): said, so the command is not taken for stuck
        with waiting(f"asking the cloud to end {names}; waiting until it says they are gone ..."):
            ended = take_down(ledger, clients(), records, timeout=timeout, poll=poll)
        say_unrecorded(ledger)
        _say_unreadable(ledger)
    left = [e for e in ended if not e.ended]
    if as_json:
        emit(dump_json({"ended": [status_payload(e) for e in ended], "not_ended": [e.record.id for e in left]}))
    else:
        for e in ended:
            if e.ended:
                print(f"ended {e.record.id}: {', '.join(i.instance_id for i in e.instances) or 'no machines'}; "
                      f"cost {money_text(e.accrued.amount, e.accrued.currency, rounding=HALF_EVEN)}")
            for n in e.notes:
                print(f"{e.record.id}: {n}")
    if left:
        raise GpuplanError(f"{len(left)} of {len(ended)} launch(es) not seen to end: "
                           f"{', '.join(e.record.id for e in left)}",
                           "they may still bill: check `gpuplan ls` and run the same `gpuplan down` again")


def _login(launch_id: str, node: int, identity: Path | None = None) -> tuple[str, str, Path | None]:
    """The recorded address and instance id of node ``node`` of a live launch (an instance id names its own), and
    the private key to log in with: ``identity`` (-i), else the private half of the key the launch was given."""
    from launch.login import identity_for, recorded_key

    if node < 0:
        raise InputError(f"node {node} does not exist: nodes count from 0")
    with open_ledger(read_only_ok=True) as ledger:
        record = ledger.launch(launch_id)
        machines = ledger.instances(record.id)
        recorded = recorded_key(ledger, record.id)
    if record.state.is_final:
        raise InputError(f"launch {record.id} has ended ({record.state.value})", "`gpuplan ls` lists the running ones")
    if not machines:
        raise InputError(f"launch {record.id} has no machine recorded yet", "`gpuplan ls` asks the cloud for it")
    ids = [m.instance_id for m in machines]
    if launch_id in ids:  # an instance id names its own machine
        node = ids.index(launch_id)
    if node >= len(machines):
        raise InputError(f"launch {record.id} has {len(machines)} machine(s): nodes 0 to {len(machines) - 1}")
    m = machines[node]
    address = m.public_ip or m.private_ip
    if address is None:
        raise InputError(f"{m.instance_id} has no address recorded yet", "`gpuplan ls` reads it once the cloud "
                         "assigns one")
    if m.state.is_final:
        raise InputError(f"{m.instance_id} has ended ({m.state.value})")
    if identity is None:
        identity, why = identity_for(record.id, recorded)
        if why:
            say(f"note: {why}")
    return address, m.instance_id, identity


def _exec_ssh(address: str, identity: Path | None, print_only: bool, remote: list[str] | None = None) -> None:
    """Run ssh in place of this process (or print the command): the session is the user's from here."""
    import shlex

    from providers.ssh_keys import ssh_command

    command = ssh_command(address, identity, remote or ())
    if print_only:
        print(shlex.join(command))
        return
    # ssh itself prints nothing while it connects (a machine still booting: up to its 15 s ConnectTimeout)
    say(f"connecting to {address} ...")
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        raise InputError(f"cannot run ssh: {exc.strerror or exc}",
                         f"install an OpenSSH client, or run: {shlex.join(command)}") from None


IdentityOpt = Annotated[
    Optional[Path], typer.Option("--identity", "-i", help="Private key to log in with (ssh -i).", metavar="PATH")
]
PrintOpt = Annotated[bool, typer.Option("--print", help="Print the ssh command instead of running it.")]
NodeArg = Annotated[int, typer.Argument(help="Which machine of a --count launch, from 0.")]


@app.command()
def ssh(
    launch_id: Annotated[str, typer.Argument(help="Launch id (or one of its instance ids), as `gpuplan ls` shows.")],
    node: NodeArg = 0,
    identity: IdentityOpt = None,
    print_only: PrintOpt = False,
) -> None:
    """Log in to a launched machine over SSH (or print the command)."""
    address, _, identity = _login(launch_id, node, identity)
    _exec_ssh(address, identity, print_only)


@app.command()
def logs(
    launch_id: Annotated[str, typer.Argument(help="Launch id (or one of its instance ids), as `gpuplan ls` shows.")],
    node: NodeArg = 0,
    file: Annotated[str, typer.Option(
        "--file", help="run, setup, state (the boot steps), driver, idle, end or boot.")] = "run",
    follow: Annotated[bool, typer.Option(
        "--follow", "-f", help="Keep printing as the log grows (Ctrl-C stops).")] = False,
    lines: Annotated[int, typer.Option("--lines", "-n", help="How many of the last lines to show.")] = 100,
    identity: IdentityOpt = None,
    print_only: PrintOpt = False,
) -> None:
    """Show a launched machine's job output (or another boot log) over SSH."""
    from launch.boot import LOG_DIR, LOG_FILES

    name = file.strip().lower()
    if name not in LOG_FILES:
        raise InputError(f"no log {file!r}", f"use one of {', '.join(LOG_FILES)}")
    if lines < 1:
        raise InputError("--lines must be 1 or more")
    address, _, identity = _login(launch_id, node, identity)
    path = f"{LOG_DIR}/{name}" if name == "state" else f"{LOG_DIR}/{name}.log"
    # the boot script runs as root and its logs are root's: the login user reads them through sudo
    _exec_ssh(address, identity, print_only,
              ["sudo", "-n", "tail", "-n", str(lines), *(["-F"] if follow else []), path])


def _say_unreadable(ledger: Any) -> None:
    for what in ledger.unreadable:
        say(f"warning: {what}; passed over (`gpuplan ls --reconcile` finds its machines by their tag gpuplan:id, "
            "and `gpuplan down --untracked` ends them)")


def _places(ledger: Any) -> set[tuple[str, str]]:
    """Where tagged machines may be: the ledger's places, those remembered beside it (they outlive a damaged ledger),
    and the regions the environment names."""
    from gpuplan.paths import ledger_file
    from launch.places import search_places

    return search_places({(r.provider, r.region) for r in ledger.launches()}, ledger_file().with_name("places.json"),
                         os.environ)


def _down_untracked(provider: str | None, region: str | None, yes: bool, timeout: float, poll: float,
                    as_json: bool) -> None:
    """End machines tagged by gpuplan that no ledger launch knows, where the ledger has launched and where asked."""
    from gpuplan.render.table import dump_json
    from launch.untracked import end_untracked

    client_for = clients()
    with open_ledger(read_only_ok=True) as ledger:
        ledger.skip_unreadable = True
        places = _places(ledger)
        if provider and region:
            places.add((provider.strip().lower(), region))
        found, failed = _look_everywhere(ledger, client_for, places)
    found = [(p, reg, machines) for p, reg, machines in found if machines]
    for p, reg, exc in failed:  # said first: the machines found elsewhere are still ended
        say(f"warning: could not look for untracked machines in {p} {reg}: {exc}")
    names = ", ".join(f"{i.instance_id} ({p} {reg}, tag gpuplan:id={i.tags.get('gpuplan:id', '?')})"
                      for p, reg, machines in found for i in machines)
    not_looked = ", ".join(f"{p} {reg}" for p, reg, _ in failed)
    if not found:
        say("nothing untracked to end" + (f" where gpuplan could look (not in {not_looked})" if failed else ""))
        if as_json:
            emit(dump_json({"untracked_ended": [], "untracked_still_ending": []}))
        if failed:
            raise GpuplanError(f"could not look for untracked machines in {not_looked}", "fix what each warning "
                               "says, then run `gpuplan down --untracked` again")
        return
    if not yes:
        if not sys.stdin.isatty():
            raise InputError("refusing to terminate without a confirmation: there is no terminal to ask on",
                             "pass --yes")
        if not typer.confirm(f"Terminate {names}?", default=False, err=True):
            say("nothing ended")  # the user's answer, not an error: exit 0
            raise typer.Exit(0)
    ended: list[str] = []
    still: list[str] = []
    for p, reg, machines in found:
        with waiting(f"ending {len(machines)} untracked machine(s) in {p} {reg} ..."):
            done, left = end_untracked(client_for(p, reg), machines, timeout=timeout, poll=poll)
        ended += done
        still += left
    if as_json:
        emit(dump_json({"untracked_ended": ended, "untracked_still_ending": still}))
    else:
        for i in ended:
            print(f"ended untracked {i}")
        for i in still:
            print(f"{i}: still ending")
    if still:
        raise GpuplanError(f"{len(still)} untracked machine(s) not seen to end: {', '.join(still)}",
                           "run `gpuplan down --untracked` again")
    if failed:
        raise GpuplanError(f"could not look for untracked machines in {not_looked}", "fix what each warning says, "
                           "then run `gpuplan down --untracked` again")
