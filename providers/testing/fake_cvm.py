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

import hmac
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from providers.testing.fake_billing import BillingActions
from providers.testing.fake_cvm_actions import CvmActions
from providers.testing.fake_cvm_state import (  # noqa: F401 - the names tests and examples import from here
    _AUTH,
    CHARGE_TYPES,
    PERIOD_DISCOUNT,
    PERIODS,
    POSTPAID,
    PREPAID,
    RENEW_FLAGS,
    SPOTPAID,
    TEST_REGION,
    TEST_SECRET_ID,
    TEST_SECRET_KEY,
    ApiError,
    FakeCall,
    FakeInstance,
    FakeOffer,
    _epoch,
    _Fault,
    default_images,
    default_offers,
    expected_signature,
)


class FakeCvm(CvmActions, BillingActions):
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
        known = match["service"] in ("cvm", "vpc", "billing")
        if not (date_ok and known and hmac.compare_digest(want, match["sig"])):
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


@contextmanager
def fake_cvm_server(**options: Any) -> Iterator[FakeCvm]:
    """A started :class:`FakeCvm` for the block (wrap it in a pytest fixture)."""
    fake = FakeCvm(**options).start()
    try:
        yield fake
    finally:
        fake.stop()
