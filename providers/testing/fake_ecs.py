"""A strict fake of Alibaba Cloud's ECS API (2014-05-26) on 127.0.0.1, for tests and for trying the
Alibaba side offline.

Strict where a real account is:

- Every call must be signed with Alibaba's V3 signature (``ACS3-HMAC-SHA256``, the scheme the official
  SDK's ``alibabacloud-tea-openapi`` 0.4 signs with by default), checked here from the published spec
  (help.aliyun.com "Request syntax and signature method V3"), not with the SDK: the canonical request
  is ``METHOD\\nURI\\nsorted RFC 3986 query\\nsigned headers (name:trimmed value)\\nsigned header
  names\\nhex SHA-256 of the body``; the string to sign is ``ACS3-HMAC-SHA256\\n`` + its hex SHA-256;
  the signature is hex HMAC-SHA256 with the AccessKey secret. host and the ``x-acs-*`` headers must
  be signed; ``x-acs-content-sha256`` must be the body's hash; ``x-acs-date`` within 15 minutes; a
  nonce is accepted once. An unknown key id is ``InvalidAccessKeyId.NotFound`` (404), a wrong
  secret ``SignatureDoesNotMatch`` (400).
- Actions take their documented required parameters (``MissingParameter`` / ``InvalidParameter``
  otherwise); RunInstances needs a zone with a vSwitch, an image, a security group and vSwitch of
  the same VPC, a known key pair; ``AutoReleaseTime`` must be 30 minutes to 3 years ahead (UTC,
  ``yyyy-MM-ddTHH:mm:ssZ``); a ClientToken seen before answers the first call's instances.

Instances are ``Pending`` on the first DescribeInstances that returns them and ``Running`` with
an address from the second; DeleteInstances removes them. Every id and address is made up.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit

TEST_KEY_ID = "LTAI5tGpuplanFakeKeyId01"  # never a real AccessKey
TEST_KEY_SECRET = "gpuplanFakeEcsSecret0123456789ab"  # never a real secret
VERSION = "2014-05-26"
ALGORITHM = "ACS3-HMAC-SHA256"
MUST_SIGN = ("host", "x-acs-action", "x-acs-version", "x-acs-date", "x-acs-signature-nonce", "x-acs-content-sha256")
REGION = "cn-shanghai"
# zone -> (vpc, default vSwitch); cn-shanghai-g has none (a user would have to create it)
ZONES = {"cn-shanghai-l": ("vpc-fake0001", "vsw-fake000l"), "cn-shanghai-m": ("vpc-fake0001", "vsw-fake000m")}
# type -> (hourly list price, hourly price paid, spot price per hour) in CNY: TEST VALUES for readable assertions,
# not Alibaba's prices; a month is priced here as 500 of the hourly rates (a test rule, not Alibaba's)
TYPES = {"ecs.gn7i-c8g1.2xlarge": ("10.00", "9.00", "3.00"), "ecs.gn7i-c16g1.4xlarge": ("20.00", "18.00", "6.00"),
         "ecs.gn6i-c4g1.xlarge": ("8.00", "8.00", "2.50")}
IMAGES = [("ubuntu_22_04_x64_20G_alibase_20240101.vhd", "2024-01-02T00:00:00Z"),
          ("ubuntu_22_04_x64_20G_alibase_20241220.vhd", "2024-12-21T00:00:00Z"),
          ("ubuntu_20_04_x64_20G_alibase_20241220.vhd", "2024-12-21T00:00:00Z"),
          ("centos_7_9_x64_20G_alibase_20241220.vhd", "2024-12-22T00:00:00Z")]
# Each action's required parameters, from the ECS API reference
REQUIRED = {
    "RunInstances": ("RegionId", "InstanceType", "ImageId", "SecurityGroupId", "VSwitchId"),
    "DescribeInstances": ("RegionId",), "DeleteInstances": ("RegionId", "InstanceId.1"),
    "DescribeImages": ("RegionId",), "DescribeKeyPairs": ("RegionId",),
    "ImportKeyPair": ("RegionId", "KeyPairName", "PublicKeyBody"), "DescribeVSwitches": ("RegionId",),
    "DescribeSecurityGroups": ("RegionId",), "CreateSecurityGroup": ("RegionId", "VpcId"),
    "AuthorizeSecurityGroup": ("RegionId", "SecurityGroupId"),
    "DescribeAvailableResource": ("RegionId", "DestinationResource"),
    "DescribePrice": ("RegionId",),
}


def canonical_query(pairs: list[tuple[str, str]]) -> str:
    """The spec's canonical query: each name and value RFC 3986-encoded (space %20, '~' kept), sorted by name."""
    enc = sorted((quote(k, safe="~"), quote(v, safe="~")) for k, v in pairs)
    return "&".join(f"{k}={v}" for k, v in enc)


def signature(secret: str, method: str, path: str, pairs: list[tuple[str, str]], headers: dict[str, str],
              signed: list[str], payload_hash: str) -> str:
    canonical = "\n".join([method, path or "/", canonical_query(pairs),
                           "".join(f"{h}:{headers.get(h, '').strip()}\n" for h in signed), ";".join(signed),
                           payload_hash])
    to_sign = f"{ALGORITHM}\n{hashlib.sha256(canonical.encode()).hexdigest()}"
    return hmac.new(secret.encode(), to_sign.encode(), hashlib.sha256).hexdigest()


class EcsError(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


@dataclass
class FakeInstance:
    instance_id: str
    instance_type: str
    zone: str
    params: dict[str, str]
    tags: dict[str, str]
    status: str = "Pending"
    public_ip: str | None = None
    private_ip: str = ""
    seen: int = 0
    created: str = field(default_factory=lambda: datetime.now(UTC).strftime("%Y-%m-%dT%H:%MZ"))


@dataclass
class Call:
    action: str
    params: dict[str, str]


class FakeEcs:
    """The fake's state and HTTP server; ``endpoint`` is what GPUPLAN_ALIBABA_ENDPOINT takes."""

    def __init__(self, *, no_stock: tuple[str, ...] = (), hidden_no_stock: tuple[str, ...] = ()) -> None:
        self.instances: dict[str, FakeInstance] = {}
        self.key_pairs: dict[str, str] = {}  # name -> public key
        self.groups: dict[str, dict[str, Any]] = {}  # id -> {"name", "vpc", "rules"}
        self.calls: list[Call] = []
        self.rejected: list[str] = []  # error codes answered, for tests
        self.tokens: dict[str, list[str]] = {}
        self.nonces: set[str] = set()
        self.no_stock = set(no_stock)  # zones without stock: DescribeAvailableResource says so, RunInstances refuses
        self.hidden_no_stock = set(hidden_no_stock)  # zones RunInstances refuses while the stock query says yes
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def endpoint(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> FakeEcs:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                fake._handle(self)

            do_GET = do_POST

            def log_message(self, *_: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def calls_of(self, action: str) -> list[Call]:
        return [c for c in self.calls if c.action == action]

    def live(self) -> list[FakeInstance]:
        return list(self.instances.values())

    # -- the HTTP side --

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        body = h.rfile.read(int(h.headers.get("content-length") or 0))
        request_id = str(uuid.uuid4()).upper()
        try:
            params = self._verify(h, body)
            with self._lock:
                out = self._dispatch(h.headers.get("x-acs-action", ""), params)
            status, answer = 200, {**out, "RequestId": request_id}
        except EcsError as err:
            self.rejected.append(err.code)
            status, answer = err.status, {"RequestId": request_id, "HostId": "ecs.aliyuncs.com", "Code": err.code,
                                          "Message": err.message}
        data = json.dumps(answer).encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/json;charset=utf-8")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    def _verify(self, h: BaseHTTPRequestHandler, body: bytes) -> dict[str, str]:
        """The request's parameters once its V3 signature checks out; an EcsError as Alibaba answers otherwise."""
        headers = {k.lower(): v for k, v in h.headers.items()}
        auth = headers.get("authorization", "")
        algorithm, _, rest = auth.partition(" ")
        parts = dict(p.split("=", 1) for p in rest.split(",") if "=" in p)
        if algorithm != ALGORITHM or not {"Credential", "SignedHeaders", "Signature"} <= set(parts):
            raise EcsError(400, "IncompleteSignature", "The request signature does not conform to Aliyun standards.")
        if parts["Credential"] != TEST_KEY_ID:
            raise EcsError(404, "InvalidAccessKeyId.NotFound", "Specified access key is not found.")
        signed = parts["SignedHeaders"].split(";")
        if signed != sorted(signed) or any(s != s.lower() for s in signed) or not set(MUST_SIGN) <= set(signed):
            raise EcsError(400, "IncompleteSignature", f"SignedHeaders must be sorted, lower case and hold "
                                                       f"{', '.join(MUST_SIGN)}.")
        payload_hash = hashlib.sha256(body).hexdigest()
        if headers.get("x-acs-content-sha256") != payload_hash:
            raise EcsError(400, "IncompleteSignature", "x-acs-content-sha256 is not the hash of the body.")
        if headers.get("x-acs-version") != VERSION:
            raise EcsError(400, "InvalidVersion", f"Specified parameter Version is not valid (ECS is {VERSION}).")
        try:
            sent = datetime.strptime(headers.get("x-acs-date", ""), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        except ValueError:
            raise EcsError(400, "InvalidTimeStamp.Format", "Specified time stamp or date value is not well formatted.")
        if abs(datetime.now(UTC) - sent) > timedelta(minutes=15):
            raise EcsError(400, "InvalidTimeStamp.Expired", "Specified time stamp or date value is expired.")
        url = urlsplit(h.path)
        pairs = parse_qsl(url.query, keep_blank_values=True)
        expected = signature(TEST_KEY_SECRET, h.command, url.path, pairs, headers, signed, payload_hash)
        if not hmac.compare_digest(expected, parts["Signature"]):
            raise EcsError(400, "SignatureDoesNotMatch", "Specified signature is not matched with our calculation.")
        nonce = headers["x-acs-signature-nonce"]
        if nonce in self.nonces:
            raise EcsError(400, "SignatureNonceUsed", "Specified signature nonce was used already.")
        self.nonces.add(nonce)
        params = dict(pairs)
        if body and headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
            params.update(parse_qsl(body.decode(), keep_blank_values=True))
        return params

    def _dispatch(self, action: str, p: dict[str, str]) -> dict[str, Any]:
        if action not in REQUIRED:
            raise EcsError(404, "InvalidAction.NotFound", f"Specified api {action} is not found.")
        for name in REQUIRED[action]:
            if not p.get(name):
                raise EcsError(400, "MissingParameter", f"The input parameter {name} that is mandatory for processing "
                                                        "this request is not supplied.")
        if p["RegionId"] != REGION:
            raise EcsError(400, "InvalidRegionId.NotFound", f"The specified RegionId {p['RegionId']} does not exist.")
        self.calls.append(Call(action, dict(p)))
        handler: Any = getattr(self, "_" + "".join(f"_{c.lower()}" if c.isupper() else c for c in action).lstrip("_"))
        out: dict[str, Any] = handler(p)
        return out

    # -- actions --

    def _describe_v_switches(self, p: dict[str, str]) -> dict[str, Any]:
        rows = [{"VSwitchId": vsw, "VpcId": vpc, "ZoneId": zone, "IsDefault": True, "Status": "Available"}
                for zone, (vpc, vsw) in ZONES.items() if p.get("ZoneId") in (None, zone)
                and p.get("IsDefault", "true") == "true"]
        return {"VSwitches": {"VSwitch": rows}, "TotalCount": len(rows)}

    def _describe_available_resource(self, p: dict[str, str]) -> dict[str, Any]:
        if p["DestinationResource"] != "InstanceType":
            raise EcsError(400, "InvalidParameter", "The fake answers DestinationResource=InstanceType only.")
        types = [p["InstanceType"]] if p.get("InstanceType") else sorted(TYPES)
        zones = []
        for zone in (*ZONES, "cn-shanghai-g"):
            stock = "WithoutStock" if zone in self.no_stock else "WithStock"  # hidden_no_stock: said to have it
            rows = [{"Value": t, "Status": "Available" if stock == "WithStock" else "SoldOut",
                     "StatusCategory": stock} for t in types if t in TYPES]
            zones.append({"ZoneId": zone, "RegionId": REGION, "Status": "Available", "StatusCategory": stock,
                          "AvailableResources": {"AvailableResource": [
                              {"Type": "InstanceType", "SupportedResources": {"SupportedResource": rows}}]}})
        return {"AvailableZones": {"AvailableZone": zones}}

    def _describe_price(self, p: dict[str, str]) -> dict[str, Any]:
        if p.get("ResourceType", "instance") != "instance" or p.get("InstanceType") not in TYPES:
            raise EcsError(400, "InvalidInstanceType.NotFound", "The specified InstanceType does not exist.")
        listed, paid, spot = (Decimal(v) for v in TYPES[p["InstanceType"]])
        unit = p.get("PriceUnit", "Hour")
        if unit not in ("Hour", "Month", "Year"):
            raise EcsError(400, "InvalidPriceUnit.ValueNotSupported", "PriceUnit must be Hour, Month or Year.")
        if p.get("SpotStrategy") in ("SpotAsPriceGo", "SpotWithPriceLimit"):
            listed = paid = spot
        if unit != "Hour":
            scale = Decimal(500) * int(p.get("Period") or 1) * (12 if unit == "Year" else 1)
            listed, paid = listed * scale, paid * scale
        disk = Decimal("0.50")  # TEST VALUE: the system disk line, which the quote must leave out
        line = {"Resource": "instanceType", "OriginalPrice": float(listed), "DiscountPrice": float(listed - paid),
                "TradePrice": float(paid)}
        return {"PriceInfo": {"Price": {
            "OriginalPrice": float(listed + disk), "DiscountPrice": float(listed - paid),
            "TradePrice": float(paid + disk), "Currency": "CNY", "DetailInfos": {"DetailInfo": [
                line, {"Resource": "systemDisk", "OriginalPrice": float(disk), "DiscountPrice": 0.0,
                       "TradePrice": float(disk)}]}}, "Rules": {"Rule": []}}}

    def _describe_images(self, p: dict[str, str]) -> dict[str, Any]:
        rows = [{"ImageId": name, "ImageName": name.removesuffix(".vhd"), "CreationTime": when, "OSType": "linux",
                 "ImageOwnerAlias": "system", "Status": "Available"} for name, when in IMAGES]
        return {"Images": {"Image": rows}, "TotalCount": len(rows)}

    def _describe_key_pairs(self, p: dict[str, str]) -> dict[str, Any]:
        rows = [{"KeyPairName": n, "KeyPairFingerPrint": hashlib.md5(k.encode()).hexdigest()}
                for n, k in self.key_pairs.items() if p.get("KeyPairName") in (None, n)]
        return {"KeyPairs": {"KeyPair": rows}, "TotalCount": len(rows)}

    def _import_key_pair(self, p: dict[str, str]) -> dict[str, Any]:
        if p["KeyPairName"] in self.key_pairs:
            raise EcsError(400, "KeyPair.AlreadyExist", "The key pair already exist.")
        if not p["PublicKeyBody"].startswith(("ssh-ed25519 ", "ssh-rsa ", "ecdsa-sha2-")):
            raise EcsError(400, "InvalidPublicKeyBody.Malformed", "Specified public key body is malformed.")
        self.key_pairs[p["KeyPairName"]] = p["PublicKeyBody"]
        return {"KeyPairName": p["KeyPairName"], "KeyPairFingerPrint": "00"}

    def _describe_security_groups(self, p: dict[str, str]) -> dict[str, Any]:
        rows = [{"SecurityGroupId": gid, "SecurityGroupName": g["name"], "VpcId": g["vpc"]}
                for gid, g in self.groups.items() if p.get("VpcId") in (None, g["vpc"])
                and p.get("SecurityGroupName") in (None, g["name"])]
        return {"SecurityGroups": {"SecurityGroup": rows}, "TotalCount": len(rows)}

    def _create_security_group(self, p: dict[str, str]) -> dict[str, Any]:
        if p["VpcId"] not in {v for v, _ in ZONES.values()}:
            raise EcsError(404, "InvalidVpcId.NotFound", "The specified VpcId does not exist.")
        gid = "sg-" + uuid.uuid4().hex[:17]
        self.groups[gid] = {"name": p.get("SecurityGroupName", ""), "vpc": p["VpcId"], "rules": []}
        return {"SecurityGroupId": gid}

    def _authorize_security_group(self, p: dict[str, str]) -> dict[str, Any]:
        group = self.groups.get(p["SecurityGroupId"])
        if group is None:
            raise EcsError(404, "InvalidSecurityGroupId.NotFound", "The specified SecurityGroupId does not exist.")
        n = 1
        while f"Permissions.{n}.IpProtocol" in p:
            rule = {k.split(".", 2)[2]: v for k, v in p.items() if k.startswith(f"Permissions.{n}.")}
            if not rule.get("PortRange"):
                raise EcsError(400, "MissingParameter", f"Permissions.{n}.PortRange is mandatory.")
            group["rules"].append(rule)
            n += 1
        if n == 1:
            raise EcsError(400, "MissingParameter", "Permissions.1.IpProtocol is mandatory.")
        return {}

    def _run_instances(self, p: dict[str, str]) -> dict[str, Any]:
        token = p.get("ClientToken")
        if token and token in self.tokens:
            return {"InstanceIdSets": {"InstanceIdSet": self.tokens[token]}}
        if p["InstanceType"] not in TYPES:
            raise EcsError(400, "InvalidInstanceType.NotFound", "The specified InstanceType does not exist.")
        zone = p.get("ZoneId") or ""
        vsw = next((z for z, (_, s) in ZONES.items() if s == p["VSwitchId"]), None)
        if vsw is None or (zone and vsw != zone):
            raise EcsError(404, "InvalidVSwitchId.NotFound", "The VSwitchId provided does not exist in our records.")
        group = self.groups.get(p["SecurityGroupId"])
        if group is None or group["vpc"] != ZONES[vsw][0]:
            raise EcsError(400, "InvalidSecurityGroupId.NotFound", "The security group is not in the VSwitch's VPC.")
        if p["ImageId"] not in {n for n, _ in IMAGES}:
            raise EcsError(404, "InvalidImageId.NotFound", "The specified ImageId does not exist.")
        if p.get("KeyPairName") and p["KeyPairName"] not in self.key_pairs:
            raise EcsError(404, "InvalidKeyPairName.NotFound", "The specified KeyPairName does not exist.")
        self._check_release(p)
        if p.get("SpotStrategy") not in (None, "NoSpot", "SpotAsPriceGo", "SpotWithPriceLimit"):
            raise EcsError(400, "InvalidSpotStrategy", "The specified SpotStrategy is not valid.")
        if p.get("SpotStrategy") == "SpotWithPriceLimit" and not p.get("SpotPriceLimit"):
            raise EcsError(400, "InvalidSpotPriceLimit.LowerThanPublicPrice", "SpotPriceLimit is required.")
        if vsw in self.no_stock | self.hidden_no_stock:
            raise EcsError(403, "OperationDenied.NoStock", "Sales of this resource are temporarily suspended in the "
                                                           "specified region; please try again later.")
        if p.get("DryRun") == "true":
            raise EcsError(400, "DryRunOperation", "Request validation has been passed with DryRun flag set.")
        amount = int(p.get("Amount") or 1)
        if not 1 <= amount <= 100:
            raise EcsError(400, "InvalidAmount.ValueNotSupported", "Amount must be 1-100.")
        tags = {p[f"Tag.{n}.Key"]: p.get(f"Tag.{n}.Value", "") for n in range(1, 21) if f"Tag.{n}.Key" in p}
        ids = []
        for _ in range(amount):
            iid = "i-" + uuid.uuid4().hex[:20]
            self.instances[iid] = FakeInstance(iid, p["InstanceType"], vsw, dict(p), tags)
            ids.append(iid)
        if token:
            self.tokens[token] = ids
        return {"InstanceIdSets": {"InstanceIdSet": ids}}

    @staticmethod
    def _check_release(p: dict[str, str]) -> None:
        text = p.get("AutoReleaseTime")
        if text is None:
            return
        try:
            when = datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        except ValueError:
            raise EcsError(400, "InvalidAutoReleaseTime.Malformed", "The specified AutoReleaseTime is invalid.")
        now = datetime.now(UTC)
        if not now + timedelta(minutes=30) <= when <= now + timedelta(days=3 * 365):
            raise EcsError(400, "InvalidAutoReleaseTime.Malformed", "AutoReleaseTime must be 30 minutes to 3 years "
                                                                    "ahead.")
        if p.get("InstanceChargeType", "PostPaid") != "PostPaid":
            raise EcsError(400, "InvalidParameter.AutoReleaseTime", "Only pay-as-you-go instances release on time.")

    def _describe_instances(self, p: dict[str, str]) -> dict[str, Any]:
        wanted = json.loads(p["InstanceIds"]) if p.get("InstanceIds") else None
        tag = {p[f"Tag.{n}.Key"]: p.get(f"Tag.{n}.Value") for n in range(1, 21) if f"Tag.{n}.Key" in p}
        rows = []
        for n, i in enumerate(self.instances.values()):
            if wanted is not None and i.instance_id not in wanted:
                continue
            if any(k not in i.tags or (v is not None and i.tags[k] != v) for k, v in tag.items()):
                continue
            i.seen += 1
            if i.status == "Pending" and i.seen >= 2:
                i.status, i.public_ip, i.private_ip = "Running", f"198.51.100.{10 + n}", f"172.16.0.{10 + n}"
            rows.append({"InstanceId": i.instance_id, "Status": i.status, "InstanceType": i.instance_type,
                         "ZoneId": i.zone, "RegionId": REGION, "CreationTime": i.created,
                         "PublicIpAddress": {"IpAddress": [i.public_ip] if i.public_ip else []},
                         "VpcAttributes": {"PrivateIpAddress": {"IpAddress": [i.private_ip] if i.private_ip else []}},
                         "Tags": {"Tag": [{"TagKey": k, "TagValue": v} for k, v in i.tags.items()]}})
        size, page = int(p.get("PageSize") or 10), int(p.get("PageNumber") or 1)
        return {"Instances": {"Instance": rows[(page - 1) * size:page * size]}, "TotalCount": len(rows),
                "PageNumber": page, "PageSize": size}

    def _delete_instances(self, p: dict[str, str]) -> dict[str, Any]:
        ids = [p[f"InstanceId.{n}"] for n in range(1, 101) if f"InstanceId.{n}" in p]
        gone = [i for i in ids if i not in self.instances]
        if gone:
            raise EcsError(404, "InvalidInstanceId.NotFound", f"The specified InstanceId {gone[0]} does not exist.")
        running = [i for i in ids if self.instances[i].status != "Stopped"]
        if running and p.get("Force") != "true":
            raise EcsError(403, "IncorrectInstanceStatus", "The current status of the instance does not support this "
                                                           "operation (stop it, or Force=true).")
        for i in ids:
            del self.instances[i]
        return {}


@contextmanager
def fake_ecs_server(**options: Any) -> Iterator[FakeEcs]:
    """A started :class:`FakeEcs` for the block (wrap it in a pytest fixture)."""
    fake = FakeEcs(**options).start()
    try:
        yield fake
    finally:
        fake.stop()
