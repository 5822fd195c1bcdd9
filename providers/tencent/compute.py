"""Start, watch and end Tencent CVM instances: the :class:`ComputeClient` of Tencent Cloud.

Decisions worth knowing:

- Idempotency. Every RunInstances carries a ClientToken derived from the request's token
  and the zone, and every instance is tagged with the request's token. A retried ``run``
  first looks for instances with that tag, so a retry after a zone failover cannot start a
  second set in another zone; the per-zone token keeps Tencent's own idempotency per zone
  without relying on how Tencent treats a token whose first use failed (undocumented).
- Zones. A pinned zone that is sold out is an error naming the zones that sell the type; an
  open request tries ``request.zones`` (or the zones DescribeZoneInstanceConfigInfos says
  SELL the type) in order and moves on only on sold-out answers, not on quota or input errors.
- DryRun. Both a plain success and the ``DryRunOperation`` error mean "would succeed".
- Describe. An id neither DescribeInstances nor DescribeInstancesStatus returns is gone
  (TERMINATED): Tencent forgets terminated instances after a while.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from pricing.billing import BillingMode
from pricing.errors import CapacityError, GpuplanError, InputError, ProviderError
from providers.created import CreateWatch
from providers.capabilities import (
    SelfEnd,
    TAG_MANAGED,
    ComputeClient,
    InstanceInfo,
    InstanceState,
    LaunchRequest,
    LaunchResult,
)
from providers.session import Sleep
from providers.ssh_keys import ssh_group, ssh_group_rules
from providers.tencent import PROVIDER
from providers.tencent.charge import PREPAID, PREPAID_PERIODS, RENEW_FLAG, SPOTPAID, charge_type
from providers.tencent.client import CvmApi, DryRunPassed, TencentApiError, TencentCapacityError
from providers.tencent.images import DEFAULT_OS, default_image, driver_note

TAG_TOKEN = "gpuplan:token"  # the launch request's client token, for idempotent retries across zones
BATCH = 100  # InstanceIds per DescribeInstances / DescribeInstancesStatus / TerminateInstances call
MAX_TOKEN = 64  # ClientToken: at most 64 ASCII characters
MAX_USER_DATA = 16 * 1024  # UserData: base64, at most 16 KB

STATES = {
    "PENDING": InstanceState.PENDING,
    "LAUNCH_FAILED": InstanceState.FAILED,
    "RUNNING": InstanceState.RUNNING,
    "STOPPING": InstanceState.STOPPING,
    "STOPPED": InstanceState.STOPPED,
    "STARTING": InstanceState.PENDING,
    "REBOOTING": InstanceState.RUNNING,
    "SHUTDOWN": InstanceState.TERMINATING,  # stopped after expiry, waiting to be destroyed
    "TERMINATING": InstanceState.TERMINATING,
}
# TerminateInstances answers these when an id is already gone or going: success for an idempotent terminate.
_GONE_CODES = frozenset({
    "InvalidInstanceId.NotFound",
    "UnsupportedOperation.InstanceStateTerminating",
    "UnsupportedOperation.InstanceStateTerminated",
})


def state_of(tencent_state: str | None) -> InstanceState:
    return STATES.get(str(tencent_state or "").upper(), InstanceState.UNKNOWN)


def is_hcc(instance_type: str) -> bool:
    """High-performance computing cluster types (HCCPNV4h, HCCG5v, ...): RDMA between nodes of one HpcCluster."""
    return instance_type.upper().startswith("HCC")


def zone_token(token: str, zone: str) -> str:
    """A ClientToken for ``zone``: the same for a retry of the same request, within the 64-character limit."""
    plain = f"{token}-{zone}"
    return plain if len(plain) <= MAX_TOKEN else "gp-" + hashlib.sha256(plain.encode()).hexdigest()[:MAX_TOKEN - 3]


def _batches(ids: Sequence[str]) -> Iterable[list[str]]:
    for i in range(0, len(ids), BATCH):
        yield list(ids[i:i + BATCH])


def _created(text: Any) -> datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def _first(value: Any) -> str | None:
    return value[0] if isinstance(value, list) and value and isinstance(value[0], str) else None


def _tags(value: Any) -> dict[str, str]:
    if not isinstance(value, list):
        return {}
    return {str(t["Key"]): str(t.get("Value") or "") for t in value if isinstance(t, dict) and "Key" in t}


# RunInstances.ActionTimer.ActionTime must be at least 5 minutes after the call (CVM API, SDK models.ActionTimer)
ACTION_TIMER_LEAD = timedelta(minutes=6)


class TencentCompute(ComputeClient):
    """Tencent CVM instances of one region.

    ``client`` and ``sleep`` are for tests (a :class:`CvmApi` on the fake, a recording sleep);
    ``hpc_cluster_id`` places HCC types in that HPC cluster; ``spot_max_price`` caps spot bids
    (otherwise Tencent bids its current fixed spot price); ``key_ids`` are SSH key pair ids;
    ``public_bandwidth_mbps`` gives each machine a public IP on traffic-billed bandwidth (0: none).
    """

    provider = PROVIDER
    default_image_has_driver = False  # Tencent's public images carry no NVIDIA driver (see images)
    # No ttl_user_data: a shutdown from inside the OS stops a CVM and keeps billing it. The TTL is
    # instead a RunInstances.ActionTimer (TerminateInstances): the cloud destroys the machine at the
    # TTL with no client running; `gpuplan down --expired` stays the second line of defence.

    def __init__(
        self,
        region: str,
        *,
        client: CvmApi | None = None,
        sleep: Sleep | None = None,
        hpc_cluster_id: str | None = None,
        spot_max_price: Decimal | None = None,
        key_ids: Sequence[str] = (),
        public_bandwidth_mbps: int = 10,
        default_os: str = DEFAULT_OS,
    ) -> None:
        if client is not None and client.region != region:
            raise InputError(f"the client is for {client.region}, not {region}")
        self.region = region
        self._client = client
        self._sleep = sleep
        self.hpc_cluster_id = hpc_cluster_id
        self.spot_max_price = spot_max_price
        self.key_ids = tuple(key_ids)
        self.public_bandwidth_mbps = public_bandwidth_mbps
        self.default_os = default_os
        self._vpc: CvmApi | None = None

    @classmethod
    def self_end(cls, cam_role: str | None) -> SelfEnd | None:
        # An OS shutdown only stops a CVM and keeps billing it (Tencent 213/19918: no "no charge when shut
        # down" for a shutdown from inside): the machine terminates itself through the API, with the
        # temporary keys of the CAM role it runs with, read from the metadata service when needed.
        return SelfEnd.TENCENT_ROLE if cam_role else None

    @classmethod
    def self_end_refusal(cls) -> tuple[str, str]:
        return ("a Tencent CVM can end itself only through a CAM role: a shutdown from inside stops it and keeps "
                "billing it",
                "create a role for CVM that may call cvm:TerminateInstances (README: 'Jobs that end themselves') and "
                "pass --cam-role NAME; or keep --ttl, the cloud's own timer")

    @property
    def vpc(self) -> CvmApi:
        """The VPC API of the region (security groups), with the CVM client's endpoint and sleep."""
        if self._vpc is None:
            kw: dict[str, Any] = {"service": "vpc"}
            if self._client is not None and self._client.endpoint:
                kw["endpoint"] = self._client.endpoint
            if self._sleep is not None:
                kw["sleep"] = self._sleep
            self._vpc = CvmApi(self.region, **kw)
        return self._vpc

    @property
    def api(self) -> CvmApi:
        if self._client is None:
            self._client = CvmApi(self.region) if self._sleep is None else CvmApi(self.region, sleep=self._sleep)
        return self._client

    # -- run --

    def run(self, request: LaunchRequest) -> LaunchResult:
        if request.region != self.region:
            raise InputError(f"this client launches in {self.region}, the request is for {request.region}")
        watch = CreateWatch("Tencent")  # an error before RunInstances, or its refusal, created nothing
        with watch.guard():
            return self._run(request, watch)

    def _run(self, request: LaunchRequest, watch: CreateWatch) -> LaunchResult:
        charge = charge_type(request.billing)
        self._check(request)
        notes: list[str] = []
        if not request.dry_run:
            existing = self._by_token(request.client_token)
            if existing:
                return LaunchResult(instance_ids=tuple(i.instance_id for i in existing), zone=existing[0].zone,
                                    notes=("instances with this client token already exist; nothing new started",))
        if request.image:
            image = request.image  # the user's image: whether it has the driver is theirs to say (the boot checks)
        else:
            choice = default_image(self.api, request.instance_type, self.default_os)
            image = choice.image_id
            notes.append(choice.note)
            notes.append(driver_note(bool(request.user_data), installs=request.installs_driver))
        notes += self._cluster_notes(request)
        key_ids = (*self.key_ids, *self._key_pair(request, notes))
        notes += self._access_notes(key_ids, request.bandwidth_mbps)
        group = self._ssh_group(request, notes)
        pinned = request.zone is not None
        zones = [request.zone] if request.zone else list(request.zones) or self._selling_zones(request, charge)
        if not zones:
            raise CapacityError(f"no zone of {self.region} sells {request.instance_type} ({request.billing}) now",
                                "try another region or billing mode")
        ends_at = self._timer_at(request.expires_at, notes)
        tried: list[str] = []
        for zone in zones:
            params = self._run_params(request, charge, zone, image, ends_at, key_ids)
            if group is not None:
                params["SecurityGroupIds"] = [group]
            try:
                watch.sending()
                response = self.api.call("RunInstances", params)
            except DryRunPassed:
                return LaunchResult(zone=zone, image=image, dry_run=True, notes=tuple(notes))
            except GpuplanError as err:
                watch.answered(getattr(err, "code", ""), getattr(err, "request_id", ""))
                if not isinstance(err, TencentCapacityError):
                    raise
                if not err.sold_out:
                    raise
                if pinned:
                    others = [z for z in self._selling_zones(request, charge, quiet=True) if z != zone]
                    hint = (f"zones of {self.region} that sell it now: {', '.join(others)}" if others else
                            "no other zone of this region sells it now; try another region or billing mode")
                    raise self.api._error(TencentCapacityError, f"{request.instance_type} is sold out in {zone} "
                                          f"({err.code})", hint, code=err.code, request_id=err.request_id,
                                          action="RunInstances", zone=zone) from None
                tried.append(f"{zone} ({err.code})")
                continue
            if request.dry_run:  # a plain success also means the dry run passed
                return LaunchResult(zone=zone, image=image, dry_run=True, notes=tuple(notes))
            ids = response.get("InstanceIdSet")
            if not isinstance(ids, list) or not ids or not all(isinstance(i, str) and i for i in ids):
                raise ProviderError(f"Tencent CVM RunInstances answered without instance ids (RequestId "
                                    f"{response.get('RequestId')})",
                                    f"look for tag {TAG_TOKEN}={request.client_token} in the console before retrying")
            if tried:
                notes.insert(0, f"sold out in {', '.join(tried)}; started in {zone}")
            return LaunchResult(instance_ids=tuple(ids), zone=zone, image=image, notes=tuple(notes),
                                cloud_ends_at=ends_at)
        raise CapacityError(f"{request.instance_type} is sold out in every zone tried: {', '.join(tried)}",
                            "try another region or billing mode, or later")

    def _check(self, request: LaunchRequest) -> None:
        if not request.client_token.isascii() or len(request.client_token) > MAX_TOKEN:
            raise InputError(f"the client token must be at most {MAX_TOKEN} ASCII characters")
        if request.billing is BillingMode.MONTHLY and request.months not in PREPAID_PERIODS:
            raise InputError(f"Tencent sells monthly periods of 1-12, 24, 36, 48 or 60 months, not {request.months}")
        if request.count > 100:
            raise InputError("Tencent starts at most 100 instances per request", "split the launch")
        if request.user_data is not None and len(self._user_data(request.user_data)) > MAX_USER_DATA:
            raise InputError("user data is over Tencent's 16 KB limit once base64-encoded",
                             "download a script from the user data instead of inlining it")
        for zone in ((request.zone,) if request.zone else request.zones):
            if not zone.startswith(self.region + "-"):
                raise InputError(f"zone {zone!r} is not in region {self.region}", f"zones look like {self.region}-3")
        if is_hcc(request.instance_type) and not self.hpc_cluster_id:
            raise InputError(f"{request.instance_type} is a high-performance cluster type: Tencent needs the HPC "
                             "cluster to place it in", "create one (console or CreateHpcCluster) and pass its id")

    @staticmethod
    def _user_data(text: str) -> str:
        return base64.b64encode(text.encode("utf-8")).decode("ascii")

    def _cluster_notes(self, request: LaunchRequest) -> list[str]:
        if is_hcc(request.instance_type):
            return [f"HPC cluster {self.hpc_cluster_id}: RDMA between its nodes"]
        if request.cluster and request.count > 1:
            return [(f"{request.instance_type} is not an HCC type: the nodes are not on one RDMA fabric "
                     "(they talk over the VPC network)")]
        return []

    def _ssh_group(self, request: LaunchRequest, notes: list[str]) -> str | None:
        """The security group gpuplan keeps in the region for the request's SSH sources (anywhere by default, key
        logins only), which also opens every port between its own machines. Found by name, else created (a dry run
        only says it would be). A VPC API fault (a key without VPC permissions) is said and the launch goes on with
        the default group."""
        name, rules = ssh_group(request.ssh_from), ssh_group_rules(request.ssh_from)
        try:
            found = self.vpc.call("DescribeSecurityGroups", {"Filters": [{"Name": "security-group-name",
                                                                          "Values": [name]}]})
            for g in found.get("SecurityGroupSet") or []:
                if isinstance(g, dict) and g.get("SecurityGroupName") == name and g.get("SecurityGroupId"):
                    notes.append(f"security group {name} ({g['SecurityGroupId']}): {rules}")
                    return str(g["SecurityGroupId"])
            if request.dry_run:
                notes.append(f"would create security group {name}: {rules}")
                return None
            made = self.vpc.call("CreateSecurityGroup", {"GroupName": name, "GroupDescription": f"gpuplan: {rules}"})
            group = str((made.get("SecurityGroup") or {}).get("SecurityGroupId") or "")
            if not group:
                raise ProviderError(f"Tencent VPC CreateSecurityGroup answered without a SecurityGroupId "
                                    f"(RequestId {made.get('RequestId')})")
            sources = [("Ipv6CidrBlock" if ":" in c else "CidrBlock", c) for c in request.ssh_from] or [
                ("CidrBlock", "0.0.0.0/0")]
            self.vpc.call("CreateSecurityGroupPolicies", {"SecurityGroupId": group, "SecurityGroupPolicySet": {
                "Ingress": [
                    *({"Protocol": "TCP", "Port": "22", field: cidr, "Action": "ACCEPT",
                       "PolicyDescription": "ssh"} for field, cidr in sources),
                    {"Protocol": "ALL", "Port": "ALL", "SecurityGroupId": group, "Action": "ACCEPT",
                     "PolicyDescription": "all traffic between gpuplan machines"},
                ]}})
        except GpuplanError as exc:
            notes.append(f"security group not set up ({exc.message}): the VPC's default group applies, which may "
                         "not let SSH in")
            return None
        notes.append(f"created security group {name} ({group}): {rules}")
        return group

    def _key_pair(self, request: LaunchRequest, notes: list[str]) -> tuple[str, ...]:
        """The id of the request's SSH key pair in this region: found by its name, else imported (a dry run only
        says it would be)."""
        if request.ssh_public_key is None or request.ssh_key_name is None:
            return ()
        found = self.api.call("DescribeKeyPairs", {"Filters": [{"Name": "key-name",
                                                                 "Values": [request.ssh_key_name]}]})
        for pair in found.get("KeySet") or []:
            if isinstance(pair, dict) and pair.get("KeyName") == request.ssh_key_name and pair.get("KeyId"):
                notes.append(f"key pair {request.ssh_key_name} ({pair['KeyId']}) already in {self.region}: reused")
                return (str(pair["KeyId"]),)
        if request.dry_run:
            notes.append(f"would import the SSH key as key pair {request.ssh_key_name} in {self.region}")
            return ()
        made = self.api.call("ImportKeyPair", {"KeyName": request.ssh_key_name, "ProjectId": 0,
                                               "PublicKey": request.ssh_public_key})
        key_id = made.get("KeyId")
        if not isinstance(key_id, str) or not key_id:
            raise ProviderError(
                f"Tencent CVM ImportKeyPair answered without a KeyId (RequestId {made.get('RequestId')})")
        notes.append(f"imported the SSH key as key pair {request.ssh_key_name} ({key_id}) in {self.region}")
        return (key_id,)

    def _access_notes(self, key_ids: tuple[str, ...] = (), mbps: int | None = None) -> list[str]:
        notes = []
        mbps = self.public_bandwidth_mbps if mbps is None else mbps  # what RunInstances asks for (_run_params)
        if mbps > 0:
            notes.append(f"public IP on traffic-billed bandwidth up to {mbps} Mbps "
                         "(traffic is billed per GB, not in the quote)")
        else:
            notes.append("no public IP: reach the machines from the same VPC")
        if not key_ids:
            notes.append("login: no SSH key given (--ssh-key), Tencent sets a random password and sends it to the "
                         "account's message center")
        return notes

    @staticmethod
    def _timer_at(expires_at: datetime | None, notes: list[str]) -> datetime | None:
        """When the ActionTimer ends the machines: the TTL, or Tencent's earliest (5 minutes ahead) if sooner."""
        if expires_at is None:
            return None
        # a minute over Tencent's 5-minute floor, for the time the request takes and clock skew
        earliest = (datetime.now(UTC) + ACTION_TIMER_LEAD).replace(microsecond=0)
        if expires_at < earliest:
            notes.append(f"Tencent's timer must be at least 5 minutes ahead: the cloud ends it at "
                         f"{earliest:%H:%M:%S} UTC, after the TTL; `gpuplan down --expired` ends it sooner")
            return earliest
        # whole seconds: the API's time has none finer, and rounding up never ends it before the TTL
        return expires_at.replace(microsecond=0) + (timedelta(seconds=1) if expires_at.microsecond else timedelta())

    def _run_params(self, request: LaunchRequest, charge: str, zone: str, image: str,
                    ends_at: datetime | None = None, key_ids: tuple[str, ...] = ()) -> dict[str, Any]:
        tags = {**request.tags, TAG_MANAGED: "true", TAG_TOKEN: request.client_token}
        params: dict[str, Any] = {
            "InstanceChargeType": charge,
            "Placement": {"Zone": zone},
            "InstanceType": request.instance_type,
            "ImageId": image,
            "InstanceCount": request.count,
            "ClientToken": zone_token(request.client_token, zone),
            "InstanceName": request.name,
            "TagSpecification": [{"ResourceType": "instance",
                                  "Tags": [{"Key": k, "Value": v} for k, v in tags.items()]}],
            "DryRun": request.dry_run,
        }
        if charge == PREPAID:
            params["InstanceChargePrepaid"] = {"Period": request.months, "RenewFlag": RENEW_FLAG}
        if charge == SPOTPAID and self.spot_max_price is not None:
            # Without InstanceMarketOptions Tencent bids its current fixed spot price; a cap needs all of it.
            params["InstanceMarketOptions"] = {"MarketType": "spot", "SpotOptions": {
                "MaxPrice": str(self.spot_max_price), "SpotInstanceType": "one-time"}}
        if request.user_data is not None:
            params["UserData"] = self._user_data(request.user_data)
        if request.disk_gb is not None:
            params["SystemDisk"] = {"DiskSize": request.disk_gb}
        mbps = self.public_bandwidth_mbps if request.bandwidth_mbps is None else request.bandwidth_mbps
        if mbps > 0:
            # A subscription's bandwidth is prepaid by the Mbps, as the plan prices it; pay-as-you-go
            # machines use traffic-billed bandwidth (which the plan lists as not priced).
            mode = "BANDWIDTH_PREPAID" if charge == PREPAID else "TRAFFIC_POSTPAID_BY_HOUR"
            params["InternetAccessible"] = {"InternetChargeType": mode, "InternetMaxBandwidthOut": mbps,
                                            "PublicIpAssigned": True}
        if key_ids:
            params["LoginSettings"] = {"KeyIds": list(key_ids)}
        if request.cam_role is not None:
            params["CamRoleName"] = request.cam_role
        if is_hcc(request.instance_type):
            params["HpcClusterId"] = self.hpc_cluster_id
        if ends_at is not None:
            params["ActionTimer"] = {"TimerAction": "TerminateInstances",
                                     "ActionTime": ends_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}
        return params

    def _selling_zones(self, request: LaunchRequest, charge: str, *, quiet: bool = False) -> list[str]:
        """Zones of the region whose DescribeZoneInstanceConfigInfos says SELL for the type and charge type."""
        try:
            response = self.api.call("DescribeZoneInstanceConfigInfos", {"Filters": [
                {"Name": "instance-type", "Values": [request.instance_type]},
                {"Name": "instance-charge-type", "Values": [charge]},
            ]})
        except GpuplanError:
            if quiet:  # only a hint depends on it: the sold-out error must not be lost to this one
                return []
            raise
        items = response.get("InstanceTypeQuotaSet")
        if not isinstance(items, list):
            if quiet:
                return []
            raise ProviderError("Tencent CVM DescribeZoneInstanceConfigInfos answered without an "
                                f"InstanceTypeQuotaSet (RequestId {response.get('RequestId')})", "try again later")
        zones = [i["Zone"] for i in items if isinstance(i, dict) and i.get("Status") == "SELL"
                 and isinstance(i.get("Zone"), str) and i.get("InstanceType") == request.instance_type]
        return sorted(dict.fromkeys(zones))

    def _by_token(self, token: str) -> list[InstanceInfo]:
        return [i for i in self._list([{"Name": f"tag:{TAG_TOKEN}", "Values": [token]}]) if not i.state.is_final]

    # -- describe --

    def _info(self, item: Mapping[str, Any]) -> InstanceInfo:
        placement = item.get("Placement")
        zone = placement.get("Zone") if isinstance(placement, dict) else None
        return InstanceInfo(
            instance_id=str(item["InstanceId"]),
            state=state_of(item.get("InstanceState")),
            instance_type=str(item.get("InstanceType") or ""),
            region=self.region,
            zone=str(zone or ""),
            public_ip=_first(item.get("PublicIpAddresses")),
            private_ip=_first(item.get("PrivateIpAddresses")),
            tags=_tags(item.get("Tags")),
            launched_at=_created(item.get("CreatedTime")),
        )

    def _instance_set(self, response: Mapping[str, Any], key: str = "InstanceSet") -> list[dict[str, Any]]:
        items = response.get(key)
        if not isinstance(items, list) or not all(isinstance(i, dict) and i.get("InstanceId") for i in items):
            raise ProviderError(f"Tencent CVM answered without a valid {key} (RequestId {response.get('RequestId')})",
                                "try again later")
        return items

    def account(self) -> str:
        """The endpoint's host and a fingerprint of the SecretId (never the id itself): one key, one account."""
        return self.api.account()

    def describe(self, instance_ids: list[str]) -> list[InstanceInfo]:
        ids = list(dict.fromkeys(instance_ids))
        found: dict[str, InstanceInfo] = {}
        for batch in _batches(ids):
            response = self.api.call("DescribeInstances", {"InstanceIds": batch, "Limit": BATCH})
            found.update((i.instance_id, i) for i in map(self._info, self._instance_set(response)))
        missing = [i for i in ids if i not in found]
        for batch in _batches(missing):
            # DescribeInstancesStatus as a second opinion before declaring an id gone.
            response = self.api.call("DescribeInstancesStatus", {"InstanceIds": batch, "Limit": BATCH})
            for item in self._instance_set(response, "InstanceStatusSet"):
                iid = str(item["InstanceId"])
                state = state_of(item.get("InstanceState"))
                found[iid] = InstanceInfo(instance_id=iid, state=state, region=self.region)
        return [found.get(i) or InstanceInfo(instance_id=i, state=InstanceState.TERMINATED, region=self.region)
                for i in ids]

    # -- terminate --

    def terminate(self, instance_ids: list[str]) -> None:
        ids = list(dict.fromkeys(instance_ids))
        for batch in _batches(ids):
            self._terminate_batch(batch)

    def _terminate_batch(self, batch: list[str]) -> None:
        # Only ids that still exist and are not already ending: ending an ended machine is no error.
        live = [i.instance_id for i in self.describe(batch)
                if i.state not in (InstanceState.TERMINATED, InstanceState.TERMINATING, InstanceState.FAILED)]
        for attempt in range(2):
            if not live:
                return
            try:
                self.api.call("TerminateInstances", {"InstanceIds": live})
                return
            except TencentApiError as err:
                if err.code not in _GONE_CODES or attempt == 1:
                    raise
            # One id went away between describe and terminate: drop the gone ones and try once more.
            live = [i.instance_id for i in self.describe(live)
                    if i.state not in (InstanceState.TERMINATED, InstanceState.TERMINATING, InstanceState.FAILED)]

    # -- list --

    def _list(self, filters: list[dict[str, Any]]) -> list[InstanceInfo]:
        out: list[InstanceInfo] = []
        offset = 0
        while True:
            response = self.api.call("DescribeInstances", {"Filters": filters, "Offset": offset, "Limit": BATCH})
            items = self._instance_set(response)
            out += map(self._info, items)
            offset += len(items)
            total = response.get("TotalCount")
            if not items or not isinstance(total, int) or offset >= total:
                return out

    def list_by_tag(self, key: str, value: str | None = None) -> list[InstanceInfo]:
        flt = {"Name": f"tag:{key}", "Values": [value]} if value is not None else {"Name": "tag-key", "Values": [key]}
        return [i for i in self._list([flt]) if not i.state.is_final]


def compute_for(region: str, **options: Any) -> TencentCompute:
    """The registry's entry point: a :class:`TencentCompute` with the environment's credentials."""
    return TencentCompute(region, **options)
