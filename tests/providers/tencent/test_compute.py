"""The lifecycle through the SDK against the fake: run, describe, terminate, list; failover, dry runs, faults."""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from pricing.billing import BillingMode
from pricing.errors import CapacityError, InputError, ProviderError
from providers.capabilities import TAG_ID, TAG_MANAGED, InstanceState, LaunchRequest
from providers.tencent.client import TencentCapacityError
from providers.tencent.compute import TAG_TOKEN, TencentCompute, zone_token
from providers.testing.fake_cvm import FakeCvm, FakeOffer, fake_cvm_server

GZ = "ap-guangzhou"
GN = "GN10Xp.2XLARGE40"


def request(**kw: object) -> LaunchRequest:
    base: dict[str, object] = {"region": GZ, "instance_type": GN, "client_token": "tok-1",
                               "tags": {TAG_ID: "launch-1"}, "name": "gpuplan-test"}
    return LaunchRequest(**{**base, **kw})  # type: ignore[arg-type]


@pytest.fixture
def compute(tencent_env: FakeCvm, sleeps: list[float]) -> TencentCompute:
    return TencentCompute(GZ, sleep=sleeps.append)


def test_a_users_own_image_gets_no_note_about_the_public_image(compute: TencentCompute) -> None:
    """--image is the user's: "not in the public image ... installs none" contradicted the boot's driver check."""
    result = compute.run(request(zone="ap-guangzhou-3", image="img-ubu22new", user_data="#!/bin/sh\necho hi\n"))
    assert result.instance_ids and not [n for n in result.notes if "public image" in n]


def states(compute: TencentCompute, ids: list[str]) -> list[InstanceState]:
    return [i.state for i in compute.describe(ids)]


def test_run_until_running_then_terminate(compute: TencentCompute, tencent_env: FakeCvm) -> None:
    result = compute.run(request(zone="ap-guangzhou-3", user_data="#!/bin/sh\necho hi\n", disk_gb=100))
    assert len(result.instance_ids) == 1 and result.zone == "ap-guangzhou-3" and not result.dry_run
    assert result.image == "img-ubu22new"
    assert any("image img-ubu22new" in n for n in result.notes)
    (driver,) = [n for n in result.notes if n.startswith("GPU driver: not in the public image")]
    assert "--image" in driver and "user_data" not in driver  # it names a flag that exists, not one that does not
    (call,) = tencent_env.calls_of("RunInstances")
    p = call.params
    assert p["ClientToken"] == "tok-1-ap-guangzhou-3" and p["InstanceChargeType"] == "POSTPAID_BY_HOUR"
    assert p["Placement"] == {"Zone": "ap-guangzhou-3"} and p["InstanceType"] == GN and p["InstanceCount"] == 1
    assert p["InstanceName"] == "gpuplan-test" and p["SystemDisk"] == {"DiskSize": 100} and p["DryRun"] is False
    assert base64.b64decode(p["UserData"]).decode() == "#!/bin/sh\necho hi\n"
    (spec,) = p["TagSpecification"]
    assert spec["ResourceType"] == "instance"
    assert {t["Key"]: t["Value"] for t in spec["Tags"]} == {TAG_ID: "launch-1", TAG_MANAGED: "true",
                                                           TAG_TOKEN: "tok-1"}
    assert "InstanceMarketOptions" not in p and "InstanceChargePrepaid" not in p and "HpcClusterId" not in p

    ids = list(result.instance_ids)
    first, second = compute.describe(ids)[0], compute.describe(ids)[0]
    assert first.state is InstanceState.PENDING
    assert second.state is InstanceState.RUNNING
    assert second.zone == "ap-guangzhou-3" and second.instance_type == GN and second.region == GZ
    assert second.tags[TAG_ID] == "launch-1" and second.private_ip and second.public_ip
    assert second.launched_at is not None and second.launched_at.tzinfo is not None

    compute.terminate(ids)
    assert tencent_env.calls_of("TerminateInstances")[0].params["InstanceIds"] == ids
    assert states(compute, ids) == [InstanceState.TERMINATING]
    assert states(compute, ids) == [InstanceState.TERMINATED]  # gone from the API
    assert not tencent_env.live_instances()


def test_the_same_token_starts_nothing_new(compute: TencentCompute, tencent_env: FakeCvm) -> None:
    first = compute.run(request(zone="ap-guangzhou-3", count=2))
    again = compute.run(request(zone="ap-guangzhou-3", count=2))
    assert set(again.instance_ids) == set(first.instance_ids) and len(first.instance_ids) == 2
    assert len(tencent_env.live_instances()) == 2 and len(tencent_env.calls_of("RunInstances")) == 1
    assert any("already exist" in n for n in again.notes)
    other = compute.run(request(zone="ap-guangzhou-3", client_token="tok-2"))
    assert len(tencent_env.live_instances()) == 3 and other.instance_ids[0] not in first.instance_ids


def test_a_run_whose_answer_was_lost_is_retried_with_the_same_token(compute: TencentCompute,
                                                                    tencent_env: FakeCvm) -> None:
    tencent_env.cut_connection(1, action="RunInstances")  # the instance starts, the answer breaks off
    result = compute.run(request(zone="ap-guangzhou-3"))
    calls = tencent_env.calls_of("RunInstances")
    assert [c.outcome for c in calls] == ["cut_connection", "ok"]
    assert calls[0].params["ClientToken"] == calls[1].params["ClientToken"]
    assert [i.instance_id for i in tencent_env.live_instances()] == list(result.instance_ids)


@pytest.mark.parametrize("style", ["error", "success"])
def test_dry_run_creates_nothing(tencent_env: FakeCvm, sleeps: list[float], style: str) -> None:
    tencent_env.dry_run_style = style
    result = TencentCompute(GZ, sleep=sleeps.append).run(request(zone="ap-guangzhou-3", dry_run=True))
    assert result.dry_run and result.instance_ids == () and result.zone == "ap-guangzhou-3"
    (call,) = tencent_env.calls_of("RunInstances")
    assert call.params["DryRun"] is True
    assert call.outcome == ("DryRunOperation" if style == "error" else "ok")
    assert not tencent_env.live_instances()


def test_a_dry_run_still_sees_a_sold_out_zone(compute: TencentCompute, tencent_env: FakeCvm) -> None:
    tencent_env.sell_out("ap-guangzhou-3", GN)
    with pytest.raises(CapacityError):
        compute.run(request(zone="ap-guangzhou-3", dry_run=True))


def test_unpinned_run_falls_over_to_the_next_zone(compute: TencentCompute, tencent_env: FakeCvm) -> None:
    tencent_env.sell_out("ap-guangzhou-3", GN)
    result = compute.run(request(zones=("ap-guangzhou-3", "ap-guangzhou-4")))
    assert result.zone == "ap-guangzhou-4"
    assert result.notes[0] == "sold out in ap-guangzhou-3 (ResourcesSoldOut.SpecifiedInstanceType); " \
                              "started in ap-guangzhou-4"
    assert [c.params["Placement"]["Zone"] for c in tencent_env.calls_of("RunInstances")] == [
        "ap-guangzhou-3", "ap-guangzhou-4"]
    assert tencent_env.live_instances()[0].zone == "ap-guangzhou-4"


def test_without_zones_it_asks_which_zones_sell(compute: TencentCompute, tencent_env: FakeCvm) -> None:
    # The listing still says SELL in -3, but RunInstances finds it sold out: move on all the same.
    tencent_env.fail_next("ResourceInsufficient.SpecifiedInstanceType", "no stock", action="RunInstances")
    result = compute.run(request())
    (ask,) = tencent_env.calls_of("DescribeZoneInstanceConfigInfos")
    assert {f["Name"]: f["Values"] for f in ask.params["Filters"]} == {
        "instance-type": [GN], "instance-charge-type": ["POSTPAID_BY_HOUR"]}
    assert result.zone == "ap-guangzhou-4"


def test_a_pinned_sold_out_zone_names_the_others(compute: TencentCompute, tencent_env: FakeCvm) -> None:
    tencent_env.sell_out("ap-guangzhou-3", GN)
    with pytest.raises(CapacityError) as info:
        compute.run(request(zone="ap-guangzhou-3"))
    assert "GN10Xp.2XLARGE40 is sold out in ap-guangzhou-3" in str(info.value)
    assert info.value.hint == "zones of ap-guangzhou that sell it now: ap-guangzhou-4"
    assert isinstance(info.value, TencentCapacityError) and info.value.zone == "ap-guangzhou-3"
    assert len(tencent_env.calls_of("RunInstances")) == 1 and not tencent_env.live_instances()


def test_sold_out_everywhere(compute: TencentCompute, tencent_env: FakeCvm) -> None:
    tencent_env.sell_out("ap-guangzhou-3")
    tencent_env.sell_out("ap-guangzhou-4")
    with pytest.raises(CapacityError, match="no zone of ap-guangzhou sells"):
        compute.run(request())
    with pytest.raises(CapacityError, match="sold out in every zone tried: ap-guangzhou-3 .*, ap-guangzhou-4"):
        compute.run(request(zones=("ap-guangzhou-3", "ap-guangzhou-4")))


def test_a_quota_error_does_not_fail_over(compute: TencentCompute, tencent_env: FakeCvm) -> None:
    tencent_env.instance_quota = 0
    with pytest.raises(CapacityError, match="quota reached: InstanceQuota"):
        compute.run(request(zones=("ap-guangzhou-3", "ap-guangzhou-4")))
    assert len(tencent_env.calls_of("RunInstances")) == 1


def test_launch_failed_is_failed_and_needs_no_terminate(compute: TencentCompute, tencent_env: FakeCvm) -> None:
    tencent_env.fail_launches(1)
    ids = list(compute.run(request(zone="ap-guangzhou-3")).instance_ids)
    assert states(compute, ids) == [InstanceState.PENDING]
    assert states(compute, ids) == [InstanceState.FAILED]
    compute.terminate(ids)
    assert not tencent_env.calls_of("TerminateInstances")


def test_unknown_ids_are_terminated_after_a_second_opinion(compute: TencentCompute, tencent_env: FakeCvm) -> None:
    (info,) = compute.describe(["ins-0000dead"])
    assert info.state is InstanceState.TERMINATED
    assert tencent_env.calls_of("DescribeInstancesStatus")[0].params["InstanceIds"] == ["ins-0000dead"]
    assert compute.describe([]) == []


def test_terminate_is_idempotent_and_batched(compute: TencentCompute, tencent_env: FakeCvm) -> None:
    ids = list(compute.run(request(zone="ap-guangzhou-3", count=2)).instance_ids)
    compute.terminate(ids)
    compute.terminate(ids)  # already terminating: no error, no second TerminateInstances
    assert len(tencent_env.calls_of("TerminateInstances")) == 1
    many = ids + [f"ins-{n:08x}" for n in range(1000, 1150)]
    compute.terminate(many)
    assert all(len(c.params["InstanceIds"]) <= 100 for c in tencent_env.calls if "InstanceIds" in c.params)
    compute.describe(ids)
    compute.terminate(ids)  # gone altogether
    assert len(tencent_env.calls_of("TerminateInstances")) == 1


def test_terminate_tolerates_an_id_gone_between_describe_and_terminate(compute: TencentCompute,
                                                                       tencent_env: FakeCvm) -> None:
    ids = list(compute.run(request(zone="ap-guangzhou-3")).instance_ids)
    tencent_env.fail_next("InvalidInstanceId.NotFound", "gone", action="TerminateInstances")
    compute.terminate(ids)
    assert [c.outcome for c in tencent_env.calls_of("TerminateInstances")] == ["InvalidInstanceId.NotFound", "ok"]
    tencent_env.fail_next("InternalError", "boom", action="TerminateInstances")
    more = list(compute.run(request(zone="ap-guangzhou-3", client_token="tok-2")).instance_ids)
    with pytest.raises(ProviderError, match="InternalError"):
        compute.terminate(more)


def test_list_by_tag_filters_and_pages(compute: TencentCompute, tencent_env: FakeCvm) -> None:
    a = compute.run(request(zone="ap-guangzhou-3", count=100, tags={TAG_ID: "a"}, client_token="t-a"))
    b = compute.run(request(zone="ap-guangzhou-3", count=30, tags={TAG_ID: "b"}, client_token="t-b"))
    found = compute.list_by_tag(TAG_ID, "a")
    assert sorted(i.instance_id for i in found) == sorted(a.instance_ids)
    assert len(compute.list_by_tag(TAG_ID)) == 130 and len(compute.list_by_tag(TAG_MANAGED, "true")) == 130
    pages = [c for c in tencent_env.calls_of("DescribeInstances")
             if c.params.get("Filters") == [{"Name": "tag-key", "Values": [TAG_ID]}]]
    assert [p.params["Offset"] for p in pages] == [0, 100]
    compute.terminate(list(b.instance_ids))
    compute.describe(list(b.instance_ids))
    assert len(compute.list_by_tag(TAG_ID)) == 100  # ended machines are not listed


def test_spot_and_monthly_parameters(tencent_env: FakeCvm, sleeps: list[float]) -> None:
    tencent_env.key_pairs["skey-123"] = {"KeyName": "mine", "PublicKey": "ssh-ed25519 AAAA", "Region": GZ}
    capped = TencentCompute(GZ, sleep=sleeps.append, spot_max_price=Decimal("2.5"), key_ids=["skey-123"])
    capped.run(request(zone="ap-guangzhou-3", billing=BillingMode.SPOT))
    TencentCompute(GZ, sleep=sleeps.append, public_bandwidth_mbps=0).run(
        request(zone="ap-guangzhou-3", billing=BillingMode.MONTHLY, months=3, client_token="tok-m"))
    spot, monthly = (c.params for c in tencent_env.calls_of("RunInstances"))
    assert spot["InstanceChargeType"] == "SPOTPAID" and spot["LoginSettings"] == {"KeyIds": ["skey-123"]}
    assert spot["InstanceMarketOptions"] == {"MarketType": "spot", "SpotOptions": {"MaxPrice": "2.5",
                                                                                   "SpotInstanceType": "one-time"}}
    assert monthly["InstanceChargeType"] == "PREPAID" and "InternetAccessible" not in monthly
    assert monthly["InstanceChargePrepaid"] == {"Period": 3, "RenewFlag": "NOTIFY_AND_MANUAL_RENEW"}


def test_hcc_types_go_into_the_hpc_cluster(sleeps: list[float], monkeypatch: pytest.MonkeyPatch) -> None:
    from providers.testing.fake_cvm import TEST_SECRET_ID, TEST_SECRET_KEY, default_offers

    hcc = FakeOffer("ap-guangzhou-3", "HCCPNV4h.TEST", 96, 1024, 8, Decimal("200"), None, None)
    with fake_cvm_server(offers=[*default_offers(), hcc], hpc_clusters={"hpc-test01": "ap-guangzhou-3"}) as fake:
        monkeypatch.setenv("TENCENTCLOUD_SECRET_ID", TEST_SECRET_ID)
        monkeypatch.setenv("TENCENTCLOUD_SECRET_KEY", TEST_SECRET_KEY)
        monkeypatch.setenv("GPUPLAN_TENCENT_ENDPOINT", fake.endpoint)
        with pytest.raises(InputError, match="HPC cluster"):
            TencentCompute(GZ, sleep=sleeps.append).run(request(zone="ap-guangzhou-3", instance_type="HCCPNV4h.TEST"))
        placed = TencentCompute(GZ, sleep=sleeps.append, hpc_cluster_id="hpc-test01")
        result = placed.run(request(zone="ap-guangzhou-3", instance_type="HCCPNV4h.TEST", count=2, cluster=True))
        assert fake.calls_of("RunInstances")[0].params["HpcClusterId"] == "hpc-test01"
        assert "HPC cluster hpc-test01: RDMA between its nodes" in result.notes
        plain = placed.run(request(zone="ap-guangzhou-3", count=2, cluster=True, client_token="tok-p"))
        assert "HpcClusterId" not in fake.calls_of("RunInstances")[1].params
        assert any("not on one RDMA fabric" in n for n in plain.notes)


def test_bad_requests_fail_before_any_launch(compute: TencentCompute, tencent_env: FakeCvm) -> None:
    for bad in (request(client_token="x" * 65), request(zone="ap-shanghai-2"),
                request(billing=BillingMode.MONTHLY, months=13, zone="ap-guangzhou-3"),
                request(user_data="x" * 20000, zone="ap-guangzhou-3")):
        with pytest.raises(InputError):
            compute.run(bad)
    with pytest.raises(InputError, match="launches in ap-guangzhou"):
        compute.run(request(region="ap-shanghai"))
    assert not tencent_env.calls_of("RunInstances")


def test_an_explicit_image_is_used_as_is(compute: TencentCompute, tencent_env: FakeCvm) -> None:
    result = compute.run(request(zone="ap-guangzhou-3", image="img-ubu20xxx"))
    assert result.image == "img-ubu20xxx" and not tencent_env.calls_of("DescribeImages")
    assert not any(n.startswith("image ") for n in result.notes)


def test_zone_tokens_fit_the_api_limit() -> None:
    assert zone_token("tok", "ap-guangzhou-3") == "tok-ap-guangzhou-3"
    long = zone_token("t" * 64, "ap-guangzhou-3")
    assert len(long) <= 64 and long == zone_token("t" * 64, "ap-guangzhou-3") != zone_token("t" * 64, "ap-guangzhou-4")


def test_pending_turns_running_after_a_time_too(sleeps: list[float], monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    from providers.testing.fake_cvm import TEST_SECRET_ID, TEST_SECRET_KEY

    with fake_cvm_server(pending_describes=1000, pending_seconds=0.05) as fake:
        monkeypatch.setenv("TENCENTCLOUD_SECRET_ID", TEST_SECRET_ID)
        monkeypatch.setenv("TENCENTCLOUD_SECRET_KEY", TEST_SECRET_KEY)
        monkeypatch.setenv("GPUPLAN_TENCENT_ENDPOINT", fake.endpoint)
        compute = TencentCompute(GZ, sleep=sleeps.append)
        ids = list(compute.run(request(zone="ap-guangzhou-3")).instance_ids)
        assert states(compute, ids) == [InstanceState.PENDING]
        assert states(compute, ids) == [InstanceState.PENDING]
        time.sleep(0.06)
        compute.describe(ids)
        assert states(compute, ids) == [InstanceState.RUNNING]


def test_no_ttl_boot_script_since_a_shutdown_inside_keeps_billing() -> None:
    assert TencentCompute("ap-guangzhou").ttl_user_data(Decimal(6)) is None


def _stamp(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_a_ttl_sets_a_cloud_side_action_timer_that_terminates_at_the_ttl(compute: TencentCompute,
                                                                         tencent_env: FakeCvm) -> None:
    expires = datetime.now(UTC).replace(microsecond=0) + timedelta(hours=6)
    result = compute.run(request(zone="ap-guangzhou-3", expires_at=expires))
    (call,) = tencent_env.calls_of("RunInstances")
    assert call.params["ActionTimer"] == {"TimerAction": "TerminateInstances", "ActionTime": _stamp(expires)}
    (iid,) = result.instance_ids
    assert tencent_env.instances[iid].action_time == _stamp(expires)  # the fake accepted and holds it
    assert result.cloud_ends_at == expires


def test_a_ttl_under_five_minutes_is_ended_by_the_cloud_at_its_earliest(compute: TencentCompute,
                                                                        tencent_env: FakeCvm) -> None:
    before = datetime.now(UTC)
    result = compute.run(request(zone="ap-guangzhou-3", expires_at=before + timedelta(minutes=1)))
    (call,) = tencent_env.calls_of("RunInstances")
    at = datetime.strptime(call.params["ActionTimer"]["ActionTime"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert before + timedelta(minutes=5) <= at <= datetime.now(UTC) + timedelta(minutes=7)
    assert any("5 minutes" in n for n in result.notes)


def test_no_ttl_no_action_timer(compute: TencentCompute, tencent_env: FakeCvm) -> None:
    result = compute.run(request(zone="ap-guangzhou-3"))
    (call,) = tencent_env.calls_of("RunInstances")
    assert "ActionTimer" not in call.params and result.cloud_ends_at is None


def test_the_fake_refuses_an_action_time_too_soon_and_ends_the_machine_at_it() -> None:
    now = [1_800_000_000.0]
    with fake_cvm_server(clock=lambda: now[0]) as fake:
        soon = datetime.fromtimestamp(now[0] + 60, UTC)
        with pytest.raises(Exception, match="ActionTime"):
            fake.handle("RunInstances", GZ, _run_params(soon))
        later = datetime.fromtimestamp(now[0] + 600, UTC)
        ids = fake.handle("RunInstances", GZ, _run_params(later))["InstanceIdSet"]
        assert ids and fake.instances[ids[0]].action_time == _stamp(later)
        now[0] += 601
        assert fake.live_instances() == []  # the cloud destroyed it at the timer


def _run_params(at: datetime) -> dict[str, object]:
    return {"InstanceChargeType": "POSTPAID_BY_HOUR", "Placement": {"Zone": "ap-guangzhou-3"}, "InstanceType": GN,
            "ImageId": "img-ubu22new", "InstanceCount": 1,
            "ActionTimer": {"TimerAction": "TerminateInstances", "ActionTime": _stamp(at)}}


def test_a_subscription_prepays_the_bandwidth_it_was_priced_with(tencent_env: FakeCvm, sleeps: list[float]) -> None:
    TencentCompute(GZ, sleep=sleeps.append).run(
        request(zone="ap-guangzhou-3", billing=BillingMode.MONTHLY, client_token="tok-bw", bandwidth_mbps=5))
    TencentCompute(GZ, sleep=sleeps.append).run(request(zone="ap-guangzhou-3", client_token="tok-h"))
    monthly, hourly = (c.params for c in tencent_env.calls_of("RunInstances"))
    assert monthly["InternetAccessible"] == {"InternetChargeType": "BANDWIDTH_PREPAID", "InternetMaxBandwidthOut": 5,
                                             "PublicIpAssigned": True}
    # no bandwidth asked for: the client's default, traffic-billed
    assert hourly["InternetAccessible"]["InternetChargeType"] == "TRAFFIC_POSTPAID_BY_HOUR"


def test_machines_join_a_group_that_lets_ssh_in_and_the_nodes_talk(compute: TencentCompute,
                                                                    tencent_env: FakeCvm) -> None:
    # Through the real SDK: the VPC API is signed for service "vpc" and sent to the same endpoint.
    dry = compute.run(request(zone="ap-guangzhou-3", dry_run=True))
    assert any("would create security group gpuplan-ssh" in n for n in dry.notes) and not tencent_env.security_groups
    first = compute.run(request(zone="ap-guangzhou-3"))
    compute.run(request(zone="ap-guangzhou-3", client_token="tok-2"))
    assert len(tencent_env.calls_of("CreateSecurityGroup")) == 1
    ((group, made),) = tencent_env.security_groups.items()
    assert made["GroupName"] == "gpuplan-ssh"
    ssh, between = made["Ingress"]
    assert (ssh["Protocol"], ssh["Port"], ssh["CidrBlock"], ssh["Action"]) == ("TCP", "22", "0.0.0.0/0", "ACCEPT")
    assert (between["SecurityGroupId"], between["Protocol"]) == (group, "ALL") and "CidrBlock" not in between
    runs = [c.params for c in tencent_env.calls_of("RunInstances") if not c.params.get("DryRun")]
    assert [r["SecurityGroupIds"] for r in runs] == [[group], [group]]
    assert any(f"created security group gpuplan-ssh ({group})" in n for n in first.notes)


def test_a_vpc_fault_is_said_and_the_launch_goes_on_with_the_default_group(compute: TencentCompute,
                                                                          tencent_env: FakeCvm) -> None:
    tencent_env.fail_next("UnauthorizedOperation", n=9, action="DescribeSecurityGroups")
    result = compute.run(request(zone="ap-guangzhou-3"))
    assert result.instance_ids and any(n.startswith("security group not set up") for n in result.notes)
    assert "SecurityGroupIds" not in tencent_env.calls_of("RunInstances")[-1].params


def test_ssh_from_gives_a_group_of_its_own_that_lets_in_only_those_blocks(compute: TencentCompute,
                                                                          tencent_env: FakeCvm) -> None:
    from providers.ssh_keys import ssh_group

    sources = ("2001:db8::/48", "203.0.113.7/32")
    result = compute.run(request(zone="ap-guangzhou-3", ssh_from=sources))
    ((group, made),) = tencent_env.security_groups.items()
    assert made["GroupName"] == ssh_group(sources) != "gpuplan-ssh"
    v6, v4, between = made["Ingress"]
    assert (v4["Port"], v4["CidrBlock"]) == ("22", "203.0.113.7/32") and (v6["Port"], v6["Ipv6CidrBlock"]) == (
        "22", "2001:db8::/48")
    assert between["SecurityGroupId"] == group
    assert any("SSH (22) in from 2001:db8::/48, 203.0.113.7/32" in n for n in result.notes)
