"""Launch, list and end machines, with the ledger written around every provider call.

The order is what keeps machines from being lost: the ledger gets the launch *intent* with
its ClientToken before the provider is asked; the instance ids right after the call
returns; every state change after that. Every machine carries the tags ``gpuplan:id``,
``gpuplan:expires`` and ``gpuplan:managed``, so even a launch whose ids never reached the
ledger (a crash mid-call) is found again by tag, and ``ls --reconcile`` finds machines
whose ledger file is gone.
"""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from decimal import ROUND_HALF_EVEN, Decimal

from pydantic import BaseModel, ConfigDict

from pricing.billing import BillingMode, rate_cost, rule_for
from pricing.catalog import PSEUDO_REGIONS, Catalog
from pricing.errors import BudgetError, GpuplanError, InputError, PriceMissingError
from pricing.extras import DEFAULT_DISK_TYPE
from pricing.money import Fx, Money, money_text, rate_text, round_cents
from pricing.text import printable
from providers.capabilities import (
    TAG_EXPIRES,
    TAG_ID,
    TAG_MANAGED,
    ComputeClient,
    InstanceInfo,
    InstanceState,
    LaunchRequest,
)
from providers.created import nothing_created
from providers.lookup import find_offer
from providers.ssh_keys import SshKey
from pricing.bill import ExtraItem, Extras, extras_bill
from launch.boot import BootConfig, BootSpec, Driver, user_data
from launch.budget_money import billed_ttl, cap_text, ttl_floor_note
from launch.evidence import account_of, foreign
from launch.ledger import InstanceRecord, LaunchRecord, LaunchState, Ledger, now
from launch.login import record_login_key
# accrued_cost and projected_cost are part of this module's interface (ls, down): they live with the spend
from launch.spend import accrued_cost, budget_check, hours_between, projected_cost

ClientFor = Callable[[str, str], ComputeClient]
LAUNCH_MODES = (BillingMode.HOURLY, BillingMode.MONTHLY, BillingMode.SPOT)
# Tagged machines show up in list-by-tag within seconds on both clouds; after this long,
# a launch whose call failed ambiguously and shows no machine started none.
SETTLE_AFTER = timedelta(minutes=10)


Checkpoint = Callable[[str], None]  # called with a step name between ledger writes and provider calls


def no_checkpoint(step: str) -> None:
    """The default :data:`Checkpoint`: nothing happens between steps (the crash tests pass one that dies)."""


class LaunchSpec(BaseModel):
    """What the user asked to launch."""

    model_config = ConfigDict(frozen=True)

    provider: str
    instance_type: str
    region: str | None = None
    zone: str | None = None
    billing: BillingMode = BillingMode.HOURLY
    months: int = 1
    count: int = 1
    image: str | None = None
    ttl_hours: Decimal | None = None
    max_cost: Money | None = None
    dry_run: bool = False
    extras: Extras = Extras()  # the disk it creates and the rest of the bill it is quoted with
    ssh_key: SshKey | None = None  # the public key to log in with (imported once as a key pair, then reused)
    ssh_from: tuple[str, ...] = ()  # where SSH may come from (CIDR blocks); () for anywhere
    owner: str = ""  # who launches (the OS user, or --owner)
    project: str = ""  # what for (--project, or the config's project)
    host: str = ""  # the machine launching
    boot: BootSpec | None = None  # what each machine does at boot: driver, --setup, --run, its own teardown


class LaunchQuote(BaseModel):
    """The price of a launch before anything is created."""

    model_config = ConfigDict(frozen=True)

    spec: LaunchSpec
    offer: str
    region: str
    zone: str | None
    zones: tuple[str, ...]
    unit_price: Money  # per instance-hour, or per instance-month for monthly
    rule: str
    projected: Money | None  # the whole bill of every machine until the TTL (monthly: the whole period)
    estimate: bool
    notes: tuple[str, ...] = ()
    instance_projected: Money | None = None  # the instances alone
    extras: tuple[ExtraItem, ...] = ()  # disks, addresses, traffic, set-up until the TTL (or for one hour)
    not_priced: tuple[str, ...] = ()
    extras_unit: Decimal | None = None  # disk, address, bandwidth per machine per unit of unit_price (the ledger's)


class LivePrice(BaseModel):
    """The provider's own quote for the exact configuration (Tencent's InquiryPriceRunInstances), which the
    launch is priced at instead of the catalog's list price: per hour, or per month for monthly."""

    model_config = ConfigDict(frozen=True)

    rate: Decimal
    source: str


def quote_launch(spec: LaunchSpec, catalog: Catalog, *, hours_per_month: Decimal,
                 live: LivePrice | None = None) -> LaunchQuote:
    if spec.billing not in LAUNCH_MODES:
        raise InputError(f"cannot launch with billing {spec.billing}", "use hourly, monthly or spot")
    if spec.count < 1 or spec.months < 1:
        raise InputError("--count and --months must be 1 or more")
    check_launch_disk_type(spec)
    launch_disk_gb(spec)
    launch_bandwidth_mbps(spec)
    found = find_offer(catalog, spec.instance_type, provider=spec.provider, region=spec.region, zone=spec.zone)
    offer, region = found.offer, found.region
    rate = offer.rates.get(spec.billing)
    rule = rule_for(spec.provider, spec.billing)
    if rate is None or rule is None:
        have = ", ".join(m.value for m in offer.rates if m in LAUNCH_MODES) or "none"
        raise PriceMissingError(f"{offer.name} has no {spec.billing} price in the catalog", f"priced modes: {have}")
    notes = []
    zone = spec.zone or offer.rate_zones.get(spec.billing)
    if spec.billing is BillingMode.SPOT and spec.zone and offer.spot_zones:
        # spot is priced per zone: the zone asked for is the zone quoted
        rate = dict(offer.spot_zones).get(spec.zone, rate)
    if live is not None:
        notes.append(f"priced at the provider's live quote ({live.source}), not the catalog's "
                     f"{rate_text(rate, offer.currency)}")
        rate = live.rate
    unit = Money(amount=rate, currency=offer.currency)
    if spec.billing is BillingMode.MONTHLY:
        projected: Money | None = unit * (spec.months * spec.count)
        notes.append(f"prepaid: {spec.months} month(s) x {spec.count} machine(s), owed whatever the TTL")
    elif (ttl := billed_ttl(spec.provider, spec.ttl_hours)) is not None:  # never under the cloud timer's floor
        notes += [n for n in (ttl_floor_note(spec.provider, spec.ttl_hours),) if n]
        one = rate_cost(rule, rate, ttl, family=offer.family, hours_per_month=hours_per_month)
        projected = Money(amount=one * spec.count, currency=offer.currency)
    else:
        projected = None
        notes.append("no --ttl: it runs, and bills, until `gpuplan down`")
    instance_projected = projected
    hours = (Decimal(spec.months) * hours_per_month if spec.billing is BillingMode.MONTHLY else
             billed_ttl(spec.provider, spec.ttl_hours))
    bill = extras_bill(spec.extras, spec.provider, spec.billing, hours if hours is not None else Decimal(1),
                       spec.count, hours_per_month=hours_per_month, setup_rate=rate, currency=offer.currency)
    if projected is not None:
        projected = Money(amount=projected.amount + bill.total, currency=projected.currency)
    elif bill.items:
        notes.append(f"disks and addresses bill while it runs: {money_text(bill.total, offer.currency)} for the "
                     "first hour of all machines")
    if bill.not_priced:
        notes.append("not priced (no sourced rate): " + "; ".join(bill.not_priced))
    # what accrues with time on each machine, for `ls`: egress, stored data and set-up are one-off, not kept
    kept = spec.extras.model_copy(update={"egress_gb": Decimal(0), "storage_gb": Decimal(0),
                                          "setup_minutes": Decimal(0)})
    per = hours_per_month if spec.billing is BillingMode.MONTHLY else Decimal(1)
    unit_extras = extras_bill(kept, spec.provider, spec.billing, per, 1, hours_per_month=hours_per_month).total
    estimate = spec.billing in offer.estimated and live is None
    if estimate:
        notes.append(f"{spec.billing} price is an estimate; the provider's market price applies")
    if offer.region in PSEUDO_REGIONS and live is None:
        notes.append(f"list price for {offer.region}; `gpuplan catalog refresh --provider {spec.provider} "
                     f"--region {region}` reads the zone's live price")
    return LaunchQuote(spec=spec, offer=offer.name, region=region, zone=zone,
                       zones=found.zones, unit_price=unit, rule=rule.story(offer.family), projected=projected,
                       estimate=estimate,
                       notes=tuple(notes), instance_projected=instance_projected, extras=bill.items,
                       not_priced=bill.not_priced, extras_unit=unit_extras)


def launch_disk_gb(spec: LaunchSpec) -> int | None:
    """The root disk a launch creates, in whole GB: the size it was quoted with (0: the image's own, unpriced)."""
    gb = spec.extras.disk_gb
    if gb != gb.to_integral_value():
        raise InputError(f"--disk-gb {gb} is not a whole number of GB", "a cloud disk is sized in whole GB")
    return int(gb) or None


def launch_bandwidth_mbps(spec: LaunchSpec) -> int | None:
    """A Tencent machine's public bandwidth cap, in whole Mbps, as the quote named it: a subscription's prepaid
    bandwidth, or pay-as-you-go's traffic-billed cap (listed as not priced) -- the quote said 5 Mbps while the
    machine asked for the client's 10. None on other clouds, which have no such cap.
    """
    if spec.provider != "tencent":
        return None
    mbps = spec.extras.bandwidth_mbps
    if mbps != mbps.to_integral_value():
        raise InputError(f"--bandwidth-mbps {mbps} is not a whole number", "Tencent sets bandwidth in whole Mbps")
    return int(mbps)


def check_launch_disk_type(spec: LaunchSpec) -> None:
    """A launch creates its cloud's default disk type: refuse another rather than price one and create the other."""
    chosen, default = spec.extras.disk_type, DEFAULT_DISK_TYPE.get(spec.provider)
    if chosen is not None and chosen != default:
        raise InputError(f"launch creates {default or 'the image default'} disks on {spec.provider}, not {chosen}",
                         "drop --disk-type to launch with the type the quote prices")


def check_budget(q: LaunchQuote, fx: Fx) -> None:
    cap = q.spec.max_cost
    if cap is None:
        return
    if q.projected is None:
        raise InputError("--max-cost needs --ttl for an hourly or spot launch: without one the cost has no end",
                         "add --ttl, e.g. --ttl 6h")
    projected = fx.convert(q.projected, cap.currency)
    if round_cents(projected.amount) > cap.amount:  # as shown, to the cent: a cap equal to the cost holds
        # half-even, as this message has always rounded
        shown, limit = money_text(projected.amount, projected.currency, rounding=ROUND_HALF_EVEN), cap_text(cap)
        if q.spec.billing is BillingMode.MONTHLY:  # prepaid: the TTL does not shorten what is owed
            raise BudgetError(f"the launch would cost {shown} for its prepaid {q.spec.months} month(s), over "
                              f"--max-cost {limit}", "lower --count or --months, or raise --max-cost")
        raise BudgetError(f"the launch would cost {shown} until its TTL, over --max-cost {limit}",
                          "shorten --ttl, lower --count or raise --max-cost")


def ttl_before_the_run(ttl_hours: Decimal | None, run_hours: float | None) -> str | None:
    """Why a TTL shorter than the planned run is worth a second look (the machine ends mid-job), or None."""
    if ttl_hours is None or run_hours is None or float(ttl_hours) >= run_hours:
        return None
    return (f"the plan expects the job to run {run_hours:,.1f} h, but --ttl {ttl_hours:g} h ends the machine "
            f"{run_hours - float(ttl_hours):,.1f} h before that; give --ttl {math.ceil(run_hours * 1.2)}h to leave "
            "a 20% margin, or checkpoint and launch again")


class LaunchOutcome(BaseModel):
    record: LaunchRecord
    instances: list[InstanceInfo] = []
    notes: list[str] = []
    waited: bool = False
    ttl_ender: str = ""  # what ends the machines at the TTL by itself ("" where only `down --expired` does)


def check_boot(spec: LaunchSpec, client_class: type[ComputeClient]) -> None:
    """Refuse, before anything is asked or recorded, a teardown the cloud's machines cannot carry out."""
    boot = spec.boot
    if boot is None:
        return
    if boot.cam_role is not None and spec.provider != "tencent":
        raise InputError("--cam-role is for Tencent launches", f"a {spec.provider} machine ends itself without one")
    if boot.ends_itself and client_class.self_end(boot.cam_role) is None:
        raise InputError(*client_class.self_end_refusal())


def boot_driver(spec: LaunchSpec, client_class: type[ComputeClient]) -> Driver:
    """What the boot script does about the GPU driver (one decision, said before the launch and carried out):
    --driver; else on gpuplan's default image of a cloud whose public images lack it, install it; any other image
    is the user's choice, and is only checked."""
    if spec.boot is not None and spec.boot.driver is not None:
        return spec.boot.driver
    return Driver.CHECK if spec.image or client_class.default_image_has_driver else Driver.INSTALL


def boot_user_data(spec: LaunchSpec, launch_id: str, region: str, client: ComputeClient) -> tuple[str | None, bool]:
    """The launch's user data, and whether it installs the GPU driver: gpuplan's boot script when the user gave
    one of --setup/--run/--down-when/--idle, else the TTL backstop where the cloud has one (None elsewhere)."""
    ttl = client.ttl_user_data(spec.ttl_hours) if spec.ttl_hours is not None else None
    if spec.boot is None:
        return ttl, False
    check_boot(spec, type(client))
    driver = boot_driver(spec, type(client))
    cfg = BootConfig(launch_id=launch_id, region=region, nodes=spec.count, driver=driver,
                     end=type(client).self_end(spec.boot.cam_role), cam_role=spec.boot.cam_role,
                     ttl_minutes=max(1, int(spec.ttl_hours * 60)) if ttl is not None and spec.ttl_hours else None)
    return user_data(spec.boot, cfg), driver is Driver.INSTALL


def new_launch_id() -> str:
    return "gp-" + uuid.uuid4().hex[:10]


def start(q: LaunchQuote, *, ledger: Ledger, client: ComputeClient, progress: Callable[[str], None],
          checkpoint: Checkpoint = no_checkpoint, fx: Fx | None = None) -> LaunchOutcome:
    """Record the intent, ask the provider, record what it started. Never leaves a machine unrecorded.

    With ``fx``, the intent is written only if the budgets of the launch's project and owner hold, checked in
    the same transaction (see :mod:`launch.spend`)."""
    spec = q.spec
    created = now()
    expires = created + timedelta(hours=float(spec.ttl_hours)) if spec.ttl_hours is not None else None
    launch_id = new_launch_id()
    tags = {TAG_ID: launch_id, TAG_MANAGED: "true"}
    if expires is not None:
        tags[TAG_EXPIRES] = expires.isoformat(timespec="seconds")
    pinned = q.zone if spec.zone or spec.billing is BillingMode.SPOT else None
    boot_script, installs_driver = boot_user_data(spec, launch_id, q.region, client)
    request = LaunchRequest(
        # a zone asked for, or the zone a per-zone (spot) price was quoted in, is the zone launched in
        region=q.region, zone=pinned, zones=q.zones if not pinned else (),
        instance_type=q.offer, billing=spec.billing, months=spec.months, count=spec.count, image=spec.image,
        disk_gb=launch_disk_gb(spec),  # the disk the quote priced
        bandwidth_mbps=launch_bandwidth_mbps(spec),  # and Tencent's bandwidth
        client_token=uuid.uuid4().hex, name=f"gpuplan-{launch_id}", tags=tags,
        # The client says whether a machine can end itself at its TTL; elsewhere `down --expired` is the backstop.
        user_data=boot_script, installs_driver=installs_driver, cluster=spec.count > 1, dry_run=spec.dry_run,
        cam_role=spec.boot.cam_role if spec.boot else None,
        expires_at=expires,
        ssh_public_key=spec.ssh_key.public_key if spec.ssh_key else None,
        ssh_key_name=spec.ssh_key.name if spec.ssh_key else None, ssh_from=spec.ssh_from,
    )
    record = LaunchRecord(
        id=launch_id, provider=spec.provider, region=q.region, zone=request.zone, instance_type=q.offer,
        billing=spec.billing, months=spec.months, count=spec.count, image=spec.image,
        client_token=request.client_token, state=LaunchState.INTENT, unit_price=q.unit_price, created_at=created,
        expires_at=expires, max_cost=spec.max_cost, extras_unit=q.extras_unit,
        teardown=spec.boot.policy if spec.boot else "", owner=spec.owner, project=spec.project, host=spec.host,
        account="" if spec.dry_run else account_of(client),  # only this account's listings can end it
    )
    if spec.dry_run:
        if fx is not None:
            budget_check(spec.project, spec.owner, q.projected, fx, created)(ledger)
        result = client.run(request)
        return LaunchOutcome(record=record, notes=["dry run: the provider says the launch would succeed",
                                                   *result.notes])
    if fx is not None:
        ledger.record_intent(record, check=budget_check(spec.project, spec.owner, q.projected, fx, created))
    else:
        ledger.record_intent(record)
    record_login_key(ledger, launch_id, spec.ssh_key)  # `gpuplan ssh` logs in with it
    checkpoint("intent")
    try:
        result = client.run(request)
    except GpuplanError as exc:
        # A refusal starts nothing, nor a call the client says created nothing (it failed before the create
        # call, or the provider refused that): failed at once, holding no budget. Anything else may have
        # started machines: keep it findable by its tag.
        evidence = nothing_created(exc)
        refused = exc.exit_code in (2, 3, 4, 7) or bool(evidence)
        state = LaunchState.FAILED if refused else LaunchState.UNKNOWN
        ledger.set_state(launch_id, state, exc.message + (f" ({evidence})" if evidence else ""))
        raise
    except BaseException as exc:
        ledger.set_state(launch_id, LaunchState.UNKNOWN, f"interrupted during the call: {type(exc).__name__}")
        progress(f"interrupted while the provider was starting launch {launch_id}: it may still start machines; "
                 f"see them: gpuplan ls    end them: gpuplan down {launch_id}")
        raise
    checkpoint("after-run")
    infos = [InstanceInfo(instance_id=i, state=InstanceState.PENDING, zone=result.zone or "")
             for i in result.instance_ids]
    ledger.record_instances(launch_id, infos)
    partial = len(infos) < spec.count
    ledger.set_state(launch_id, LaunchState.PARTIAL if partial else LaunchState.PENDING,
                     f"{len(infos)} of {spec.count} started", zone=result.zone, image=result.image)
    timer = None
    if result.cloud_ends_at is not None:
        timer = (f"the cloud terminates it at {result.cloud_ends_at:%Y-%m-%d %H:%M:%S} UTC "
                 "(its own timer, set at launch)")
        ledger.set_note(launch_id, timer)
    checkpoint("after-record")
    notes = [*result.notes, *([timer] if timer else [])]
    if partial:
        notes.append(f"only {len(infos)} of {spec.count} machines started; all are recorded")
    progress(f"started {', '.join(result.instance_ids)}")
    ender = ("the cloud's own timer" if timer else "its own shutdown at the TTL" if spec.ttl_hours is not None
             and client.ttl_user_data(spec.ttl_hours) is not None else "")
    return LaunchOutcome(record=ledger.launch(launch_id), instances=infos, notes=notes, ttl_ender=ender)


def wait_running(out: LaunchOutcome, *, ledger: Ledger, client: ComputeClient, timeout: float, poll: float,
                 sleep: Callable[[float], None] = time.sleep, checkpoint: Checkpoint = no_checkpoint) -> LaunchOutcome:
    """Poll until every machine runs (or failed); LAUNCH_FAILED machines are terminated and recorded."""
    ids = [i.instance_id for i in out.instances]
    infos = _poll(ledger, client, out.record.id, ids, lambda i: i.state is not InstanceState.PENDING,
                  timeout=timeout, poll=poll, sleep=sleep, checkpoint=checkpoint) or out.instances
    failed = [i.instance_id for i in infos if i.state is InstanceState.FAILED]
    notes = list(out.notes)
    if failed:
        client.terminate(failed)  # LAUNCH_FAILED holds nothing, but clean up what the provider lists
        notes.append(f"{len(failed)} machine(s) failed to launch: {', '.join(failed)}")
    running = [i for i in infos if i.state is InstanceState.RUNNING]
    state = (LaunchState.RUNNING if len(running) == out.record.count else
             LaunchState.FAILED if not running else LaunchState.PARTIAL)
    ledger.set_state(out.record.id, state, f"{len(running)} of {out.record.count} running")
    return LaunchOutcome(record=ledger.launch(out.record.id), instances=infos, notes=notes, waited=True,
                         ttl_ender=out.ttl_ender)


# -- ls and down


class LaunchStatus(BaseModel):
    record: LaunchRecord
    instances: list[InstanceInfo]
    accrued: Money
    projected: Money | None
    age_hours: Decimal
    notes: list[str] = []
    ended: bool = True  # for `down`: False when the launch was not seen to end (still ending, or a fault)
    expired: bool = False  # past its TTL and not ended: it bills until `down` (or the cloud's timer) ends it


def _find(r: LaunchRecord, client: ComputeClient, known: list[str]) -> list[InstanceInfo]:
    """The launch's machines: those recorded, plus any the provider holds under its tag."""
    infos = {i.instance_id: i for i in client.describe(known)} if known else {}
    for i in client.list_by_tag(TAG_ID, r.id):
        infos.setdefault(i.instance_id, i)
    return list(infos.values())


def status(ledger: Ledger, client_for: ClientFor, *, include_final: bool = False,
           owners: set[str] | None = None) -> list[LaunchStatus]:
    """Every launch (of ``owners`` only, when given) with the provider's word on its machines, accrued cost and cost
    to TTL."""
    out = []
    at = now()
    for r in ledger.launches(include_final=include_final):
        if owners is not None and r.owner not in owners:
            continue
        notes: list[str] = []
        recorded = ledger.instances(r.id)
        # An ended launch with a machine last seen alive (an answer that came after `down` closed it) is asked again.
        if r.state.is_final and all(i.state.is_final for i in recorded):
            infos = ledger_infos(ledger, r.id)
        else:
            try:
                client = client_for(r.provider, r.region)
                if (elsewhere := foreign(r, client)) is not None:
                    out.append(_status_of(ledger, r, ledger_infos(ledger, r.id), at, [elsewhere]))
                    continue
                infos = _find(r, client, [i.instance_id for i in recorded])
            except Exception as exc:  # noqa: BLE001 - one unreadable cloud must not hide every other launch
                infos = [InstanceInfo(instance_id=i.instance_id, state=InstanceState.UNKNOWN, zone=i.zone)
                         for i in recorded]
                notes.append(f"provider not reachable: {_fault(exc)}")
            else:
                new = [i for i in infos if i.instance_id not in {x.instance_id for x in recorded}]
                if new:
                    notes.append(f"found by tag: {', '.join(i.instance_id for i in new)} (now recorded)")
                if infos:
                    ledger.record_instances(r.id, infos)
                _settle(ledger, r, infos)
                r = ledger.launch(r.id)
        out.append(_status_of(ledger, r, infos, at, notes))
    return out


def _settle(ledger: Ledger, r: LaunchRecord, infos: list[InstanceInfo]) -> None:
    """Move the launch's state along with its machines' states."""
    live = [i for i in infos if not i.state.is_final]
    if infos and not live:
        state = LaunchState.TERMINATED
    elif live and (r.state is LaunchState.TERMINATING or all(i.state is InstanceState.TERMINATING for i in live)):
        state = LaunchState.TERMINATING  # asked to end: a machine still shutting down is not a new launch
    elif any(i.state is InstanceState.RUNNING for i in live):
        state = LaunchState.RUNNING if len(live) >= r.count else LaunchState.PARTIAL
    elif live:
        state = LaunchState.PENDING
    elif r.state in (LaunchState.INTENT, LaunchState.UNKNOWN) and now() - r.created_at > SETTLE_AFTER:
        # Nothing carries the launch's tag this long after the call: the provider started nothing.
        ledger.set_state(r.id, LaunchState.FAILED, f"no machine with tag {TAG_ID}={r.id} "
                         f"{SETTLE_AFTER.total_seconds() / 60:.0f} min after the launch")
        return
    else:
        return  # nothing found yet: keep looking; `down` can close it now
    if state is not r.state:
        ledger.set_state(r.id, state)


def down(ledger: Ledger, client_for: ClientFor, records: list[LaunchRecord], *, timeout: float, poll: float,
         sleep: Callable[[float], None] = time.sleep) -> list[LaunchStatus]:
    """Ask the cloud to end every launch first, then wait for them all, and record each end.

    One launch's provider error or slow termination never keeps another from being asked: a machine
    left running bills. A launch not seen ending comes back with ``ended`` False and a note saying why,
    and stays ``terminating`` in the ledger so ``ls`` and the next ``down`` still see it.
    """
    asked: list[tuple[LaunchRecord, ComputeClient, list[str], list[InstanceInfo]]] = []
    failed: dict[str, LaunchStatus] = {}
    for r in records:
        try:
            client = client_for(r.provider, r.region)
            if (elsewhere := foreign(r, client)) is not None:
                failed[r.id] = _status_of(ledger, r, ledger_infos(ledger, r.id), now(), [f"not ended: {elsewhere}"],
                                          ended=False)
                continue
            recorded = ledger.instances(r.id)
            infos = _find(r, client, [i.instance_id for i in recorded])
            ids = [i.instance_id for i in infos if not i.state.is_final]
            if ids:
                # Marked ending only once there is something to end: a `down` cut short before this point
                # leaves an in-flight launch as it was, so the next `down` still waits for its machine.
                ledger.set_state(r.id, LaunchState.TERMINATING)
                ledger.set_end_asked(r.id, now())
                client.terminate(ids)
        except Exception as exc:  # noqa: BLE001 - any one cloud's fault must not stop the other launches ending
            why = _fault(exc)
            ledger.set_end_asked(r.id, None)
            ledger.set_state(r.id, r.state, f"not ended: {why}")  # nothing was asked to end: as it was
            failed[r.id] = _status_of(ledger, ledger.launch(r.id), ledger_infos(ledger, r.id), now(),
                                      [f"not ended: {why}"], ended=False)
            continue
        if not infos and in_flight(r, recorded) and now() - r.created_at <= SETTLE_AFTER:
            # Its RunInstances may still be running (a slow call, Ctrl-C, another terminal): a machine it
            # starts appears later under the launch's tag. Ended now, that machine would bill unseen.
            ledger.set_state(r.id, r.state, "not ended: no machine found yet, the launch call may still start one")
            why = (f"not ended: no machine found yet, but the provider may still be starting one; run `gpuplan down "
                   f"{r.id}` again in a few minutes (it closes by itself {SETTLE_AFTER.total_seconds() / 60:.0f} min "
                   "after the launch if none appears)")
            failed[r.id] = _status_of(ledger, ledger.launch(r.id), [], now(), [why], ended=False)
            continue
        asked.append((r, client, ids, infos))
    deadline = time.monotonic() + timeout
    done: dict[str, LaunchStatus] = {}
    for r, client, ids, infos in asked:
        try:
            if ids:
                infos = _poll(ledger, client, r.id, ids, lambda i: i.state.is_final,
                              timeout=max(0.0, deadline - time.monotonic()), poll=poll, sleep=sleep)
        except TimeoutError:
            live = ", ".join(ids)
            done[r.id] = _status_of(ledger, ledger.launch(r.id), ledger_infos(ledger, r.id), now(),
                                    [f"still ending: {live} asked to terminate, not yet terminated"], ended=False)
            continue
        except Exception as exc:  # noqa: BLE001 - as above: the others still get their wait
            done[r.id] = _status_of(ledger, ledger.launch(r.id), ledger_infos(ledger, r.id), now(),
                                    [f"asked to terminate, state unknown: {_fault(exc)}"], ended=False)
            continue
        ledger.set_state(r.id, LaunchState.TERMINATED, f"{len(ids)} machine(s) terminated")
        done[r.id] = _status_of(ledger, ledger.launch(r.id), infos, now())
    return [done.get(r.id) or failed[r.id] for r in records]


def in_flight(r: LaunchRecord, recorded: list[InstanceRecord]) -> bool:
    """Whether the launch's RunInstances may still be under way: no machine recorded, and not ended. A launch a
    `down` marked ``terminating`` (before it was cut short) with no machine recorded is as much in flight."""
    return not recorded and r.state in (LaunchState.INTENT, LaunchState.UNKNOWN, LaunchState.TERMINATING)


def _fault(exc: Exception) -> str:
    return exc.message if isinstance(exc, GpuplanError) else printable(f"{type(exc).__name__}: {exc}")


def ledger_infos(ledger: Ledger, launch_id: str) -> list[InstanceInfo]:
    """The machines of a launch as last recorded (when the provider's word is not at hand)."""
    return [InstanceInfo(instance_id=i.instance_id, state=i.state, zone=i.zone, public_ip=i.public_ip,
                         private_ip=i.private_ip) for i in ledger.instances(launch_id)]


def _poll(ledger: Ledger, client: ComputeClient, launch_id: str, ids: list[str],
          done: Callable[[InstanceInfo], bool], *, timeout: float, poll: float, sleep: Callable[[float], None],
          checkpoint: Checkpoint = no_checkpoint) -> list[InstanceInfo]:
    """Describe ``ids`` until every machine is ``done``, recording each answer; TimeoutError past ``timeout``."""
    deadline = time.monotonic() + timeout
    infos: list[InstanceInfo] = []
    while ids:
        checkpoint("waiting")
        infos = client.describe(ids)
        ledger.record_instances(launch_id, infos)
        if all(done(i) for i in infos):
            break
        if time.monotonic() > deadline:
            raise TimeoutError
        sleep(poll)
    return infos


def _status_of(ledger: Ledger, r: LaunchRecord, infos: list[InstanceInfo], at: datetime,
               notes: list[str] | None = None, *, ended: bool = True) -> LaunchStatus:
    """A launch with its machines, what they cost so far (from the recorded start and end) and to the TTL."""
    starts = [(i.started_at or r.created_at, i.ended_at) for i in ledger.instances(r.id)]
    notes = [*([r.note] if r.note and not r.state.is_final else []), *(notes or [])]
    late = past_ttl(r, at) and not r.state.is_final
    if late and ended:
        notes.append(f"past its TTL ({r.expires_at:%Y-%m-%d %H:%M} UTC) and not ended: `gpuplan down --expired` "
                     "ends it")
    # an ended launch costs what it cost: no more "cost to TTL"
    projected = None if r.state.is_final else projected_cost(r)
    return LaunchStatus(record=r, instances=infos, accrued=accrued_cost(r, starts, at), projected=projected,
                        age_hours=hours_between(r.created_at, at), notes=notes, ended=ended, expired=late)


def past_ttl(r: LaunchRecord, at: datetime) -> bool:
    return r.expires_at is not None and r.expires_at <= at


def expired(ledger: Ledger, at: datetime | None = None) -> list[LaunchRecord]:
    at = at or datetime.now(UTC)
    return [r for r in ledger.launches(include_final=False) if past_ttl(r, at)]
