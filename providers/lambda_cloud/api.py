"""Lambda Cloud's public API v1 over the standard library: the API key, one call, its errors.

No SDK: Lambda publishes none for Python, and the API is five JSON endpoints (the same ones
SkyPilot's ``sky/provision/lambda_cloud/lambda_utils.py`` uses). The key comes from
``LAMBDA_API_KEY`` or SkyPilot's file ``~/.lambda_cloud/lambda_keys`` (``api_key = ...``), is
sent only as an ``Authorization: Bearer`` header, and is added to the process's secret scrubber
before the first call, so no message, hint or log line can carry it.

Retries: a GET, and any call Lambda refused with 429 (rate limited: nothing was done), are tried
again within bounds. A POST whose answer was lost (a dropped connection) is not: a launch may
have started machines, and the caller finds them by name instead.
"""

from __future__ import annotations

import json
import os
import random
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pricing.errors import (
    CapacityError,
    CredentialsError,
    GpuplanError,
    InputError,
    ProviderError,
)
from providers.session import (
    SECRETS,
    RetriesExhausted,
    RetryPolicy,
    Sleep,
    Transient,
    network_cause,
    with_retries,
)

ENDPOINT = "https://cloud.lambda.ai/api/v1"  # Lambda's documented base URL (cloud.lambdalabs.com also answers)
ENDPOINT_ENV = "GPUPLAN_LAMBDA_ENDPOINT"
KEY_ENV = "LAMBDA_API_KEY"
KEY_FILE = Path("~/.lambda_cloud/lambda_keys")  # SkyPilot's: lines "api_key = KEY"
TIMEOUT_S = 30.0
POLICY = RetryPolicy()

# Lambda's error codes (the "error.code" of a non-200 answer) that mean something to the user.
CAPACITY_CODES = ("instance-operations/launch/insufficient-capacity",)
QUOTA_CODES = ("global/quota-exceeded",)
AUTH_CODES = ("global/invalid-api-key", "global/account-inactive")
INPUT_CODES = ("global/invalid-parameters", "global/object-does-not-exist", "instance-operations/launch/file-system")


class LambdaApiError(ProviderError):
    """An error answer from Lambda, with its code (``global/object-does-not-exist``, ...) kept for callers."""

    def __init__(self, message: str, hint: str | None = None, *, code: str = "", status: int = 0) -> None:
        super().__init__(message, hint)
        self.code = code
        self.status = status


def api_key(home: Path | None = None) -> str:
    """The API key: ``LAMBDA_API_KEY``, else SkyPilot's key file; a CredentialsError naming both if neither has one."""
    key = os.environ.get(KEY_ENV, "").strip()
    if not key:
        path = (home / ".lambda_cloud" / "lambda_keys") if home is not None else KEY_FILE.expanduser()
        try:
            text = path.read_text(encoding="utf-8")
        except OSError:
            text = ""
        for line in text.splitlines():
            name, sep, value = line.partition("=")
            if sep and name.strip() == "api_key" and value.strip():
                key = value.strip()
                break
    if not key:
        raise CredentialsError("no Lambda Cloud API key found",
                               f"set {KEY_ENV} (cloud.lambda.ai > API keys), or put `api_key = KEY` in "
                               "~/.lambda_cloud/lambda_keys (the file SkyPilot reads)")
    SECRETS.remember(key)
    return key


def endpoint() -> str:
    """The API's base URL: ``GPUPLAN_LAMBDA_ENDPOINT`` (a host alone gets Lambda's ``/api/v1``), else Lambda's."""
    url = (os.environ.get(ENDPOINT_ENV, "").strip() or ENDPOINT).rstrip("/")
    return url if urllib.parse.urlsplit(url).path else url + "/api/v1"


class LambdaApi:
    """One account's Lambda Cloud API (Lambda's API is account-wide: every region through one endpoint)."""

    def __init__(self, key: str | None = None, *, base: str | None = None, sleep: Sleep | None = None) -> None:
        self._key = key if key is not None else api_key()
        SECRETS.remember(self._key)
        self.base = (base or endpoint()).rstrip("/")
        self._sleep = sleep or time.sleep

    def get(self, path: str) -> Any:
        return self._call("GET", path, None)

    def post(self, path: str, body: Mapping[str, Any]) -> Any:
        return self._call("POST", path, body)

    def _call(self, method: str, path: str, body: Mapping[str, Any] | None) -> Any:
        def attempt() -> Any:
            return self._once(method, path, body)

        try:
            return with_retries(attempt, POLICY, sleep=self._sleep, rng=random.random)
        except RetriesExhausted as exc:
            raise ProviderError(f"Lambda Cloud {method} {path} failed {exc.attempts} time(s): {exc.last}",
                                "try again later (status: status.lambda.ai)") from None

    def _once(self, method: str, path: str, body: Mapping[str, Any] | None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.base + path, data=data, method=method, headers={
            "Authorization": f"Bearer {self._key}", "Accept": "application/json",
            **({"Content-Type": "application/json"} if data is not None else {}),
            "User-Agent": "gpuplan",
        })
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_S) as answer:
                raw = answer.read()
        except urllib.error.HTTPError as err:
            raw = err.read()
            if err.code == 429 or (err.code >= 500 and method == "GET"):
                raise Transient(f"HTTP {err.code}") from None
            raise self._error(method, path, err.code, raw) from None
        except (urllib.error.URLError, OSError) as err:
            why = network_cause(SECRETS.scrub(str(getattr(err, "reason", err))))
            if method == "GET":
                raise Transient(why) from None
            raise ProviderError(f"Lambda Cloud {method} {path}: {why}; the call may or may not have been carried out",
                                "run `gpuplan ls`: a launch that went through is found by its name") from None
        try:
            return json.loads(raw)["data"]
        except (ValueError, KeyError, TypeError):
            raise ProviderError(f"Lambda Cloud {method} {path} answered without a JSON 'data' field",
                                f"check {ENDPOINT_ENV} if set; try again later") from None

    @staticmethod
    def _error(method: str, path: str, status: int, raw: bytes) -> GpuplanError:
        try:
            error = json.loads(raw).get("error") or {}
        except (ValueError, AttributeError):
            error = {}
        code = str(error.get("code") or f"HTTP {status}")
        message = SECRETS.scrub(str(error.get("message") or "no message"))[:300]
        suggestion = SECRETS.scrub(str(error.get("suggestion") or ""))[:200] or None
        what = f"Lambda Cloud {method} {path}: {message} ({code})"
        if status in (401, 403) or code in AUTH_CODES:
            return CredentialsError(what, f"check {KEY_ENV} or ~/.lambda_cloud/lambda_keys: the key may be revoked")
        if code in CAPACITY_CODES:
            return CapacityError(what, suggestion or "try another region or instance type, or later")
        if code in QUOTA_CODES:
            return CapacityError(what, suggestion or "ask Lambda support to raise the account's limit")
        if code == "global/object-does-not-exist":  # callers that end machines take this as "already gone"
            return LambdaApiError(what, suggestion, code=code, status=status)
        if code in INPUT_CODES or status in (400, 404):
            return InputError(what, suggestion)
        return LambdaApiError(what, suggestion or "try again later", code=code, status=status)
