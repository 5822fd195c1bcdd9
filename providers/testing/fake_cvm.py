"""A fake Tencent Cloud CVM endpoint on 127.0.0.1 that the real tencentcloud SDK talks to.

Shipped with the adapter so that anyone can try the Tencent side without an account
(``examples/fake_cvm_server.py``), and so the tests run offline; it needs only the standard
library, and nothing in gpuplan uses it unless asked.

It checks TC3-HMAC-SHA256 signatures (reimplemented here from Tencent's signature v3 spec,
not borrowed from the SDK), answers ``Content-Type: application/json`` exactly (the SDK
parses errors only then) with ``{"Response": {..., "RequestId"}}`` shapes, keeps instances
with a small state machine, and injects faults: throttling, sold-out zones, HTTP 5xx, slow,
non-JSON and cut-off answers, launch failures, any error code.

Every price below is a TEST VALUE chosen for readable assertions, not a Tencent price.
Instance shapes (vCPU, memory, GPU count) follow Tencent's instance-type docs
(cloud.tencent.com/document/product/560/19700, read 2026-12-02).

Use it as a context manager (``with FakeCvm() as fake: fake.endpoint``), through
:func:`fake_cvm_server` in a pytest fixture, or from ``examples/fake_cvm_server.py``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TEST_SECRET_ID = "gpuplan-FAKE-test-secret-id-not-a-key"
TEST_SECRET_KEY = "gpuplanFAKEtestKEY00000000000000"  # never a real key: signatures only
TEST_REGION = "ap-guangzhou"

POSTPAID, PREPAID, SPOTPAID = "POSTPAID_BY_HOUR", "PREPAID", "SPOTPAID"
CHARGE_TYPES = (POSTPAID, PREPAID, SPOTPAID)
PERIODS = frozenset((*range(1, 13), 24, 36, 48, 60))
RENEW_FLAGS = frozenset({"NOTIFY_AND_AUTO_RENEW", "NOTIFY_AND_MANUAL_RENEW", "DISABLE_NOTIFY_AND_MANUAL_RENEW"})
# Duration discount the fake applies to PREPAID periods (percent paid), shaped like CVM's general
# table (6-11 months 88, 1 year 83, 2 years 70, 3+ years 50); TEST VALUES.
PERIOD_DISCOUNT = {6: 88, 12: 83, 24: 70, 36: 50}
_ID = re.compile(r"ins-[0-9a-z]{8}")
_AUTH = re.compile(r"TC3-HMAC-SHA256 Credential=(?P<sid>[^/]+)/(?P<date>\d{4}-\d{2}-\d{2})/(?P<service>[^/]+)"
                   r"/tc3_request, SignedHeaders=(?P<signed>[a-z0-9;-]+), Signature=(?P<sig>[0-9a-f]{64})")


@dataclass
class FakeOffer:
    """One instance type in one zone, with its TEST prices and per-charge-type stock."""

    zone: str
    instance_type: str
    cpu: int
    memory: int
    gpu_count: float
    hourly: Decimal | None = None
    monthly: Decimal | None = None
    spot: Decimal | None = None
    tiers: tuple[Decimal, Decimal] | None = None  # pay-as-you-go price for hours 96-360 and over 360
    discount: int = 100  # percent this account pays of the list price (hourly and monthly)
    status: dict[str, str] = field(default_factory=dict)  # charge type -> SELL / SOLD_OUT (default SELL)

    @property
    def family(self) -> str:
        return self.instance_type.split(".")[0]

    def sells(self, charge: str) -> bool:
        return self.price_of(charge) is not None and self.status.get(charge, "SELL") == "SELL"

    def price_of(self, charge: str) -> Decimal | None:
        return {POSTPAID: self.hourly, PREPAID: self.monthly, SPOTPAID: self.spot}.get(charge)


def default_offers() -> list[FakeOffer]:
    """A few real GPU types in ap-guangzhou-3/-4 and ap-shanghai-2, with TEST prices."""
    d = Decimal
    return [
        FakeOffer("ap-guangzhou-3", "GN10Xp.2XLARGE40", 10, 40, 1, d("10.00"), d("5000"), d("2.00")),
        FakeOffer("ap-guangzhou-3", "GN10Xp.20XLARGE320", 80, 320, 8, d("80.00"), d("40000"), d("16.00"),
                  tiers=(d("40.00"), d("27.20"))),
        FakeOffer("ap-guangzhou-3", "GN7.2XLARGE32", 8, 32, 1, d("7.00"), d("2000"), d("1.40"), discount=90),
        FakeOffer("ap-guangzhou-4", "GN10Xp.2XLARGE40", 10, 40, 1, d("11.00"), d("5500"), d("2.20")),
        FakeOffer("ap-guangzhou-4", "GN10Xp.20XLARGE320", 80, 320, 8, d("88.00"), d("44000"), None),
        FakeOffer("ap-guangzhou-4", "GN7.2XLARGE32", 8, 32, 1, d("7.50"), d("2100"), d("1.50"),
                  status={POSTPAID: "SOLD_OUT", PREPAID: "SOLD_OUT", SPOTPAID: "SOLD_OUT"}),
        FakeOffer("ap-guangzhou-4", "S5.LARGE8", 4, 8, 0, d("0.50"), d("150"), d("0.10")),  # a CPU type
        FakeOffer("ap-shanghai-2", "GN10Xp.2XLARGE40", 10, 40, 1, d("12.00"), d("6000"), d("2.40")),
        FakeOffer("ap-shanghai-2", "GN7.2XLARGE32", 8, 32, 1, d("8.00"), d("2200"), d("1.60")),
    ]


def default_images() -> list[dict[str, Any]]:
    """Public images the fake knows (ids and dates are TEST VALUES)."""

    def image(iid: str, name: str, created: str, arch: str = "x86_64", platform: str = "Ubuntu") -> dict[str, Any]:
        return {"ImageId": iid, "OsName": name, "ImageName": name, "ImageType": "PUBLIC_IMAGE",
                "CreatedTime": created, "Architecture": arch, "ImageState": "NORMAL", "Platform": platform,
                "ImageSource": "OFFICIAL", "ImageSize": 20, "IsSupportCloudinit": True, "ImageDescription": name,
                "ImageCreator": "", "LicenseType": "TencentCloud", "Tags": [], "ImageDeprecated": False}

    return [
        image("img-ubu22old", "Ubuntu Server 22.04 LTS 64bit", "2024-03-01T08:00:00Z"),
        image("img-ubu22new", "Ubuntu Server 22.04 LTS 64bit", "2026-06-01T08:00:00Z"),
        image("img-ubu22arm", "Ubuntu Server 22.04 LTS 64bit", "2026-09-01T08:00:00Z", arch="arm"),
        image("img-ubu20xxx", "Ubuntu Server 20.04 LTS 64bit", "2026-10-01T08:00:00Z"),
        image("img-tlinux31", "TencentOS Server 3.1 (TK4)", "2026-10-01T08:00:00Z", platform="TencentOS"),
    ]


@dataclass
class FakeInstance:
    instance_id: str
    instance_type: str
    zone: str
    region: str
    charge_type: str
    image_id: str
    name: str
    tags: dict[str, str]
    client_token: str | None
    created: str
    state: str = "PENDING"
    will_fail: bool = False
    seen: int = 0  # describes since the last state change
    since: float = field(default_factory=time.monotonic)
    user_data: str | None = None
    hpc_cluster_id: str | None = None
    action_time: str | None = None  # ActionTimer TerminateInstances: the cloud destroys the machine then
    private_ip: str = ""
    public_ip: str | None = None
    cpu: int = 0
    memory: int = 0
    gpu_count: float = 0
    key_ids: tuple[str, ...] = ()
    security_groups: tuple[str, ...] = ("sg-fake0001",)  # the VPC's default group when none is named
    cam_role: str | None = None  # RunInstances.CamRoleName: the metadata service hands out its temporary keys


@dataclass
class FakeCall:
    action: str
    region: str
    params: dict[str, Any]
    outcome: str = "ok"  # ok, or the error code / fault kind answered


@dataclass
class _Fault:
    kind: str  # throttle, http, non_json, cut_json, cut_connection, slow, error
    remaining: int
    action: str | None
    code: str = ""
    message: str = ""
    status: int = 503
    seconds: float = 0.0
    content_type: str = "text/html"


class ApiError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(code)
        self.code, self.message = code, message


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _hmac(key: bytes, msg: str) -> bytes:
    return hmac.new(key, msg.encode("utf-8"), hashlib.sha256).digest()


def expected_signature(secret_key: str, *, method: str, path: str, query: str, headers: dict[str, str],
                       signed: list[str], body: bytes, timestamp: int, service: str) -> str:
    """TC3-HMAC-SHA256 per Tencent's signature v3 doc (API 213/30654): canonical request, string, key chain."""
    canonical_headers = "".join(f"{h}:{headers.get(h, '').strip().lower()}\n" for h in signed)
    payload = "UNSIGNED-PAYLOAD" if headers.get("x-tc-content-sha256") == "UNSIGNED-PAYLOAD" else _sha256(body)
    canonical = "\n".join([method, path, query, canonical_headers, ";".join(signed), payload])
    date = datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d")
    to_sign = "\n".join(["TC3-HMAC-SHA256", str(timestamp), f"{date}/{service}/tc3_request",
                         _sha256(canonical.encode("utf-8"))])
    key = _hmac(_hmac(_hmac(("TC3" + secret_key).encode("utf-8"), date), service), "tc3_request")
    return hmac.new(key, to_sign.encode("utf-8"), hashlib.sha256).hexdigest()


class FakeCvm:
    """The fake endpoint and its state; ``calls`` and ``instances`` are there for assertions."""

    def __init__(
        self,
        *,
        secret_id: str = TEST_SECRET_ID,
        secret_key: str = TEST_SECRET_KEY,
        offers: list[FakeOffer] | None = None,
        images: list[dict[str, Any]] | None = None,
        pending_describes: int = 1,
        pending_seconds: float | None = None,
        terminating_describes: int = 1,
        hpc_clusters: dict[str, str] | None = None,  # HpcClusterId -> zone
        instance_quota: int | None = None,
        dry_run_style: str = "error",  # "error": DryRunOperation; "success": a plain answer with only RequestId
        host: str = "127.0.0.1",
        port: int = 0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.keys = {secret_id: secret_key}
        self.offers = offers if offers is not None else default_offers()
        self.images = images if images is not None else default_images()
        self.pending_describes = pending_describes
        self.pending_seconds = pending_seconds
        self.terminating_describes = terminating_describes
        self.hpc_clusters = hpc_clusters or {}
        self.instance_quota = instance_quota
        self.dry_run_style = dry_run_style
        self.clock = clock
        self.calls: list[FakeCall] = []
        self.instances: dict[str, FakeInstance] = {}
        self.tokens: dict[str, list[str]] = {}
        self.key_pairs: dict[str, dict[str, str]] = {}  # KeyId -> {"KeyName", "PublicKey", "Region"}
        # the VPC API's security groups (GPUPLAN_TENCENT_ENDPOINT sends every service here): id -> group
        self.security_groups: dict[str, dict[str, Any]] = {}
        self.tokens_of: dict[str, str] = {}  # temporary SecretId -> the session token it must come with
        self._faults: list[_Fault] = []
        self._launch_failures = 0
        self._counter = 0
        self._lock = threading.RLock()
        self._address = (host, port)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle --

    def start(self) -> FakeCvm:
        fake = self

        class Handler(_Handler):
            owner = fake

        server = ThreadingHTTPServer(self._address, Handler)
        server.daemon_threads = True
        server.handle_error = lambda request, client_address: None  # type: ignore[method-assign]
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-cvm", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeCvm:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, "start the fake first"
        return int(self._server.server_address[1])

    @property
    def endpoint(self) -> str:
        """What GPUPLAN_TENCENT_ENDPOINT takes."""
        return f"http://127.0.0.1:{self.port}"

    # -- fault injection --

    def _add(self, fault: _Fault) -> None:
        with self._lock:
            self._faults.append(fault)

    def throttle(self, n: int, *, action: str | None = None, code: str = "RequestLimitExceeded") -> None:
        """The next ``n`` (matching) calls answer a RequestLimitExceeded error."""
        self._add(_Fault("throttle", n, action, code=code))

    def http_error(self, n: int = 1, *, status: int = 503, action: str | None = None) -> None:
        """The next ``n`` calls answer HTTP ``status`` with an HTML page, as a gateway does."""
        self._add(_Fault("http", n, action, status=status))

    def non_json(self, n: int = 1, *, action: str | None = None, content_type: str = "application/json") -> None:
        """The next ``n`` calls answer HTTP 200 with an HTML body under ``content_type``."""
        self._add(_Fault("non_json", n, action, content_type=content_type))

    def cut_json(self, n: int = 1, *, action: str | None = None) -> None:
        """The next ``n`` calls do their work but answer only the first half of the JSON."""
        self._add(_Fault("cut_json", n, action))

    def cut_connection(self, n: int = 1, *, action: str | None = None) -> None:
        """The next ``n`` calls do their work, promise a full body and close the connection halfway."""
        self._add(_Fault("cut_connection", n, action))

    def slow(self, seconds: float, n: int = 1, *, action: str | None = None) -> None:
        """The next ``n`` calls wait ``seconds`` before answering."""
        self._add(_Fault("slow", n, action, seconds=seconds))

    def fail_next(self, code: str, message: str = "injected error", n: int = 1, *, action: str | None = None) -> None:
        """The next ``n`` (matching) calls answer the error ``code``."""
        self._add(_Fault("error", n, action, code=code, message=message))

    def fail_launches(self, n: int = 1) -> None:
        """The next ``n`` instances end LAUNCH_FAILED instead of RUNNING."""
        with self._lock:
            self._launch_failures += n

    def set_status(self, zone: str, status: str, instance_type: str | None = None,
                   charge_types: tuple[str, ...] = CHARGE_TYPES) -> None:
        with self._lock:
            for offer in self.offers:
                if offer.zone == zone and instance_type in (None, offer.instance_type):
                    for charge in charge_types:
                        offer.status[charge] = status

    def sell_out(self, zone: str, instance_type: str | None = None,
                 charge_types: tuple[str, ...] = CHARGE_TYPES) -> None:
        """``zone`` (or one type in it) answers SOLD_OUT and RunInstances fails with ResourcesSoldOut."""
        self.set_status(zone, "SOLD_OUT", instance_type, charge_types)

    def restock(self, zone: str, instance_type: str | None = None) -> None:
        self.set_status(zone, "SELL", instance_type)

    # -- assertions --

    def calls_of(self, action: str) -> list[FakeCall]:
        with self._lock:
            return [c for c in self.calls if c.action == action]

    def live_instances(self) -> list[FakeInstance]:
        with self._lock:
            self._fire_timers()
            return list(self.instances.values())

    def _fire_timers(self) -> None:
        """Destroy every machine whose ActionTimer time has come, as the cloud does with no client running."""
        now = self.clock()
        for iid, inst in list(self.instances.items()):
            if inst.action_time is not None and _epoch(inst.action_time) <= now:
                del self.instances[iid]

    # -- request handling (called by the HTTP handler) --

    @property
    def regions(self) -> set[str]:
        return {o.zone.rsplit("-", 1)[0] for o in self.offers} | {TEST_REGION}

    def _next_fault(self, action: str, kinds: tuple[str, ...]) -> _Fault | None:
        with self._lock:
            for fault in self._faults:
                if fault.remaining > 0 and fault.kind in kinds and fault.action in (None, action):
                    fault.remaining -= 1
                    return fault
        return None

    def authenticate(self, method: str, path: str, query: str, headers: dict[str, str], body: bytes) -> None:
        match = _AUTH.fullmatch(headers.get("authorization", ""))
        if match is None:
            raise ApiError("AuthFailure.InvalidAuthorization", "The Authorization header is invalid.")
        secret_key = self.keys.get(match["sid"])
        if secret_key is None:
            raise ApiError("AuthFailure.SecretIdNotFound",
                           "The SecretId is not found, please ensure that your SecretId is correct.")
        if match["sid"] in self.tokens_of and headers.get("x-tc-token") != self.tokens_of[match["sid"]]:
            raise ApiError("AuthFailure.TokenFailure", "The temporary key needs its X-TC-Token.")
        try:
            timestamp = int(headers.get("x-tc-timestamp", ""))
        except ValueError:
            raise ApiError("MissingParameter", "The request is missing a valid X-TC-Timestamp.") from None
        if abs(self.clock() - timestamp) > 300:
            raise ApiError("AuthFailure.SignatureExpire", "Signature expired, the timestamp is more than 5 "
                           "minutes off the server time.")
        signed = match["signed"].split(";")
        if "host" not in signed or "content-type" not in signed:
            raise ApiError("AuthFailure.SignatureFailure", "SignedHeaders must include content-type and host.")
        want = expected_signature(secret_key, method=method, path=path, query=query, headers=headers, signed=signed,
                                  body=body, timestamp=timestamp, service=match["service"])
        date_ok = match["date"] == datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d")
        if not (date_ok and match["service"] in ("cvm", "vpc") and hmac.compare_digest(want, match["sig"])):
            raise ApiError("AuthFailure.SignatureFailure", "The provided credentials could not be validated. "
                           "Please check your signature is correct.")

    def handle(self, action: str, region: str, params: dict[str, Any]) -> dict[str, Any]:
        if region not in self.regions:
            raise ApiError("UnsupportedRegion", f"The region {region} is not supported by the fake.")
        method = getattr(self, f"_do_{action}", None)
        if method is None:
            raise ApiError("InvalidAction", f"The action {action} is not implemented by the fake CVM.")
        with self._lock:
            self._fire_timers()
            result: dict[str, Any] = method(region, params)
            return result

    # -- the metadata service of one machine --

    def metadata_url(self, instance_id: str) -> str:
        """What the machine ``instance_id`` reads as http://metadata.tencentyun.com/latest/meta-data/."""
        return f"{self.endpoint}/_metadata/{instance_id}/latest/meta-data/"

    def metadata(self, instance_id: str, path: str) -> str | None:
        """The metadata answer for ``path``, or None (404): the instance id, region, and its CAM role's
        temporary keys (the JSON tencentcloud-sdk-python's CVMRoleCredential reads)."""
        with self._lock:
            inst = self.instances.get(instance_id)
            if inst is None:
                return None
            if path == "instance-id":
                return inst.instance_id
            if path == "placement/region":
                return inst.region
            prefix = "cam/security-credentials/"
            if path.startswith(prefix) and inst.cam_role and path[len(prefix):] == inst.cam_role:
                self._counter += 1
                sid, key, token = f"tmp-{self._counter:08x}", uuid.uuid4().hex, uuid.uuid4().hex
                self.keys[sid], self.tokens_of[sid] = key, token
                return json.dumps({"TmpSecretId": sid, "TmpSecretKey": key, "Token": token,
                                   "ExpiredTime": int(self.clock()) + 7200, "Code": "Success"})
            return None

    # -- actions --

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
                hpc_cluster_id=params.get("HpcClusterId"), action_time=action_time, private_ip=f"10.0.0.{self._counter % 250 + 2}",
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
            "SecurityGroupIds": list(i.security_groups), "LoginSettings": {"KeyIds": list(i.key_ids) or None}, "InstanceState": i.state,
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
                 for k, v in self.key_pairs.items() if v["Region"] == region and (names is None or v["KeyName"] in names)]
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


class _Handler(BaseHTTPRequestHandler):
    owner: FakeCvm
    server_version = "FakeCVM/1.0"

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read the fake's state instead
        return

    def _send(self, status: int, body: bytes, content_type: str = "application/json", *,
              declared: int | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)  # exactly application/json: the SDK's error parsing needs it
        self.send_header("Content-Length", str(declared if declared is not None else len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()
        self.close_connection = True

    def _json(self, response: dict[str, Any], request_id: str) -> bytes:
        return json.dumps({"Response": {**response, "RequestId": request_id}}, ensure_ascii=False).encode("utf-8")

    def do_GET(self) -> None:
        if self.path.startswith("/_metadata/"):
            instance_id, _, rest = self.path[len("/_metadata/"):].partition("/latest/meta-data/")
            answer = self.owner.metadata(instance_id, rest)
            if answer is None:
                self._send(404, b"not found", "text/plain")
            else:
                self._send(200, answer.encode("utf-8"), "text/plain")
            return
        request_id = str(uuid.uuid4())
        error = {"Error": {"Code": "UnsupportedProtocol", "Message": "The fake CVM speaks POST only."}}
        self._send(200, self._json(error, request_id))

    def do_POST(self) -> None:
        fake = self.owner
        request_id = str(uuid.uuid4())
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        action = headers.get("x-tc-action", "")
        region = headers.get("x-tc-region", "")
        path, _, query = self.path.partition("?")
        try:
            params = json.loads(body or b"{}")
            if not isinstance(params, dict):
                raise ValueError
        except ValueError:
            params = {}
        call = FakeCall(action=action, region=region, params=params)
        with fake._lock:
            fake.calls.append(call)
        try:
            fake.authenticate("POST", path or "/", query, headers, body)
            slow = fake._next_fault(action, ("slow",))
            if slow is not None:
                time.sleep(slow.seconds)
            fault = fake._next_fault(action, ("throttle", "http", "non_json", "error", "cut_json", "cut_connection"))
            if fault is not None and fault.kind == "throttle":
                raise ApiError(fault.code, "Your current request times exceed the frequency limit. "
                               "Please reduce the frequency of calls.")
            if fault is not None and fault.kind == "error":
                raise ApiError(fault.code, fault.message)
            if fault is not None and fault.kind == "http":
                call.outcome = f"http {fault.status}"
                page = f"<html><body><h1>{fault.status} Service Unavailable</h1></body></html>".encode()
                self._send(fault.status, page, "text/html")
                return
            if fault is not None and fault.kind == "non_json":
                call.outcome = "non_json"
                self._send(200, b"<html><body>Service temporarily unavailable</body></html>", fault.content_type)
                return
            answer = self._json(fake.handle(action, region, params), request_id)
            if fault is not None and fault.kind == "cut_json":
                call.outcome = "cut_json"
                self._send(200, answer[: len(answer) // 2])
                return
            if fault is not None and fault.kind == "cut_connection":
                call.outcome = "cut_connection"
                self._send(200, answer[: len(answer) // 2], declared=len(answer))
                return
            self._send(200, answer)
        except ApiError as err:
            call.outcome = err.code
            self._send(200, self._json({"Error": {"Code": err.code, "Message": err.message}}, request_id))


def _epoch(stamp: Any) -> float:
    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()


@contextmanager
def fake_cvm_server(**options: Any) -> Iterator[FakeCvm]:
    """A started :class:`FakeCvm` for the block (wrap it in a pytest fixture)."""
    fake = FakeCvm(**options).start()
    try:
        yield fake
    finally:
        fake.stop()
