"""Terminate this CVM from inside it, with its CAM role's temporary credentials (stdlib only).

Sent to the machine by gpuplan's boot script and run there with python3; never imported by gpuplan
itself except by tests. The credentials come from the metadata service at the moment of the call
(the path tencentcloud-sdk-python's CVMRoleCredential reads), so nothing secret is ever written to
the machine. Requests are signed TC3-HMAC-SHA256 (Tencent Cloud API 3.0 signature v3).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import sys
import time
import urllib.request
from datetime import datetime, timezone  # not datetime.UTC: Ubuntu 22.04's python3 is 3.10
from urllib.parse import urlsplit

METADATA = "http://metadata.tencentyun.com/latest/meta-data/"
API = "https://cvm.tencentcloudapi.com"


def _hmac(key: bytes, msg: str) -> bytes:
    return hmac.new(key, msg.encode("utf-8"), hashlib.sha256).digest()


def signed_headers(*, secret_id: str, secret_key: str, token: str, host: str, action: str, region: str,
                   body: bytes, timestamp: int, service: str = "cvm", version: str = "2017-03-12") -> dict[str, str]:
    """The headers of one signed POST of ``body`` to ``host``."""
    content_type = "application/json; charset=utf-8"
    canonical = "\n".join(["POST", "/", "", f"content-type:{content_type}\nhost:{host}\n", "content-type;host",
                           hashlib.sha256(body).hexdigest()])
    date = datetime.fromtimestamp(timestamp, timezone.utc).strftime("%Y-%m-%d")
    scope = f"{date}/{service}/tc3_request"
    to_sign = "\n".join(["TC3-HMAC-SHA256", str(timestamp), scope, hashlib.sha256(canonical.encode()).hexdigest()])
    key = _hmac(_hmac(_hmac(("TC3" + secret_key).encode("utf-8"), date), service), "tc3_request")
    signature = hmac.new(key, to_sign.encode("utf-8"), hashlib.sha256).hexdigest()
    headers = {
        "Authorization": f"TC3-HMAC-SHA256 Credential={secret_id}/{scope}, SignedHeaders=content-type;host, "
                         f"Signature={signature}",
        "Content-Type": content_type, "Host": host, "X-TC-Action": action, "X-TC-Version": version,
        "X-TC-Timestamp": str(timestamp), "X-TC-Region": region,
    }
    if token:
        headers["X-TC-Token"] = token
    return headers


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        return str(response.read().decode("utf-8"))


def main() -> int:
    metadata = os.environ.get("GPUPLAN_METADATA_URL") or METADATA
    api = os.environ.get("GPUPLAN_TENCENT_API") or API
    role, region = os.environ["GPUPLAN_CAM_ROLE"], os.environ["GPUPLAN_REGION"]
    instance = _get(metadata + "instance-id").strip()
    creds = json.loads(_get(metadata + "cam/security-credentials/" + role))
    body = json.dumps({"InstanceIds": [instance]}).encode("utf-8")
    headers = signed_headers(secret_id=creds["TmpSecretId"], secret_key=creds["TmpSecretKey"],
                             token=creds.get("Token", ""), host=urlsplit(api).netloc, action="TerminateInstances",
                             region=region, body=body, timestamp=int(time.time()))
    request = urllib.request.Request(api.rstrip("/") + "/", data=body, headers=headers, method="POST")
    with urllib.request.urlopen(request, timeout=30) as response:
        answer = json.loads(response.read().decode("utf-8")).get("Response", {})
    if "Error" in answer:
        print(f"TerminateInstances {instance}: {answer['Error'].get('Code')}: {answer['Error'].get('Message')}")
        return 1
    print(f"TerminateInstances {instance}: accepted (RequestId {answer.get('RequestId')})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
