"""``gpuplan launch`` and ``gpuplan quote``: start what the plan chose, after quoting it.

Every launch is written to the ledger before the provider is asked and after every answer;
nothing that can spend money runs without a confirmation (``--yes``), and ``--dry-run``
asks the provider to validate without creating anything.
"""

# No `from __future__ import annotations`: typer evaluates option annotations at run time.

import os
import sys
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from pricing.errors import GpuplanError, InputError
from gpuplan.cli.app import command_app
from gpuplan.cli.extras_opts import (
    BandwidthOpt, DiskGbOpt, DiskTypeOpt, EgressGbOpt, SetupMinutesOpt, StorageGbOpt, extras_from,
)
from gpuplan.cli.launch_shared import HALF_EVEN, YesOpt, clients, env_seconds, os_user, say, waiting
from gpuplan.cli.options import JsonOpt, emit, settings_from
from gpuplan.ledger import open_ledger

app = command_app()  # the root loads this module when one of its commands runs (gpuplan.cli.app)

# Flags two commands share (launch and quote; launch and down), declared once so their help
# and meaning cannot drift apart.
BillingOpt = Annotated[str, typer.Option("--billing", help="hourly, monthly or spot.")]


def _given(value: str | None, flag: str) -> str | None:
    """A flag's value, refusing an empty one: a script's unset variable must not mean "none" (no TTL, no cap)."""
    if value is not None and not value.strip():
        raise InputError(f"{flag} is empty", f"give {flag} a value or leave the flag out")
    return value


def _crash_point(step: str) -> None:
    """Die here, as kill -9 would, when GPUPLAN_CRASH_AT names this step: the crash tests' seam."""
    if os.environ.get("GPUPLAN_CRASH_AT") == step:
        import signal

        os.kill(os.getpid(), signal.SIGKILL)


@app.command()
def launch(
    provider: Annotated[str | None, typer.Option(
        "--provider", help="tencent, aws or lambda; with --via also gcp and azure.")] = None,
    instance_type: Annotated[Optional[str], typer.Option(
        "--instance-type", help="e.g. GN10Xp.20XLARGE320, p3.16xlarge.")] = None,
    region: Annotated[Optional[str], typer.Option("--region", help="Region, e.g. ap-guangzhou, us-east-1.")] = None,
    zone: Annotated[Optional[str], typer.Option(
        "--zone", help="Zone, e.g. ap-guangzhou-3 (pins it: no failover).")] = None,
    image: Annotated[Optional[str], typer.Option(
        "--image", help="img-... or ami-...; default: the provider's GPU image (said).")] = None,
    billing: BillingOpt = "hourly",
    months: Annotated[int, typer.Option("--months", help="Months to prepay with --billing monthly.")] = 1,
    count: Annotated[int | None, typer.Option(
        "--count", help="Identical machines to launch together (one cluster; default 1, or the plan's nodes).")] = None,
    ttl: Annotated[Optional[str], typer.Option(
        "--ttl", help="Time to live, e.g. 6h, 2d: `gpuplan down --expired` ends it then.")] = None,
    max_cost: Annotated[Optional[str], typer.Option(
        "--max-cost", help="Refuse if the projected cost exceeds this, e.g. 500 or '3000 CNY'.")] = None,
    from_plan: Annotated[bool, typer.Option(
        "--from-plan", help="Launch the winner of the last `gpuplan plan` (said, with its age; "
        "or --plan FILE).")] = False,
    plan_file: Annotated[Optional[Path], typer.Option(
        "--plan", "--plan-file", help="A `gpuplan plan --json` file (or a kept plan) to launch, at any age.")] = None,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Ask the provider to validate the launch; create nothing.")] = False,
    ssh_key: Annotated[Optional[Path], typer.Option(
        "--ssh-key", help="OpenSSH public key to log in with, imported once per region as a key pair and reused. "
        "[default: ~/.ssh/id_ed25519.pub or id_rsa.pub if present]", metavar="PATH")] = None,
    no_ssh_key: Annotated[bool, typer.Option(
        "--no-ssh-key", help="Launch with no key pair (Tencent mails a password; AWS: EC2 Instance Connect).")] = False,
    ssh_from: Annotated[Optional[str], typer.Option(
        "--ssh-from", help="Let SSH in only from these addresses or CIDR blocks, comma-separated (your address: "
        "curl https://checkip.amazonaws.com). [default: anywhere]", metavar="CIDR")] = None,
    disk_gb: DiskGbOpt = None,
    disk_type: DiskTypeOpt = None,
    egress_gb: EgressGbOpt = None,
    storage_gb: StorageGbOpt = None,
    setup_minutes: SetupMinutesOpt = None,
    bandwidth_mbps: BandwidthOpt = None,
    setup: Annotated[Optional[str], typer.Option(
        "--setup", help="Set-up run on every machine at boot, after the GPU driver: a shell script file, "
        "or a command in quotes.", metavar="FILE|CMD")] = None,
    run: Annotated[Optional[str], typer.Option(
        "--run", help="The job, run after --setup as the login user (a script file or a command in quotes); "
        "its output goes to /var/log/gpuplan/run.log: `gpuplan logs ID`.", metavar="FILE|CMD")] = None,
    down_when: Annotated[Optional[str], typer.Option(
        "--down-when", help="done: each machine ends itself when --run exits (the disk goes with it: "
        "save results elsewhere).", metavar="done")] = None,
    idle: Annotated[Optional[str], typer.Option(
        "--idle", help="End a machine once its GPUs sit idle this long "
        "(none above 5% utilization), e.g. 30m.", metavar="DURATION")] = None,
    driver: Annotated[Optional[str], typer.Option(
        "--driver", help="check, install or skip the NVIDIA driver at boot. [default: install on an image without one "
        "(Tencent's public images), else check]", metavar="check|install|skip")] = None,
    cam_role: Annotated[Optional[str], typer.Option(
        "--cam-role", help="Tencent: the CAM role the machines run with; it lets them end themselves (--down-when, "
        "--idle).", metavar="NAME")] = None,
    via: Annotated[str | None, typer.Option(
        "--via", metavar="skypilot|dstack",
        help="Launch through an engine you run: skypilot (sky launch; spot: sky jobs launch) or dstack (dstack "
             "apply); gpuplan quotes, budgets, records, lists and ends it.")] = None,
    owner: Annotated[Optional[str], typer.Option(
        "--owner", help="Who the launch is recorded for. [default: your OS user name]")] = None,
    project: Annotated[Optional[str], typer.Option(
        "--project", help="What the launch is for; budgets hold per project. [default: the config's project]")] = None,
    yes: YesOpt = False,
    wait_timeout: Annotated[str, typer.Option(
        "--wait-timeout", help="How long to wait for RUNNING, e.g. 20m.")] = "20m",
    as_json: JsonOpt = False,
) -> None:
    """Launch machines (after showing the price and asking), record them, wait until they run."""
    from pricing.billing import BillingMode
    from pricing.catalog import PSEUDO_REGIONS
    from gpuplan.settings import load_catalog
    from planner.units import parse_duration, parse_enum, parse_money
    from launch.service import (
        LaunchSpec, boot_driver, check_boot, check_budget, quote_launch, start, ttl_before_the_run,
    )
    from providers.ssh_keys import parse_ssh_from

    # Every flag is read here, before anything that can start a machine: a bad value must start nothing.
    provider, instance_type, region, zone, image, ttl, max_cost = (
        _given(v, f) for v, f in ((provider, "--provider"), (instance_type, "--instance-type"), (region, "--region"),
                                  (zone, "--zone"), (image, "--image"), (ttl, "--ttl"), (max_cost, "--max-cost")))
    wait_hours = parse_duration(wait_timeout, "--wait-timeout")
    poll = env_seconds()
    # how long a several-node launch keeps trying to hand the nodes their ranks while sshd comes up
    push_s = env_seconds("GPUPLAN_RENDEZVOUS_PUSH_SECONDS", "300")
    boot = _boot_spec(setup, run, down_when, idle, driver, cam_role)
    key = _ssh_key(ssh_key, no_ssh_key)
    s = settings_from()
    nodes = 1 if count is None else count
    run_hours: float | None = None  # how long the plan expects the job to run, when launching a plan
    if from_plan or plan_file is not None:
        if provider or instance_type:
            raise InputError("give either --from-plan or --provider/--instance-type, not both")
        from gpuplan.last_plan import read_winner

        w = read_winner(plan_file)
        say(f"plan: {w['plan_named']}: {w.get('nodes') or 1} x {w['offer']} {w['billing']} on {w['provider']}")
        provider, instance_type = w["provider"], w["offer"]
        billing = w["billing"]
        region = region or (None if w.get("region") in PSEUDO_REGIONS else w.get("region"))
        zone = zone or w.get("zone")
        planned = int(w.get("nodes") or 1)
        if count is not None and count != planned:
            raise InputError(f"the plan's winner runs on {planned} node(s), --count says {count}",
                             "leave --count out to launch the plan as it is, or plan again with --nodes")
        nodes = planned
        run_hours = w.get("wall_hours") if isinstance(w.get("wall_hours"), (int, float)) else None
        priced = w.get("priced_extras") or {}
        disk_gb = disk_gb if disk_gb is not None else priced.get("disk_gb")
        disk_type = disk_type if disk_type is not None else priced.get("disk_type")
        egress_gb = egress_gb if egress_gb is not None else priced.get("egress_gb")
        storage_gb = storage_gb if storage_gb is not None else priced.get("storage_gb")
        setup_minutes = setup_minutes if setup_minutes is not None else priced.get("setup_minutes")
        bandwidth_mbps = bandwidth_mbps if bandwidth_mbps is not None else priced.get("bandwidth_mbps")
    if provider and via is None:  # missing credentials: one line (exit 3, naming the variables) before anything else
        from providers.registry import check_credentials

        check_credentials(provider.strip().lower())
    if not provider or not instance_type:
        raise InputError("say what to launch: --provider and --instance-type, or --from-plan",
                         "e.g. gpuplan launch --provider aws --instance-type p3.2xlarge --region us-east-1")
    spec = LaunchSpec(
        provider=provider.strip().lower(), instance_type=instance_type, region=region, zone=zone,
        billing=parse_enum(BillingMode, billing, "--billing"), months=months, count=nodes, image=image,
        ttl_hours=parse_duration(ttl, "--ttl") if ttl is not None else None,
        max_cost=parse_money(max_cost, s.currency, "--max-cost") if max_cost is not None else None, dry_run=dry_run,
        extras=extras_from(disk_gb, disk_type, egress_gb, storage_gb, setup_minutes, bandwidth_mbps), ssh_key=key,
        boot=boot, ssh_from=parse_ssh_from(ssh_from) if _given(ssh_from, "--ssh-from") is not None else (),
        owner=_name(_given(owner, "--owner") or os_user(), "--owner"),
        project=_name(_given(project, "--project") or s.project, "--project"), host=_host(),
    )
    if nodes < 1 or months < 1:
        raise InputError("--count and --months must be 1 or more")
    if via is not None:  # the engine sets the machines up and ends them: its own checks, before any quote
        from gpuplan.cli.launch_via import check_via

        via = check_via(via, spec.provider, boot)
    elif boot is not None:
        from providers.registry import compute_class

        check_boot(spec, compute_class(spec.provider))
        # the confirmation names the driver step the machines will take, not both possibilities
        import dataclasses

        driver = boot_driver(spec, compute_class(spec.provider))
        spec = spec.model_copy(update={"boot": dataclasses.replace(boot, driver=driver)})
    cat = load_catalog(s)
    q = quote_launch(spec, cat, hours_per_month=s.hours_per_month)
    if (live := _live_price(spec, q.region, q.zone)) is not None:
        q = quote_launch(spec, cat, hours_per_month=s.hours_per_month, live=live)
    fx = _fixed_fx(q, s.fx_table())  # the ledger's rates, never this environment's: a budget holds for everyone
    check_budget(q, fx)
    _show_quote(q)
    if not dry_run:
        from launch.ledger import now
        from launch.spend import budget_check

        with open_ledger() as ledger:  # said before the question; held again in the intent's transaction
            budget_check(spec.project, spec.owner, q.projected, fx, now())(ledger)
    if (short := ttl_before_the_run(spec.ttl_hours, run_hours)) is not None:
        say(f"warning: {short}")
    if not dry_run and not yes:
        if not sys.stdin.isatty():
            raise InputError("refusing to launch without a confirmation: there is no terminal to ask on",
                             "pass --yes to launch, or --dry-run to validate only")
        if not typer.confirm("Launch?", default=False, err=True):
            say("not launched")  # the user's answer, not an error: exit 0
            raise typer.Exit(0)
    if via is not None:
        from gpuplan.cli.launch_via import launch_via

        launch_via(via, q, cat, boot, dry_run=dry_run, as_json=as_json, fx=s.fx_table(), wait_hours=wait_hours,
                   poll=poll, steps=(_crash_point, _wait, _report_launch))
        return
    client = clients()(spec.provider, q.region)
    if not dry_run:  # kept outside the ledger too: `ls --reconcile` looks here even when the ledger is lost
        from gpuplan.paths import ledger_file
        from launch.places import remember

        remember(ledger_file().with_name("places.json"), spec.provider, q.region)
    with open_ledger() as ledger:
        out = start(q, ledger=ledger, client=client, progress=say, checkpoint=_crash_point, fx=fx)
        if not dry_run:
            out = _wait(out, ledger, client, wait_hours, poll)
    if not dry_run and boot is not None and boot.run is not None and nodes > 1:
        _hand_out_ranks(out, key, push_s)
    _report_launch(out, dry_run, as_json, cat, runs_job=boot is not None and boot.run is not None, key=key)


def _fixed_fx(q: Any, mine: Any) -> Any:
    """The exchange rates budgets and --max-cost are held at (fixed in the ledger), saying where they differ from the
    caller's own."""
    from launch.budget_money import differs, fixed_fx

    used = {q.projected.currency} if q.projected is not None else set()
    if q.spec.max_cost is not None:
        used.add(q.spec.max_cost.currency)
    from launch.ledger_pg import LedgerUnreachable

    try:
        with open_ledger(read_only_ok=True) as ledger:
            fx = fixed_fx(ledger)
            used |= {cap.currency for _, _, cap in ledger.budgets()}
    except LedgerUnreachable:
        if not q.spec.dry_run:  # a launch must record first: said as the database's fault, exit 8
            raise
        from pricing.money import Fx, shipped_fx_rates

        fx = Fx(list(shipped_fx_rates()))  # a dry run records nothing: the shipped rates the ledger would fix
    for line in differs(fx, mine, used):
        say(f"note: {line}")
    return fx


def _boot_spec(setup: str | None, run: str | None, down_when: str | None, idle: str | None, driver: str | None,
               cam_role: str | None) -> Any:
    """What each machine does at boot, or None when no flag asks for a boot script."""
    if all(v is None for v in (setup, run, down_when, idle, driver, cam_role)):
        return None
    from launch.boot import BootSpec, Driver, read_script
    from planner.units import parse_duration, parse_enum

    if down_when is not None and down_when.strip().lower() != "done":
        raise InputError(f"--down-when {down_when!r}: the one condition is 'done' (the --run command exited)",
                         "use --down-when done, or --idle 30m for idle GPUs")
    idle_s = None
    if idle is not None:
        idle_s = int(parse_duration(idle, "--idle") * 3600)
        if idle_s < 60:
            raise InputError(f"--idle {idle} is under a minute: the GPUs are read once a minute", "e.g. --idle 30m")
    return BootSpec(setup=read_script(setup, "--setup") if setup is not None else None,
                    run=read_script(run, "--run") if run is not None else None,
                    down_when_done=down_when is not None, idle_seconds=idle_s,
                    driver=parse_enum(Driver, driver, "--driver") if driver is not None else None,
                    cam_role=_given(cam_role, "--cam-role"))


def _host() -> str:
    import socket

    return socket.gethostname()


def _name(value: str, flag: str) -> str:
    """An owner or project name: printable, one line, at most 64 characters."""
    from pricing.text import printable

    value = value.strip()
    if len(value) > 64 or printable(value) != value or "\n" in value:
        raise InputError(f"{flag} {value[:64]!r} is not a name", "letters, digits and punctuation, at most 64")
    return value


def _hand_out_ranks(out: Any, key: Any, deadline_s: float) -> None:
    """Several nodes with a --run: tell each node its rank over SSH (its run waits for it), or say how to."""
    from launch.rendezvous import Node, manual_lines, push
    from providers.ssh_keys import private_half

    nodes = [Node(i.instance_id, i.public_ip or i.private_ip or "", i.private_ip or i.public_ip or "")
             for i in out.instances]
    # the private half beside the public key (id_ed25519 for id_ed25519.pub); else ssh's own defaults and agent
    private = private_half(key.path) if key is not None else None
    identity = private if private is not None and private.is_file() else None
    if len(nodes) == out.record.count and all(n.address for n in nodes):
        # sshd comes up minutes after RUNNING (5 min 26 s seen): said, so the command is not taken for stuck
        with waiting(f"handing each of the {len(nodes)} nodes its torchrun rank over SSH as sshd comes up "
                     f"(up to {deadline_s:.0f} s) ..."):
            failed = push(nodes, identity, deadline_s=deadline_s)
        if not failed:
            say(f"rendezvous: node 0 ({nodes[0].private_ip}) leads; every node's run has started or will")
            return
        for f in failed:
            say(f"rendezvous: not handed over: {f}")
    say("the nodes' runs wait (up to 30 min) for their rank; hand it over yourself once you can log in:")
    for line in manual_lines(nodes, identity):
        say(f"  {line}")


def _ssh_key(path: Path | None, none: bool) -> Any:
    """The public key to log in with: --ssh-key, else the user's usual one (said), else none."""
    from providers.ssh_keys import default_key_path, read_public_key

    if none:
        if path is not None:
            raise InputError("give --ssh-key or --no-ssh-key, not both")
        return None
    chosen = path if path is not None else default_key_path(Path.home())
    if chosen is None:
        return None
    key = read_public_key(chosen)
    say(f"login key: {chosen} ({key.fingerprint}), key pair {key.name}" +
         ("" if path is not None else " (the default; --ssh-key picks another, --no-ssh-key none)"))
    return key


def _live_price(spec: Any, region: str, zone: str | None) -> Any:
    """The provider's own price for this exact launch where it has a price inquiry and the zone is known (Tencent),
    so the confirmation shows what `gpuplan quote` shows; None elsewhere, or when the inquiry fails (said)."""
    from pricing.billing import BillingMode
    from pricing.errors import GpuplanError
    from providers.registry import CLOUDS, price_inquiry
    from launch.service import LivePrice

    cloud = CLOUDS.get(spec.provider)
    if cloud is None or cloud.price_inquiry is None or not zone:
        return None
    try:
        q = price_inquiry(spec.provider)(None, region, zone, spec.instance_type, spec.billing, spec.months, spec.image)
    except GpuplanError as exc:
        say(f"note: no live quote ({exc.message}); the launch is priced at the catalog's list price")
        return None
    per = Decimal(spec.months) if spec.billing is BillingMode.MONTHLY else Decimal(1)
    return LivePrice(rate=q.payable / per, source=q.source)


def _show_quote(q: Any) -> None:
    from pricing.money import money_text, rate_text

    spec = q.spec
    what = f"{spec.count} x {q.offer} ({spec.billing}) in {q.zone or q.region}"
    unit = "month" if spec.billing == "monthly" else "hour"
    say(f"Launch: {what}")
    say(f"  price: {rate_text(q.unit_price.amount, q.unit_price.currency)} per machine-{unit}"
        f"{' (estimate)' if q.estimate else ''}")
    say(f"  billing rule: {q.rule}")
    if q.extras and q.instance_projected is not None:
        say(f"  instances: "
            f"{money_text(q.instance_projected.amount, q.instance_projected.currency, rounding=HALF_EVEN)}")
    for i in q.extras:
        say(f"  + {i.description}: {i.story()} = {money_text(i.cost.amount, i.cost.currency)}")
    if q.projected is not None:
        # a prepaid period is owed whatever the TTL; hours shown to 4 significant digits, not Decimal's 28
        until = ("for the prepaid period" if spec.billing == "monthly" or spec.ttl_hours is None else
                 f"until the TTL ({float(spec.ttl_hours):.4g} h)")
        what = "whole bill" if q.extras else "cost"
        say(f"  {what} {until}: {money_text(q.projected.amount, q.projected.currency, rounding=HALF_EVEN)}")
    for n in q.notes:
        say(f"  note: {n}")
    if spec.boot is not None:
        from launch.boot import boot_steps

        say(f"  at boot: {boot_steps(spec.boot)}")
        if spec.boot.policy:
            backstop = "the TTL stays the backstop" if spec.ttl_hours is not None else "no --ttl backstop"
            say(f"  ends itself {spec.boot.policy} ({backstop})")
            if spec.billing == "monthly":
                say("  note: a prepaid month is owed whatever the machine does: ending it early saves nothing of it")


def _wait(out: Any, ledger: Any, client: Any, timeout_hours: Any, poll: float) -> Any:
    from launch.service import wait_running

    ids = " ".join(i.instance_id for i in out.instances)
    try:
        with waiting(f"waiting for {ids} to run ..."):  # a line also where there is no terminal to spin on
            return wait_running(out, ledger=ledger, client=client, timeout=float(timeout_hours) * 3600,
                                poll=poll, checkpoint=_crash_point)
    except (KeyboardInterrupt, TimeoutError) as exc:
        why = "interrupted" if isinstance(exc, KeyboardInterrupt) else "still not running"
        say(f"{why}: {ids} stay recorded in the ledger (launch {out.record.id}).")
        say(f"  see them: gpuplan ls    end them: gpuplan down {out.record.id}")
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise GpuplanError(f"launch {out.record.id} is not running after {timeout_hours:g} h",
                           f"gpuplan down {out.record.id}") from None


def _report_launch(out: Any, dry_run: bool, as_json: bool, cat: Any, runs_job: bool = False, key: Any = None) -> None:
    from gpuplan.render.launch import connect_lines, launch_payload
    from gpuplan.render.table import dump_json

    if as_json:
        emit(dump_json(launch_payload(out, dry_run)))
        _none_running(out)
        return
    if dry_run:
        for n in out.notes:
            say(n)
        return
    _none_running(out)
    r = out.record
    gpus = next((int(i.gpu_count) for i in cat.instances if i.instance_type == r.instance_type), None)
    print(f"launch {r.id}: {r.state} ({len(out.instances)} of {r.count} machine(s))")
    for line in connect_lines(out, gpus):
        print(f"  {line}")
    if key is not None and out.instances:  # the ssh lines above offer ssh's default keys, which may not be this one
        from providers.ssh_keys import private_half

        print(f"  log in with the launch's key: gpuplan ssh {r.id} [NODE]"
              f" (ssh -i {private_half(key.path) or 'the private half of ' + key.path})")
    for n in out.notes:
        print(f"  note: {n}")
    if r.teardown:
        print(f"  ends itself {r.teardown}; `gpuplan logs {r.id} --file state` shows its steps")
    if runs_job:
        print(f"  job output: gpuplan logs {r.id} -f")
    if r.expires_at is not None and out.ttl_ender:
        # one story: the machine ends at the TTL by itself; `down --expired` is the second line of defence
        print(f"  expires {r.expires_at:%Y-%m-%d %H:%M} UTC: {out.ttl_ender} ends it then; `gpuplan down --expired` "
              "(e.g. from cron) records the end, and ends it should that fail")
    elif r.expires_at is not None:
        print(f"  expires {r.expires_at:%Y-%m-%d %H:%M} UTC: run `gpuplan down --expired` from cron "
              "(e.g. */10 * * * * gpuplan down --expired --yes) to enforce it")
    print(f"  end it: gpuplan down {r.id}")


def _none_running(out: Any) -> None:
    """A launch whose every machine failed or ended while it waited is a failure (exit 1), with no ssh line to try."""
    if not out.waited or out.record.state != "failed":
        return
    for n in out.notes:
        say(f"note: {n}")
    seen = ", ".join(f"{i.instance_id} {i.state.value}" for i in out.instances) or "none"
    raise GpuplanError(f"launch {out.record.id} failed: no machine is running ({seen})",
                       "nothing of it runs or bills now (`gpuplan ls --all` shows it); launch again, perhaps in "
                       "another zone")


def _quote_extras(provider: str, mode: Any, months: int, extras: Any) -> Any:
    """The rest of one machine's bill at the shipped rates: for the prepaid months, else for one hour."""
    from pricing.billing import BillingMode
    from pricing.bill import extras_bill

    hpm = settings_from().hours_per_month
    hours = hpm * months if mode is BillingMode.MONTHLY else Decimal(1)
    return extras_bill(extras, provider, mode, hours, 1, hours_per_month=hpm)


@app.command()
def quote(
    provider: Annotated[str, typer.Option(
        "--provider", help="tencent (AWS publishes prices: `gpuplan catalog refresh --provider aws`).")],
    instance_type: Annotated[str, typer.Option("--instance-type", help="e.g. GN10Xp.20XLARGE320.")],
    zone: Annotated[str, typer.Option("--zone", help="Zone to price, e.g. ap-guangzhou-3.")],
    billing: BillingOpt = "hourly",
    months: Annotated[int, typer.Option("--months", help="Months for --billing monthly (1-12, 24, 36).")] = 1,
    image: Annotated[Optional[str], typer.Option(
        "--image", help="Image to price with (default: the provider's GPU image).")] = None,
    disk_gb: DiskGbOpt = None,
    disk_type: DiskTypeOpt = None,
    egress_gb: EgressGbOpt = None,
    storage_gb: StorageGbOpt = None,
    bandwidth_mbps: BandwidthOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The provider's exact price for one configuration (hourly tiers; monthly with its period discount),
    and the rest of the bill at the shipped rates."""
    from pricing.billing import BillingMode
    from providers.registry import price_inquiry
    from gpuplan.render.table import dump_json
    from planner.units import parse_enum
    from launch.service import LAUNCH_MODES
    from providers.lookup import region_of_zone

    mode = parse_enum(BillingMode, billing, "--billing")
    if mode not in LAUNCH_MODES:
        raise InputError(f"cannot quote billing {mode}", "use hourly, monthly or spot")
    if months < 1:
        raise InputError("--months must be 1 or more")
    extras = extras_from(disk_gb, disk_type, egress_gb, storage_gb, None, bandwidth_mbps)
    inquire = price_inquiry(provider.strip().lower())
    q = inquire(None, region_of_zone(zone), zone, instance_type, mode, months, image)
    bill = _quote_extras(provider.strip().lower(), mode, months, extras)
    if as_json:
        from gpuplan.render.launch import extras_payload, quote_payload

        emit(dump_json({**quote_payload(q), **extras_payload(bill)}))
        return
    from pricing.money import money_text, rate_text

    monthly = mode is BillingMode.MONTHLY
    # a period is money (cents); an hourly price is a rate (as many places as it has)
    print(f"{instance_type} in {zone}, {mode}: "
          f"{money_text(q.payable, q.currency) if monthly else rate_text(q.payable, q.currency)}"
          f" {'for ' + str(months) + ' month(s)' if monthly else 'per hour'}")
    if monthly and q.period_price is not None and q.period_price_discount is not None:
        pct = Decimal(q.discount_percent or 100).normalize()
        print(f"  list price {money_text(q.period_price, q.currency)}; you pay {pct:f}% of it")
    elif q.unit_price is not None and q.unit_price_discount not in (None, q.unit_price):
        print(f"  list price {rate_text(q.unit_price, q.currency)} per hour")
    for step in q.steps:
        until = f"{step.to_hours} h" if step.to_hours is not None else "on"
        rate = rate_text(step.unit_price_discount or step.unit_price, q.currency)
        print(f"  hours {step.from_hours} to {until}: {rate} per hour")
    print(f"  source: {q.source}")
    span = f"{months} month(s)" if monthly else "each hour"
    for i in bill.items:
        print(f"  + {i.description} ({span}): {i.story()} = {money_text(i.cost.amount, i.cost.currency)} [{i.source}]")
    if bill.not_priced:
        print("  not priced (no sourced rate): " + "; ".join(bill.not_priced))
