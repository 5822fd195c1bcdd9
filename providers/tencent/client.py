"""The one way into the Tencent Cloud CVM API: credentials, endpoint, bounded retries, error mapping.

Tencent's side of the pattern every cloud follows (:mod:`providers.session`): the retry loop,
the code-table lookup and the secret scrubber are the shared ones; the credential chain, the
endpoint, the code table and the words of each message are Tencent's. Every call goes through
:meth:`CvmApi.call`, so the rules live in one place:

- credentials come from the SDK's own providers (environment, profile file, CVM instance role);
- ``GPUPLAN_TENCENT_ENDPOINT`` points the SDK at another endpoint (the local fake, a proxy);
- throttling and network faults are retried with exponential backoff and full jitter, bounded
  in attempts and in total sleep, with an injectable ``sleep`` so tests never wait;
- API errors become gpuplan's exception tree (exit codes the CLI returns unchanged), and an
  answer that is not the API's JSON is an error, never an empty success;
- SecretId and SecretKey never reach a message, a hint or a log record: every text raised is
  scrubbed, and the SDK's own debug log (which prints the Authorization header) is filtered.

The SDK is imported inside functions only: planning imports nothing of it. The SDK ships no
type hints, hence the ``import-untyped`` ignores on those imports.
"""

from __future__ import annotations

import json
import logging
import os
import random
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar
from urllib.parse import urlsplit

from pricing.errors import CapacityError, CredentialsError, GpuplanError, InputError, ProviderError
from providers.session import (
    SECRETS,
    ErrorCodes,
    Failure,
    RetriesExhausted,
    RetryPolicy,
    Sleep,
    UNREACHABLE,
    Transient,
    network_cause,
    with_retries,
)
from providers.tencent import ENDPOINT_ENV, INSTANCE_ROLE_ENV, SECRET_ID_ENV, SECRET_KEY_ENV

log = logging.getLogger("gpuplan.tencent")

SDK_LOGGER = "tencentcloud_sdk_common"  # tencentcloud.common.abstract_client.LOGGER_NAME
# the APIs gpuplan calls: instances, the security group launches join, and the bill (spend --billed)
SERVICES = ("cvm", "vpc", "billing")
# The SDK's one reqTimeout (60 s) bounds the connect and every read alike; requests takes a pair. A CVM call
# answers in about a second, so 20 s without a byte is a fault, and a retried RunInstances is safe (ClientToken).
CONNECT_TIMEOUT_S = 5.0
READ_TIMEOUT_S = 20.0

SOLD_OUT_PREFIXES = ("ResourceInsufficient", "ResourcesSoldOut")
CODES = ErrorCodes.of(
    exact={
        Failure.PERMISSION: ["AuthFailure.UnauthorizedOperation"],
        # The codes the SDK itself treats as transient (tencentcloud.common.retry.StandardRetryer).
        Failure.NETWORK: ["ClientNetworkError", "ServerNetworkError"],
    },
    prefixes={
        Failure.CREDENTIALS: ["AuthFailure"],
        Failure.CAPACITY: SOLD_OUT_PREFIXES,
        Failure.QUOTA: ["LimitExceeded"],
        Failure.INPUT: ["InvalidParameter", "MissingParameter", "InvalidZone", "InvalidPeriod", "InvalidInstanceType",
                        "InvalidImageId", "InvalidClientToken", "InvalidFilter", "UnsupportedRegion"],
        # Tencent adds RequestLimitExceeded.* variants per limit kind.
        Failure.THROTTLED: ["RequestLimitExceeded"],
    },
)
_CREDENTIAL_HINT = (
    f"set {SECRET_ID_ENV} and {SECRET_KEY_ENV}, or write ~/.tencentcloud/credentials; "
    "keys are managed at https://console.cloud.tencent.com/cam/capi"
)


# --- errors that keep what the API said -------------------------------------------------------


class ApiFailure:
    """What the API answered, for callers that branch on it (terminate, zone failover)."""

    code: str = ""
    request_id: str = ""
    action: str = ""


class TencentCredentialsError(CredentialsError, ApiFailure):
    """The API rejected the key, or the key may not call the action."""


class TencentCapacityError(CapacityError, ApiFailure):
    """Sold out in a zone, or a quota reached."""

    zone: str | None = None

    @property
    def sold_out(self) -> bool:
        """Stock, not quota: another zone may still have it."""
        return self.code.startswith(SOLD_OUT_PREFIXES)


class TencentInputError(InputError, ApiFailure):
    """The API refused a parameter: the user's input (or gpuplan's) is wrong, retrying cannot help."""


class TencentApiError(ProviderError, ApiFailure):
    """Any other refusal or fault of the API, after the bounded retries."""


class DryRunPassed(GpuplanError, ApiFailure):
    """``DryRunOperation``: the request would have succeeded (Tencent answers a passing DryRun so)."""


E = TypeVar("E", bound=GpuplanError)


# --- secrets never leave ------------------------------------------------------------------------

SECRETS.guard(SDK_LOGGER, log.name)  # the SDK's debug log prints the Authorization header and request bodies


def _secrets_of(cred: Any) -> tuple[str, ...]:
    try:
        info = cred.get_credential_info()
    except Exception:  # a role credential that cannot refresh: nothing to hide yet
        return ()
    return tuple(str(s) for s in info if s)


# --- credentials ----------------------------------------------------------------------------------


def _role_enabled(instance_role: bool | None) -> bool:
    if instance_role is not None:
        return instance_role
    return os.environ.get(INSTANCE_ROLE_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def _instance_role_credential(timeout_s: float) -> Any | None:
    """A CAM role key from the CVM metadata service, or None off a CVM.

    The SDK asks the metadata service with no timeout; a thread with a bounded join keeps a
    laptop on a network that resolves ``metadata.tencentyun.com`` oddly from hanging.
    """
    from tencentcloud.common import credential as tc  # type: ignore[import-untyped]

    found: list[Any] = []

    def probe() -> None:
        try:
            cred = tc.CVMRoleCredential().get_credential()
        except Exception:
            return
        if cred is not None:
            found.append(cred)

    worker = threading.Thread(target=probe, name="gpuplan-tencent-role", daemon=True)
    worker.start()
    worker.join(timeout_s)
    return found[0] if found else None


def load_credential(*, instance_role: bool | None = None, role_timeout_s: float = 2.0) -> Any:
    """The SDK's credential chain: environment, then ``~/.tencentcloud/credentials``, then the instance role.

    Equivalent to ``tencentcloud.common.credential.DefaultCredentialProvider`` minus its TKE OIDC
    step (which raises ``EnvironmentError`` outside TKE) and with a bounded metadata probe.
    ``instance_role=False`` (or ``GPUPLAN_TENCENT_INSTANCE_ROLE=0``) skips the probe.
    """
    from tencentcloud.common import credential as tc  # type: ignore[import-untyped,unused-ignore]

    cred = tc.EnvironmentVariableCredential().get_credential()
    if cred is not None:
        return cred
    try:
        cred = tc.ProfileCredential().get_credential()
    except Exception:
        raise CredentialsError("the Tencent Cloud credentials file (~/.tencentcloud/credentials) cannot be read",
                               "fix the [default] secret_id / secret_key lines, or " + _CREDENTIAL_HINT) from None
    if cred is not None:
        return cred
    if _role_enabled(instance_role):
        cred = _instance_role_credential(role_timeout_s)
        if cred is not None:
            return cred
    has_id, has_key = bool(os.environ.get(SECRET_ID_ENV)), bool(os.environ.get(SECRET_KEY_ENV))
    if has_id != has_key:
        missing, present = (SECRET_KEY_ENV, SECRET_ID_ENV) if has_id else (SECRET_ID_ENV, SECRET_KEY_ENV)
        raise CredentialsError(f"no Tencent Cloud credentials: {missing} is not set ({present} is)", _CREDENTIAL_HINT)
    raise CredentialsError(f"no Tencent Cloud credentials: set {SECRET_ID_ENV} and {SECRET_KEY_ENV}",
                           "or write ~/.tencentcloud/credentials, or run on a CVM with a CAM role; "
                           "keys are managed at https://console.cloud.tencent.com/cam/capi")


# --- endpoint -------------------------------------------------------------------------------------


def parse_endpoint(url: str) -> tuple[str, str]:
    """(protocol, host[:port]) from an endpoint URL; https when no scheme is given.

    The SDK wants the bare host in ``HttpProfile.endpoint`` (it becomes the signed Host header)
    and the scheme apart, so ``http://127.0.0.1:8765`` is split here.
    """
    text = url.strip()
    if "://" not in text:
        text = "https://" + text
    hint = f"{ENDPOINT_ENV} takes a URL such as http://127.0.0.1:8765 or https://cvm.tencentcloudapi.com"
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        raise InputError(f"{ENDPOINT_ENV} is not a valid URL", hint) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(f"{ENDPOINT_ENV} must be an http(s) URL with a host", hint)
    if parts.username or parts.password:
        raise InputError(f"{ENDPOINT_ENV} must not carry a user or password", hint)
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return parts.scheme, host if port is None else f"{host}:{port}"


# --- the client -----------------------------------------------------------------------------------


def _zone_of(params: Mapping[str, Any]) -> str | None:
    placement = params.get("Placement")
    zone = placement.get("Zone") if isinstance(placement, Mapping) else None
    return zone if isinstance(zone, str) else None


class CvmApi:
    """A CVM client for one region: ``call(action, params)`` returns the ``Response`` object.

    ``credential`` is an SDK credential object (tests pass one; by default :func:`load_credential`);
    ``endpoint`` overrides ``GPUPLAN_TENCENT_ENDPOINT``; ``sleep`` and ``rng`` make retries testable.
    """

    def __init__(
        self,
        region: str,
        *,
        credential: Any | None = None,
        endpoint: str | None = None,
        timeout_s: float = READ_TIMEOUT_S,
        retry: RetryPolicy | None = None,
        sleep: Sleep = time.sleep,
        rng: Callable[[], float] = random.random,
        instance_role: bool | None = None,
        language: str = "en-US",
        service: str = "cvm",
    ) -> None:
        if not region or not region.strip():
            raise InputError("a Tencent Cloud region is needed, e.g. ap-guangzhou")
        if service not in SERVICES:
            raise InputError(f"gpuplan speaks no Tencent Cloud service {service!r}", f"one of {', '.join(SERVICES)}")
        self.service = service
        self.label = f"Tencent {service.upper()}"
        self.region = region.strip()
        self.retry = retry or RetryPolicy()
        self._sleep = sleep
        self._rng = rng
        self._cred = credential if credential is not None else load_credential(instance_role=instance_role)
        SECRETS.remember(*_secrets_of(self._cred))
        chosen = endpoint if endpoint is not None else os.environ.get(ENDPOINT_ENV, "").strip() or None
        self.endpoint = chosen
        self.host = parse_endpoint(chosen)[1] if chosen else f"{service}.tencentcloudapi.com"
        self._client = self._sdk_client(chosen, timeout_s, language)

    def account(self) -> str:
        """``host/key-<fingerprint>``: where calls go and a hash of the SecretId (an instance role's keys rotate, so
        it is named by the role); "" when the credential cannot say."""
        import hashlib

        host = "tencentcloudapi.com" if self.host.endswith(".tencentcloudapi.com") else self.host
        if "Role" in type(self._cred).__name__:
            return f"{host}/instance-role"
        secret_id = str(getattr(self._cred, "secret_id", "") or "")
        if not secret_id:
            return ""
        return f"{host}/key-{hashlib.sha256(secret_id.encode()).hexdigest()[:12]}"

    def __repr__(self) -> str:  # never the credential
        return f"CvmApi(region={self.region!r}, endpoint={self.endpoint or 'default'!r})"

    def _sdk_client(self, endpoint: str | None, timeout_s: float, language: str) -> Any:
        from tencentcloud.common.profile.client_profile import ClientProfile  # type: ignore[import-untyped]
        from tencentcloud.common.profile.http_profile import HttpProfile  # type: ignore[import-untyped]
        from tencentcloud.cvm.v20170312 import cvm_client  # type: ignore[import-untyped]

        timeouts = (min(CONNECT_TIMEOUT_S, timeout_s), timeout_s)  # passed through to requests as (connect, read)
        if endpoint:
            protocol, host = parse_endpoint(endpoint)
            http = HttpProfile(protocol=protocol, endpoint=host, reqMethod="POST", reqTimeout=timeouts)
        else:
            http = HttpProfile(reqMethod="POST", reqTimeout=timeouts)
        # English error messages: they end up in gpuplan's one-line errors.
        profile = ClientProfile(httpProfile=http, language=language)
        if self.service == "cvm":
            return cvm_client.CvmClient(self._cred, self.region, profile)
        return _common_client_class(self.service)(self._cred, self.region, profile)

    # -- helpers for callers --

    def scrub(self, text: str) -> str:
        return SECRETS.scrub(text)

    def _error(self, cls: type[E], message: str, hint: str | None = None, *, code: str = "",
               request_id: str = "", action: str = "", zone: str | None = None) -> E:
        err = cls(self.scrub(message), self.scrub(hint) if hint else None)
        if isinstance(err, ApiFailure):
            err.code, err.request_id, err.action = code, request_id, action
        if isinstance(err, TencentCapacityError):
            err.zone = zone
        return err

    # -- the call --

    def call(self, action: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Run ``action`` and return its ``Response`` object (with ``RequestId``), or raise a GpuplanError."""
        import requests
        from tencentcloud.common.exception.tencent_cloud_sdk_exception import (  # type: ignore[import-untyped]
            TencentCloudSDKException,
        )

        body = dict(params or {})
        json.dumps(body)  # a parameter that is not JSON is gpuplan's bug: fail here, not as a "bad answer" below

        def attempt() -> dict[str, Any]:
            try:
                raw = self._client.call_json(action, body)
            except TencentCloudSDKException as exc:
                code = str(exc.get_code() or "")
                message = str(exc.get_message() or "")
                failure = CODES.kind_of(code)
                if failure is Failure.NETWORK:
                    # ServerNetworkError is any non-200 status (the SDK keeps no status code; Tencent answers
                    # API errors with 200, so it comes from a gateway: 5xx in practice). Its message is the
                    # raw HTTP body, an HTML page, which stays out of ours.
                    raise Transient("the endpoint answered with an HTTP error" if code == "ServerNetworkError"
                                    else f"network error reaching {self.host}: {network_cause(message)}") from None
                if failure is Failure.THROTTLED:
                    raise Transient(f"rate limited ({code})") from None
                raise self._mapped(action, body, code, message, str(exc.get_request_id() or "")) from None
            except requests.RequestException as exc:  # the body broke off while it was read
                raise Transient(f"network error reaching {self.host}: {network_cause(repr(exc))}") from None
            except (ValueError, KeyError, TypeError, AttributeError):
                raise self._error(TencentApiError, f"{self.label} {action} answered with something that is not the "
                                  "API's JSON", "check GPUPLAN_TENCENT_ENDPOINT and any proxy between here and "
                                  "Tencent Cloud", action=action) from None
            return self._unwrap(action, body, raw)

        def on_retry(tried: int, why: str, wait: float) -> None:
            log.debug("tencent %s attempt %d/%d failed (%s); retrying in %.2fs",
                      action, tried, self.retry.attempts, self.scrub(why), wait)

        earlier = UNREACHABLE.why(self.host)
        if earlier is not None:
            raise self._error(TencentApiError, f"{self.label} {action} not tried: an earlier call of this command "
                              f"got no answer ({earlier})",
                              "check the network and GPUPLAN_TENCENT_ENDPOINT, then run the command again",
                              action=action)
        try:
            return with_retries(attempt, self.retry, sleep=self._sleep, rng=self._rng, on_retry=on_retry)
        except RetriesExhausted as exc:
            if exc.last.startswith("network error"):  # no answer at all (a 5xx page or throttling is an answer)
                UNREACHABLE.mark(self.host, exc.last)
            raise self._error(TencentApiError, f"{self.label} {action} failed {exc.attempts} times: {exc.last}",
                              "Tencent Cloud is throttling or unreachable; wait a minute and try again",
                              action=action) from None

    def _unwrap(self, action: str, params: Mapping[str, Any], raw: Any) -> dict[str, Any]:
        response = raw.get("Response") if isinstance(raw, dict) else None
        if not isinstance(response, dict):
            raise self._error(TencentApiError, f"{self.label} {action} answered without a Response object",
                              "check GPUPLAN_TENCENT_ENDPOINT", action=action)
        error = response.get("Error")
        request_id = response.get("RequestId")
        if isinstance(error, dict):
            # The SDK parses errors only for an exact application/json content type; catch the rest here.
            raise self._mapped(action, params, str(error.get("Code") or ""), str(error.get("Message") or ""),
                               str(request_id or ""))
        if not isinstance(request_id, str) or not request_id:
            raise self._error(TencentApiError, f"{self.label} {action} answered without a RequestId (a cut-off "
                              "or foreign answer)", "try again; check GPUPLAN_TENCENT_ENDPOINT", action=action)
        return response

    def _mapped(self, action: str, params: Mapping[str, Any], code: str, message: str,
                request_id: str) -> GpuplanError:
        where = f"RequestId {request_id}" if request_id else "no RequestId"
        zone = _zone_of(params)
        kind = params.get("InstanceType") if isinstance(params.get("InstanceType"), str) else None
        common = {"code": code, "request_id": request_id, "action": action}
        if code == "DryRunOperation":
            return self._error(DryRunPassed, f"dry run of {action} passed", **common)
        failure = CODES.kind_of(code)
        if failure is Failure.PERMISSION:
            allowed = f"{self.service}:{action}"
            return self._error(TencentCredentialsError, f"the Tencent Cloud key may not call {allowed} "
                               f"({code}, {where})", f"grant it a CAM policy allowing {allowed}", **common)
        if code == "AuthFailure.SignatureExpire":
            return self._error(TencentCredentialsError, f"Tencent Cloud rejected the request as expired "
                               f"({code}, {where})", "this machine's clock is over 5 minutes off; sync it", **common)
        if failure is Failure.CREDENTIALS:
            return self._error(TencentCredentialsError, f"Tencent Cloud rejected the API key ({code}, {where})",
                               "check " + _CREDENTIAL_HINT.removeprefix("set "), **common)
        if failure is Failure.CAPACITY:
            what = kind or "the instance type"
            return self._error(TencentCapacityError, f"{what} is sold out{' in ' + zone if zone else ''} "
                               f"({code}: {message}; {where})", "try another zone, region or billing mode",
                               zone=zone, **common)
        if failure is Failure.QUOTA:
            quota = code.partition(".")[2] or "quota"
            return self._error(TencentCapacityError, f"Tencent Cloud quota reached: {quota} ({message}; {where})",
                               "raise the quota in the CVM console, or ask for fewer or smaller instances",
                               zone=zone, **common)
        if code == "InvalidAccount.InsufficientBalance":
            return self._error(TencentApiError, f"the Tencent Cloud account balance is too low for {action} "
                               f"({code}, {where})", "top up the account", **common)
        if failure is Failure.INPUT:
            return self._error(TencentInputError, f"{self.label} {action} refused the request: {message} "
                               f"({code}, {where})", **common)
        # Throttling or a network fault reported in an answer's body (not retried there) lands here too.
        return self._error(TencentApiError, f"{self.label} {action} failed: {code or 'no code'}: {message} ({where})",
                           **common)

# API version of each service gpuplan calls through the common SDK alone (CVM has its own package).
_API_VERSIONS = {"vpc": "2017-03-12", "billing": "2018-07-09"}


def _common_client_class(service: str) -> Any:
    """A client of the VPC (security groups) or billing API built on the common SDK alone: calls go through
    call_json, so gpuplan needs no models package for them, only the API's name, version and endpoint."""
    from tencentcloud.common.abstract_client import AbstractClient  # type: ignore[import-untyped]

    class CommonClient(AbstractClient):  # type: ignore[misc]
        _apiVersion = _API_VERSIONS[service]
        _endpoint = f"{service}.tencentcloudapi.com"
        _service = service

    return CommonClient


ApiFactory = Callable[[str], CvmApi]


def default_api(region: str) -> CvmApi:
    """A :class:`CvmApi` for ``region`` with the environment's credentials and endpoint."""
    return CvmApi(region)
