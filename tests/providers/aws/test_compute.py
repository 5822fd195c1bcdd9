"""The EC2 lifecycle against moto: launch, wait, describe, list, end, and the failure paths."""

from __future__ import annotations

import base64
from decimal import Decimal
from typing import Any

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from botocore.exceptions import ClientError
from botocore.stub import Stubber

from pricing.billing import BillingMode
from pricing.errors import CapacityError, InputError, NotSupportedError, ProviderError
from providers.aws.compute import TAG_CLIENT_TOKEN, AwsCompute, zone_client_token
from providers.aws.images import DLAMI_NAME_PATTERN, DLAMI_SSM_PARAMETER, default_image
from providers.capabilities import (
    TAG_EXPIRES,
    TAG_ID,
    TAG_MANAGED,
    InstanceState,
    LaunchRequest,
)

REGION = "us-east-1"


class FakeSsm:
    """The public DLAMI parameter, which moto cannot hold (it reserves /aws/ names)."""

    def __init__(self, value: str) -> None:
        self.value = value
        self.asked: list[str] = []

    def get_parameter(self, Name: str) -> dict[str, Any]:
        self.asked.append(Name)
        return {"Parameter": {"Name": Name, "Type": "String", "Value": self.value}}


@pytest.fixture
def ami(moto_ec2: Any) -> str:
    # An Ubuntu 16.04 image in moto 5.2.5's bundled AMI list (searching all 1300 images per test is slow).
    image_id = "ami-785db401"
    assert moto_ec2.describe_images(ImageIds=[image_id])["Images"][0]["RootDeviceName"] == "/dev/sda1"
    return image_id


@pytest.fixture
def compute(moto_ec2: Any, ami: str) -> AwsCompute:
    return AwsCompute(REGION, ec2_client=moto_ec2, ssm_client=FakeSsm(ami), waiter_delay=0, waiter_max_attempts=5)


def _request(**changes: Any) -> LaunchRequest:
    fields: dict[str, Any] = {"region": REGION, "instance_type": "g5.xlarge", "client_token": "gp-0001",
                              "name": "gpuplan-gp-0001",
                              "tags": {TAG_ID: "gp-0001", TAG_EXPIRES: "2026-12-03T00:00:00Z"}}
    return LaunchRequest(**{**fields, **changes})


def _raw(ec2: Any, instance_id: str) -> dict[str, Any]:
    instance: dict[str, Any] = ec2.describe_instances(InstanceIds=[instance_id])["Reservations"][0]["Instances"][0]
    return instance


def _all_instances(ec2: Any) -> list[dict[str, Any]]:
    return [i for r in ec2.describe_instances()["Reservations"] for i in r["Instances"]]


def _fail_run_in(ec2: Any, code: str, zones: set[str] | None = None) -> list[str]:
    """Make RunInstances fail with ``code`` in ``zones`` (all when None); returns the zones asked, in order."""
    asked: list[str] = []

    def refuse(params: dict[str, Any], **_: Any) -> None:
        zone = params.get("Placement", {}).get("AvailabilityZone", "")
        asked.append(zone)
        if zones is None or zone in zones:
            raise ClientError({"Error": {"Code": code, "Message": f"{code} in {zone}"}}, "RunInstances")

    ec2.meta.events.register("before-parameter-build.ec2.RunInstances", refuse)
    return asked


def _spy_run(ec2: Any) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []
    ec2.meta.events.register("before-parameter-build.ec2.RunInstances",
                             lambda params, **_: sent.append(dict(params)))
    return sent


# -- launch, wait, describe, end -----------------------------------------------------------------------------------

def test_on_demand_launch_runs_and_terminates(compute: AwsCompute, moto_ec2: Any, ami: str) -> None:
    request = _request(count=2, disk_gb=200, user_data="#!/bin/bash\nnvidia-smi\n")
    result = compute.run(request)
    assert len(result.instance_ids) == 2 and not result.dry_run
    assert result.zone == "us-east-1a"  # the first zone (by name) that sells g5.xlarge
    assert result.image == ami
    assert any(DLAMI_SSM_PARAMETER in n for n in result.notes)

    infos = compute.wait_running(list(result.instance_ids))
    assert [i.state for i in infos] == [InstanceState.RUNNING] * 2
    first = infos[0]
    assert (first.instance_type, first.region, first.zone) == ("g5.xlarge", REGION, "us-east-1a")
    assert first.private_ip and first.launched_at is not None
    assert first.tags[TAG_ID] == "gp-0001" and first.tags["Name"] == "gpuplan-gp-0001"
    assert first.tags[TAG_MANAGED] == "true" and first.tags[TAG_CLIENT_TOKEN] == "gp-0001"

    iid = result.instance_ids[0]
    raw = _raw(moto_ec2, iid)
    assert raw["ClientToken"] == zone_client_token("gp-0001", "us-east-1a")
    assert "InstanceLifecycle" not in raw
    behaviour = moto_ec2.describe_instance_attribute(InstanceId=iid, Attribute="instanceInitiatedShutdownBehavior")
    assert behaviour["InstanceInitiatedShutdownBehavior"]["Value"] == "terminate"
    user_data = moto_ec2.describe_instance_attribute(InstanceId=iid, Attribute="userData")["UserData"]["Value"]
    assert base64.b64decode(user_data).decode() == "#!/bin/bash\nnvidia-smi\n"
    volumes = moto_ec2.describe_volumes(Filters=[{"Name": "attachment.instance-id", "Values": [iid]}])["Volumes"]
    assert volumes[0]["Size"] == 200
    assert {"Key": TAG_ID, "Value": "gp-0001"} in volumes[0]["Tags"]

    compute.terminate(list(result.instance_ids))
    ended = compute.wait_terminated(list(result.instance_ids))
    assert [i.state for i in ended] == [InstanceState.TERMINATED] * 2
    compute.terminate(list(result.instance_ids))  # again: no error
    compute.terminate([*result.instance_ids, "i-0123456789abcdef0"])  # with an id EC2 never knew: no error


def test_same_client_token_twice_starts_nothing_new(compute: AwsCompute, moto_ec2: Any) -> None:
    first = compute.run(_request(count=2))
    second = compute.run(_request(count=2))
    assert set(second.instance_ids) == set(first.instance_ids)
    assert any("nothing new started" in n for n in second.notes)
    assert len(_all_instances(moto_ec2)) == 2
    third = compute.run(_request(client_token="gp-0002"))
    assert not set(third.instance_ids) & set(first.instance_ids)


def test_spot_launch_is_one_time_and_terminates_on_interruption(compute: AwsCompute, moto_ec2: Any) -> None:
    sent = _spy_run(moto_ec2)
    result = compute.run(_request(billing=BillingMode.SPOT, zone="us-east-1b"))
    assert result.zone == "us-east-1b"
    assert _raw(moto_ec2, result.instance_ids[0])["InstanceLifecycle"] == "spot"
    assert sent[0]["InstanceMarketOptions"] == {"MarketType": "spot", "SpotOptions": {
        "SpotInstanceType": "one-time", "InstanceInterruptionBehavior": "terminate"}}
    assert sent[0]["MinCount"] == sent[0]["MaxCount"] == 1


def test_dry_run_validates_and_creates_nothing(compute: AwsCompute, moto_ec2: Any) -> None:
    result = compute.run(_request(dry_run=True, count=3))
    assert result.dry_run and result.instance_ids == () and result.zone == "us-east-1a"
    assert any("dry run" in n for n in result.notes)
    assert _all_instances(moto_ec2) == []


def test_describe_reports_unknown_ids_as_terminated(compute: AwsCompute) -> None:
    result = compute.run(_request())
    infos = compute.describe([result.instance_ids[0], "i-0123456789abcdef0", "not-an-id"])
    assert [i.state for i in infos][1:] == [InstanceState.TERMINATED, InstanceState.TERMINATED]
    assert infos[0].instance_id == result.instance_ids[0] and infos[0].state is not InstanceState.TERMINATED
    assert compute.describe([]) == []


def test_list_by_tag_finds_live_instances(compute: AwsCompute) -> None:
    a = compute.run(_request(client_token="gp-a", tags={TAG_ID: "gp-a"}))
    b = compute.run(_request(client_token="gp-b", tags={TAG_ID: "gp-b"}))
    assert {i.instance_id for i in compute.list_by_tag(TAG_MANAGED)} == {*a.instance_ids, *b.instance_ids}
    assert [i.instance_id for i in compute.list_by_tag(TAG_ID, "gp-b")] == list(b.instance_ids)
    compute.terminate(list(a.instance_ids))
    compute.wait_terminated(list(a.instance_ids))
    assert [i.instance_id for i in compute.list_by_tag(TAG_ID, "gp-a")] == []
    ended = compute.list_by_tag(TAG_ID, "gp-a", include_terminated=True)
    assert [i.state for i in ended] == [InstanceState.TERMINATED]


# -- capacity, quota, zones ----------------------------------------------------------------------------------------

def test_no_capacity_in_one_zone_moves_on_to_the_next(compute: AwsCompute, moto_ec2: Any) -> None:
    asked = _fail_run_in(moto_ec2, "InsufficientInstanceCapacity", {"us-east-1a"})
    result = compute.run(_request(zones=("us-east-1a", "us-east-1c", "us-east-1b")))
    assert asked == ["us-east-1a", "us-east-1c"]
    assert result.zone == "us-east-1c"
    assert _raw(moto_ec2, result.instance_ids[0])["Placement"]["AvailabilityZone"] == "us-east-1c"
    assert any("us-east-1a: InsufficientInstanceCapacity" in n for n in result.notes)


def test_unsupported_zone_also_fails_over(compute: AwsCompute, moto_ec2: Any) -> None:
    _fail_run_in(moto_ec2, "Unsupported", {"us-east-1a", "us-east-1b"})
    assert compute.run(_request()).zone == "us-east-1c"


def test_pinned_zone_without_capacity_names_the_other_zones(compute: AwsCompute, moto_ec2: Any) -> None:
    asked = _fail_run_in(moto_ec2, "InsufficientInstanceCapacity", {"us-east-1a"})
    with pytest.raises(CapacityError) as info:
        compute.run(_request(zone="us-east-1a"))
    assert asked == ["us-east-1a"]
    assert "us-east-1a" in info.value.message
    assert "us-east-1b" in str(info.value.hint) and "us-east-1c" in str(info.value.hint)
    assert _all_instances(moto_ec2) == []


def test_every_zone_full_lists_the_zones_tried(compute: AwsCompute, moto_ec2: Any) -> None:
    _fail_run_in(moto_ec2, "InsufficientInstanceCapacity")
    with pytest.raises(CapacityError, match="us-east-1a, us-east-1b, us-east-1c, us-east-1d, us-east-1f"):
        compute.run(_request())


def test_zones_that_do_not_sell_the_type_are_skipped(compute: AwsCompute, moto_ec2: Any) -> None:
    asked = _fail_run_in(moto_ec2, "InsufficientInstanceCapacity", set())
    result = compute.run(_request(instance_type="p4d.24xlarge", zones=("us-east-1f", "us-east-1d")))
    assert asked == ["us-east-1d"]  # moto's offering data: p4d in us-east-1a..d only
    assert result.zone == "us-east-1d"
    with pytest.raises(CapacityError, match="not sold"):
        compute.run(_request(instance_type="p4d.24xlarge", zones=("us-east-1f",), client_token="gp-f"))


def test_quota_error_names_the_quota(compute: AwsCompute, moto_ec2: Any) -> None:
    _fail_run_in(moto_ec2, "VcpuLimitExceeded")
    with pytest.raises(CapacityError) as info:
        compute.run(_request())
    assert "Running On-Demand G and VT instances" in str(info.value)
    with pytest.raises(CapacityError, match="All G and VT Spot Instance Requests"):
        compute.run(_request(billing=BillingMode.SPOT, client_token="gp-spot"))


def test_bad_image_names_the_image_flag(compute: AwsCompute) -> None:
    with pytest.raises(InputError, match="--image"):
        compute.run(_request(image="ami-00000000000000000"))


def test_monthly_billing_is_not_an_ec2_thing(compute: AwsCompute) -> None:
    with pytest.raises(NotSupportedError):
        compute.run(_request(billing=BillingMode.MONTHLY))


def test_a_disk_smaller_than_the_image_is_refused_before_launch(compute: AwsCompute, moto_ec2: Any) -> None:
    with pytest.raises(InputError, match="--disk-gb 1 is smaller"):
        compute.run(_request(disk_gb=1))
    assert _all_instances(moto_ec2) == []


def test_waiting_is_bounded(compute: AwsCompute, moto_ec2: Any) -> None:
    result = compute.run(_request())
    compute.terminate(list(result.instance_ids))
    with pytest.raises(ProviderError, match="did not become running"):
        compute.wait_running(list(result.instance_ids))


# -- clusters: placement group and EFA -----------------------------------------------------------------------------

def _emulate_placement_groups(ec2: Any) -> dict[str, dict[str, Any]]:
    """moto 5.2.5 has no placement-group calls: answer them from a dict, as Stubber answers calls."""
    groups: dict[str, dict[str, Any]] = {}

    def answer(parsed: dict[str, Any]) -> tuple[AWSResponse, dict[str, Any]]:
        return AWSResponse("http://127.0.0.1/", 200, {}, None), parsed

    def describe(params: dict[str, Any], **_: Any) -> tuple[AWSResponse, dict[str, Any]]:
        body = params["body"]
        wanted = {v for k, v in body.items() if k.startswith("Filter.1.Value.")}
        return answer({"PlacementGroups": [g for name, g in groups.items() if name in wanted]})

    def create(params: dict[str, Any], **_: Any) -> tuple[AWSResponse, dict[str, Any]]:
        body = params["body"]
        groups[body["GroupName"]] = {"GroupName": body["GroupName"], "Strategy": body["Strategy"], "State": "available"}
        return answer({})

    ec2.meta.events.register("before-call.ec2.DescribePlacementGroups", describe)
    ec2.meta.events.register("before-call.ec2.CreatePlacementGroup", create)
    return groups


def test_cluster_launch_uses_one_placement_group_and_efa(compute: AwsCompute, moto_ec2: Any) -> None:
    groups = _emulate_placement_groups(moto_ec2)
    sent = _spy_run(moto_ec2)
    result = compute.run(_request(instance_type="p4d.24xlarge", count=2, cluster=True))
    assert list(groups) == ["gpuplan-gp-0001"] and groups["gpuplan-gp-0001"]["Strategy"] == "cluster"
    params = sent[0]
    assert params["Placement"] == {"AvailabilityZone": "us-east-1a", "GroupName": "gpuplan-gp-0001"}
    interfaces = params["NetworkInterfaces"]
    assert [n["NetworkCardIndex"] for n in interfaces] == [0, 1, 2, 3]  # p4d: 4 EFA interfaces
    assert [n["DeviceIndex"] for n in interfaces] == [0, 1, 1, 1]
    assert {n["InterfaceType"] for n in interfaces} == {"efa"}
    subnet = moto_ec2.describe_subnets(SubnetIds=[interfaces[0]["SubnetId"]])["Subnets"][0]
    assert subnet["AvailabilityZone"] == "us-east-1a" and subnet["DefaultForAz"]
    assert len(result.instance_ids) == 2
    assert any("EFA: 4 interface(s)" in n for n in result.notes)


def test_cluster_dry_run_creates_no_placement_group(compute: AwsCompute, moto_ec2: Any) -> None:
    groups = _emulate_placement_groups(moto_ec2)
    sent = _spy_run(moto_ec2)
    result = compute.run(_request(instance_type="p4d.24xlarge", count=2, cluster=True, dry_run=True))
    assert result.dry_run and groups == {}
    assert "GroupName" not in sent[0]["Placement"] and sent[0]["DryRun"] is True
    assert len(sent[0]["NetworkInterfaces"]) == 4
    assert _all_instances(moto_ec2) == []


def test_cluster_of_a_type_without_efa_says_so(compute: AwsCompute, moto_ec2: Any) -> None:
    _emulate_placement_groups(moto_ec2)
    sent = _spy_run(moto_ec2)
    result = compute.run(_request(instance_type="g5.xlarge", count=2, cluster=True))
    assert "NetworkInterfaces" not in sent[0]
    assert any("has no EFA" in n for n in result.notes)


def test_cluster_of_a_type_ec2_does_not_describe_skips_efa_with_a_note(compute: AwsCompute, moto_ec2: Any) -> None:
    _emulate_placement_groups(moto_ec2)
    sent = _spy_run(moto_ec2)
    result = compute.run(_request(instance_type="p3.16xlarge", count=2, cluster=True))  # absent from moto's data
    assert "NetworkInterfaces" not in sent[0] and sent[0]["Placement"]["GroupName"] == "gpuplan-gp-0001"
    assert any("EFA not configured" in n for n in result.notes)


# -- the default image -----------------------------------------------------------------------------------------------

def _image_clients() -> tuple[Any, Any, Stubber, Stubber]:
    ssm = boto3.client("ssm", region_name=REGION)
    ec2 = boto3.client("ec2", region_name=REGION)
    return ssm, ec2, Stubber(ssm), Stubber(ec2)


def test_default_image_comes_from_the_public_ssm_parameter() -> None:
    ssm, ec2, s_stub, e_stub = _image_clients()
    s_stub.add_response("get_parameter", {"Parameter": {"Name": DLAMI_SSM_PARAMETER, "Type": "String",
                                                        "Value": "ami-0abc1234def567890"}},
                        {"Name": DLAMI_SSM_PARAMETER})
    with s_stub, e_stub:
        choice = default_image(ssm, ec2)
    assert choice.image_id == "ami-0abc1234def567890" and "SSM parameter" in choice.note


def test_default_image_falls_back_to_the_newest_amazon_dlami() -> None:
    ssm, ec2, s_stub, e_stub = _image_clients()
    s_stub.add_client_error("get_parameter", "ParameterNotFound", "not found", 400, {"Name": DLAMI_SSM_PARAMETER})
    filters = [{"Name": "name", "Values": [DLAMI_NAME_PATTERN]}, {"Name": "state", "Values": ["available"]},
               {"Name": "architecture", "Values": ["x86_64"]}]
    e_stub.add_response("describe_images", {"Images": [
        {"ImageId": "ami-0000000000000old1", "Name": "Deep Learning Base OSS Nvidia Driver GPU AMI (Ubuntu 22.04) "
         "20261001", "CreationDate": "2026-10-02T08:00:00.000Z"},
        {"ImageId": "ami-0000000000000new1", "Name": "Deep Learning Base OSS Nvidia Driver GPU AMI (Ubuntu 22.04) "
         "20261120", "CreationDate": "2026-11-21T08:00:00.000Z"},
    ]}, {"Owners": ["amazon"], "Filters": filters})
    with s_stub, e_stub:
        choice = default_image(ssm, ec2)
    assert choice.image_id == "ami-0000000000000new1"
    assert "newest" in choice.note and "ParameterNotFound" in choice.note


def test_no_default_image_anywhere_asks_for_one() -> None:
    ssm, ec2, s_stub, e_stub = _image_clients()
    s_stub.add_client_error("get_parameter", "AccessDeniedException", "no", 400)
    e_stub.add_response("describe_images", {"Images": []})
    with s_stub, e_stub, pytest.raises(ProviderError, match="no default GPU image") as info:
        default_image(ssm, ec2)
    assert "--image" in str(info.value.hint)


def test_client_tokens_stay_within_ec2s_limit() -> None:
    short = zone_client_token("gp-0001", "us-east-1a")
    assert short == "gp-0001-us-east-1a"
    long = zone_client_token("x" * 60, "ap-northeast-1a")
    assert len(long) == 64 and long != zone_client_token("x" * 60, "ap-northeast-1c")


def test_a_zone_id_from_the_price_data_launches_in_the_accounts_zone_of_that_id(compute: AwsCompute,
                                                                                moto_ec2: Any) -> None:
    # Spot prices are published per zone ID (use1-az1); RunInstances takes this account's zone name.
    zones = moto_ec2.describe_availability_zones()["AvailabilityZones"]
    pick = next(z for z in zones if z["ZoneName"] == "us-east-1b")
    result = compute.run(_request(zone=pick["ZoneId"]))
    assert result.zone == "us-east-1b"
    assert any(f"{pick['ZoneId']} is us-east-1b" in n for n in result.notes)
    with pytest.raises(InputError, match="not in us-east-1"):
        compute.run(_request(zone="usw2-az9", client_token="gp-0002"))


def test_the_ttl_boot_script_shuts_down_at_expiry_which_terminates() -> None:
    script = AwsCompute("us-east-1").ttl_user_data(Decimal("1.5"))
    assert script is not None and script.startswith("#!/bin/bash\n") and "shutdown -h +90\n" in script
    assert AwsCompute("us-east-1").ttl_user_data(Decimal("0.001")) == script.replace("+90", "+1")


def test_the_ssh_key_is_imported_once_and_named_in_run_instances(compute: AwsCompute, moto_ec2: Any) -> None:
    from tests.providers.test_ssh_keys import ed25519_line

    public = ed25519_line().rsplit(" ", 1)[0]
    keyed = {"ssh_public_key": public, "ssh_key_name": "gpuplan_0123456789abcdef"}
    dry = compute.run(_request(dry_run=True, **keyed))  # validates without the key, imports nothing
    assert any("would import the SSH key" in n for n in dry.notes)
    assert moto_ec2.describe_key_pairs()["KeyPairs"] == []
    first = compute.run(_request(**keyed))
    second = compute.run(_request(client_token="gp-0002", **keyed))
    assert any("imported the SSH key" in n for n in first.notes) and any("reused" in n for n in second.notes)
    (pair,) = moto_ec2.describe_key_pairs()["KeyPairs"]
    assert pair["KeyName"] == "gpuplan_0123456789abcdef"
    for result in (first, second):
        assert _raw(moto_ec2, result.instance_ids[0])["KeyName"] == "gpuplan_0123456789abcdef"
    bare = compute.run(_request(client_token="gp-0003"))
    assert "KeyName" not in _raw(moto_ec2, bare.instance_ids[0]) and any("no SSH key" in n for n in bare.notes)


def test_machines_get_a_group_that_lets_ssh_in_and_the_nodes_talk(compute: AwsCompute, moto_ec2: Any) -> None:
    # The default VPC's default group admits nothing from outside: without this group no ssh line would work.
    dry = compute.run(_request(dry_run=True))
    assert any("would create security group gpuplan-ssh" in n for n in dry.notes)
    assert not moto_ec2.describe_security_groups(Filters=[{"Name": "group-name", "Values": ["gpuplan-ssh"]}])[
        "SecurityGroups"]
    first = compute.run(_request())
    second = compute.run(_request(client_token="gp-0002"))
    (group,) = moto_ec2.describe_security_groups(Filters=[{"Name": "group-name", "Values": ["gpuplan-ssh"]}])[
        "SecurityGroups"]
    rules = group["IpPermissions"]
    ssh = [r for r in rules if r.get("FromPort") == 22]
    assert ssh and ssh[0]["IpProtocol"] == "tcp" and ssh[0]["ToPort"] == 22
    assert all(r.get("FromPort") == 22 or r.get("UserIdGroupPairs") for r in rules)  # nothing else from outside
    assert any(p["GroupId"] == group["GroupId"] for r in rules for p in r.get("UserIdGroupPairs", []))
    for result in (first, second):
        groups = [g["GroupId"] for g in _raw(moto_ec2, result.instance_ids[0])["SecurityGroups"]]
        assert group["GroupId"] in groups
    assert any("created security group" in n for n in first.notes) and any("gpuplan-ssh (" in n for n in second.notes)


def test_ssh_from_gives_a_group_of_its_own_that_lets_in_only_those_blocks(compute: AwsCompute, moto_ec2: Any) -> None:
    from providers.ssh_keys import ssh_group

    sources = ("2001:db8::/48", "203.0.113.7/32")
    result = compute.run(_request(ssh_from=sources))
    (group,) = moto_ec2.describe_security_groups(Filters=[{"Name": "group-name", "Values": [ssh_group(sources)]}])[
        "SecurityGroups"]
    (ssh,) = [r for r in group["IpPermissions"] if r.get("FromPort") == 22]
    assert [r["CidrIp"] for r in ssh["IpRanges"]] == ["203.0.113.7/32"]
    assert [r["CidrIpv6"] for r in ssh["Ipv6Ranges"]] == ["2001:db8::/48"]
    assert group["GroupId"] in [g["GroupId"] for g in _raw(moto_ec2, result.instance_ids[0])["SecurityGroups"]]
    assert any("SSH (22) in from 2001:db8::/48, 203.0.113.7/32" in n for n in result.notes)
    # the everywhere group is another group: launches without --ssh-from do not open this one wider
    assert not moto_ec2.describe_security_groups(Filters=[{"Name": "group-name", "Values": ["gpuplan-ssh"]}])[
        "SecurityGroups"]
