"""What every cloud's way into its API does alike: classify error codes, retry within bounds, keep secrets out.

Each cloud has one session module (:mod:`providers.aws.session`, :mod:`providers.tencent.client`)
that does the same job the same way:

1. find credentials through the SDK's own chain, and turn "none found" into a
   :class:`pricing.errors.CredentialsError` whose hint names the cloud's variables;
2. build a client for one region, honouring an endpoint override (a fake, a proxy);
3. retry throttling and network faults a bounded number of times, so a command ends;
4. turn the SDK's error codes into gpuplan's exception tree, with messages that name the fix;
5. never let a secret reach a message, a hint or a log record.

What differs (the SDK's credential sources, its client objects, its code names, the words
of each message) stays in the cloud's package. What is the same lives here: the code
tables' lookup (:class:`ErrorCodes`), the retry loop (:class:`RetryPolicy`,
:func:`with_retries`) and the secret scrubber (:data:`SECRETS`). Nothing here imports an
SDK, so a cloud package can import it at no cost.
"""

from __future__ import annotations

import logging
import random
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TypeVar

T = TypeVar("T")
Sleep = Callable[[float], None]
REDACTED = "***"
_MIN_SECRET = 6  # shorter strings are not scrubbed: they would mangle ordinary words


class Failure(StrEnum):
    """What an SDK error code means for the user, whatever the cloud calls it."""

    CREDENTIALS = "credentials"  # the key is missing, wrong or expired
    PERMISSION = "permission"  # the key is fine but may not call this action
    QUOTA = "quota"  # an account limit: raise it, or ask for less
    CAPACITY = "capacity"  # the cloud has none now: another zone, region or time may
    INPUT = "input"  # a parameter is wrong: retrying cannot help
    THROTTLED = "throttled"  # too many calls: worth retrying after a wait
    NETWORK = "network"  # the call did not get through: worth retrying

    @property
    def transient(self) -> bool:
        return self in (Failure.THROTTLED, Failure.NETWORK)


@dataclass(frozen=True)
class ErrorCodes:
    """A cloud's error codes by :class:`Failure`: exact codes first, then code prefixes in order.

    Exact codes win so that one member of a family can mean something else than the family
    (Tencent's ``AuthFailure.UnauthorizedOperation`` is a permission, ``AuthFailure.*`` a bad key).
    """

    exact: Mapping[str, Failure] = field(default_factory=dict)
    prefixes: tuple[tuple[str, Failure], ...] = ()

    @classmethod
    def of(cls, exact: Mapping[Failure, Iterable[str]] | None = None,
           prefixes: Mapping[Failure, Iterable[str]] | None = None) -> ErrorCodes:
        """Tables written the readable way round: each failure with its codes."""
        return cls({code: kind for kind, codes in (exact or {}).items() for code in codes},
                   tuple((p, kind) for kind, ps in (prefixes or {}).items() for p in ps))

    def kind_of(self, code: str) -> Failure | None:
        """What ``code`` means, or None for a code the table does not know."""
        found = self.exact.get(code)
        if found is not None:
            return found
        return next((kind for prefix, kind in self.prefixes if code.startswith(prefix)), None)


# --- bounded retries ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded exponential backoff with full jitter (AWS Architecture Blog, "Exponential Backoff And Jitter")."""

    attempts: int = 5  # every try of one call, the first included
    base_s: float = 0.5
    cap_s: float = 8.0  # the longest single wait
    budget_s: float = 20.0  # all waits of one call together
    # No new try starts this long after the first began: tries that each wait out a read timeout
    # (an endpoint that accepts and never answers) would otherwise hold one call for attempts x timeout.
    deadline_s: float = 60.0

    def delay(self, retry: int, rng: Callable[[], float]) -> float:
        return rng() * min(self.cap_s, self.base_s * float(2**retry))


class Transient(Exception):
    """Raised by one attempt that may succeed if tried again; its text says why it failed."""


class RetriesExhausted(Exception):
    """Every attempt allowed failed transiently (or the wait budget ran out)."""

    def __init__(self, attempts: int, last: str) -> None:
        super().__init__(last)
        self.attempts = attempts  # how many were made
        self.last = last  # why the last one failed


def with_retries(attempt: Callable[[], T], policy: RetryPolicy, *, sleep: Sleep,
                 rng: Callable[[], float] = random.random,
                 on_retry: Callable[[int, str, float], None] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> T:
    """``attempt()``'s result, trying again after each :class:`Transient` within ``policy``'s bounds.

    Any other exception ends at once. ``on_retry(attempt, why, wait)`` hears of each retry
    (for a debug log); ``sleep``, ``rng`` and ``clock`` are injected so tests never wait.
    """
    began = clock()
    slept = 0.0
    tried = 0
    last = ""
    for tried in range(1, policy.attempts + 1):
        try:
            return attempt()
        except Transient as exc:
            last = str(exc)
        if tried == policy.attempts:
            break
        left = policy.budget_s - slept
        if left <= 0:  # the wait budget is spent: retrying now would only hammer the API
            break
        wait = min(policy.delay(tried - 1, rng), left)
        if clock() - began + wait >= policy.deadline_s:
            break
        if on_retry is not None:
            on_retry(tried, last, wait)
        sleep(wait)
        slept += wait
    raise RetriesExhausted(tried, last)


# --- network faults in plain words, and endpoints that did not answer ---------------------------------

# (pattern in the exception's text, what it means) in order: the first match names the cause.
_NETWORK_CAUSES: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p, re.IGNORECASE), why) for p, why in (
    (r"connection refused|errno 111\b|winerror 10061|errno 61\b", "connection refused (nothing listens there)"),
    (r"read timed out|readtimeout|read timeout", "no answer in time (read timed out)"),
    (r"connect ?timeout|connection to .* timed out|timed out while connecting", "could not connect in time"),
    (r"name or service not known|nodename nor servname|failed to resolve|getaddrinfo|name resolution",
     "host name not found"),
    (r"network is unreachable|no route to host", "network unreachable"),
    (r"certificate|\bssl\b|tls", "TLS handshake failed"),
    (r"connection reset|connection aborted|remotedisconnected|broken pipe|incompleteread",
     "connection dropped mid-answer"),
    (r"timed out|timeout", "no answer in time"),
))


def network_cause(text: str, limit: int = 120) -> str:
    """What an HTTP library's exception text says went wrong, in a few whole words.

    requests and urllib3 nest the cause deep in a long repr (``HTTPConnectionPool(...): Max
    retries exceeded ... NewConnectionError(... [Errno 111] Connection refused)``); a cut of
    that text ends mid-word. A cause no pattern knows is shortened at a word boundary.
    """
    for pattern, why in _NETWORK_CAUSES:
        if pattern.search(text):
            return why
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    return flat[:limit].rsplit(" ", 1)[0] + " ..."


class Unreachable:
    """Endpoints that failed every try of a call in this process, with why.

    One command may make many calls to the same endpoint (``ls`` and ``down`` describe each
    launch): once one call has spent its bounded retries on an endpoint that does not answer,
    later calls to it fail at once, so the command ends in one call's time, not one per launch.
    """

    def __init__(self) -> None:
        self._why: dict[str, str] = {}
        self._lock = threading.Lock()

    def mark(self, endpoint: str, why: str) -> None:
        with self._lock:
            self._why[endpoint] = why

    def why(self, endpoint: str) -> str | None:
        with self._lock:
            return self._why.get(endpoint)

    def clear(self) -> None:
        with self._lock:
            self._why.clear()


UNREACHABLE = Unreachable()  # one per process, like the secrets below


# --- secrets never leave -------------------------------------------------------------------------------


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret replaced; short strings are skipped so we never mangle ordinary words."""
    for secret in sorted({s for s in secrets if s and len(s) >= _MIN_SECRET}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text


class SecretScrubber(logging.Filter):
    """The secrets this process has loaded, removed from texts and from the log records of guarded loggers.

    SDK debug logs print request headers and bodies (Tencent's prints the Authorization
    header, botocore's the session token): a filter on the SDK's logger redacts them
    before any handler sees them.
    """

    def __init__(self) -> None:
        super().__init__()
        self._secrets: set[str] = set()
        self._lock = threading.Lock()

    def remember(self, *secrets: str | None) -> None:
        with self._lock:
            self._secrets.update(s for s in secrets if s)

    @property
    def secrets(self) -> frozenset[str]:
        with self._lock:
            return frozenset(self._secrets)

    def scrub(self, text: str) -> str:
        return scrub(text, self.secrets)

    def guard(self, *loggers: str) -> None:
        """Filter every record of each named logger (idempotent).

        A logger's filters see only the records logged on that logger, not its children's:
        name each logger the SDK writes requests to.
        """
        for name in loggers:
            target = logging.getLogger(name)
            if self not in target.filters:
                target.addFilter(self)

    def filter(self, record: logging.LogRecord) -> bool:
        if self._secrets:
            text = record.getMessage()
            clean = self.scrub(text)
            if clean != text:
                record.msg, record.args = clean, None
        return True


SECRETS = SecretScrubber()  # one per process: a secret one cloud loaded stays out of every log
