"""``gpuplan launch``, ``gpuplan ls`` and ``gpuplan down``: start what the plan chose, see it, end it.

Every launch is written to the ledger before the provider is asked and after every answer;
nothing that can spend money runs without a confirmation (``--yes``), and ``--dry-run``
asks the provider to validate without creating anything.
"""

# No `from __future__ import annotations`: typer evaluates option annotations at run time.

import math
import os
import sys
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from pricing.errors import GpuplanError, InputError
from gpuplan.cli.app import command_app
from gpuplan.cli.extras_opts import (
    BandwidthOpt, DiskGbOpt, DiskTypeOpt, EgressGbOpt, SetupMinutesOpt, StorageGbOpt, extras_from,
)
from gpuplan.cli.options import JsonOpt, WideOpt, emit, settings_from, use_wide
from gpuplan.ledger import open_ledger

app = command_app()  # the root loads this module when one of its commands runs (gpuplan.cli.app)

# Flags two commands share (launch and quote; launch and down), declared once so their help
# and meaning cannot drift apart.
BillingOpt = Annotated[str, typer.Option("--billing", help="hourly, monthly or spot.")]
YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")]

# The launch summaries have always shown money half-even (Python's own formatting); kept so output stays.
HALF_EVEN = ROUND_HALF_EVEN


def _env_seconds(name: str = "GPUPLAN_POLL_SECONDS", default: str = "5") -> float:
    """Seconds from the environment: read before any call that can spend money, so a bad value starts nothing."""
    # Tests and slow APIs set these; 5 s between describes keeps well inside every provider's rate limit.
    text = os.environ.get(name, default)
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not 0 <= seconds <= 3600:  # also refuses nan
        raise InputError(f"{name}={text!r} is not a number of seconds from 0 to 3600",
                         f"unset it for the default {default} s")
    return seconds


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


def _clients() -> Any:
    from providers.registry import compute_client

    cache: dict[tuple[str, str], Any] = {}

    def client_for(provider: str, region: str) -> Any:
        if (provider, region) not in cache:
            cache[(provider, region)] = compute_client(provider, region)
        return cache[(provider, region)]

    return client_for


@app.command()
def launch(
    provider: Annotated[Optional[str], typer.Option("--provider", help="tencent or aws.")] = None,
    instance_type: Annotated[Optional[str], typer.Option("--instance-type", help="e.g. GN10Xp.20XLARGE320, p3.16xlarge.")] = None,
    region: Annotated[Optional[str], typer.Option("--region", help="Region, e.g. ap-guangzhou, us-east-1.")] = None,
    zone: Annotated[Optional[str], typer.Option("--zone", help="Zone, e.g. ap-guangzhou-3 (pins it: no failover).")] = None,
    image: Annotated[Optional[str], typer.Option("--image", help="img-... or ami-...; default: the provider's GPU image (said).")] = None,
    billing: BillingOpt = "hourly",
    months: Annotated[int, typer.Option("--months", help="Months to prepay with --billing monthly.")] = 1,
    count: Annotated[int | None, typer.Option("--count", help="Identical machines to launch together (one cluster; default 1, or the plan's nodes).")] = None,
    ttl: Annotated[Optional[str], typer.Option("--ttl", help="Time to live, e.g. 6h, 2d: `gpuplan down --expired` ends it then.")] = None,
    max_cost: Annotated[Optional[str], typer.Option("--max-cost", help="Refuse if the projected cost exceeds this, e.g. 500 or '3000 CNY'.")] = None,
    from_plan: Annotated[bool, typer.Option("--from-plan", help="Launch the winner of the last `gpuplan plan` (or --plan-file).")] = False,
    plan_file: Annotated[Optional[Path], typer.Option("--plan-file", help="A `gpuplan plan --json` file for --from-plan.")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Ask the provider to validate the launch; create nothing.")] = False,
    ssh_key: Annotated[Optional[Path], typer.Option("--ssh-key", help="OpenSSH public key to log in with, imported once per region as a key pair and reused. [default: ~/.ssh/id_ed25519.pub or id_rsa.pub if present]", metavar="PATH")] = None,
    no_ssh_key: Annotated[bool, typer.Option("--no-ssh-key", help="Launch with no key pair (Tencent mails a password; AWS: EC2 Instance Connect).")] = False,
    ssh_from: Annotated[Optional[str], typer.Option("--ssh-from", help="Let SSH in only from these addresses or CIDR blocks, comma-separated (your address: curl https://checkip.amazonaws.com). [default: anywhere, key logins only]", metavar="CIDR")] = None,
    disk_gb: DiskGbOpt = None,
    disk_type: DiskTypeOpt = None,
    egress_gb: EgressGbOpt = None,
    storage_gb: StorageGbOpt = None,
    setup_minutes: SetupMinutesOpt = None,
    bandwidth_mbps: BandwidthOpt = None,
    setup: Annotated[Optional[str], typer.Option("--setup", help="Set-up run on every machine at boot, after the GPU driver: a shell script file, or a command in quotes.", metavar="FILE|CMD")] = None,
    run: Annotated[Optional[str], typer.Option("--run", help="The job, run after --setup as the login user (a script file or a command in quotes); its output goes to /var/log/gpuplan/run.log: `gpuplan logs ID`.", metavar="FILE|CMD")] = None,
    down_when: Annotated[Optional[str], typer.Option("--down-when", help="done: each machine ends itself when --run exits (the disk goes with it: save results elsewhere).", metavar="done")] = None,
    idle: Annotated[Optional[str], typer.Option("--idle", help="End a machine once its GPUs sit idle this long (none above 5% utilization), e.g. 30m.", metavar="DURATION")] = None,
    driver: Annotated[Optional[str], typer.Option("--driver", help="check, install or skip the NVIDIA driver at boot. [default: install on an image without one (Tencent's public images), else check]", metavar="check|install|skip")] = None,
    cam_role: Annotated[Optional[str], typer.Option("--cam-role", help="Tencent: the CAM role the machines run with; it lets them end themselves (--down-when, --idle).", metavar="NAME")] = None,
    owner: Annotated[Optional[str], typer.Option("--owner", help="Who the launch is recorded for. [default: your OS user name]")] = None,
    project: Annotated[Optional[str], typer.Option("--project", help="What the launch is for; budgets hold per project. [default: the config's project]")] = None,
    yes: YesOpt = False,
    wait_timeout: Annotated[str, typer.Option("--wait-timeout", help="How long to wait for RUNNING, e.g. 20m.")] = "20m",
    as_json: JsonOpt = False,
) -> None:
    """Launch machines (after showing the price and asking), record them, wait until they run."""
    from pricing.billing import BillingMode
    from pricing.catalog import PSEUDO_REGIONS
    from gpuplan.settings import load_catalog
    from planner.units import parse_duration, parse_enum, parse_money
    from launch.service import LaunchSpec, check_boot, check_budget, quote_launch, start, ttl_before_the_run
    from providers.ssh_keys import parse_ssh_from

    # Every flag is read here, before anything that can start a machine: a bad value must start nothing.
    provider, instance_type, region, zone, image, ttl, max_cost = (
        _given(v, f) for v, f in ((provider, "--provider"), (instance_type, "--instance-type"), (region, "--region"),
                                  (zone, "--zone"), (image, "--image"), (ttl, "--ttl"), (max_cost, "--max-cost")))
    wait_hours = parse_duration(wait_timeout, "--wait-timeout")
    poll = _env_seconds()
    # how long a several-node launch keeps trying to hand the nodes their ranks while sshd comes up
    push_s = _env_seconds("GPUPLAN_RENDEZVOUS_PUSH_SECONDS", "300")
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
        owner=_name(_given(owner, "--owner") or _os_user(), "--owner"),
        project=_name(_given(project, "--project") or s.project, "--project"), host=_host(),
    )
    if nodes < 1 or months < 1:
        raise InputError("--count and --months must be 1 or more")
    if boot is not None:
        from providers.registry import compute_class

        check_boot(spec, compute_class(spec.provider))
    cat = load_catalog(s)
    q = quote_launch(spec, cat, hours_per_month=s.hours_per_month)
    if (live := _live_price(spec, q.region, q.zone)) is not None:
        q = quote_launch(spec, cat, hours_per_month=s.hours_per_month, live=live)
    check_budget(q, s.fx_table())
    _show_quote(q)
    if not dry_run:
        from launch.ledger import now
        from launch.spend import budget_check

        with open_ledger() as ledger:  # said before the question; held again in the intent's transaction
            budget_check(spec.project, spec.owner, q.projected, s.fx_table(), now())(ledger)
    if (short := ttl_before_the_run(spec.ttl_hours, run_hours)) is not None:
        _say(f"warning: {short}")
    if not dry_run and not yes:
        if not sys.stdin.isatty():
            raise InputError("refusing to launch without a confirmation: there is no terminal to ask on",
                             "pass --yes to launch, or --dry-run to validate only")
        if not typer.confirm("Launch?", default=False, err=True):
            raise InputError("not launched")
    client = _clients()(spec.provider, q.region)
    with open_ledger() as ledger:
        out = start(q, ledger=ledger, client=client, progress=_say, checkpoint=_crash_point, fx=s.fx_table())
        if not dry_run:
            out = _wait(out, ledger, client, wait_hours, poll)
    if not dry_run and boot is not None and boot.run is not None and nodes > 1:
        _hand_out_ranks(out, key, push_s)
    _report_launch(out, dry_run, as_json, cat, runs_job=boot is not None and boot.run is not None)


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


def _mine() -> set[str]:
    """Whose launches are "yours": your OS user's, and those recorded before launches had owners."""
    return {_os_user(), ""}


def _os_user() -> str:
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a bare container)
        return str(os.getuid()) if hasattr(os, "getuid") else ""


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

    nodes = [Node(i.instance_id, i.public_ip or i.private_ip or "", i.private_ip or i.public_ip or "")
             for i in out.instances]
    # the private half beside the public key (id_ed25519 for id_ed25519.pub); else ssh's own defaults and agent
    private = Path(key.path).with_suffix("") if key is not None and key.path.endswith(".pub") else None
    identity = private if private is not None and private.is_file() else None
    if len(nodes) == out.record.count and all(n.address for n in nodes):
        _say(f"handing each of the {len(nodes)} nodes its torchrun rank over SSH (as sshd comes up) ...")
        failed = push(nodes, identity, deadline_s=deadline_s)
        if not failed:
            _say(f"rendezvous: node 0 ({nodes[0].private_ip}) leads; every node's run has started or will")
            return
        for f in failed:
            _say(f"rendezvous: not handed over: {f}")
    _say("the nodes' runs wait (up to 30 min) for their rank; hand it over yourself once you can log in:")
    for line in manual_lines(nodes, identity):
        _say(f"  {line}")


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
    _say(f"login key: {chosen} ({key.fingerprint}), key pair {key.name}" +
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
        _say(f"note: no live quote ({exc.message}); the launch is priced at the catalog's list price")
        return None
    per = Decimal(spec.months) if spec.billing is BillingMode.MONTHLY else Decimal(1)
    return LivePrice(rate=q.payable / per, source=q.source)


def _say(text: str) -> None:
    from gpuplan.console import stderr

    stderr().print(text, highlight=False, markup=False)


def _say_unrecorded(ledger: Any) -> None:
    """After `ls` or `down` on a ledger that could not be written: what was not recorded, and why that is safe."""
    if ledger.unrecorded:
        _say(f"warning: {ledger.read_only}; {len(ledger.unrecorded)} change(s) not recorded (the machines' cloud "
             "tags still find them: run `gpuplan ls` once the ledger can be written)")
    elif ledger.read_only:
        _say(f"warning: {ledger.read_only}; read as it is, nothing recorded")


def _show_quote(q: Any) -> None:
    from pricing.money import money_text

    spec = q.spec
    what = f"{spec.count} x {q.offer} ({spec.billing}) in {q.zone or q.region}"
    unit = "month" if spec.billing == "monthly" else "hour"
    _say(f"Launch: {what}")
    _say(f"  price: {q.unit_price.amount} {q.unit_price.currency} per machine-{unit}{' (estimate)' if q.estimate else ''}")
    _say(f"  billing rule: {q.rule}")
    if q.extras and q.instance_projected is not None:
        _say(f"  instances: {money_text(q.instance_projected.amount, q.instance_projected.currency, rounding=HALF_EVEN)}")
    for i in q.extras:
        _say(f"  + {i.description}: {i.story()} = {money_text(i.cost.amount, i.cost.currency)}")
    if q.projected is not None:
        # a prepaid period is owed whatever the TTL; hours shown to 4 significant digits, not Decimal's 28
        until = ("for the prepaid period" if spec.billing == "monthly" or spec.ttl_hours is None else
                 f"until the TTL ({float(spec.ttl_hours):.4g} h)")
        what = "whole bill" if q.extras else "cost"
        _say(f"  {what} {until}: {money_text(q.projected.amount, q.projected.currency, rounding=HALF_EVEN)}")
    for n in q.notes:
        _say(f"  note: {n}")
    if spec.boot is not None:
        from launch.boot import boot_steps

        _say(f"  at boot: {boot_steps(spec.boot)}")
        if spec.boot.policy:
            backstop = "the TTL stays the backstop" if spec.ttl_hours is not None else "no --ttl backstop"
            _say(f"  ends itself {spec.boot.policy} ({backstop})")
            if spec.billing == "monthly":
                _say("  note: a prepaid month is owed whatever the machine does: ending it early saves nothing of it")


def _wait(out: Any, ledger: Any, client: Any, timeout_hours: Any, poll: float) -> Any:
    from launch.service import wait_running
    from gpuplan.console import stderr

    ids = " ".join(i.instance_id for i in out.instances)
    try:
        with stderr().status(f"waiting for {ids} to run ...", spinner="dots"):
            return wait_running(out, ledger=ledger, client=client, timeout=float(timeout_hours) * 3600,
                                poll=poll, checkpoint=_crash_point)
    except (KeyboardInterrupt, TimeoutError) as exc:
        why = "interrupted" if isinstance(exc, KeyboardInterrupt) else "still not running"
        _say(f"{why}: {ids} stay recorded in the ledger (launch {out.record.id}).")
        _say(f"  see them: gpuplan ls    end them: gpuplan down {out.record.id}")
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise GpuplanError(f"launch {out.record.id} is not running after {timeout_hours:g} h",
                           f"gpuplan down {out.record.id}") from None


def _report_launch(out: Any, dry_run: bool, as_json: bool, cat: Any, runs_job: bool = False) -> None:
    from gpuplan.render.launch import connect_lines, launch_payload
    from gpuplan.render.table import dump_json

    if as_json:
        emit(dump_json(launch_payload(out, dry_run)))
        return
    if dry_run:
        for n in out.notes:
            _say(n)
        return
    r = out.record
    gpus = next((int(i.gpu_count) for i in cat.instances if i.instance_type == r.instance_type), None)
    print(f"launch {r.id}: {r.state} ({len(out.instances)} of {r.count} machine(s))")
    for line in connect_lines(out, gpus):
        print(f"  {line}")
    for n in out.notes:
        print(f"  note: {n}")
    if r.teardown:
        print(f"  ends itself {r.teardown}; `gpuplan logs {r.id} --file state` shows its steps")
    if runs_job:
        print(f"  job output: gpuplan logs {r.id} -f")
    if r.expires_at is not None:
        print(f"  expires {r.expires_at:%Y-%m-%d %H:%M} UTC: run `gpuplan down --expired` from cron "
              "(e.g. */10 * * * * gpuplan down --expired --yes) to enforce it")
    print(f"  end it: gpuplan down {r.id}")


def _quote_extras(provider: str, mode: Any, months: int, extras: Any) -> Any:
    """The rest of one machine's bill at the shipped rates: for the prepaid months, else for one hour."""
    from pricing.billing import BillingMode
    from planner.plan.extras import extras_bill

    hpm = settings_from().hours_per_month
    hours = hpm * months if mode is BillingMode.MONTHLY else Decimal(1)
    return extras_bill(extras, provider, mode, hours, 1, hours_per_month=hpm)


@app.command()
def quote(
    provider: Annotated[str, typer.Option("--provider", help="tencent (AWS publishes prices: `gpuplan catalog refresh --provider aws`).")],
    instance_type: Annotated[str, typer.Option("--instance-type", help="e.g. GN10Xp.20XLARGE320.")],
    zone: Annotated[str, typer.Option("--zone", help="Zone to price, e.g. ap-guangzhou-3.")],
    billing: BillingOpt = "hourly",
    months: Annotated[int, typer.Option("--months", help="Months for --billing monthly (1-12, 24, 36).")] = 1,
    image: Annotated[Optional[str], typer.Option("--image", help="Image to price with (default: the provider's GPU image).")] = None,
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
    print(f"{instance_type} in {zone}, {mode}: {q.payable} {q.currency}"
          f" {'for ' + str(months) + ' month(s)' if mode is BillingMode.MONTHLY else 'per hour'}")
    if mode is BillingMode.MONTHLY and q.period_price is not None and q.period_price_discount is not None:
        print(f"  list price {q.period_price} {q.currency}; you pay {q.discount_percent or 100}% of it")
    elif q.unit_price is not None and q.unit_price_discount not in (None, q.unit_price):
        print(f"  list price {q.unit_price} {q.currency} per hour")
    for step in q.steps:
        until = f"{step.to_hours} h" if step.to_hours is not None else "on"
        print(f"  hours {step.from_hours} to {until}: {step.unit_price_discount or step.unit_price} {q.currency} per hour")
    print(f"  source: {q.source}")
    span = f"{months} month(s)" if mode is BillingMode.MONTHLY else "each hour"
    for i in bill.items:
        print(f"  + {i.description} ({span}): {i.story()} = {i.cost.amount:.2f} {i.cost.currency} [{i.source}]")
    if bill.not_priced:
        print("  not priced (no sourced rate): " + "; ".join(bill.not_priced))


@app.command("ls")
def ls(
    reconcile: Annotated[bool, typer.Option("--reconcile", help="Also find machines tagged by gpuplan that the ledger lacks.")] = False,
    provider: Annotated[Optional[str], typer.Option("--provider", help="With --reconcile: where to look (default: every provider and region in the ledger).")] = None,
    region: Annotated[Optional[str], typer.Option("--region", help="With --reconcile: region to look in.")] = None,
    show_all: Annotated[bool, typer.Option("--all", help="Include ended launches.")] = False,
    all_owners: Annotated[bool, typer.Option("--all-owners", help="Everyone's launches in a shared ledger, not only yours.")] = False,
    as_json: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """Every machine gpuplan launched: provider state, age, cost so far and cost to TTL."""
    use_wide(wide)
    from gpuplan.render.launch import status_payload
    from launch.service import reconcile as find_untracked, status
    from gpuplan.render.table import Column, OutputFormat, dump_json, render_rows
    from pricing.money import money_text

    client_for = _clients()
    with open_ledger(read_only_ok=True) as ledger:
        owners = None if all_owners else _mine()
        rows = status(ledger, client_for, include_final=show_all, owners=owners)
        ended = 0 if show_all else len([r for r in ledger.launches() if r.state.is_final and
                                        (owners is None or r.owner in owners)])
        others = 0 if owners is None else len({r.id for r in ledger.launches(include_final=show_all)
                                                if r.owner not in owners})
        empty = f"nothing running; {ended} ended launch(es): `gpuplan ls --all` lists them" if ended else \
            "nothing launched"
        untracked: list[Any] = []
        if reconcile:
            places = {(r.record.provider, r.record.region) for r in rows}
            if provider and region:
                places.add((provider.strip().lower(), region))
            elif provider or region:
                raise InputError("--reconcile needs both --provider and --region to look somewhere new")
            for p, reg in sorted(places):
                untracked += [(p, reg, i) for i in find_untracked(ledger, client_for(p, reg), p, reg)]
        _say_unrecorded(ledger)
    if as_json:
        emit(dump_json({"launches": [status_payload(r) for r in rows],
                        "untracked": [{"provider": p, "region": reg, "instance_id": i.instance_id,
                                       "state": i.state.value, "tags": i.tags} for p, reg, i in untracked]}))
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
    emit(render_rows(table, cols, OutputFormat.TABLE, title="Launches",
                     caption=empty if not table or others else ""))
    for p, reg, i in untracked:
        _say(f"untracked: {p} {reg} {i.instance_id} ({i.state}), tag gpuplan:id={i.tags.get('gpuplan:id', '?')}: "
             f"not in this ledger; end it with `gpuplan down --untracked --provider {p} --region {reg}`")
    for r in rows:
        for n in r.notes:
            _say(f"{r.record.id}: {n}")


@app.command()
def down(
    ids: Annotated[Optional[list[str]], typer.Argument(help="Launch ids (or instance ids) to end.")] = None,
    all_: Annotated[bool, typer.Option("--all", help="End every launch of yours that is not ended.")] = False,
    all_owners: Annotated[bool, typer.Option("--all-owners", help="With --all: everyone's launches in a shared ledger.")] = False,
    expired_: Annotated[bool, typer.Option("--expired", help="End launches past their --ttl, everyone's (for cron).")] = False,
    untracked: Annotated[bool, typer.Option("--untracked", help="End machines tagged by gpuplan that the ledger lacks (what `ls --reconcile` lists).")] = False,
    provider: Annotated[str | None, typer.Option("--provider", help="With --untracked: also look here (with --region).")] = None,
    region: Annotated[str | None, typer.Option("--region", help="With --untracked: region to look in.")] = None,
    yes: YesOpt = False,
    wait_timeout: Annotated[str, typer.Option("--wait-timeout", help="How long to wait for TERMINATED, e.g. 10m.")] = "10m",
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
    poll = _env_seconds()
    if untracked:
        _down_untracked(provider, region, yes, timeout, poll, as_json)
        return
    with open_ledger(read_only_ok=True) as ledger:
        if ids:
            records = [ledger.launch(i) for i in ids]
            for key, r in zip(ids, records, strict=True):
                if key != r.id:
                    _say(f"{key!r} is launch {r.id}")
        elif all_:
            mine = None if all_owners else _mine()
            records = [r for r in ledger.launches(include_final=False) if mine is None or r.owner in mine]
        else:
            records = expired(ledger)
        if not records:
            _say("nothing to end")
            if as_json:
                emit(dump_json({"ended": []}))
            return
        names = ", ".join(f"{r.id} ({r.count}x {r.instance_type})" for r in records)
        if not yes and not expired_:
            if not sys.stdin.isatty():
                raise InputError("refusing to terminate without a confirmation: there is no terminal to ask on",
                                 "pass --yes")
            if not typer.confirm(f"Terminate {names}?", default=False, err=True):
                raise InputError("nothing ended")
        ended = take_down(ledger, _clients(), records, timeout=timeout, poll=poll)
        _say_unrecorded(ledger)
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


def _login(launch_id: str, node: int) -> tuple[str, str]:
    """The recorded address and instance id of node ``node`` of a live launch (an instance id names its own)."""

    if node < 0:
        raise InputError(f"node {node} does not exist: nodes count from 0")
    with open_ledger(read_only_ok=True) as ledger:
        record = ledger.launch(launch_id)
        machines = ledger.instances(record.id)
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
    return address, m.instance_id


def _exec_ssh(address: str, identity: Path | None, print_only: bool, remote: list[str] | None = None) -> None:
    """Run ssh in place of this process (or print the command): the session is the user's from here."""
    import shlex

    from providers.ssh_keys import ssh_command

    command = ssh_command(address, identity, remote or ())
    if print_only:
        print(shlex.join(command))
        return
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        raise InputError(f"cannot run ssh: {exc.strerror or exc}",
                         f"install an OpenSSH client, or run: {shlex.join(command)}") from None


IdentityOpt = Annotated[Optional[Path], typer.Option("--identity", "-i", help="Private key to log in with (ssh -i).", metavar="PATH")]
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
    address, _ = _login(launch_id, node)
    _exec_ssh(address, identity, print_only)


@app.command()
def logs(
    launch_id: Annotated[str, typer.Argument(help="Launch id (or one of its instance ids), as `gpuplan ls` shows.")],
    node: NodeArg = 0,
    file: Annotated[str, typer.Option("--file", help="run, setup, state (the boot steps), driver, idle, end or boot.")] = "run",
    follow: Annotated[bool, typer.Option("--follow", "-f", help="Keep printing as the log grows (Ctrl-C stops).")] = False,
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
    address, _ = _login(launch_id, node)
    path = f"{LOG_DIR}/{name}" if name == "state" else f"{LOG_DIR}/{name}.log"
    # the boot script runs as root and its logs are root's: the login user reads them through sudo
    _exec_ssh(address, identity, print_only, ["sudo", "-n", "tail", "-n", str(lines), *(["-F"] if follow else []), path])


def _down_untracked(provider: str | None, region: str | None, yes: bool, timeout: float, poll: float,
                    as_json: bool) -> None:
    """End machines tagged by gpuplan that no ledger launch knows, where the ledger has launched and where asked."""
    from gpuplan.render.table import dump_json
    from launch.service import end_untracked, reconcile

    client_for = _clients()
    with open_ledger(read_only_ok=True) as ledger:
        places = {(r.provider, r.region) for r in ledger.launches()}
        if provider and region:
            places.add((provider.strip().lower(), region))
        found = [(p, reg, reconcile(ledger, client_for(p, reg), p, reg)) for p, reg in sorted(places)]
    found = [(p, reg, machines) for p, reg, machines in found if machines]
    names = ", ".join(f"{i.instance_id} ({p} {reg}, tag gpuplan:id={i.tags.get('gpuplan:id', '?')})"
                      for p, reg, machines in found for i in machines)
    if not found:
        _say("nothing untracked to end")
        if as_json:
            emit(dump_json({"untracked_ended": [], "untracked_still_ending": []}))
        return
    if not yes:
        if not sys.stdin.isatty():
            raise InputError("refusing to terminate without a confirmation: there is no terminal to ask on",
                             "pass --yes")
        if not typer.confirm(f"Terminate {names}?", default=False, err=True):
            raise InputError("nothing ended")
    ended: list[str] = []
    still: list[str] = []
    for p, reg, machines in found:
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
