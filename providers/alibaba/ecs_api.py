"""One ECS API call through the official SDK (``alibabacloud-ecs20140526``), its faults turned into gpuplan errors.

The SDK's generic ``call_api`` is used with each action's own parameters (the ECS client's typed
methods build the same flattened query: ``Tag.1.Key``, ``SystemDisk.Size``), so one small wrapper
serves every action and the SDK still signs (V3, ACS3-HMAC-SHA256), picks the regional endpoint
and reads the credential chain. ``GPUPLAN_ALIBABA_ENDPOINT`` (``http://127.0.0.1:PORT`` or a
host) sends the calls elsewhere: a fake, a proxy. The SDK is imported only here, inside the calls.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from pricing.errors import (
    CapacityError,
    CredentialsError,
    GpuplanError,
    InputError,
    ProviderError,
)
from providers.alibaba.credentials import find
from providers.session import SECRETS

ENDPOINT_ENV = "GPUPLAN_ALIBABA_ENDPOINT"
VERSION = "2014-05-26"
# Codes that mean the key or its signature is wrong: exit 3 naming the variables, not a provider fault
CREDENTIAL_CODES = frozenset({"InvalidAccessKeyId.NotFound", "InvalidAccessKeyId.Inactive", "SignatureDoesNotMatch",
                              "IncompleteSignature", "InvalidSecurityToken.Expired", "InvalidSecurityToken.Malformed"})
# Codes that mean "not in stock here now": a zone failover moves on
NO_STOCK_CODES = frozenset({"OperationDenied.NoStock", "Zone.NotOnSale", "InvalidResourceType.NotSupported",
                            "OperationDenied.ZoneSystemCategoryNotMatch", "InvalidInstanceType.ZoneNotSupported"})


class DryRunPassed(Exception):
    """RunInstances with DryRun answered DryRunOperation: the request would succeed."""


class AlibabaApiError(ProviderError):
    """An ECS error answer, with its code (e.g. ``InvalidInstanceId.NotFound``) for callers that act on it."""

    def __init__(self, message: str, hint: str = "", *, code: str = "") -> None:
        super().__init__(message, hint)
        self.code = code


class EcsApi:
    """ECS of one region; the SDK client is made on the first call."""

    def __init__(self, region: str) -> None:
        self.region = region
        self._client: Any = None

    @property
    def endpoint(self) -> str:
        return os.environ.get(ENDPOINT_ENV, "").strip()

    def _sdk(self) -> Any:
        if self._client is None:
            from alibabacloud_ecs20140526.client import Client
            from alibabacloud_tea_openapi.utils_models import Config

            found = find()
            config = Config(region_id=self.region, access_key_id=found.access_key_id,
                            access_key_secret=found.access_key_secret, security_token=found.security_token,
                            connect_timeout=10_000, read_timeout=60_000)
            if found.access_key_id is None:  # a role or URI: the SDK's own default chain resolves it
                from alibabacloud_credentials.client import Client as Credentials

                config = Config(region_id=self.region, credential=Credentials(), connect_timeout=10_000,
                                read_timeout=60_000)
            if self.endpoint:
                url = urlsplit(self.endpoint if "//" in self.endpoint else "https://" + self.endpoint)
                config.endpoint, config.protocol = url.netloc, url.scheme or "https"
            self._client = Client(config)
        return self._client

    def call(self, action: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """The answer's body for ``action`` with ``params`` (nested lists/dicts are flattened as the SDK does)."""
        from alibabacloud_tea_openapi.utils import Utils
        from alibabacloud_tea_openapi.utils_models import OpenApiRequest, Params
        from darabonba.runtime import RuntimeOptions

        client = self._sdk()
        spec = Params(action=action, version=VERSION, protocol="HTTPS", pathname="/", method="POST", auth_type="AK",
                      style="RPC", req_body_type="formData", body_type="json")
        request = OpenApiRequest(query=Utils.query(_plain({"RegionId": self.region, **params})))
        try:
            # bounded: 3 attempts on throttling and 5xx, as the SDK's retry policy does them
            answer = client.call_api(spec, request, RuntimeOptions(autoretry=True, max_attempts=3))
        except GpuplanError:
            raise
        except Exception as exc:  # noqa: BLE001 (the SDK raises its own tree and requests' errors; mapped here)
            raise self._error(action, exc) from None
        body = answer.get("body") if isinstance(answer, dict) else None
        if not isinstance(body, dict):
            raise ProviderError(f"Alibaba Cloud ECS {action} answered without a JSON body", "try again later")
        return body

    def _error(self, action: str, exc: Exception) -> GpuplanError:
        code = str(getattr(exc, "code", "") or "")
        # the SDK's message reads "code: 400, <message> request id: <id>"; a secret never appears in it, but
        # everything said goes through the scrubber anyway
        message = SECRETS.scrub(str(getattr(exc, "message", "") or exc))
        if code == "DryRunOperation":
            return _DryRun()
        if code in CREDENTIAL_CODES:
            return CredentialsError(f"Alibaba Cloud refused the credentials ({code})",
                                    "check ALIBABA_CLOUD_ACCESS_KEY_ID and ALIBABA_CLOUD_ACCESS_KEY_SECRET (or the "
                                    "~/.aliyun/config.json profile): the pair must be an active AccessKey of a RAM "
                                    "user that may use ECS")
        if code in NO_STOCK_CODES:
            err = CapacityError(f"Alibaba Cloud ECS {action}: {code}: {message}", "try another zone or region")
            err.code = code  # type: ignore[attr-defined]
            return err
        if code.startswith(("Forbidden", "NoPermission")):
            return CredentialsError(f"Alibaba Cloud ECS {action} is not allowed for this key ({code})",
                                    "grant the RAM user AliyunECSFullAccess (or ecs:RunInstances, DescribeInstances, "
                                    "DeleteInstances, ImportKeyPair, security group and vSwitch reads)")
        if code.startswith(("InvalidParameter", "MissingParameter", "Invalid")) and not code.endswith("NotFound"):
            return _ApiInput(f"Alibaba Cloud ECS {action} refused the request ({code}): {message}", code=code)
        if code:
            return AlibabaApiError(f"Alibaba Cloud ECS {action} failed ({code}): {message}", "try again later",
                                   code=code)
        where = f" at {ENDPOINT_ENV}={self.endpoint}" if self.endpoint else ""
        return ProviderError(f"Alibaba Cloud ECS {action} could not be reached{where}: {type(exc).__name__}: "
                             f"{message}", "check the network (and the endpoint), then try again")


def _plain(value: Any) -> Any:
    """Booleans as the API spells them ("true"/"false"; the SDK's flattening would send "True")."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


class _DryRun(DryRunPassed, GpuplanError):
    def __init__(self) -> None:
        GpuplanError.__init__(self, "dry run passed")


class _ApiInput(InputError):
    def __init__(self, message: str, *, code: str) -> None:
        super().__init__(message, "check the instance type, image, zone and disk size against the region")
        self.code = code
