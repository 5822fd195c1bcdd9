"""The fake CVM's state: its TEST offers and images, machines, recorded calls, injected faults, errors, and the
TC3-HMAC-SHA256 signature it checks (see :mod:`providers.testing.fake_cvm`)."""

from __future__ import annotations

import hashlib
import hmac
import re
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from providers.testing.fake_api import ApiError  # noqa: F401 - raised by the actions, caught by the server

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


def _epoch(stamp: Any) -> float:
    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()
