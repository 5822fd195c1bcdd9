"""Start, describe and end EC2 GPU instances.

Rules this client keeps, and why:

- **Idempotent launches.** Every launch carries ``ClientToken`` and a
  ``gpuplan:client-token`` tag. Before launching, instances already tagged with the
  request's token are looked up and returned instead: EC2's own token check is per
  request, and a launch that failed over from zone A to zone B would otherwise start
  new machines in A on a retry. The token sent to EC2 is derived per zone so that a
  retry in another zone is never an ``IdempotentParameterMismatch``.
- **All or nothing.** ``MinCount = MaxCount = count``: a distributed job with some of
  its nodes is paid for and useless, so a partial launch is refused by EC2 itself.
- **Machines end themselves.** ``InstanceInitiatedShutdownBehavior="terminate"``, so a
  ``shutdown`` in the job ends the billing; spot is one-time and terminates on
  interruption (a stopped spot GPU would keep its disk bill and nothing else).
- **Zone failover.** With no zone given, the request's zones (else the region's
  zones that sell the type) are tried in order, moving on after
  ``InsufficientInstanceCapacity``, ``Unsupported`` or a spot price above the cap; a
  pinned zone fails at once with a :class:`CapacityError` naming the zones that sell
  the type.
- **Clusters.** ``cluster`` with ``count > 1`` puts the nodes in one cluster placement
  group named from the client token, and gives each node one EFA interface per network
  card where ``DescribeInstanceTypes`` says the type has EFA (in the zone's default
  subnet, with the VPC's default security group, which lets members talk to each other
  as EFA requires). With several interfaces EC2 assigns no public IPv4 address.
- **Unknown means gone.** ``describe`` filters by ``instance-id`` instead of passing
  ``InstanceIds``, so one unknown id does not fail the call; ids EC2 does not return
  are reported TERMINATED. ``terminate`` only asks to end instances that are not
  already ending, so repeating it is harmless.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from pricing.billing import BillingMode
from pricing.errors import CapacityError, GpuplanError, InputError, NotSupportedError, ProviderError
from providers.aws.account import account_name
from providers.aws.images import default_image, dlami_kind
from providers.created import CreateWatch
from providers.aws.instance_types import TypeInfo, chunks, describe_types, offered_zones
from providers.ssh_keys import ssh_group, ssh_group_rules
from providers.aws.session import (
    CAPACITY_CODES,
    DEFAULT_MAX_ATTEMPTS,
    aws_errors,
    make_client,
    make_session,
    map_client_error,
)
from providers.capabilities import (
    TAG_MANAGED,
    SelfEnd,
    ComputeClient,
    ImageChoice,
    InstanceInfo,
    InstanceState,
    LaunchRequest,
    LaunchResult,
)

PROVIDER = "aws"
TAG_CLIENT_TOKEN = "gpuplan:client-token"  # finds a launch's instances again on a retry
MAX_USER_DATA_BYTES = 16 * 1024  # EC2's limit on user data before base64
_CLIENT_TOKEN_MAX = 64  # EC2: at most 64 ASCII characters
_STATES = {
    "pending": InstanceState.PENDING,
    "running": InstanceState.RUNNING,
    "shutting-down": InstanceState.TERMINATING,
    "terminated": InstanceState.TERMINATED,
    "stopping": InstanceState.STOPPING,
    "stopped": InstanceState.STOPPED,
}
LIVE_STATES = ("pending", "running", "shutting-down", "stopping", "stopped")
# Refusals that are about one zone, not the request: the next zone may say yes.
FAILOVER_CODES = CAPACITY_CODES | {"SpotMaxPriceTooLow"}


def zone_client_token(token: str, zone: str) -> str:
    """The ClientToken sent for one zone's attempt: the request token and the zone, at most 64 chars."""
    plain = f"{token}-{zone}"
    if len(plain) <= _CLIENT_TOKEN_MAX and plain.isascii():
        return plain
    digest = hashlib.sha256(f"{token}|{zone}".encode()).hexdigest()[:16]
    head = "".join(ch for ch in token if ch.isascii())[: _CLIENT_TOKEN_MAX - 17]
    return f"{head}-{digest}"


def placement_group_name(token: str) -> str:
    return f"gpuplan-{token}"[:255]


def instance_info(raw: dict[str, Any], region: str) -> InstanceInfo:
    """An EC2 ``Instances[]`` entry as gpuplan's InstanceInfo."""
    state = _STATES.get(str((raw.get("State") or {}).get("Name", "")), InstanceState.UNKNOWN)
    return InstanceInfo(
        instance_id=str(raw["InstanceId"]),
        state=state,
        instance_type=str(raw.get("InstanceType", "")),
        region=region,
        zone=str((raw.get("Placement") or {}).get("AvailabilityZone", "")),
        public_ip=raw.get("PublicIpAddress") or None,
        private_ip=raw.get("PrivateIpAddress") or None,
        tags={str(t["Key"]): str(t.get("Value", "")) for t in raw.get("Tags", []) or []},
        launched_at=raw.get("LaunchTime"),
    )


def _unique(notes: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(notes))  # each zone tried may repeat a note


def _error_code(exc: Exception) -> str:
    return str((getattr(exc, "response", None) or {}).get("Error", {}).get("Code", ""))


_ZONE_ID = re.compile(r"[a-z]{2,5}\d-az\d+")  # AWS zone IDs: use1-az1, apne1-az4, usw2-az2


class AwsCompute(ComputeClient):
    """EC2 lifecycle for gpuplan in one region.

    Args:
        region: the EC2 region, e.g. "us-east-1".
        profile: an AWS profile name (``--profile``); None uses the default chain.
        session: a boto3 session to build clients from.
        ec2_client, ssm_client: ready clients (tests, or a caller that shares them).
        max_attempts: bound on botocore's retries of throttled calls.
        waiter_delay, waiter_max_attempts: polling of :meth:`wait_running` and
            :meth:`wait_terminated` (seconds between polls, polls before giving up).
    """

    provider = PROVIDER

    @classmethod
    def self_end(cls, cam_role: str | None) -> SelfEnd | None:
        # every launch sets InstanceInitiatedShutdownBehavior=terminate: an OS shutdown ends the instance
        return SelfEnd.SHUTDOWN

    def __init__(self, region: str, *, profile: str | None = None, session: Any = None, ec2_client: Any = None,
                 ssm_client: Any = None, max_attempts: int = DEFAULT_MAX_ATTEMPTS, waiter_delay: float = 15,
                 waiter_max_attempts: int = 40) -> None:
        self.region = region
        self._profile = profile
        self._session = session
        self._ec2 = ec2_client
        self._ssm = ssm_client
        self._max_attempts = max_attempts
        self.waiter_delay = waiter_delay
        self.waiter_max_attempts = waiter_max_attempts

    # -- clients -----------------------------------------------------------------------------------------------

    def _client(self, service: str) -> Any:
        if self._session is None:
            with aws_errors():
                self._session = make_session(self._profile, self.region)
        return make_client(service, region=self.region, session=self._session, max_attempts=self._max_attempts)

    @property
    def ec2(self) -> Any:
        if self._ec2 is None:
            self._ec2 = self._client("ec2")
        return self._ec2

    def account(self) -> str:
        """``endpoint/account-id`` (STS GetCallerIdentity, asked once; providers.aws.account); "" without an answer."""
        if getattr(self, "_account", None) is None:
            self._account = account_name(lambda: self.ec2, lambda: self._client("sts"))
        return self._account or ""

    @property
    def ssm(self) -> Any:
        if self._ssm is None:
            self._ssm = self._client("ssm")
        return self._ssm

    # -- launch --------------------------------------------------------------------------------------------------

    def ttl_user_data(self, ttl_hours: Decimal) -> str | None:
        """A shutdown at the TTL: every launch sets shutdown behaviour "terminate", so it ends the billing too."""
        minutes = max(1, int(ttl_hours * 60))
        return ("#!/bin/bash\n# gpuplan TTL backstop: shut down at expiry; shutdown behaviour 'terminate' ends the"
                f" instance\nshutdown -h +{minutes}\n")

    def run(self, request: LaunchRequest) -> LaunchResult:
        if request.region != self.region:
            raise InputError(f"launch request for {request.region} sent to the {self.region} client",
                             "build the AWS client for the request's region")
        if request.billing in (BillingMode.MONTHLY, BillingMode.BUY):
            raise NotSupportedError(f"AWS has no {request.billing.value} billing for EC2 instances",
                                    "use hourly (on-demand) or spot")
        if request.user_data is not None and len(request.user_data.encode()) > MAX_USER_DATA_BYTES:
            raise InputError(f"user data is {len(request.user_data.encode())} bytes; EC2 takes at most "
                             f"{MAX_USER_DATA_BYTES}", "fetch a script from the user data instead of inlining it")
        spot = request.billing is BillingMode.SPOT
        notes: list[str] = []
        if request.billing in (BillingMode.RESERVED_1Y, BillingMode.RESERVED_3Y):
            notes.append("launched on-demand: a Reserved Instance or Savings Plan you hold applies on the bill")
        self._create = CreateWatch("AWS")  # an error before RunInstances, or its refusal, created nothing
        with self._create.guard(), aws_errors(instance_type=request.instance_type, spot=spot):
            if not request.dry_run:
                existing = self._existing(request.client_token)
                if existing:
                    zones = sorted({i.zone for i in existing})
                    return LaunchResult(instance_ids=tuple(i.instance_id for i in existing),
                                        zone=zones[0] if len(zones) == 1 else None, image=None, notes=(
                        f"already launched with client token {request.client_token}: nothing new started",))
            info = self._type_info(request.instance_type, notes)
            image = self._image(request, info)
            notes.append(image.note)
            described = self._describe_image(image.image_id, notes)
            request = self._zone_names(request, notes)
            offered = self._offered(request.instance_type, notes)
            zones, pinned = self._candidate_zones(request, offered, notes)
            devices = self._block_devices(described, request.disk_gb) if request.disk_gb else None
            cluster = request.cluster and request.count > 1
            group = self._placement_group(request, notes) if cluster else None
            request = self._key_pair(request, notes)
            ssh_group = self._ssh_group(request, notes)
            return self._launch(request, image, info, zones, pinned, offered, devices, cluster, group, ssh_group,
                                spot, notes)

    def _ssh_group(self, request: LaunchRequest, notes: list[str]) -> str | None:
        """The security group gpuplan keeps in the default VPC: SSH in from anywhere and every
        port between its own machines (a cluster's rendezvous and NCCL). Found by name, else created; a dry run only
        says it would be. The VPC's default group admits nothing from outside, so without it SSH cannot reach in."""
        vpcs = self.ec2.describe_vpcs(Filters=[{"Name": "isDefault", "Values": ["true"]}]).get("Vpcs", [])
        if not vpcs:
            notes.append(f"no default VPC in {self.region}: the machines get the subnet's default security group "
                         "(open SSH there yourself)")
            return None
        vpc = vpcs[0]["VpcId"]
        name, rules = ssh_group(request.ssh_from), ssh_group_rules(request.ssh_from)
        found = self.ec2.describe_security_groups(Filters=[{"Name": "vpc-id", "Values": [vpc]},
                                                           {"Name": "group-name", "Values": [name]}])
        for g in found.get("SecurityGroups", []):
            notes.append(f"security group {name} ({g['GroupId']}): {rules}")
            return str(g["GroupId"])
        if request.dry_run:
            notes.append(f"would create security group {name} in {vpc}: {rules}")
            return None
        made = self.ec2.create_security_group(
            GroupName=name, VpcId=vpc, Description=f"gpuplan: {rules}",
            TagSpecifications=[{"ResourceType": "security-group", "Tags": [{"Key": TAG_MANAGED, "Value": "true"}]}])
        group_id = str(made["GroupId"])
        v4 = [c for c in request.ssh_from if ":" not in c] if request.ssh_from else ["0.0.0.0/0"]
        v6 = [c for c in request.ssh_from if ":" in c] if request.ssh_from else ["::/0"]
        ssh: dict[str, Any] = {"IpProtocol": "tcp", "FromPort": 22, "ToPort": 22}
        if v4:
            ssh["IpRanges"] = [{"CidrIp": c} for c in v4]
        if v6:
            ssh["Ipv6Ranges"] = [{"CidrIpv6": c} for c in v6]
        self.ec2.authorize_security_group_ingress(GroupId=group_id, IpPermissions=[
            ssh, {"IpProtocol": "-1", "UserIdGroupPairs": [{"GroupId": group_id}]}])
        notes.append(f"created security group {name} ({group_id}) in {vpc}: {rules}")
        return group_id

    def _key_pair(self, request: LaunchRequest, notes: list[str]) -> LaunchRequest:
        """Make sure the request's SSH key pair exists in this region: found by name, else imported. A dry run only
        says it would be, and validates the launch without it (EC2 would refuse a key pair it does not hold)."""
        from botocore.exceptions import ClientError

        if request.ssh_public_key is None or request.ssh_key_name is None:
            notes.append("login: no SSH key given (--ssh-key): the Deep Learning AMI takes only key logins, so use "
                         "EC2 Instance Connect or relaunch with --ssh-key")
            return request.model_copy(update={"ssh_key_name": None})
        try:
            self.ec2.describe_key_pairs(KeyNames=[request.ssh_key_name])
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") != "InvalidKeyPair.NotFound":
                raise
        else:
            notes.append(f"key pair {request.ssh_key_name} already in {self.region}: reused")
            return request
        if request.dry_run:
            notes.append(f"would import the SSH key as key pair {request.ssh_key_name} in {self.region}")
            return request.model_copy(update={"ssh_key_name": None})
        self.ec2.import_key_pair(KeyName=request.ssh_key_name, PublicKeyMaterial=request.ssh_public_key.encode(),
                                 TagSpecifications=[{"ResourceType": "key-pair",
                                                     "Tags": [{"Key": TAG_MANAGED, "Value": "true"}]}])
        notes.append(f"imported the SSH key as key pair {request.ssh_key_name} in {self.region}")
        return request

    def _launch(self, request: LaunchRequest, image: ImageChoice, info: TypeInfo | None, zones: list[str],
                pinned: bool, offered: tuple[str, ...], devices: list[dict[str, Any]] | None, cluster: bool,
                group: str | None, ssh_group: str | None, spot: bool, notes: list[str]) -> LaunchResult:
        from botocore.exceptions import ClientError  # type: ignore[import-untyped]

        full: list[str] = []
        for index, zone in enumerate(zones):
            params = self._run_params(request, image.image_id, zone, devices, group, ssh_group, spot)
            if cluster:
                interfaces = self._efa_interfaces(info, zone, notes)
                if interfaces:
                    # EC2 takes security groups on the interfaces or on the instance, never both
                    extra = params.pop("SecurityGroupIds", [])
                    params["NetworkInterfaces"] = [{**i, "Groups": [*i["Groups"], *extra]} for i in interfaces]
            try:
                self._create.sending()
                response = self.ec2.run_instances(**params)
            except ClientError as exc:
                code = _error_code(exc)
                self._create.answered(code, str(exc.response.get("ResponseMetadata", {}).get("RequestId", "")))
                if request.dry_run and code == "DryRunOperation":
                    notes.append(f"dry run: EC2 would launch {request.count} x {request.instance_type} in {zone}")
                    return LaunchResult(zone=zone, image=image.image_id, dry_run=True, notes=_unique(notes))
                last = index == len(zones) - 1
                if code in FAILOVER_CODES and not pinned and not last:
                    full.append(zone)
                    notes.append(f"{zone}: {code}, trying the next zone")
                    continue
                if code in FAILOVER_CODES and not pinned:
                    full.append(zone)
                    raise CapacityError(
                        f"AWS has no capacity for {request.count} x {request.instance_type}"
                        f"{' spot' if spot else ''} in any zone tried ({', '.join(full)}) of {self.region}",
                        "retry later, try another region or billing mode, or lower the count") from None
                others = tuple(z for z in (offered or zones) if z != zone)
                raise map_client_error(exc, zone=zone, instance_type=request.instance_type, spot=spot,
                                       other_zones=others) from None
            ids = tuple(str(i["InstanceId"]) for i in response.get("Instances", []))
            if request.dry_run:  # EC2 answers a dry run with an error; accept a plain success as "yes" too
                return LaunchResult(zone=zone, image=image.image_id, dry_run=True, notes=_unique(notes))
            if len(ids) < request.count:
                notes.append(f"EC2 started {len(ids)} of {request.count} instances")
            return LaunchResult(instance_ids=ids, zone=zone, image=image.image_id, notes=_unique(notes))
        raise CapacityError(f"no zone of {self.region} to launch {request.instance_type} in",
                            "pass --zone, or check that the region sells the type")

    def _run_params(self, request: LaunchRequest, image_id: str, zone: str, devices: list[dict[str, Any]] | None,
                    group: str | None, ssh_group: str | None, spot: bool) -> dict[str, Any]:
        tags = dict(request.tags)
        tags.setdefault(TAG_MANAGED, "true")
        tags["Name"] = request.name
        tags[TAG_CLIENT_TOKEN] = request.client_token
        tag_list = [{"Key": k, "Value": v} for k, v in tags.items()]
        placement: dict[str, str] = {"AvailabilityZone": zone}
        if group is not None:
            placement["GroupName"] = group
        params: dict[str, Any] = {
            "ImageId": image_id,
            "InstanceType": request.instance_type,
            "MinCount": request.count,
            "MaxCount": request.count,
            "ClientToken": zone_client_token(request.client_token, zone),
            "InstanceInitiatedShutdownBehavior": "terminate",
            "Placement": placement,
            "TagSpecifications": [{"ResourceType": "instance", "Tags": tag_list},
                                  {"ResourceType": "volume", "Tags": tag_list}],
            "DryRun": request.dry_run,
        }
        if request.user_data:
            params["UserData"] = request.user_data  # botocore base64-encodes it for RunInstances
        if spot:
            params["InstanceMarketOptions"] = {"MarketType": "spot", "SpotOptions": {
                "SpotInstanceType": "one-time", "InstanceInterruptionBehavior": "terminate"}}
        if devices:
            params["BlockDeviceMappings"] = devices
        if request.ssh_key_name is not None:
            params["KeyName"] = request.ssh_key_name
        if ssh_group is not None:
            params["SecurityGroupIds"] = [ssh_group]  # moved into the interfaces when EFA takes them
        return params

    def _existing(self, token: str) -> list[InstanceInfo]:
        filters = [{"Name": f"tag:{TAG_CLIENT_TOKEN}", "Values": [token]},
                   {"Name": "instance-state-name", "Values": list(LIVE_STATES)}]
        return self._describe_filtered(filters)

    def _type_info(self, instance_type: str, notes: list[str]) -> TypeInfo | None:
        try:
            with aws_errors():
                info = describe_types(self.ec2, [instance_type]).get(instance_type)
        except GpuplanError as exc:
            notes.append(f"DescribeInstanceTypes failed ({exc.message})")
            return None
        if info is None:
            notes.append(f"EC2 does not describe {instance_type} here: EFA and architecture not checked")
        return info

    def _offered(self, instance_type: str, notes: list[str]) -> tuple[str, ...]:
        try:
            with aws_errors():
                return offered_zones(self.ec2, [instance_type]).get(instance_type, ())
        except GpuplanError as exc:
            notes.append(f"DescribeInstanceTypeOfferings failed ({exc.message}); zones not pre-checked")
            return ()

    def _image(self, request: LaunchRequest, info: TypeInfo | None) -> ImageChoice:
        if request.image:
            return ImageChoice(request.image, f"image {request.image}: given with --image")
        return default_image(self.ssm, self.ec2, dlami_kind(info.architectures if info else ()))

    def _zone_names(self, request: LaunchRequest, notes: list[str]) -> LaunchRequest:
        """Zone IDs (use1-az1, as prices are published) -> this account's zone names (us-east-1a).

        Zone names are shuffled per account, zone IDs are not; RunInstances takes names.
        """
        wanted = [z for z in (request.zone, *request.zones) if z and _ZONE_ID.fullmatch(z)]
        if not wanted:
            return request
        response = self.ec2.describe_availability_zones(ZoneIds=sorted(set(wanted)))
        names = {str(z["ZoneId"]): str(z["ZoneName"]) for z in response.get("AvailabilityZones", [])}
        missing = [z for z in wanted if z not in names]
        if missing:
            raise InputError(f"zone ID {', '.join(missing)} is not in {self.region} for this account",
                             f"pick a zone of {self.region}, e.g. with --zone {self.region}a")
        notes.append("zone " + ", ".join(f"{z} is {names[z]} in this account" for z in dict.fromkeys(wanted)))
        return request.model_copy(update={"zone": names.get(request.zone or "", request.zone),
                                          "zones": tuple(names.get(z, z) for z in request.zones)})

    def region_zones(self) -> list[str]:
        """The region's availability zones that are available now, by name (no Local or Wavelength zones)."""
        response = self.ec2.describe_availability_zones(Filters=[
            {"Name": "zone-type", "Values": ["availability-zone"]}, {"Name": "state", "Values": ["available"]}])
        return sorted(str(z["ZoneName"]) for z in response.get("AvailabilityZones", []))

    def _candidate_zones(self, request: LaunchRequest, offered: tuple[str, ...],
                         notes: list[str]) -> tuple[list[str], bool]:
        if request.zone:
            return [request.zone], True
        zones = list(dict.fromkeys(request.zones)) or self.region_zones()
        if not offered:  # unknown (no offering data): let EC2 answer zone by zone
            return zones, False
        keep = [z for z in zones if z in offered]
        if not keep:
            raise CapacityError(f"{request.instance_type} is not sold in {', '.join(zones)}",
                                f"zones of {self.region} that sell it: {', '.join(offered)}")
        if len(keep) < len(zones):
            notes.append(f"skipped zones that do not sell {request.instance_type}: "
                         f"{', '.join(z for z in zones if z not in keep)}")
        return keep, False

    def _describe_image(self, image_id: str, notes: list[str]) -> dict[str, Any] | None:
        """The image's description; an image EC2 does not know here is an InputError before anything starts."""
        from botocore.exceptions import ClientError

        try:
            images = self.ec2.describe_images(ImageIds=[image_id]).get("Images", [])
        except ClientError as exc:
            if _error_code(exc) in ("UnauthorizedOperation", "AccessDenied"):
                notes.append("image not checked: no ec2:DescribeImages permission")
                return None
            raise
        if not images:
            raise InputError(f"image {image_id} not found in {self.region}",
                             "pass --image with an AMI ID of this region, or omit it for the default Deep Learning AMI")
        image: dict[str, Any] = images[0]
        return image

    def _block_devices(self, image: dict[str, Any] | None, disk_gb: int) -> list[dict[str, Any]]:
        # Resize the image's root volume; "/dev/sda1" is the root of Ubuntu AMIs when the image is unreadable.
        root = str((image or {}).get("RootDeviceName") or "/dev/sda1")
        snapshot_gb = next((int(m["Ebs"]["VolumeSize"]) for m in (image or {}).get("BlockDeviceMappings", [])
                            if m.get("DeviceName") == root and "VolumeSize" in (m.get("Ebs") or {})), 0)
        if disk_gb < snapshot_gb:
            raise InputError(f"--disk-gb {disk_gb} is smaller than the image's {snapshot_gb} GB root volume",
                             f"pass --disk-gb {snapshot_gb} or more")
        return [{"DeviceName": root, "Ebs": {"VolumeSize": disk_gb, "VolumeType": "gp3",
                                             "DeleteOnTermination": True}}]

    def _placement_group(self, request: LaunchRequest, notes: list[str]) -> str | None:
        from botocore.exceptions import ClientError

        name = placement_group_name(request.client_token)
        if request.dry_run:  # a dry run creates nothing, and EC2 would refuse a group that does not exist yet
            notes.append(f"dry run: would use cluster placement group {name}")
            return None
        found = self.ec2.describe_placement_groups(Filters=[{"Name": "group-name", "Values": [name]}])
        if found.get("PlacementGroups"):
            notes.append(f"placement group {name} (cluster) already exists")
            return name
        tags = [{"Key": k, "Value": v} for k, v in {**request.tags, TAG_MANAGED: "true",
                                                     TAG_CLIENT_TOKEN: request.client_token}.items()]
        try:
            self.ec2.create_placement_group(GroupName=name, Strategy="cluster", TagSpecifications=[
                {"ResourceType": "placement-group", "Tags": tags}])
        except ClientError as exc:
            if _error_code(exc) != "InvalidPlacementGroup.Duplicate":  # a concurrent retry made it: fine
                raise
        notes.append(f"placement group {name} (cluster) created; `delete_placement_group` removes it")
        return name

    def _efa_interfaces(self, info: TypeInfo | None, zone: str, notes: list[str]) -> list[dict[str, Any]] | None:
        if info is None:
            notes.append("EFA not configured: EC2 gave no description of the type")
            return None
        if not info.efa_supported:
            notes.append(f"{info.instance_type} has no EFA: nodes talk over ENA")
            return None
        subnets = self.ec2.describe_subnets(Filters=[{"Name": "availability-zone", "Values": [zone]},
                                                     {"Name": "default-for-az", "Values": ["true"]}]).get("Subnets", [])
        if not subnets:
            notes.append(f"EFA not configured: no default subnet in {zone}")
            return None
        subnet = subnets[0]
        groups = self.ec2.describe_security_groups(Filters=[{"Name": "vpc-id", "Values": [subnet["VpcId"]]},
                                                            {"Name": "group-name", "Values": ["default"]}])
        group_ids = [g["GroupId"] for g in groups.get("SecurityGroups", [])][:1]
        count = max(1, min(info.max_efa_interfaces or 1, info.max_network_cards))
        notes.append(f"EFA: {count} interface(s) per node in {subnet['SubnetId']}"
                     + ("; several interfaces mean no public IPv4 address" if count > 1 else ""))
        return [{"NetworkCardIndex": card, "DeviceIndex": 0 if card == 0 else 1, "InterfaceType": "efa",
                 "SubnetId": subnet["SubnetId"], "Groups": group_ids, "DeleteOnTermination": True}
                for card in range(count)]

    def delete_placement_group(self, client_token: str) -> None:
        """Remove the cluster placement group of a launch (after its instances are terminated)."""
        from botocore.exceptions import ClientError

        with aws_errors():
            try:
                self.ec2.delete_placement_group(GroupName=placement_group_name(client_token))
            except ClientError as exc:
                if _error_code(exc) != "InvalidPlacementGroup.Unknown":
                    raise

    # -- describe, wait, end -------------------------------------------------------------------------------------

    def _describe_filtered(self, filters: list[dict[str, Any]]) -> list[InstanceInfo]:
        out: list[InstanceInfo] = []
        for page in self.ec2.get_paginator("describe_instances").paginate(Filters=filters):
            for reservation in page.get("Reservations", []):
                out.extend(instance_info(raw, self.region) for raw in reservation.get("Instances", []))
        return out

    def describe(self, instance_ids: list[str]) -> list[InstanceInfo]:
        if not instance_ids:
            return []
        found: dict[str, InstanceInfo] = {}
        with aws_errors():
            for chunk in chunks(list(dict.fromkeys(instance_ids))):
                for info in self._describe_filtered([{"Name": "instance-id", "Values": chunk}]):
                    found[info.instance_id] = info
        return [found.get(i) or InstanceInfo(instance_id=i, state=InstanceState.TERMINATED, region=self.region)
                for i in instance_ids]

    def _wait(self, waiter_name: str, instance_ids: Sequence[str], want: str) -> list[InstanceInfo]:
        from botocore.exceptions import WaiterError

        ids = list(instance_ids)
        if not ids:
            return []
        waiter = self.ec2.get_waiter(waiter_name)
        try:
            with aws_errors():
                waiter.wait(InstanceIds=ids, WaiterConfig={"Delay": self.waiter_delay,
                                                           "MaxAttempts": self.waiter_max_attempts})
        except WaiterError:
            states = ", ".join(f"{i.instance_id} {i.state.value}" for i in self.describe(ids))
            raise ProviderError(f"instances did not become {want} in time ({states})",
                                f"check them with `gpuplan status`; end them with `gpuplan down {' '.join(ids)}`"
                                ) from None
        return self.describe(ids)

    def wait_running(self, instance_ids: Sequence[str]) -> list[InstanceInfo]:
        """Block until every instance runs (bounded by the waiter settings); ProviderError otherwise."""
        return self._wait("instance_running", instance_ids, "running")

    def wait_terminated(self, instance_ids: Sequence[str]) -> list[InstanceInfo]:
        """Block until every instance is terminated (bounded by the waiter settings)."""
        live = [i.instance_id for i in self.describe(list(instance_ids)) if i.state is not InstanceState.TERMINATED]
        self._wait("instance_terminated", live, "terminated")
        return self.describe(list(instance_ids))

    def terminate(self, instance_ids: list[str]) -> None:
        from botocore.exceptions import ClientError

        ending = (InstanceState.TERMINATED, InstanceState.TERMINATING)
        live = [i.instance_id for i in self.describe(instance_ids) if i.state not in ending]
        with aws_errors():
            for attempt in range(2):
                if not live:
                    return
                try:
                    self.ec2.terminate_instances(InstanceIds=live)
                    return
                except ClientError as exc:
                    # An id that vanished between describe and terminate fails the whole call: drop it, once.
                    if _error_code(exc) != "InvalidInstanceID.NotFound" or attempt:
                        raise
                    live = [i for i in live if i not in str(exc)]

    def list_by_tag(self, key: str, value: str | None = None, *,
                    include_terminated: bool = False) -> list[InstanceInfo]:
        filters: list[dict[str, Any]] = (
            [{"Name": "tag-key", "Values": [key]}] if value is None else [{"Name": f"tag:{key}", "Values": [value]}])
        if not include_terminated:
            filters.append({"Name": "instance-state-name", "Values": list(LIVE_STATES)})
        with aws_errors():
            return self._describe_filtered(filters)
