"""Start, watch and end Alibaba Cloud ECS instances: the :class:`ComputeClient` of Alibaba Cloud.

Decisions worth knowing:

- Idempotency. RunInstances carries a ClientToken made from the request's token and the zone (ECS
  answers a repeated token with the first call's instances), and every instance is tagged with the
  request's token: a retried ``run`` first looks for instances with that tag, so a retry after a zone
  failover starts nothing in a second zone.
- Network. A launch goes into the zone's *default* vSwitch (DescribeVSwitches IsDefault=true) and its
  VPC; a zone without one is an error naming what to create. Without a zone, the zones with a default
  vSwitch are tried in order, moving on only on no-stock answers.
- SSH. The user's key is imported once per region as a key pair under its fingerprint name; the
  security group ``gpuplan-ssh-...`` opens TCP 22 to ``--ssh-from`` (anywhere by default) and all
  traffic between its own members, nothing else.
- TTL. ``AutoReleaseTime`` (pay-as-you-go only) makes the cloud release the machine at the TTL with no
  client running; ECS needs it at least 30 minutes ahead. ``gpuplan down --expired`` stays the second line.
- Spot. ``SpotAsPriceGo`` (pay the market price) unless a price limit is given (``SpotWithPriceLimit``).
- Stock. DescribeAvailableResource is asked before anything is made: zones without the type in stock are
  skipped, and none in stock is a CapacityError naming the zones that have it.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from pricing.billing import BillingMode
from pricing.errors import CapacityError, InputError, ProviderError
from providers.alibaba.ecs_api import AlibabaApiError, DryRunPassed, EcsApi
from providers.capabilities import (
    TAG_MANAGED,
    ComputeClient,
    InstanceInfo,
    InstanceState,
    LaunchRequest,
    LaunchResult,
)
from providers.ssh_keys import ssh_group, ssh_group_rules

PROVIDER = "alibaba"
TAG_TOKEN = "gpuplan:token"
BATCH = 100  # InstanceIds per DescribeInstances (PageSize at most 100), InstanceId.N per DeleteInstances
MAX_TOKEN = 64  # ClientToken: at most 64 ASCII characters
MAX_USER_DATA = 32 * 1024  # UserData: base64, at most 32 KB
RELEASE_LEAD = timedelta(minutes=31)  # AutoReleaseTime: at least 30 minutes after the call (a minute for skew)
DEFAULT_IMAGE = "ubuntu_22_04_x64"  # Alibaba's public Ubuntu 22.04 images are named ubuntu_22_04_x64_20G_alibase_...
STATES = {"Pending": InstanceState.PENDING, "Starting": InstanceState.PENDING, "Running": InstanceState.RUNNING,
          "Stopping": InstanceState.STOPPING, "Stopped": InstanceState.STOPPED}
NO_VSWITCH_HINT = ("create the default VPC and vSwitch (VPC console > 'Create default VPC', or the API's "
                   "CreateDefaultVpc and CreateDefaultVSwitch with ZoneId), or pick another --zone")


# Alibaba's public Linux images log the key pair in as root; gpuplan's ssh lines and boot scripts use the user
# `ubuntu` (providers.ssh_keys.LOGIN_USER) on every cloud. This runs first at boot (cloud-init's user scripts run after
# the key pair is written to root's authorized_keys): it makes that user, with root's keys and sudo without a password.
LOGIN_PREFIX = """id ubuntu >/dev/null 2>&1 || useradd -m -s /bin/bash ubuntu
install -d -m 700 -o ubuntu -g ubuntu /home/ubuntu/.ssh
if [ -f /root/.ssh/authorized_keys ]; then
  install -m 600 -o ubuntu -g ubuntu /root/.ssh/authorized_keys /home/ubuntu/.ssh/authorized_keys
fi
echo 'ubuntu ALL=(ALL) NOPASSWD:ALL' > /etc/sudoers.d/90-gpuplan-ubuntu && chmod 440 /etc/sudoers.d/90-gpuplan-ubuntu
"""


def with_login_user(user_data: str | None) -> str:
    """The boot script with LOGIN_PREFIX run first: after a shell script's #! line, else as a script of its own."""
    if user_data is None:
        return "#!/bin/sh\n" + LOGIN_PREFIX
    if user_data.startswith("#!"):
        first, _, rest = user_data.partition("\n")
        if first.endswith(("sh", "bash")):
            return f"{first}\n{LOGIN_PREFIX}{rest}"
    return user_data  # cloud-config or another interpreter: left as given (the launch notes say how to log in)


def zone_token(token: str, zone: str) -> str:
    plain = f"{token}-{zone}"
    return plain if len(plain) <= MAX_TOKEN else "gp-" + hashlib.sha256(plain.encode()).hexdigest()[:MAX_TOKEN - 3]


def _rows(body: Mapping[str, Any], outer: str, inner: str) -> list[dict[str, Any]]:
    """ECS's lists are wrapped twice ({"Instances": {"Instance": [...]}}): the rows, or an empty list."""
    wrap = body.get(outer)
    rows = wrap.get(inner) if isinstance(wrap, dict) else None
    return [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []


def _first_ip(value: Any) -> str | None:
    ips = value.get("IpAddress") if isinstance(value, dict) else None
    return ips[0] if isinstance(ips, list) and ips and isinstance(ips[0], str) else None


def _created(text: Any) -> datetime | None:
    for fmt in ("%Y-%m-%dT%H:%MZ", "%Y-%m-%dT%H:%M:%SZ"):
        try:
            return datetime.strptime(str(text), fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


def _batches(ids: Sequence[str]) -> Iterable[list[str]]:
    for i in range(0, len(ids), BATCH):
        yield list(ids[i:i + BATCH])


class AlibabaCompute(ComputeClient):
    """ECS instances of one region (``api`` is for tests; ``spot_max_price`` caps spot bids per hour in CNY)."""

    provider = PROVIDER
    default_image_has_driver = False  # Alibaba's public Ubuntu images carry no NVIDIA driver

    def __init__(self, region: str, *, api: EcsApi | None = None, spot_max_price: Decimal | None = None,
                 public_bandwidth_mbps: int = 10) -> None:
        self.region = region
        self._api = api
        self.spot_max_price = spot_max_price
        self.public_bandwidth_mbps = public_bandwidth_mbps

    @property
    def api(self) -> EcsApi:
        if self._api is None:
            self._api = EcsApi(self.region)
        return self._api

    @classmethod
    def self_end_refusal(cls) -> tuple[str, str]:
        return (("an Alibaba ECS machine cannot end itself in gpuplan yet: a shutdown from inside stops it and may "
                 "keep billing it"), "use --ttl (the cloud releases it then: AutoReleaseTime), or `gpuplan down ID`")

    # -- run --

    def run(self, request: LaunchRequest) -> LaunchResult:
        if request.region != self.region:
            raise InputError(f"this client launches in {self.region}, the request is for {request.region}")
        self._check(request)
        if not request.dry_run and (existing := self._by_token(request.client_token)):
            return LaunchResult(instance_ids=tuple(i.instance_id for i in existing), zone=existing[0].zone,
                                notes=("instances with this client token already exist; nothing new started",))
        notes: list[str] = []
        image = request.image or self._default_image(notes)
        networks = self._in_stock(request, self._networks(request))
        key = self._key_pair(request, notes)
        notes += self._access_notes(request, key)
        ends_at = self._release_at(request, notes)
        groups: dict[str, str | None] = {}
        tried: list[str] = []
        for zone, (vpc, vswitch) in networks.items():
            if vpc not in groups:
                groups[vpc] = self._ssh_group(request, vpc, notes)
            if request.dry_run and (groups[vpc] is None or (request.ssh_public_key and key is None)):
                # ECS validates a launch only against a group and key pair that exist, and a dry run makes neither
                notes.append("RunInstances not validated with ECS: its dry run needs the security group and key pair "
                             "that the real launch creates first")
                return LaunchResult(zone=zone, image=image, dry_run=True, notes=tuple(notes))
            params = self._run_params(request, zone, image, vswitch, groups[vpc], key, ends_at)
            try:
                body = self.api.call("RunInstances", params)
            except DryRunPassed:
                return LaunchResult(zone=zone, image=image, dry_run=True, notes=tuple(notes))
            except CapacityError as err:
                if request.zone:
                    raise CapacityError(f"{request.instance_type} is not in stock in {zone} now "
                                        f"({getattr(err, 'code', '')})",
                                        f"zones of {self.region} with a default vSwitch: "
                                        f"{', '.join(self._networks(request, any_zone=True))}") from None
                tried.append(f"{zone} ({getattr(err, 'code', '')})")
                continue
            wrap = body.get("InstanceIdSets")
            ids = wrap.get("InstanceIdSet") if isinstance(wrap, dict) else None
            if not isinstance(ids, list) or not ids or not all(isinstance(i, str) and i for i in ids):
                raise ProviderError(f"Alibaba Cloud ECS RunInstances answered without instance ids (RequestId "
                                    f"{body.get('RequestId')})",
                                    f"look for tag {TAG_TOKEN}={request.client_token} in the console before retrying")
            if tried:
                notes.insert(0, f"no stock in {', '.join(tried)}; started in {zone}")
            return LaunchResult(instance_ids=tuple(ids), zone=zone, image=image, notes=tuple(notes),
                                cloud_ends_at=ends_at)
        raise CapacityError(f"{request.instance_type} is not in stock in any zone tried: {', '.join(tried)}",
                            "try another region or billing mode, or later")

    def _check(self, request: LaunchRequest) -> None:
        if not request.client_token.isascii() or len(request.client_token) > MAX_TOKEN:
            raise InputError(f"the client token must be at most {MAX_TOKEN} ASCII characters")
        if request.billing not in (BillingMode.HOURLY, BillingMode.SPOT, BillingMode.MONTHLY):
            raise InputError(f"gpuplan launches Alibaba ECS hourly, spot or monthly, not {request.billing}")
        if request.count > 100:
            raise InputError("ECS starts at most 100 instances per request", "split the launch")
        if len(self._user_data(with_login_user(request.user_data))) > MAX_USER_DATA:
            raise InputError("the boot script is over ECS's 32 KB limit once base64-encoded",
                             "download a script from the boot script instead of inlining it")
        for zone in ((request.zone,) if request.zone else request.zones):
            if not zone.startswith(self.region + "-"):
                raise InputError(f"zone {zone!r} is not in region {self.region}", f"zones look like {self.region}-l")

    @staticmethod
    def _user_data(text: str) -> str:
        return base64.b64encode(text.encode("utf-8")).decode("ascii")

    def _default_image(self, notes: list[str]) -> str:
        """The newest public Ubuntu 22.04 image of the region (said in the notes)."""
        body = self.api.call("DescribeImages", {"ImageOwnerAlias": "system", "OSType": "linux",
                                                "Architecture": "x86_64", "ImageName": DEFAULT_IMAGE + "*",
                                                "Status": "Available", "PageSize": 100})
        rows = [r for r in _rows(body, "Images", "Image") if str(r.get("ImageName", "")).startswith(DEFAULT_IMAGE)
                and r.get("ImageId")]
        if not rows:
            raise InputError(f"no public Ubuntu 22.04 image found in {self.region}", "name one with --image")
        best = max(rows, key=lambda r: str(r.get("CreationTime") or ""))
        notes.append(f"image: {best['ImageId']}, the newest public Ubuntu 22.04 of {self.region} (no NVIDIA driver: "
                     "--driver installs it)")
        return str(best["ImageId"])

    def _networks(self, request: LaunchRequest, *, any_zone: bool = False) -> dict[str, tuple[str, str]]:
        """zone -> (VPC, default vSwitch) for the zones to try, in order; an InputError naming what to create."""
        wanted = [] if any_zone else ([request.zone] if request.zone else list(request.zones))
        body = self.api.call("DescribeVSwitches", {"IsDefault": "true", "PageSize": 50,
                                                   **({"ZoneId": wanted[0]} if len(wanted) == 1 else {})})
        found: dict[str, tuple[str, str]] = {}
        for r in _rows(body, "VSwitches", "VSwitch"):
            if r.get("ZoneId") and r.get("VpcId") and r.get("VSwitchId") and r.get("IsDefault") in (True, "true"):
                found.setdefault(str(r["ZoneId"]), (str(r["VpcId"]), str(r["VSwitchId"])))
        if not wanted:
            if not found:
                raise InputError(f"no zone of {self.region} has a default vSwitch to launch into", NO_VSWITCH_HINT)
            return dict(sorted(found.items()))
        missing = [z for z in wanted if z not in found]
        if missing and len(missing) == len(wanted):
            raise InputError(f"zone {', '.join(missing)} has no default vSwitch to launch into", NO_VSWITCH_HINT)
        return {z: found[z] for z in wanted if z in found}

    def _in_stock(self, request: LaunchRequest, networks: dict[str, tuple[str, str]]) -> dict[str, tuple[str, str]]:
        """The zones of ``networks`` that DescribeAvailableResource says have the type in stock now, before anything
        is made; a CapacityError naming the zones that do when none asked for has. When ECS does not answer the
        question, every zone is kept: RunInstances' own no-stock answer still moves a launch on."""
        try:
            body = self.api.call("DescribeAvailableResource", {
                "DestinationResource": "InstanceType", "InstanceType": request.instance_type,
                "InstanceChargeType": "PrePaid" if request.billing is BillingMode.MONTHLY else "PostPaid",
                **({"SpotStrategy": "SpotAsPriceGo"} if request.billing is BillingMode.SPOT else {})})
        except (CapacityError, AlibabaApiError):
            return networks
        stocked = set()
        for zone in _rows(body, "AvailableZones", "AvailableZone"):
            for resource in _rows(zone, "AvailableResources", "AvailableResource"):
                if any(r.get("Value") == request.instance_type and r.get("Status") == "Available"
                       and r.get("StatusCategory") in ("WithStock", "ClosedWithStock")
                       for r in _rows(resource, "SupportedResources", "SupportedResource")):
                    stocked.add(str(zone.get("ZoneId")))
        kept = {z: n for z, n in networks.items() if z in stocked}
        if kept:
            return kept
        where = ", ".join(networks)
        usable = sorted(stocked & set(self._networks(request, any_zone=True))) if stocked else []
        hint = (f"zones of {self.region} with it in stock now and a default vSwitch: {', '.join(usable)} (--zone "
                f"{usable[0]})" if usable else
                f"in stock now only in zones without a default vSwitch ({', '.join(sorted(stocked))}): "
                f"{NO_VSWITCH_HINT}" if stocked else
                f"no zone of {self.region} has it in stock now: try another region, billing mode or type, or later")
        raise CapacityError(f"{request.instance_type} ({request.billing}) is not in stock in {where} now", hint)

    def _key_pair(self, request: LaunchRequest, notes: list[str]) -> str | None:
        """The request's key pair name in this region: found, else imported (a dry run only says it would be)."""
        name, public = request.ssh_key_name, request.ssh_public_key
        if name is None or public is None:
            return None
        body = self.api.call("DescribeKeyPairs", {"KeyPairName": name})
        if any(r.get("KeyPairName") == name for r in _rows(body, "KeyPairs", "KeyPair")):
            notes.append(f"key pair {name} already in {self.region}: reused")
            return name
        if request.dry_run:
            notes.append(f"would import the SSH key as key pair {name} in {self.region}")
            return None
        self.api.call("ImportKeyPair", {"KeyPairName": name, "PublicKeyBody": public})
        notes.append(f"imported the SSH key as key pair {name} in {self.region}")
        return name

    def _ssh_group(self, request: LaunchRequest, vpc: str, notes: list[str]) -> str | None:
        """gpuplan's security group of the VPC for the request's SSH sources: found by name, else created (SSH
        from those sources, everything between its members, nothing else); a dry run only says it would be."""
        name, rules = ssh_group(request.ssh_from), ssh_group_rules(request.ssh_from)
        body = self.api.call("DescribeSecurityGroups", {"VpcId": vpc, "SecurityGroupName": name})
        for g in _rows(body, "SecurityGroups", "SecurityGroup"):
            if g.get("SecurityGroupName") == name and g.get("SecurityGroupId"):
                notes.append(f"security group {name} ({g['SecurityGroupId']}): {rules}")
                return str(g["SecurityGroupId"])
        if request.dry_run:
            notes.append(f"would create security group {name} in {vpc}: {rules}")
            return None
        made = self.api.call("CreateSecurityGroup", {"VpcId": vpc, "SecurityGroupName": name,
                                                     "Description": f"gpuplan: {rules}"})
        group = str(made.get("SecurityGroupId") or "")
        if not group:
            raise ProviderError(f"Alibaba Cloud ECS CreateSecurityGroup answered without a SecurityGroupId "
                                f"(RequestId {made.get('RequestId')})")
        sources = [("Ipv6SourceCidrIp" if ":" in c else "SourceCidrIp", c) for c in request.ssh_from] or [
            ("SourceCidrIp", "0.0.0.0/0")]
        permissions = [{"IpProtocol": "TCP", "PortRange": "22/22", field: cidr, "Policy": "accept",
                        "Description": "ssh, key logins only"} for field, cidr in sources]
        permissions.append({"IpProtocol": "ALL", "PortRange": "-1/-1", "SourceGroupId": group, "Policy": "accept",
                            "Description": "all traffic between gpuplan machines"})
        self.api.call("AuthorizeSecurityGroup", {"SecurityGroupId": group, "Permissions": permissions})
        notes.append(f"created security group {name} ({group}) in {vpc}: {rules}")
        return group

    def _access_notes(self, request: LaunchRequest, key: str | None) -> list[str]:
        mbps = self.public_bandwidth_mbps if request.bandwidth_mbps is None else request.bandwidth_mbps
        notes = [f"public IP on traffic-billed bandwidth up to {mbps} Mbps (traffic is billed per GB, not in the "
                 "quote)" if mbps > 0 else "no public IP: reach the machines from the same VPC"]
        if key is None and not request.dry_run:
            notes.append("login: no SSH key given (--ssh-key): set a password in the ECS console to log in")
        if key is not None:
            notes.append("login: the key pair logs in as root and, made at boot, as ubuntu (gpuplan's ssh lines)")
        return notes

    def _release_at(self, request: LaunchRequest, notes: list[str]) -> datetime | None:
        """When AutoReleaseTime releases the machines: the TTL, or ECS's earliest (30 minutes ahead) if sooner."""
        if request.expires_at is None:
            return None
        if request.billing is BillingMode.MONTHLY:
            notes.append("a subscription (monthly) machine has no AutoReleaseTime and is not renewed: it ends with "
                         "its period; ECS may refuse to release it sooner (`gpuplan down` says so if it does)")
            return None
        earliest = (datetime.now(UTC) + RELEASE_LEAD).replace(microsecond=0)
        if request.expires_at < earliest:
            notes.append(f"ECS releases a machine at least 30 minutes ahead: the cloud ends it at {earliest:%H:%M:%S} "
                         "UTC, after the TTL; `gpuplan down --expired` ends it sooner")
            return earliest
        return request.expires_at.replace(microsecond=0) + (
            timedelta(seconds=1) if request.expires_at.microsecond else timedelta())

    def _run_params(self, request: LaunchRequest, zone: str, image: str, vswitch: str, group: str | None,
                    key: str | None, ends_at: datetime | None) -> dict[str, Any]:
        tags = {**request.tags, TAG_MANAGED: "true", TAG_TOKEN: request.client_token}
        params: dict[str, Any] = {
            "ZoneId": zone, "InstanceType": request.instance_type, "ImageId": image, "Amount": request.count,
            "MinAmount": request.count, "ClientToken": zone_token(request.client_token, zone),
            "InstanceName": request.name[:128], "VSwitchId": vswitch,
            "Tag": [{"Key": k, "Value": v} for k, v in tags.items()], "DryRun": request.dry_run,
        }
        if group is not None:
            params["SecurityGroupId"] = group
        if request.billing is BillingMode.MONTHLY:
            params.update(InstanceChargeType="PrePaid", Period=request.months, PeriodUnit="Month", AutoRenew=False)
        else:
            params["InstanceChargeType"] = "PostPaid"
        if request.billing is BillingMode.SPOT:
            if self.spot_max_price is not None:
                params.update(SpotStrategy="SpotWithPriceLimit", SpotPriceLimit=str(self.spot_max_price))
            else:
                params["SpotStrategy"] = "SpotAsPriceGo"
        if ends_at is not None:
            params["AutoReleaseTime"] = ends_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        params["UserData"] = self._user_data(with_login_user(request.user_data))
        if request.disk_gb is not None:
            params["SystemDisk"] = {"Size": request.disk_gb}
        mbps = self.public_bandwidth_mbps if request.bandwidth_mbps is None else request.bandwidth_mbps
        if mbps > 0:
            params.update(InternetChargeType="PayByTraffic", InternetMaxBandwidthOut=mbps)
        if key is not None:
            params["KeyPairName"] = key
        return params

    def _by_token(self, token: str) -> list[InstanceInfo]:
        return self.list_by_tag(TAG_TOKEN, token)

    # -- describe, list, terminate --

    def _info(self, item: Mapping[str, Any]) -> InstanceInfo:
        tags = _rows(item, "Tags", "Tag")
        return InstanceInfo(
            instance_id=str(item["InstanceId"]),
            state=STATES.get(str(item.get("Status") or ""), InstanceState.UNKNOWN),
            instance_type=str(item.get("InstanceType") or ""), region=self.region, zone=str(item.get("ZoneId") or ""),
            public_ip=_first_ip(item.get("PublicIpAddress")) or _first_ip(item.get("EipAddress")),
            private_ip=_first_ip((item.get("VpcAttributes") or {}).get("PrivateIpAddress")),
            tags={str(t.get("TagKey")): str(t.get("TagValue") or "") for t in tags if t.get("TagKey")},
            launched_at=_created(item.get("CreationTime")),
        )

    def _list(self, params: dict[str, Any]) -> list[InstanceInfo]:
        out: list[InstanceInfo] = []
        page = 1
        while True:
            body = self.api.call("DescribeInstances", {**params, "PageSize": BATCH, "PageNumber": page})
            items = [i for i in _rows(body, "Instances", "Instance") if i.get("InstanceId")]
            out += map(self._info, items)
            total = body.get("TotalCount")
            if not items or not isinstance(total, int) or len(out) >= total:
                return out
            page += 1

    def describe(self, instance_ids: list[str]) -> list[InstanceInfo]:
        ids = list(dict.fromkeys(instance_ids))
        found: dict[str, InstanceInfo] = {}
        for batch in _batches(ids):
            found.update((i.instance_id, i) for i in self._list({"InstanceIds": json.dumps(batch)}))
        # ECS forgets a released instance: one it does not return is gone
        return [found.get(i) or InstanceInfo(instance_id=i, state=InstanceState.TERMINATED, region=self.region)
                for i in ids]

    def list_by_tag(self, key: str, value: str | None = None) -> list[InstanceInfo]:
        tag: dict[str, Any] = {"Key": key} if value is None else {"Key": key, "Value": value}
        return [i for i in self._list({"Tag": [tag]}) if not i.state.is_final]

    def terminate(self, instance_ids: list[str]) -> None:
        for batch in _batches(list(dict.fromkeys(instance_ids))):
            live = self._live(batch)
            for attempt in range(2):
                if not live:
                    break
                try:
                    # Force: a running machine is released at once (ECS otherwise wants it stopped first)
                    self.api.call("DeleteInstances", {"InstanceId": live, "Force": True})
                    break
                except AlibabaApiError as err:
                    if err.code != "InvalidInstanceId.NotFound" or attempt == 1:
                        raise
                live = self._live(live)  # one went away between the describe and the call: end the rest

    def _live(self, ids: list[str]) -> list[str]:
        return [i.instance_id for i in self.describe(ids) if not i.state.is_final]
