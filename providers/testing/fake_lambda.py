"""A strict fake of Lambda Cloud's public API v1 on 127.0.0.1, for tests and for trying the Lambda side offline.

Strict where a real account is: every call must carry ``Authorization: Bearer <key>`` with the
test key (else 401 ``global/invalid-api-key``); request bodies are JSON objects with exactly the
documented fields and types (an unknown field is a 400 ``global/invalid-parameters``); a launch
needs exactly one *registered* SSH key name, a known type and a region with capacity (else 400
``instance-operations/launch/insufficient-capacity``); SSH key names are unique; terminating an
id the account does not hold is a 404 ``global/object-does-not-exist``. Answers are
``{"data": ...}`` or ``{"error": {"code", "message", "suggestion"}}``, as Lambda's.

Instances boot (``booting``) and are ``active`` with an address from the second listing on;
``terminate`` makes them ``terminated`` (kept in the list one listing more, then gone).

Every price below is a TEST VALUE chosen for readable assertions, not a Lambda price; shapes
(vCPU, memory, GPUs) follow Lambda's instance types as SkyPilot's catalog lists them.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TEST_API_KEY = "secret_gpuplan-fake-lambda-key_0123456789abcdef"  # never a real key

# name -> (description, price_cents_per_hour TEST VALUE, vcpus, memory_gib, storage_gib, gpus, regions with capacity)
TYPES: dict[str, tuple[str, int, int, int, int, int, tuple[str, ...]]] = {
    "gpu_1x_a10": ("1x A10 (24 GB PCIe)", 100, 30, 200, 1400, 1, ("us-east-1", "us-west-1")),
    "gpu_1x_h100_pcie": ("1x H100 (80 GB PCIe)", 300, 26, 200, 1000, 1, ("us-west-3",)),
    "gpu_8x_a100_80gb_sxm4": ("8x A100 (80 GB SXM4)", 1600, 240, 1800, 20000, 8, ()),
}
LAUNCH_FIELDS = {"region_name": str, "instance_type_name": str, "ssh_key_names": list, "file_system_names": list,
                 "quantity": int, "name": str, "user_data": str}


@dataclass
class FakeInstance:
    id: str
    name: str
    type: str
    region: str
    ssh_key: str
    status: str = "booting"
    ip: str | None = None
    private_ip: str | None = None
    seen: int = 0  # listings since launch: booting on the first, active from the second


@dataclass
class FakeLambda:
    """The fake's state (inspect it in tests) and its server."""

    key: str = TEST_API_KEY
    capacity: dict[str, list[str]] = field(default_factory=lambda: {t: list(v[6]) for t, v in TYPES.items()})
    ssh_keys: dict[str, str] = field(default_factory=dict)  # name -> public key
    instances: dict[str, FakeInstance] = field(default_factory=dict)
    calls: list[tuple[str, str]] = field(default_factory=list)  # (method, path) of every authorized call
    bodies: list[dict[str, Any]] = field(default_factory=list)  # every POST body received
    # Faults to inject: route -> HTTP statuses answered (and used up) before the route answers normally
    faults: dict[str, list[int]] = field(default_factory=dict)
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def endpoint(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/api/v1"

    def live(self) -> list[FakeInstance]:
        return [i for i in self.instances.values() if i.status not in ("terminated", "terminating")]

    def start(self) -> FakeLambda:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                self._serve("GET", None)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                self._serve("POST", body if isinstance(body, dict) else None)

            def _serve(self, method: str, body: dict[str, Any] | None) -> None:
                if self.headers.get("Authorization") != f"Bearer {fake.key}":
                    self._send(401, _error("global/invalid-api-key", "API key was invalid, expired, or deleted."))
                    return
                with fake._lock:
                    status, payload = fake.handle(method, self.path, body)
                self._send(status, payload)

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    # -- the API --

    def handle(self, method: str, path: str, body: dict[str, Any] | None) -> tuple[int, dict[str, Any]]:
        route = path.split("?")[0].removeprefix("/api/v1")
        self.calls.append((method, route))
        if self.faults.get(route):
            status = self.faults[route].pop(0)
            return status, _error("global/rate-limited" if status == 429 else "global/internal-error", "Injected.")
        if method == "POST":
            if body is None:
                return 400, _error("global/invalid-parameters", "The request body must be a JSON object.")
            self.bodies.append(body)
        handler = {("GET", "/instance-types"): self._types, ("GET", "/ssh-keys"): self._keys,
                   ("POST", "/ssh-keys"): self._add_key, ("POST", "/instance-operations/launch"): self._launch,
                   ("GET", "/instances"): self._list,
                   ("POST", "/instance-operations/terminate"): self._terminate}.get((method, route))
        if handler is None:
            return 404, _error("global/object-does-not-exist", f"No such endpoint: {method} {route}")
        return handler(body or {})

    def _types(self, _: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        out = {}
        for name, (desc, cents, vcpus, mem, disk, gpus, _regions) in TYPES.items():
            out[name] = {"instance_type": {"name": name, "description": desc, "price_cents_per_hour": cents,
                                           "specs": {"vcpus": vcpus, "memory_gib": mem, "storage_gib": disk,
                                                     "gpus": gpus}},
                         "regions_with_capacity_available": [{"name": r, "description": r}
                                                             for r in self.capacity.get(name, [])]}
        return 200, {"data": out}

    def _keys(self, _: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        return 200, {"data": [{"id": f"key-{n}", "name": n, "public_key": k} for n, k in self.ssh_keys.items()]}

    def _add_key(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if set(body) - {"name", "public_key"} or not isinstance(body.get("name"), str) or not body["name"]:
            return 400, _error("global/invalid-parameters", "Expected exactly a name and a public_key.")
        if body["name"] in self.ssh_keys:
            return 400, _error("global/invalid-parameters", "An SSH key with this name already exists.")
        public = body.get("public_key")
        if not isinstance(public, str) or not public.startswith(("ssh-ed25519 ", "ssh-rsa ", "ecdsa-sha2-")):
            return 400, _error("global/invalid-parameters", "public_key is not an OpenSSH public key.")
        self.ssh_keys[body["name"]] = public.strip()
        return 200, {"data": {"id": f"key-{body['name']}", "name": body["name"], "public_key": public.strip()}}

    def _launch(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        for name, value in body.items():
            kind = LAUNCH_FIELDS.get(name)
            if kind is None or not isinstance(value, kind) or isinstance(value, bool):
                return 400, _error("global/invalid-parameters", f"Invalid or unknown field: {name}.")
        for required in ("region_name", "instance_type_name", "ssh_key_names"):
            if required not in body:
                return 400, _error("global/invalid-parameters", f"Missing required field: {required}.")
        keys, kind, region = body["ssh_key_names"], body["instance_type_name"], body["region_name"]
        quantity = body.get("quantity", 1)
        if len(keys) != 1:
            return 400, _error("global/invalid-parameters", "Exactly one SSH key must be specified.")
        if keys[0] not in self.ssh_keys:
            return 404, _error("global/object-does-not-exist", f"SSH key {keys[0]!r} does not exist.")
        if kind not in TYPES:
            return 404, _error("global/object-does-not-exist", f"Instance type {kind!r} does not exist.")
        if not 1 <= quantity <= 8 or len(body.get("name", "")) > 64:
            return 400, _error("global/invalid-parameters", "quantity must be 1-8 and name at most 64 characters.")
        if region not in self.capacity.get(kind, []):
            return 400, _error("instance-operations/launch/insufficient-capacity",
                               "Not enough capacity to fulfill launch request.",
                               "Choose an instance type with available capacity.")
        ids = []
        for _ in range(quantity):
            iid = uuid.uuid4().hex
            self.instances[iid] = FakeInstance(id=iid, name=body.get("name", ""), type=kind, region=region,
                                               ssh_key=keys[0])
            ids.append(iid)
        return 200, {"data": {"instance_ids": ids}}

    def _list(self, _: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        out = []
        for n, i in enumerate(list(self.instances.values())):
            i.seen += 1
            if i.status == "booting" and i.seen >= 2:
                i.status, i.ip, i.private_ip = "active", f"203.0.113.{10 + n}", f"10.0.0.{10 + n}"
            if i.status == "terminated" and i.seen > 1:
                continue  # Lambda forgets terminated instances
            out.append(self._view(i))
        return 200, {"data": out}

    def _view(self, i: FakeInstance) -> dict[str, Any]:
        return {"id": i.id, "name": i.name, "status": i.status, "ip": i.ip, "private_ip": i.private_ip,
                "ssh_key_names": [i.ssh_key], "file_system_names": [],
                "region": {"name": i.region, "description": i.region},
                "instance_type": {"name": i.type, "description": TYPES[i.type][0],
                                  "price_cents_per_hour": TYPES[i.type][1]}, "hostname": f"{i.id[:8]}.lambda"}

    def _terminate(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        ids = body.get("instance_ids")
        if set(body) != {"instance_ids"} or not isinstance(ids, list) or not ids:
            return 400, _error("global/invalid-parameters", "Expected exactly a non-empty instance_ids list.")
        gone = [i for i in ids if i not in self.instances or self.instances[i].status == "terminated"]
        if gone:
            return 404, _error("global/object-does-not-exist", f"Instance {gone[0]} does not exist.")
        for i in ids:
            self.instances[i].status, self.instances[i].seen = "terminated", 0
        return 200, {"data": {"terminated_instances": [self._view(self.instances[i]) for i in ids]}}


def _error(code: str, message: str, suggestion: str | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, **({"suggestion": suggestion} if suggestion else {})}}


@contextmanager
def fake_lambda_server(**options: Any) -> Iterator[FakeLambda]:
    """A started :class:`FakeLambda` for the block (wrap it in a pytest fixture)."""
    fake = FakeLambda(**options).start()
    try:
        yield fake
    finally:
        fake.stop()
