"""The launch service over an in-memory provider: order of writes, budget, failover, partial and failed launches."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pricing.billing import BillingMode
from pricing.catalog import Catalog
from pricing.errors import BudgetError, CapacityError, InputError, ProviderError
from pricing.money import Currency, Fx, Money
from providers.capabilities import TAG_EXPIRES, TAG_ID, TAG_MANAGED, InstanceState, LaunchRequest, LaunchResult
from launch.ledger import LaunchState, Ledger
from launch.service import (
    LaunchSpec,
    accrued_cost,
    check_budget,
    down,
    expired,
    projected_cost,
    quote_launch,
    start,
    status,
    wait_running,
)
from tests.fakes.fake_compute import Cloud, FakeCompute

CAT = Catalog.shipped()
HPM = Decimal(730)
USD = Currency.USD


def spec(**over: object) -> LaunchSpec:
    base: dict[str, object] = dict(provider="aws", instance_type="p3.2xlarge", region="us-east-1",
                                   billing=BillingMode.HOURLY)
    base.update(over)
    return LaunchSpec(**base)  # type: ignore[arg-type]


@pytest.fixture
def ledger(tmp_path: Path) -> Ledger:
    return Ledger(tmp_path / "ledger.sqlite3")


def launch(ledger: Ledger, cloud: Cloud, **over: object):  # type: ignore[no-untyped-def]
    q = quote_launch(spec(**over), CAT, hours_per_month=HPM)
    client = FakeCompute(cloud)
    out = start(q, ledger=ledger, client=client, progress=lambda _: None)
    return q, client, out


def test_the_quote_uses_the_catalog_rate_and_projects_to_the_ttl() -> None:
    q = quote_launch(spec(ttl_hours=Decimal(6), count=2), CAT, hours_per_month=HPM)
    assert q.unit_price == Money(amount=Decimal("3.06"), currency=USD)
    assert q.instance_projected == Money(amount=Decimal("3.06") * 6 * 2, currency=USD)
    # the whole bill adds each machine's 256 GB gp3 disk and public address for the 6 h, by hand
    disks = Decimal("0.08") * 256 * 6 / 730 * 2
    addresses = Decimal("0.005") * 6 * 2
    assert q.projected is not None
    assert q.projected.amount == pytest.approx(Decimal("3.06") * 6 * 2 + disks + addresses)
    assert {i.item for i in q.extras} == {"disk:gp3", "ipv4"}


def test_monthly_counts_the_whole_prepaid_period_whatever_the_ttl() -> None:
    q = quote_launch(spec(provider="tencent", instance_type="GN10Xp.20XLARGE320", region=None,
                          zone="ap-guangzhou-3", billing=BillingMode.MONTHLY, months=3, ttl_hours=Decimal(6)),
                     CAT, hours_per_month=HPM)
    assert q.instance_projected == Money(amount=Decimal(46000) * 3, currency=Currency.CNY)
    # plus, for the 3 prepaid months, 5 Mbps of bandwidth (the default) by tier (2 x 20 + 3 x 25 CNY a month)
    # and the 256 GB premium cloud disk at 0.35 CNY per GB-month
    whole = Decimal(46000) * 3 + (2 * 20 + 3 * 25) * 3 + Decimal("0.35") * 256 * 3
    assert q.projected == Money(amount=whole, currency=Currency.CNY)
    assert q.region == "ap-guangzhou"


def test_a_launch_over_the_cap_is_refused_before_anything_is_created(ledger: Ledger) -> None:
    q = quote_launch(spec(ttl_hours=Decimal(10), max_cost=Money(amount=Decimal(30), currency=USD)), CAT,
                     hours_per_month=HPM)
    with pytest.raises(BudgetError) as err:
        check_budget(q, Fx([]))
    whole = Decimal("3.06") * 10 + Decimal("0.08") * 256 * 10 / 730 + Decimal("0.005") * 10  # 30.93 USD
    assert err.value.exit_code == 7 and f"{whole:.2f}" in err.value.message
    assert ledger.launches() == []


def test_a_monthly_launch_over_the_cap_names_its_prepaid_months_not_a_ttl() -> None:
    q = quote_launch(spec(provider="tencent", instance_type="GN10Xp.2XLARGE40", region="ap-guangzhou",
                          billing=BillingMode.MONTHLY, months=2, ttl_hours=Decimal(6),
                          max_cost=Money(amount=Decimal(1), currency=Currency.CNY)), CAT, hours_per_month=HPM)
    with pytest.raises(BudgetError) as err:
        check_budget(q, Fx([]))
    assert "prepaid 2 month(s)" in err.value.message and "TTL" not in err.value.message
    assert "--ttl" not in (err.value.hint or "") and "--months" in (err.value.hint or "")


def test_a_cap_without_ttl_on_hourly_is_refused() -> None:
    q = quote_launch(spec(max_cost=Money(amount=Decimal(30), currency=USD)), CAT, hours_per_month=HPM)
    with pytest.raises(InputError, match="--ttl"):
        check_budget(q, Fx([]))


def test_intent_first_then_ids_then_running(ledger: Ledger) -> None:
    cloud = Cloud(pending_polls=2)
    _, client, out = launch(ledger, cloud, ttl_hours=Decimal(2))
    assert out.record.state is LaunchState.PENDING and len(out.instances) == 1
    events = ledger.events(out.record.id)
    # the key `gpuplan ssh` logs in with is written with the intent, before the provider is asked
    assert events[0].startswith("intent") and events[1] == "login key: none" and events[2].startswith("instances")
    m = cloud.machines[out.instances[0].instance_id]
    assert m.tags[TAG_ID] == out.record.id and m.tags[TAG_MANAGED] == "true" and TAG_EXPIRES in m.tags
    done = wait_running(out, ledger=ledger, client=client, timeout=5, poll=0, sleep=lambda _: None)
    assert done.record.state is LaunchState.RUNNING
    assert [i.state for i in ledger.instances(out.record.id)] == [InstanceState.RUNNING]


class Recording(FakeCompute):
    """A fake client that keeps every request it is sent."""

    def __init__(self, cloud: Cloud, provider: str = "aws") -> None:
        super().__init__(cloud, provider)
        self.sent: list[LaunchRequest] = []

    def run(self, request: LaunchRequest) -> LaunchResult:
        self.sent.append(request)
        return super().run(request)


class SelfEnding(Recording):
    """A cloud whose machines can end themselves (and their bill) at the TTL."""

    def ttl_user_data(self, ttl_hours: Decimal) -> str | None:
        return f"end in {ttl_hours} h"


@pytest.mark.parametrize(("client_cls", "provider", "ttl", "user_data"), [
    (SelfEnding, "tencent", Decimal(6), "end in 6 h"),  # the client's word counts, not the provider's name
    (Recording, "aws", Decimal(6), None),  # named aws, but this client cannot end its machines
    (SelfEnding, "aws", None, None),  # no TTL, nothing to end
])
def test_the_ttl_backstop_is_whatever_the_client_says(ledger: Ledger, client_cls: type[Recording], provider: str,
                                                      ttl: Decimal | None, user_data: str | None) -> None:
    q = quote_launch(spec(ttl_hours=ttl), CAT, hours_per_month=HPM)
    client = client_cls(Cloud(), provider)
    start(q, ledger=ledger, client=client, progress=lambda _: None)
    (request,) = client.sent
    assert request.user_data == user_data


def test_a_refused_launch_is_recorded_as_failed_and_nothing_runs(ledger: Ledger) -> None:
    cloud = Cloud(sold_out={"us-east-1a"})
    with pytest.raises(CapacityError):
        launch(ledger, cloud, zone="us-east-1a")
    (r,) = ledger.launches()
    assert r.state is LaunchState.FAILED and cloud.live() == []


def test_an_ambiguous_failure_stays_findable(ledger: Ledger) -> None:
    cloud = Cloud(fail_next_run=ProviderError("connection reset after the request was sent"))
    with pytest.raises(ProviderError):
        launch(ledger, cloud)
    (r,) = ledger.launches()
    assert r.state is LaunchState.UNKNOWN  # `ls` will look for its tag; `down` can close it


def test_a_failure_the_client_says_created_nothing_is_failed_at_once_with_its_evidence(ledger: Ledger) -> None:
    from providers.created import mark

    why = "AWS created nothing: the launch failed before RunInstances was sent"
    cloud = Cloud(fail_next_run=mark(ProviderError("no default GPU image found"), why))
    with pytest.raises(ProviderError):
        launch(ledger, cloud)
    (r,) = ledger.launches()
    assert r.state is LaunchState.FAILED and ledger.launches(include_final=False) == []  # holds no budget
    assert ledger.events(r.id)[-1] == f"failed: no default GPU image found ({why})"
    from launch.spend import launch_cost

    at = r.created_at + timedelta(hours=1)  # an unknown launch counted as running from its intent: this one nothing
    assert launch_cost(r, ledger.instances(r.id), r.created_at, at, at) == 0


def test_partial_launches_are_recorded_and_said(ledger: Ledger) -> None:
    cloud = Cloud(max_start=1)
    _, _, out = launch(ledger, cloud, count=3)
    assert out.record.state is LaunchState.PARTIAL and len(out.instances) == 1
    assert any("only 1 of 3" in n for n in out.notes)


def test_launch_failed_machines_are_cleaned_up(ledger: Ledger) -> None:
    cloud = Cloud(launch_failed=True)
    _, client, out = launch(ledger, cloud)
    done = wait_running(out, ledger=ledger, client=client, timeout=5, poll=0, sleep=lambda _: None)
    assert done.record.state is LaunchState.FAILED
    assert "terminate" in cloud.calls and any("failed to launch" in n for n in done.notes)


def test_a_dry_run_writes_nothing_and_starts_nothing(ledger: Ledger) -> None:
    cloud = Cloud()
    _, _, out = launch(ledger, cloud, dry_run=True)
    assert ledger.launches() == [] and cloud.machines == {} and out.instances == []


def test_status_finds_machines_by_tag_when_the_ids_never_reached_the_ledger(ledger: Ledger) -> None:
    cloud = Cloud()
    _, client, out = launch(ledger, cloud)
    # simulate the crash between the call and the id write: forget the ids
    ledger.db.execute("DELETE FROM instances")
    ledger.set_state(out.record.id, LaunchState.INTENT)
    (s,) = status(ledger, lambda p, r: client)
    assert [i.instance_id for i in s.instances] == [i.instance_id for i in out.instances]
    assert any("found by tag" in n for n in s.notes)
    (ended,) = down(ledger, lambda p, r: client, [ledger.launch(out.record.id)], timeout=5, poll=0,
                    sleep=lambda _: None)
    assert ended.record.state is LaunchState.TERMINATED and cloud.live() == []


def test_down_on_an_intent_that_never_reached_the_provider_closes_it_once_nothing_can_appear(ledger: Ledger) -> None:
    cloud = Cloud()
    q = quote_launch(spec(), CAT, hours_per_month=HPM)
    from launch.ledger import LaunchRecord
    from launch.service import new_launch_id

    rid = new_launch_id()
    ledger.record_intent(LaunchRecord(id=rid, provider="aws", region="us-east-1", zone=None,
                                      instance_type=q.offer, billing=BillingMode.HOURLY, months=1, count=1,
                                      image=None, client_token="t", state=LaunchState.INTENT,
                                      unit_price=q.unit_price, created_at=datetime.now(UTC) - timedelta(minutes=11),
                                      expires_at=None,
                                      max_cost=None))
    (ended,) = down(ledger, lambda p, r: FakeCompute(cloud), [ledger.launch(rid)], timeout=5, poll=0,
                    sleep=lambda _: None)
    assert ended.record.state is LaunchState.TERMINATED and ended.instances == []


def test_expired_launches_are_the_ones_past_their_ttl(ledger: Ledger) -> None:
    cloud = Cloud()
    _, _, short = launch(ledger, cloud, ttl_hours=Decimal(1))
    _, _, long_ = launch(ledger, cloud, ttl_hours=Decimal(100))
    _, _, none = launch(ledger, cloud)
    later = datetime.now(UTC) + timedelta(hours=2)
    assert [r.id for r in expired(ledger, later)] == [short.record.id]


@given(st.decimals(min_value=0, max_value=1000, places=2), st.decimals(min_value=0, max_value=1000, places=2))
def test_more_time_never_costs_less(h1: Decimal, h2: Decimal) -> None:
    q = quote_launch(spec(), CAT, hours_per_month=HPM)
    from launch.ledger import LaunchRecord

    r = LaunchRecord(id="x", provider="aws", region="us-east-1", zone=None, instance_type=q.offer,
                     billing=BillingMode.HOURLY, months=1, count=1, image=None, client_token="t",
                     state=LaunchState.RUNNING, unit_price=q.unit_price, created_at=datetime(2026, 1, 1, tzinfo=UTC),
                     expires_at=None, max_cost=None)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    a = accrued_cost(r, [(t0, None)], t0 + timedelta(hours=float(min(h1, h2))))
    b = accrued_cost(r, [(t0, None)], t0 + timedelta(hours=float(max(h1, h2))))
    assert a.amount <= b.amount


def test_a_pseudo_region_offer_needs_a_real_place() -> None:
    with pytest.raises(InputError, match="--region or --zone"):
        quote_launch(spec(provider="tencent", instance_type="GN10Xp.20XLARGE320", region=None), CAT,
                     hours_per_month=HPM)


def test_an_ambiguous_launch_with_no_machine_after_ten_minutes_is_closed(ledger: Ledger) -> None:
    cloud = Cloud(fail_next_run=ProviderError("connection reset after the request was sent"))
    with pytest.raises(ProviderError):
        launch(ledger, cloud)
    (r,) = ledger.launches()
    status(ledger, lambda p, reg: FakeCompute(cloud))
    assert ledger.launch(r.id).state is LaunchState.UNKNOWN  # too early to say
    ledger.db.execute("UPDATE launches SET created_at = '2000-01-01T00:00:00+00:00' WHERE id = ?", (r.id,))
    status(ledger, lambda p, reg: FakeCompute(cloud))
    assert ledger.launch(r.id).state is LaunchState.FAILED


def test_a_spot_launch_is_sent_to_the_zone_it_was_quoted_in(ledger: Ledger) -> None:
    q = quote_launch(spec(instance_type="p3.16xlarge", billing=BillingMode.SPOT), CAT, hours_per_month=HPM)
    client = Recording(Cloud())
    start(q, ledger=ledger, client=client, progress=lambda _: None)
    (request,) = client.sent
    assert (q.zone, q.unit_price.amount) == ("use1-az2", Decimal("2.8502"))
    assert (request.zone, request.zones) == ("use1-az2", ())


def test_a_zone_asked_for_is_quoted_at_its_own_spot_price_and_names_its_region(ledger: Ledger) -> None:
    q = quote_launch(spec(instance_type="p3.16xlarge", billing=BillingMode.SPOT, region=None, zone="use1-az5"),
                     CAT, hours_per_month=HPM)
    assert (q.region, q.zone, q.unit_price.amount) == ("us-east-1", "use1-az5", Decimal("2.6694"))
    client = Recording(Cloud())
    start(q, ledger=ledger, client=client, progress=lambda _: None)
    assert client.sent[0].zone == "use1-az5"


def _in_flight(ledger: Ledger, state: LaunchState, age: timedelta = timedelta(0)) -> str:
    from launch.ledger import LaunchRecord
    from launch.service import new_launch_id

    q = quote_launch(spec(), CAT, hours_per_month=HPM)
    rid = new_launch_id()
    ledger.record_intent(LaunchRecord(id=rid, provider="aws", region="us-east-1", zone=None,
                                      instance_type=q.offer, billing=BillingMode.HOURLY, months=1, count=1,
                                      image=None, client_token="t", state=LaunchState.INTENT,
                                      unit_price=q.unit_price, created_at=datetime.now(UTC) - age,
                                      expires_at=None, max_cost=None))
    if state is not LaunchState.INTENT:
        ledger.set_state(rid, state, "interrupted during the call: KeyboardInterrupt")
    return rid


def test_down_never_calls_a_launch_ended_while_its_run_call_may_still_start_a_machine(ledger: Ledger) -> None:
    cloud = Cloud()
    rid = _in_flight(ledger, LaunchState.UNKNOWN)
    (got,) = down(ledger, lambda p, r: FakeCompute(cloud), [ledger.launch(rid)], timeout=5, poll=0,
                  sleep=lambda _: None)
    assert not got.ended and any("may still be starting" in n for n in got.notes)
    assert not ledger.launch(rid).state.is_final  # ls and the next down still look for its machine
    # the machine the slow RunInstances started appears afterwards, carrying the launch's tag: the next down ends it
    m = FakeCompute(cloud).run(LaunchRequest(region="us-east-1", instance_type="p3.2xlarge", client_token="t",
                                             tags={TAG_ID: rid, TAG_MANAGED: "true"}))
    (row,) = status(ledger, lambda p, r: FakeCompute(cloud))
    assert row.record.id == rid and [i.instance_id for i in row.instances] == list(m.instance_ids)
    (got,) = down(ledger, lambda p, r: FakeCompute(cloud), [ledger.launch(rid)], timeout=5, poll=0,
                  sleep=lambda _: None)
    assert got.ended and got.record.state is LaunchState.TERMINATED and cloud.live() == []


def test_down_closes_a_launch_with_no_machine_long_after_its_call(ledger: Ledger) -> None:
    rid = _in_flight(ledger, LaunchState.UNKNOWN, age=timedelta(minutes=11))
    (got,) = down(ledger, lambda p, r: FakeCompute(Cloud()), [ledger.launch(rid)], timeout=5, poll=0,
                  sleep=lambda _: None)
    assert got.ended and got.record.state is LaunchState.TERMINATED and got.instances == []


def test_ctrl_c_during_the_run_call_names_the_launch_and_how_to_end_it(ledger: Ledger) -> None:
    said: list[str] = []
    cloud = Cloud(fail_next_run=KeyboardInterrupt())  # type: ignore[arg-type]
    q = quote_launch(spec(), CAT, hours_per_month=HPM)
    with pytest.raises(KeyboardInterrupt):
        start(q, ledger=ledger, client=FakeCompute(cloud), progress=said.append)
    (r,) = ledger.launches()
    assert r.state is LaunchState.UNKNOWN
    assert any(r.id in line and f"gpuplan down {r.id}" in line for line in said)


def test_the_ledger_keeps_the_extras_so_ls_costs_are_the_bill(ledger: Ledger) -> None:
    q, _, out = launch(ledger, Cloud(), ttl_hours=Decimal(10), count=2)
    r = ledger.launch(out.record.id)
    per_hour = Decimal("0.08") * 256 / 730 + Decimal("0.005")  # a 256 GB gp3 disk and an address, by hand
    assert r.extras_unit == pytest.approx(per_hour)
    projected = projected_cost(r)
    assert projected is not None and q.projected is not None
    assert projected.amount == pytest.approx(q.projected.amount)  # ls and the confirmation agree
    begun = r.created_at
    got = accrued_cost(r, [(begun, begun + timedelta(hours=3))] * 2, begun + timedelta(hours=3))
    assert got.amount == pytest.approx((Decimal("3.06") + per_hour) * 3 * 2)


def test_a_ledger_from_before_the_extras_still_opens_and_costs_the_instances(tmp_path: Path) -> None:
    import sqlite3

    from launch.ledger import MIGRATIONS

    path = tmp_path / "old.sqlite3"
    db = sqlite3.connect(path)
    db.executescript(MIGRATIONS[0])
    db.execute("PRAGMA user_version=1")
    db.execute("INSERT INTO launches (id, provider, region, instance_type, billing, count, client_token, state,"
               " unit_price, currency, created_at) VALUES ('gp-old', 'aws', 'us-east-1', 'p3.2xlarge', 'hourly', 1,"
               " 't', 'running', '3.06', 'USD', '2026-01-01T00:00:00+00:00')")
    db.commit()
    db.close()
    with Ledger(path) as led:
        r = led.launch("gp-old")
    assert r.extras_unit is None
    at = r.created_at + timedelta(hours=2)
    assert accrued_cost(r, [(r.created_at, None)], at).amount == Decimal("3.06") * 2


def test_a_tencent_subscription_launch_asks_for_the_bandwidth_it_priced(ledger: Ledger) -> None:
    from pricing.bill import Extras

    cloud = Cloud()
    launch(ledger, cloud, provider="tencent", instance_type="GN10Xp.20XLARGE320", region=None,
           zone="ap-guangzhou-3", billing=BillingMode.MONTHLY, extras=Extras(bandwidth_mbps=3))
    assert cloud.requests[-1].bandwidth_mbps == 3
    launch(ledger, cloud, ttl_hours=Decimal(1))  # aws, hourly: no bandwidth to prepay
    assert cloud.requests[-1].bandwidth_mbps is None
    # pay-as-you-go: the cap the quote named (5 Mbps by default, priced by the sourced rates), not the client's own 10
    q = launch(ledger, cloud, provider="tencent", instance_type="GN10Xp.20XLARGE320", region=None,
               zone="ap-guangzhou-3", ttl_hours=Decimal(1))[0]
    assert cloud.requests[-1].bandwidth_mbps == 5 and not q.not_priced


def test_an_ended_launch_whose_machine_is_later_seen_alive_is_listed_and_ended_again(ledger: Ledger) -> None:
    from providers.capabilities import InstanceInfo

    cloud = Cloud()
    _, _, out = launch(ledger, cloud, ttl_hours=Decimal(6))
    rid = out.record.id
    down(ledger, lambda p, r: FakeCompute(cloud), [ledger.launch(rid)], timeout=5, poll=0, sleep=lambda _: None)
    assert ledger.launch(rid).state is LaunchState.TERMINATED and rid not in {r.id for r in ledger.launches(
        include_final=False)}
    # a late answer: the slow call's machine is recorded alive after `down` closed the launch
    late = FakeCompute(cloud).run(LaunchRequest(region="us-east-1", instance_type="p3.2xlarge", client_token="late",
                                                tags={TAG_ID: rid, TAG_MANAGED: "true"}))
    ledger.record_instances(rid, [InstanceInfo(instance_id=late.instance_ids[0], state=InstanceState.RUNNING)])
    (row,) = status(ledger, lambda p, r: FakeCompute(cloud))  # `ls`, not `ls --all`
    assert row.record.id == rid and row.record.state is not LaunchState.TERMINATED
    (got,) = down(ledger, lambda p, r: FakeCompute(cloud), ledger.launches(include_final=False), timeout=5, poll=0,
                  sleep=lambda _: None)
    assert got.ended and cloud.live() == []


def test_a_launch_past_its_ttl_is_marked_expired_with_the_way_to_end_it(ledger: Ledger) -> None:
    cloud = Cloud()
    _, _, out = launch(ledger, cloud, ttl_hours=Decimal(6))
    (row,) = status(ledger, lambda p, r: FakeCompute(cloud))
    assert not row.expired
    past = (datetime.now(UTC) - timedelta(minutes=5)).isoformat(timespec="seconds")
    ledger.db.execute("UPDATE launches SET expires_at = ? WHERE id = ?", (past, out.record.id))
    (row,) = status(ledger, lambda p, r: FakeCompute(cloud))
    assert row.expired and any("past its TTL" in n and "down --expired" in n for n in row.notes)
    down(ledger, lambda p, r: FakeCompute(cloud), [ledger.launch(out.record.id)], timeout=5, poll=0,
         sleep=lambda _: None)
    (row,) = status(ledger, lambda p, r: FakeCompute(cloud), include_final=True)
    assert not row.expired  # ended: nothing bills any more
