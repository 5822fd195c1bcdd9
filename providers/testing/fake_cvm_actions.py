"""The CVM actions the fake answers (``_do_<Action>``), with their checks, as Tencent's API documents them.

A mixin of :class:`providers.testing.fake_cvm.FakeCvm`, which holds the state they read and change.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from providers.testing.fake_cvm_state import (
    _ID,
    CHARGE_TYPES,
    PERIOD_DISCOUNT,
    PERIODS,
    POSTPAID,
    PREPAID,
    RENEW_FLAGS,
    SPOTPAID,
    ApiError,
    FakeInstance,
    FakeOffer,
    _epoch,
)


class CvmActions:
    """What each action does to the fake's state (``self`` is a FakeCvm)."""

    offers: list[FakeOffer]
    instances: dict[str, FakeInstance]
    images: list[dict[str, Any]]
    key_pairs: dict[str, dict[str, str]]
    security_groups: dict[str, dict[str, Any]]
    hpc_clusters: dict[str, str]
    instance_quota: int | None
    dry_run_style: str
    pending_describes: int
    pending_seconds: float | None
    terminating_describes: int
    tokens: dict[str, list[str]]
    _launch_failures: int
    _counter: int

    clock: Callable[[], float]

    def _zone_in(self, region: str, zone: Any) -> str:
        if not isinstance(zone, str) or not zone:
            raise ApiError("MissingParameter", "The request is missing a required parameter `Placement.Zone`.")
        if not zone.startswith(region + "-") or zone not in {o.zone for o in self.offers}:
            raise ApiError("InvalidZone.MismatchRegion", f"The zone {zone} does not belong to region {region}.")
        return zone

    @staticmethod
    def _filters(params: dict[str, Any], allowed: set[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        filters = params.get("Filters") or []
        if len(filters) > 10:
            raise ApiError("InvalidFilterValue.LimitExceeded", "At most 10 filters.")
        for flt in filters:
            name, values = flt.get("Name"), flt.get("Values")
            if not isinstance(values, list) or len(values) > 100:
                raise ApiError("InvalidFilterValue.LimitExceeded", "At most 100 values per filter.")
            if name not in allowed and not (name.startswith("tag:") and "tag:" in allowed):
                raise ApiError("InvalidFilter", f"The filter {name} is not supported.")
            out[name] = [str(v) for v in values]
        return out

    def _item_price(self, offer: FakeOffer, charge: str, period: int = 1) -> dict[str, Any]:
        def f(x: Decimal) -> float:
            if x.adjusted() > 20 or 0 < x < Decimal("0.005"):  # a hostile price (1E+27, 1E-9): sent as it is
                return float(x)
            return float(x.quantize(Decimal("0.01")))

        if charge == PREPAID:
            assert offer.monthly is not None
            original = offer.monthly * period
            step = max((k for k in PERIOD_DISCOUNT if period >= k), default=None)
            paid_pct = Decimal(100 if step is None else PERIOD_DISCOUNT[step]) * offer.discount / 100
            return {"OriginalPrice": f(original), "DiscountPrice": f(original * paid_pct / 100),
                    "Discount": f"{paid_pct:.6f}", "UnitPrice": 0.0, "UnitPriceDiscount": 0.0, "ChargeUnit": "HOUR",
                    "OriginalPriceOneYear": f(offer.monthly * 12),
                    "DiscountPriceOneYear": f(offer.monthly * 12 * PERIOD_DISCOUNT[12] / 100)}
        if charge == SPOTPAID:
            assert offer.spot is not None and offer.hourly is not None
            return {"UnitPrice": f(offer.hourly), "UnitPriceDiscount": f(offer.spot), "ChargeUnit": "HOUR",
                    "Discount": f"{offer.spot / offer.hourly * 100:.6f}"}
        assert offer.hourly is not None
        pct = Decimal(offer.discount) / 100
        item: dict[str, Any] = {"UnitPrice": f(offer.hourly), "UnitPriceDiscount": f(offer.hourly * pct),
                                "ChargeUnit": "HOUR", "Discount": f"{offer.discount:.6f}"}
        if offer.tiers:
            second, third = offer.tiers
            item.update(UnitPriceSecondStep=f(second), UnitPriceDiscountSecondStep=f(second * pct),
                        UnitPriceThirdStep=f(third), UnitPriceDiscountThirdStep=f(third * pct),
                        DiscountSecondStep=f"{offer.discount:.6f}", DiscountThirdStep=f"{offer.discount:.6f}")
        return item

    def _do_DescribeZoneInstanceConfigInfos(self, region: str, params: dict[str, Any]) -> dict[str, Any]:
        flt = self._filters(params, {"zone", "instance-family", "instance-type", "instance-charge-type", "sort-keys"})
        items = []
        for offer in self.offers:
            if not offer.zone.startswith(region + "-"):
                continue
            if any(k in flt and v not in flt[k] for k, v in (("zone", offer.zone), ("instance-family", offer.family),
                                                              ("instance-type", offer.instance_type))):
                continue
            for charge in CHARGE_TYPES:
                if offer.price_of(charge) is None or ("instance-charge-type" in flt
                                                      and charge not in flt["instance-charge-type"]):
                    continue
                status = offer.status.get(charge, "SELL")
                items.append({
                    "Zone": offer.zone, "InstanceType": offer.instance_type, "InstanceChargeType": charge,
                    "NetworkCard": 25, "Externals": {}, "Cpu": offer.cpu, "Memory": offer.memory,
                    "InstanceFamily": offer.family, "TypeName": f"GPU {offer.family}", "LocalDiskTypeList": [],
                    "Status": status, "Price": self._item_price(offer, charge),
                    "SoldOutReason": "" if status == "SELL" else "Resources sold out",
                    "InstanceBandwidth": 10.0, "InstancePps": 150, "StorageBlockAmount": 0,
                    "CpuType": "Intel Xeon Platinum 8255C", "Gpu": int(offer.gpu_count),
                    "GpuCount": offer.gpu_count, "Fpga": 0, "Remark": "", "Frequency": "2.5/3.1GHz",
                    "StatusCategory": "EnoughStock" if status == "SELL" else "WithoutStock",
                })
        return {"InstanceTypeQuotaSet": items}

    def _launch_checks(self, region: str, params: dict[str, Any]) -> tuple[FakeOffer, str, int]:
        zone = self._zone_in(region, (params.get("Placement") or {}).get("Zone"))
        kind, image = params.get("InstanceType"), params.get("ImageId")
        if not kind:
            raise ApiError("MissingParameter", "The request is missing a required parameter `InstanceType`.")
        if not image:
            raise ApiError("MissingParameter", "The request is missing a required parameter `ImageId`.")
        if image not in {i["ImageId"] for i in self.images}:
            raise ApiError("InvalidImageId.NotFound", f"The image {image} does not exist.")
        offer = next((o for o in self.offers if o.zone == zone and o.instance_type == kind), None)
        if offer is None:
            raise ApiError("InvalidParameterValue.InstanceTypeNotFound",
                           f"The instance type {kind} is not sold in {zone}.")
        charge = params.get("InstanceChargeType") or POSTPAID
        if charge not in CHARGE_TYPES:
            raise ApiError("InvalidParameterValue", f"InstanceChargeType {charge} is not supported.")
        period = 1
        if charge == PREPAID:
            prepaid = params.get("InstanceChargePrepaid") or {}
            if prepaid.get("Period") is None:
                raise ApiError("MissingParameter", "PREPAID needs InstanceChargePrepaid.Period.")
            if prepaid["Period"] not in PERIODS:
                raise ApiError("InvalidPeriod", "Period must be 1-12, 24, 36.")
            period = int(prepaid["Period"])
            if prepaid.get("RenewFlag", "NOTIFY_AND_MANUAL_RENEW") not in RENEW_FLAGS:
                raise ApiError("InvalidParameterValue", "RenewFlag is not valid.")
        if offer.price_of(charge) is None:
            raise ApiError("InvalidParameterValue.InstanceTypeNotFound",
                           f"{kind} is not sold as {charge} in {zone}.")
        hpc = params.get("HpcClusterId")
        if kind.upper().startswith("HCC"):
            if not hpc:
                raise ApiError("InvalidParameterValue.InstanceTypeRequiredHpcCluster",
                               f"{kind} must be placed in an HPC cluster.")
            if self.hpc_clusters.get(hpc) != zone:
                raise ApiError("InvalidParameterValue.HpcClusterIdZoneIdNotMatch",
                               f"The HPC cluster {hpc} is not in {zone}.")
        elif hpc:
            raise ApiError("InvalidParameterValue.InstanceTypeNotSupportHpcCluster",
                           f"{kind} cannot be placed in an HPC cluster.")
        return offer, charge, period

    def _do_InquiryPriceRunInstances(self, region: str, params: dict[str, Any]) -> dict[str, Any]:
        offer, charge, period = self._launch_checks(region, params)
        return {"Price": {"InstancePrice": self._item_price(offer, charge, period),
                          "BandwidthPrice": {"UnitPrice": 0.8, "ChargeUnit": "GB", "UnitPriceDiscount": 0.8,
                                             "Discount": "100.000000"}}}

    def _do_RunInstances(self, region: str, params: dict[str, Any]) -> dict[str, Any]:
        token = params.get("ClientToken")
        if token is not None and (not isinstance(token, str) or len(token) > 64 or not token.isascii()):
            raise ApiError("InvalidClientToken.TooLong", "ClientToken is at most 64 ASCII characters.")
        offer, charge, _ = self._launch_checks(region, params)
        count = params.get("InstanceCount", 1)
        if not isinstance(count, int) or not 1 <= count <= 100:
            raise ApiError("InvalidParameterValue.LimitExceeded", "InstanceCount must be 1-100.")
        user_data = params.get("UserData")
        if user_data is not None:
            import base64
            import binascii

            try:
                raw = base64.b64decode(user_data, validate=True)
            except (binascii.Error, ValueError):
                raise ApiError("InvalidParameterValue.InvalidUserDataFormat", "UserData is not base64.") from None
            if len(user_data) > 16 * 1024:
                raise ApiError("InvalidParameterValue.InvalidUserDataFormat", "UserData is over 16 KB.")
            user_data = raw.decode("utf-8", "replace")
        action_time = self._action_time(params.get("ActionTimer"))
        groups = tuple(params.get("SecurityGroupIds") or ())
        for group in groups:
            if group not in self.security_groups or self.security_groups[group]["Region"] != region:
                raise ApiError("InvalidSecurityGroupId.NotFound", f"The security group {group} does not exist.")
        key_ids = tuple((params.get("LoginSettings") or {}).get("KeyIds") or ())
        for key_id in key_ids:
            if key_id not in self.key_pairs or self.key_pairs[key_id]["Region"] != region:
                raise ApiError("InvalidKeyPairId.NotFound", f"The key pair {key_id} does not exist in {region}.")
        specs = params.get("TagSpecification") or []
        tags: dict[str, str] = {}
        for spec in specs:
            if spec.get("ResourceType") != "instance":
                raise ApiError("InvalidParameterValue", "TagSpecification.ResourceType must be instance.")
            tags.update({t["Key"]: t.get("Value", "") for t in spec.get("Tags") or []})
        if token is not None and token in self.tokens:
            return {"InstanceIdSet": list(self.tokens[token])}
        if not offer.sells(charge):
            raise ApiError("ResourcesSoldOut.SpecifiedInstanceType",
                           f"The specified instance type {offer.instance_type} is sold out in {offer.zone}.")
        live = sum(1 for i in self.instances.values() if i.state not in ("TERMINATING", "LAUNCH_FAILED"))
        if self.instance_quota is not None and live + count > self.instance_quota:
            raise ApiError("LimitExceeded.InstanceQuota", f"The instance quota ({self.instance_quota}) is reached.")
        if params.get("DryRun"):
            if self.dry_run_style == "success":
                return {}
            raise ApiError("DryRunOperation", "DryRun Operation. The request would have succeeded, "
                           "but the DryRun parameter was used.")
        ids = []
        created = datetime.fromtimestamp(self.clock(), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        for _ in range(count):
            self._counter += 1
            iid = f"ins-{self._counter:08x}"
            fail = self._launch_failures > 0
            self._launch_failures -= 1 if fail else 0
            name = params.get("InstanceName") or "未命名"
            self.instances[iid] = FakeInstance(
                instance_id=iid, instance_type=offer.instance_type, zone=offer.zone, region=region,
                charge_type=charge, image_id=params["ImageId"], name=name if count == 1 else f"{name}{_ + 1}",
                tags=dict(tags), client_token=token, created=created, will_fail=fail, user_data=user_data,
                hpc_cluster_id=params.get("HpcClusterId"), action_time=action_time,
                private_ip=f"10.0.0.{self._counter % 250 + 2}",
                public_ip=(f"203.0.113.{self._counter % 250 + 2}"
                           if (params.get("InternetAccessible") or {}).get("PublicIpAssigned") else None),
                cpu=offer.cpu, memory=offer.memory, gpu_count=offer.gpu_count, key_ids=key_ids,
                security_groups=groups or ("sg-fake0001",), cam_role=params.get("CamRoleName"),
            )
            ids.append(iid)
        if token is not None:
            self.tokens[token] = ids
        return {"InstanceIdSet": ids}

    def _action_time(self, timer: Any) -> str | None:
        """RunInstances.ActionTimer: only TerminateInstances, at an ISO 8601 UTC time at least 5 minutes ahead."""
        if timer is None:
            return None
        if not isinstance(timer, dict) or timer.get("TimerAction") != "TerminateInstances":
            raise ApiError("InvalidParameterValue.InvalidTimerAction", "ActionTimer.TimerAction must be "
                           "TerminateInstances.")
        at = timer.get("ActionTime")
        try:
            when = _epoch(at)
        except (TypeError, ValueError):
            raise ApiError("InvalidParameterValue.InvalidActionTime", f"ActionTime {at!r} is not "
                           "YYYY-MM-DDThh:mm:ssZ.") from None
        if when < self.clock() + 300:
            raise ApiError("InvalidParameterValue.InvalidActionTime", "ActionTime must be at least 5 minutes "
                           "after the current time.")
        return str(at)

    def _advance(self, inst: FakeInstance) -> None:
        """Move the state machine on after a describe has shown ``inst``."""
        inst.seen += 1
        if inst.state == "PENDING":
            timed = self.pending_seconds is not None and time.monotonic() - inst.since >= self.pending_seconds
            if inst.seen >= self.pending_describes or timed:
                inst.state, inst.seen = ("LAUNCH_FAILED" if inst.will_fail else "RUNNING"), 0
        elif inst.state == "TERMINATING" and inst.seen >= self.terminating_describes:
            del self.instances[inst.instance_id]

    def _selected(self, region: str, params: dict[str, Any]) -> list[FakeInstance]:
        ids, filters = params.get("InstanceIds"), params.get("Filters")
        if ids and filters:
            raise ApiError("InvalidParameterCombination", "InstanceIds and Filters cannot be used together.")
        limit = params.get("Limit", 20)
        if not isinstance(limit, int) or not 1 <= limit <= 100:
            raise ApiError("InvalidParameterValue.LimitExceeded", "Limit must be 1-100.")
        chosen = [i for i in self.instances.values() if i.region == region]
        if ids:
            if len(ids) > 100:
                raise ApiError("InvalidParameterValue.LimitExceeded", "At most 100 InstanceIds.")
            bad = [i for i in ids if not isinstance(i, str) or not _ID.fullmatch(i)]
            if bad:
                raise ApiError("InvalidInstanceId.Malformed", f"The instance id {bad[0]} is malformed.")
            chosen = [i for i in chosen if i.instance_id in ids]
        flt = self._filters(params, {"tag-key", "tag:", "instance-state", "zone", "instance-id"})
        for name, values in flt.items():
            if name == "tag-key":
                chosen = [i for i in chosen if set(i.tags) & set(values)]
            elif name.startswith("tag:"):
                chosen = [i for i in chosen if i.tags.get(name[4:]) in values]
            elif name == "instance-state":
                chosen = [i for i in chosen if i.state in values]
            elif name == "zone":
                chosen = [i for i in chosen if i.zone in values]
            elif name == "instance-id":
                chosen = [i for i in chosen if i.instance_id in values]
        return chosen

    def _page(self, chosen: list[FakeInstance], params: dict[str, Any]) -> list[FakeInstance]:
        offset = params.get("Offset", 0)
        return chosen[offset:offset + params.get("Limit", 20)]

    def _do_DescribeInstances(self, region: str, params: dict[str, Any]) -> dict[str, Any]:
        chosen = self._selected(region, params)
        page = self._page(chosen, params)
        out = [self._render(i) for i in page]
        for inst in page:
            self._advance(inst)
        return {"TotalCount": len(chosen), "InstanceSet": out}

    def _do_DescribeInstancesStatus(self, region: str, params: dict[str, Any]) -> dict[str, Any]:
        chosen = self._selected(region, params)
        page = self._page(chosen, params)
        out = [{"InstanceId": i.instance_id, "InstanceState": i.state} for i in page]
        for inst in page:
            self._advance(inst)
        return {"TotalCount": len(chosen), "InstanceStatusSet": out}

    def _render(self, i: FakeInstance) -> dict[str, Any]:
        running = i.state in ("RUNNING", "STOPPING", "STOPPED", "REBOOTING", "STARTING")
        return {
            "Placement": {"Zone": i.zone, "ProjectId": 0, "HostIds": None, "HostId": None},
            "InstanceId": i.instance_id, "InstanceType": i.instance_type, "CPU": i.cpu, "Memory": i.memory,
            "RestrictState": "NORMAL", "InstanceName": i.name, "InstanceChargeType": i.charge_type,
            "SystemDisk": {"DiskType": "CLOUD_PREMIUM", "DiskId": "disk-" + i.instance_id[4:], "DiskSize": 50},
            "DataDisks": None, "PrivateIpAddresses": [i.private_ip] if running else None,
            "PublicIpAddresses": [i.public_ip] if running and i.public_ip else None,
            "InternetAccessible": {"InternetChargeType": "TRAFFIC_POSTPAID_BY_HOUR",
                                   "InternetMaxBandwidthOut": 10 if i.public_ip else 0},
            "VirtualPrivateCloud": {"VpcId": "vpc-fake0001", "SubnetId": "subnet-fake0001", "AsVpcGateway": False},
            "ImageId": i.image_id, "RenewFlag": "NOTIFY_AND_MANUAL_RENEW" if i.charge_type == PREPAID else None,
            "CreatedTime": i.created, "ExpiredTime": None, "OsName": "Ubuntu Server 22.04 LTS 64bit",
            "SecurityGroupIds": list(i.security_groups), "LoginSettings": {"KeyIds": list(i.key_ids) or None},
            "InstanceState": i.state,
            "Tags": [{"Key": k, "Value": v} for k, v in i.tags.items()],
            "StopChargingMode": "NOT_APPLICABLE", "Uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, i.instance_id)),
            "LatestOperation": "RunInstances", "LatestOperationState": "SUCCESS" if running else "OPERATING",
            "LatestOperationRequestId": "", "HpcClusterId": i.hpc_cluster_id or "",
            "GPUInfo": {"GPUCount": i.gpu_count, "GPUId": [], "GPUType": ""},
        }

    def _do_TerminateInstances(self, region: str, params: dict[str, Any]) -> dict[str, Any]:
        ids = params.get("InstanceIds")
        if not isinstance(ids, list) or not ids:
            raise ApiError("MissingParameter", "The request is missing a required parameter `InstanceIds`.")
        if len(ids) > 100:
            raise ApiError("InvalidParameterValue.LimitExceeded", "At most 100 InstanceIds.")
        for iid in ids:
            if not isinstance(iid, str) or not _ID.fullmatch(iid):
                raise ApiError("InvalidInstanceId.Malformed", f"The instance id {iid} is malformed.")
            inst = self.instances.get(iid)
            if inst is None or inst.region != region:
                raise ApiError("InvalidInstanceId.NotFound", f"The instance {iid} does not exist.")
            if inst.state == "TERMINATING":
                raise ApiError("UnsupportedOperation.InstanceStateTerminating", f"The instance {iid} is terminating.")
        for iid in ids:
            inst = self.instances[iid]
            inst.state, inst.seen = "TERMINATING", 0
        return {}

    def _do_DescribeKeyPairs(self, region: str, params: dict[str, Any]) -> dict[str, Any]:
        names = self._filters(params, {"key-name", "key-id", "project-id"}).get("key-name")
        found = [{"KeyId": k, "KeyName": v["KeyName"], "PublicKey": v["PublicKey"], "ProjectId": 0}
                 for k, v in self.key_pairs.items()
                 if v["Region"] == region and (names is None or v["KeyName"] in names)]
        return {"TotalCount": len(found), "KeySet": found}

    def _do_ImportKeyPair(self, region: str, params: dict[str, Any]) -> dict[str, Any]:
        import re as _re

        name, public = params.get("KeyName"), params.get("PublicKey")
        # The CVM API's rule for key names: letters, digits and underscores, at most 25 characters.
        if not isinstance(name, str) or not _re.fullmatch(r"[A-Za-z0-9_]{1,25}", name):
            raise ApiError("InvalidKeyPairName", "KeyName: letters, digits and underscores, 1-25 characters.")
        if not isinstance(public, str) or not public.startswith(("ssh-rsa ", "ssh-ed25519 ", "ecdsa-sha2-")):
            raise ApiError("InvalidPublicKey.Malformed", "PublicKey is not an OpenSSH public key.")
        if any(v["KeyName"] == name and v["Region"] == region for v in self.key_pairs.values()):
            raise ApiError("InvalidKeyPairNameDuplicate", f"The key pair name {name} already exists.")
        key_id = f"skey-{len(self.key_pairs) + 1:08x}"
        self.key_pairs[key_id] = {"KeyName": name, "PublicKey": public, "Region": region}
        return {"KeyId": key_id}

    # -- the VPC API's security groups --

    def _do_DescribeSecurityGroups(self, region: str, params: dict[str, Any]) -> dict[str, Any]:
        names = self._filters(params, {"security-group-name", "security-group-id", "project-id"}).get(
            "security-group-name")
        found = [{"SecurityGroupId": k, "SecurityGroupName": g["GroupName"], "SecurityGroupDesc": g["Description"]}
                 for k, g in self.security_groups.items() if g["Region"] == region and (names is None or
                                                                                        g["GroupName"] in names)]
        return {"TotalCount": len(found), "SecurityGroupSet": found}

    def _do_CreateSecurityGroup(self, region: str, params: dict[str, Any]) -> dict[str, Any]:
        name, desc = params.get("GroupName"), params.get("GroupDescription")
        if not isinstance(name, str) or not name or not isinstance(desc, str) or not desc:
            raise ApiError("MissingParameter", "GroupName and GroupDescription are required.")
        group = f"sg-{len(self.security_groups) + 2:08x}"
        self.security_groups[group] = {"GroupName": name, "Description": desc, "Region": region, "Ingress": []}
        return {"SecurityGroup": {"SecurityGroupId": group, "SecurityGroupName": name, "SecurityGroupDesc": desc}}

    def _do_CreateSecurityGroupPolicies(self, region: str, params: dict[str, Any]) -> dict[str, Any]:
        group = params.get("SecurityGroupId")
        if group not in self.security_groups:
            raise ApiError("ResourceNotFound", f"The security group {group} does not exist.")
        policies = (params.get("SecurityGroupPolicySet") or {}).get("Ingress") or []
        for p in policies:
            if p.get("Action") not in ("ACCEPT", "DROP") or not (p.get("CidrBlock") or p.get("Ipv6CidrBlock") or
                                                                  p.get("SecurityGroupId")):
                raise ApiError("InvalidParameterValue", "A policy needs an Action and a source.")
        self.security_groups[group]["Ingress"].extend(policies)
        return {}

    def _do_DescribeImages(self, region: str, params: dict[str, Any]) -> dict[str, Any]:
        if params.get("ImageIds") and params.get("Filters"):
            raise ApiError("InvalidParameter.InvalidParameterCoexistImageIdsFilters",
                           "ImageIds and Filters cannot be used together.")
        flt = self._filters(params, {"image-id", "image-type", "image-name", "platform"})
        images = list(self.images)
        if params.get("ImageIds"):
            images = [i for i in images if i["ImageId"] in params["ImageIds"]]
        for name, values in flt.items():
            if name == "image-type":
                images = [i for i in images if i["ImageType"] in values]
            elif name == "image-id":
                images = [i for i in images if i["ImageId"] in values]
            else:  # platform and image-name match fuzzily, as the API documents
                key = "Platform" if name == "platform" else "ImageName"
                images = [i for i in images if any(v.lower() in i[key].lower() for v in values)]
        offset, limit = params.get("Offset", 0), params.get("Limit", 20)
        return {"ImageSet": images[offset:offset + limit], "TotalCount": len(images)}

