"""boto3 sessions and clients for gpuplan, and the one place AWS errors become gpuplan errors.

AWS's side of the pattern every cloud follows (:mod:`providers.session`): the code-table
lookup and the secret scrubber are the shared ones; the credential chain, the retries
(botocore's own) and the words of each message are AWS's.

Credentials come only from the standard boto3 chain (environment, ``--profile``, SSO,
``~/.aws``, container and instance roles); gpuplan never takes, prints, logs or stores a
secret. ``AWS_ENDPOINT_URL`` (or ``AWS_ENDPOINT_URL_EC2``...) is honoured by botocore
itself, which is how a moto server or a private endpoint is reached.

Throttling (``RequestLimitExceeded``, ``Throttling``) is retried by botocore's
"standard" retry mode, with exponential backoff and a bounded number of attempts: a
CLI command must end, so after ``max_attempts`` retries the throttle surfaces as a
:class:`ProviderError` that says to wait and retry.

boto3 is imported inside functions only: importing this module costs nothing, so the
planner can list providers without loading an SDK.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from pricing.errors import (
    CapacityError,
    CredentialsError,
    GpuplanError,
    InputError,
    ProviderError,
)
from providers.session import SECRETS, UNREACHABLE, ErrorCodes, Failure, network_cause

# botocore's retries "max_attempts" counts retries after the first call (it sets total_max_attempts = N + 1).
# Standard mode waits up to 20 s with jitter between tries: 5 retries ride out a burst of throttling
# while still ending a CLI command within about a minute.
DEFAULT_MAX_ATTEMPTS = 5
# botocore waits 60 s to connect and 60 s for each read, so an endpoint that accepts and never answers held a
# command for 6 tries x 60 s (362 s measured). EC2 and the Price List API answer in seconds; a read that takes
# 20 s is a fault, and a retried RunInstances is safe (ClientToken), so a silent endpoint ends within 6 x 25 s.
CONNECT_TIMEOUT_S = 5.0
READ_TIMEOUT_S = 20.0
PRICING_REGION = "us-east-1"  # the Price List API lives in us-east-1 (and ap-south-1) whatever region is priced

CREDENTIALS_HINT = ("set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary keys), "
                    "or AWS_PROFILE=NAME for a profile in ~/.aws/config (`catalog refresh` also takes --profile NAME)")

# EC2 vCPU quotas by instance family letter: (Service Quotas name, quota code when checked).
# Codes for P and G were read in two independent public sources; the others are named only.
_ON_DEMAND_QUOTAS: dict[str, tuple[str, str | None]] = {
    "p": ("Running On-Demand P instances", "L-417A185B"),
    "g": ("Running On-Demand G and VT instances", "L-DB2E81BA"),
    "vt": ("Running On-Demand G and VT instances", "L-DB2E81BA"),
    "dl": ("Running On-Demand DL instances", None),
    "inf": ("Running On-Demand Inf instances", None),
    "trn": ("Running On-Demand Trn instances", None),
    "f": ("Running On-Demand F instances", None),
    "x": ("Running On-Demand X instances", None),
}
_SPOT_QUOTAS: dict[str, tuple[str, str | None]] = {
    "p": ("All P Spot Instance Requests", "L-7212CCBC"),
    "g": ("All G and VT Spot Instance Requests", "L-3819A6DF"),
    "vt": ("All G and VT Spot Instance Requests", "L-3819A6DF"),
    "dl": ("All DL Spot Instance Requests", None),
    "inf": ("All Inf Spot Instance Requests", None),
    "trn": ("All Trn Spot Instance Requests", None),
    "f": ("All F Spot Instance Requests", None),
    "x": ("All X Spot Instance Requests", None),
}
_STANDARD_QUOTA = "Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances"
_STANDARD_SPOT_QUOTA = "All Standard (A, C, D, H, I, M, R, T, Z) Spot Instance Requests"

_CREDENTIAL_CODES = frozenset({
    "AuthFailure", "InvalidClientTokenId", "SignatureDoesNotMatch", "ExpiredToken", "ExpiredTokenException",
    "RequestExpired", "UnrecognizedClientException", "InvalidAccessKeyId", "IncompleteSignature",
})
_PERMISSION_CODES = frozenset({"UnauthorizedOperation", "AccessDenied", "AccessDeniedException",
                               "Blocked", "OptInRequired"})
_QUOTA_CODES = frozenset({"VcpuLimitExceeded", "InstanceLimitExceeded", "MaxSpotInstanceCountExceeded"})
CAPACITY_CODES = frozenset({"InsufficientInstanceCapacity", "Unsupported", "InsufficientCapacity",
                             "InsufficientHostCapacity", "InsufficientReservedInstanceCapacity"})
_THROTTLE_CODES = frozenset({"RequestLimitExceeded", "Throttling", "ThrottlingException", "TooManyRequestsException"})
CODES = ErrorCodes.of(
    exact={Failure.PERMISSION: _PERMISSION_CODES, Failure.CREDENTIALS: _CREDENTIAL_CODES, Failure.QUOTA: _QUOTA_CODES,
           Failure.CAPACITY: CAPACITY_CODES, Failure.THROTTLED: _THROTTLE_CODES},
)
# The service, operation and region of the last call a gpuplan client started, so a failure that
# carries none of them (a response botocore cannot parse) can still say which call failed where.
_LAST_CALL: ContextVar[tuple[str, str, str | None] | None] = ContextVar("gpuplan_aws_last_call", default=None)
_MESSAGE_LIMIT = 200  # characters of the provider's own words in one error line
# botocore's debug log prints the signed request (botocore.auth) and its headers (botocore.endpoint),
# the session token among them; the response parser logs bodies that may echo a key.
SECRETS.guard("botocore", "botocore.auth", "botocore.endpoint", "botocore.parsers")


def botocore_config(max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> Any:
    """A botocore ``Config`` with bounded "standard" retries: ``max_attempts`` retries after the first call."""
    from botocore.config import Config  # type: ignore[import-untyped]

    return Config(retries={"mode": "standard", "max_attempts": max_attempts}, user_agent_extra="gpuplan",
                  connect_timeout=CONNECT_TIMEOUT_S, read_timeout=READ_TIMEOUT_S)


def make_session(profile: str | None = None, region: str | None = None) -> Any:
    """A boto3 session on the standard credential chain; a missing profile is a CredentialsError."""
    import boto3  # type: ignore[import-untyped]
    from botocore.exceptions import ProfileNotFound  # type: ignore[import-untyped]

    try:
        return boto3.Session(profile_name=profile, region_name=region)
    except ProfileNotFound:
        raise CredentialsError(f"AWS profile {profile!r} is not in ~/.aws/config or ~/.aws/credentials",
                               "name an existing profile (AWS_PROFILE or --profile), or set AWS_ACCESS_KEY_ID and "
                               "AWS_SECRET_ACCESS_KEY") from None


def make_client(service: str, *, region: str | None, profile: str | None = None, session: Any = None,
                max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> Any:
    """A boto3 client for ``service`` in ``region`` with bounded retries.

    Creating a client never contacts AWS; credentials are looked up when the first call
    is signed, so a missing key surfaces there (through :func:`aws_errors`).
    """
    from botocore.exceptions import NoRegionError

    session = session if session is not None else make_session(profile, region)
    try:
        client = session.client(service, region_name=region, config=botocore_config(max_attempts))
    except NoRegionError:
        raise InputError("no AWS region given", "pass --region (e.g. us-east-1) or set AWS_DEFAULT_REGION") from None
    _remember_secrets(session)
    region_name = client.meta.region_name

    def note_call(model: Any, **_: Any) -> None:
        _LAST_CALL.set((model.service_model.service_name, model.name, region_name))

    # before-parameter-build comes ahead of the request's validation and sending, so every failure of the call,
    # a refused parameter included, finds it noted.
    client.meta.events.register("before-parameter-build", note_call)
    host = _host(client.meta.endpoint_url)

    def refuse_unreachable(model: Any, **_: Any) -> None:
        why = UNREACHABLE.why(host)
        if why is not None:  # botocore's bounded retries already failed on this endpoint in this command
            raise ProviderError(f"AWS {model.service_model.service_name} {model.name} not tried: an earlier call of "
                                f"this command got {why}",
                                "check the network, the region, and AWS_ENDPOINT_URL if it is set")

    client.meta.events.register("before-call", refuse_unreachable)
    return client


def _unreachable(exc: Exception) -> None:
    """Remember the endpoint of a call that got no answer after botocore's bounded retries."""
    host = _host(getattr(exc, "kwargs", {}).get("endpoint_url"))
    if host:
        UNREACHABLE.mark(host, f"no answer from {host} ({network_cause(str(exc))})")


def _host(url: str | None) -> str:
    """The host[:port] of an endpoint URL, without any user:password@ it carries."""
    from urllib.parse import urlsplit

    netloc = urlsplit(url or "").netloc
    return netloc.rpartition("@")[2]


def _remember_secrets(session: Any) -> None:
    """Add the session's secret key and token to the scrubber, where reading them contacts nobody.

    Creating the client resolved the chain already, so this is a lookup, not a new search. A
    refreshable key (SSO, an assumed role, an instance role) is left alone: reading it would
    fetch it now, outside the error mapping, instead of at the first call.
    """
    from botocore.credentials import RefreshableCredentials  # type: ignore[import-untyped]

    get = getattr(session, "get_credentials", None)
    creds = get() if callable(get) else None
    if creds is None or isinstance(creds, RefreshableCredentials):
        return
    SECRETS.remember(getattr(creds, "secret_key", None), getattr(creds, "token", None))


def quota_for(instance_type: str | None, *, spot: bool) -> str:
    """The Service Quotas quota that bounds ``instance_type``'s vCPUs, e.g. "Running On-Demand P instances"."""
    family = (instance_type or "").split(".")[0].lower()
    letters = re.match(r"[a-z]+", family)
    prefix = letters.group(0) if letters else ""
    table = _SPOT_QUOTAS if spot else _ON_DEMAND_QUOTAS
    for key in sorted(table, key=len, reverse=True):  # "dl" and "inf" before their first letters
        if prefix.startswith(key):
            name, code = table[key]
            return f'"{name}" ({code})' if code else f'"{name}"'
    return f'"{_STANDARD_SPOT_QUOTA if spot else _STANDARD_QUOTA}"'


def _error_fields(exc: Any) -> tuple[str, str, str]:
    response = getattr(exc, "response", None) or {}
    error = response.get("Error", {}) if isinstance(response, dict) else {}
    code = str(error.get("Code") or "Unknown")
    message = str(error.get("Message") or exc)
    operation = str(getattr(exc, "operation_name", "") or "")
    return code, message, operation


def _short(message: str, limit: int = 300) -> str:
    # UnauthorizedOperation carries a multi-kilobyte encoded policy blob: keep the readable part.
    message = message.split(" Encoded authorization failure message:")[0].strip()
    return message if len(message) <= limit else message[: limit - 1] + "…"


_HTML = re.compile(r"<\s*(?:!doctype|html|head|body|title|h1|p|div|pre)\b", re.IGNORECASE)
_TITLE = re.compile(r"<title[^>]*>(.*?)</title\s*>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^>]*>")


def plain(message: str, limit: int = _MESSAGE_LIMIT) -> str:
    """One line of readable text from what an endpoint sent back, never its markup.

    An HTML page (a proxy's or a mock server's error page in place of an AWS answer) becomes
    its title, or its text without tags; whitespace and newlines collapse to single spaces
    and the length is capped, so an error is one line however big the body was.
    """
    if _HTML.search(message):
        title = _TITLE.search(message)
        message = html.unescape(title.group(1) if title and title.group(1).strip() else _TAG.sub(" ", message))
    return _short(" ".join(message.split()), limit)


def map_client_error(exc: Exception, *, zone: str | None = None, instance_type: str | None = None,
                     spot: bool = False, service: str = "ec2", other_zones: tuple[str, ...] = (),
                     region: str | None = None) -> GpuplanError:
    """The gpuplan error for a botocore ``ClientError``, with a message that names the fix.

    ``zone``, ``instance_type`` and ``spot`` let capacity and quota messages say which zone
    and which Service Quotas quota; ``other_zones`` are suggested when a pinned zone is full.
    ``region`` is named by a failure that has no zone. The provider's message is reduced to
    one line of plain text (an HTML error page becomes its title).
    """
    code, message, operation = _error_fields(exc)
    text = SECRETS.scrub(plain(message, 300))
    where = f" in {zone}" if zone else ""
    failure = CODES.kind_of(code)
    if failure is Failure.PERMISSION:
        action = f"{service}:{operation}" if operation else f"the {service} permission this call needs"
        return CredentialsError(f"AWS refused {operation or 'the request'}: the credentials lack the IAM permission "
                                f"{action} ({code})",
                                f"grant {action} to the IAM user or role, or use another profile (AWS_PROFILE); "
                                "`aws sts decode-authorization-message` explains an encoded refusal")
    if failure is Failure.CREDENTIALS:
        return CredentialsError(f"AWS rejected the credentials ({code}: {text})", CREDENTIALS_HINT)
    if failure is Failure.QUOTA:
        quota = quota_for(instance_type, spot=spot or code == "MaxSpotInstanceCountExceeded")
        what = instance_type or "this instance type"
        return CapacityError(f"AWS quota reached{where} for {what} ({code}: {text})",
                             f"raise the Service Quotas quota {quota} (EC2, vCPUs) for this region in the Service "
                             "Quotas console, or stop other instances of that family")
    if failure is Failure.CAPACITY:
        what = instance_type or "the instance type"
        hint = (f"try another zone ({', '.join(other_zones)}), omit the zone to let gpuplan fail over, "
                "or retry later" if other_zones else
                "retry later, choose another region, or another billing mode (spot/on-demand)")
        return CapacityError(f"AWS has no capacity for {what}{where} now ({code}: {text})", hint)
    if code.startswith("InvalidAMIID"):
        return InputError(f"AWS does not accept the image ({code}: {text})",
                          "pass --image with an AMI ID that exists in this region and your account can use, "
                          "or omit --image for the default Deep Learning AMI")
    if failure is Failure.THROTTLED:
        return ProviderError(f"AWS throttled {operation or 'the request'} after the bounded retries ({code})",
                             "wait a minute and run the command again")
    if code == "SpotMaxPriceTooLow":
        return CapacityError(f"the spot price{where} is above the maximum price ({text})",
                             "retry later or use on-demand billing")
    if code == "IdempotentParameterMismatch":
        return InputError(f"a launch with this client token was already made with other parameters ({text})",
                          "use a new launch id, or repeat the original request unchanged")
    where = where or (f" in {region}" if region else "")
    code = f"HTTP {code}" if code.isdigit() else code  # botocore's code for a body it could not read
    return ProviderError(f"AWS {service} {operation or 'call'} failed{where}: {code}: {text}")


def map_sdk_error(exc: Exception, *, service: str = "ec2", region: str | None = None) -> ProviderError:
    """The one-line :class:`ProviderError` for any other botocore or boto3 failure.

    A response botocore cannot parse (an HTML page where XML or JSON was due), a request it
    refused to build, a timeout: the line names the call and the region, and the cause in
    plain words, never the raw body.
    """
    last = _LAST_CALL.get()
    if last is not None:
        service, operation, region = last[0], last[1], region or last[2]
    else:
        operation = ""
    where = f" in {region}" if region else ""
    text = str(exc)
    if type(exc).__name__ == "ResponseParserError" or "Unable to parse response" in text:
        title = _TITLE.search(text)
        page = f": {plain(html.unescape(title.group(1)), 80)}" if title else ""
        cause = f"the endpoint's answer is not an AWS response{page}"
    else:
        cause = f"{type(exc).__name__}: {plain(text)}"
    return ProviderError(SECRETS.scrub(f"AWS {service} {operation or 'call'} failed{where}: {cause}"))


@contextmanager
def aws_errors(*, zone: str | None = None, instance_type: str | None = None, spot: bool = False,
               service: str = "ec2", region: str | None = None) -> Iterator[None]:
    """Turn every botocore and boto3 exception raised inside the block into a gpuplan error.

    ``region`` is the region named by a failure without a zone; when not given, the region
    of the client whose call failed (see :func:`make_client`).
    """
    _LAST_CALL.set(None)  # a failure before the block's first call is not the previous block's call's
    with _mapped(zone=zone, instance_type=instance_type, spot=spot, service=service, region=region):
        yield


def sdk_error(exc: BaseException) -> GpuplanError | None:
    """The gpuplan error for a botocore or boto3 exception that escaped every :func:`aws_errors` block
    (the CLI's last resort, so even then it is one line and exit code 6); None for any other exception."""
    if type(exc).__module__.split(".")[0] not in ("botocore", "boto3"):
        return None
    try:
        with _mapped(waiters=True):
            raise exc
    except GpuplanError as mapped:
        return mapped
    except BaseException:
        return None


@contextmanager
def _mapped(*, zone: str | None = None, instance_type: str | None = None, spot: bool = False,
            service: str = "ec2", region: str | None = None, waiters: bool = False) -> Iterator[None]:
    # A waiter's WaiterError passes through unless ``waiters``: the caller that waits words its own
    # "did not become running" error (AwsCompute._wait).
    from boto3.exceptions import Boto3Error  # type: ignore[import-untyped]
    from botocore.exceptions import (
        BotoCoreError,
        ClientError,
        CredentialRetrievalError,
        NoCredentialsError,
        NoRegionError,
        PartialCredentialsError,
        ProfileNotFound,
        ReadTimeoutError,
        SSOError,
        TokenRetrievalError,
        WaiterError,
    )
    from botocore.exceptions import (
        ConnectionError as BotoConnectionError,
    )
    from botocore.parsers import ResponseParserError  # type: ignore[import-untyped]

    try:
        yield
    except ClientError as exc:
        last = _LAST_CALL.get()
        raise map_client_error(exc, zone=zone, instance_type=instance_type, spot=spot, service=service,
                               region=region or (last[2] if last else None)) from None
    except (NoCredentialsError, PartialCredentialsError):
        raise CredentialsError("no AWS credentials found", CREDENTIALS_HINT) from None
    except ProfileNotFound as exc:
        raise CredentialsError(f"AWS profile not found ({exc})", CREDENTIALS_HINT) from None
    except (SSOError, TokenRetrievalError, CredentialRetrievalError) as exc:
        raise CredentialsError(f"the AWS credential provider failed ({type(exc).__name__})",
                               "run `aws sso login` for an SSO profile, or " + CREDENTIALS_HINT) from None
    except NoRegionError:
        raise InputError("no AWS region given", "pass --region (e.g. us-east-1) or set AWS_DEFAULT_REGION") from None
    except BotoConnectionError as exc:
        _unreachable(exc)
        raise ProviderError(f"cannot reach the AWS {service} endpoint ({SECRETS.scrub(str(exc))})",
                            "check the network, the region, and AWS_ENDPOINT_URL if it is set") from None
    except (BotoCoreError, ResponseParserError, Boto3Error) as exc:
        if isinstance(exc, WaiterError) and not waiters:
            raise
        if isinstance(exc, ReadTimeoutError):
            _unreachable(exc)
        raise map_sdk_error(exc, service=service, region=region) from None
