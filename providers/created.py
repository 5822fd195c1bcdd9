"""Whether a failed launch call can have started a machine: the evidence a client attaches to its error.

A launch whose call failed is kept ``unknown`` (found again by its tag, holding its budget) only when the
provider may have started something. A client marks an error raised before it sent RunInstances, or the
provider's own refusal of it, with :func:`mark`; the launch service then closes the launch as failed at once,
saying why (the mark is the evidence), instead of waiting 10 minutes for a machine that cannot appear.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TypeVar

from pricing.errors import GpuplanError

_ATTR = "nothing_created"
E = TypeVar("E", bound=BaseException)


def mark(exc: E, why: str) -> E:
    """Mark ``exc`` as raised when nothing was created, with the evidence (kept if it has one already)."""
    if not nothing_created(exc):
        setattr(exc, _ATTR, why)
    return exc


def nothing_created(exc: BaseException) -> str:
    """The evidence that the failed call created nothing, or "" when it may have started machines."""
    why = getattr(exc, _ATTR, "")
    return why if isinstance(why, str) else ""


@contextmanager
def before_the_create(why: str) -> Iterator[None]:
    """Every gpuplan error raised inside the block is marked: the block ends before the create call is sent."""
    try:
        yield
    except GpuplanError as exc:
        mark(exc, why)
        raise


# Codes that answer a create call without saying whether it ran: the provider's own fault mid-call.
_UNSURE = ("InternalError", "InternalFailure", "ServiceUnavailable", "Unavailable")


class CreateWatch:
    """One launch call of a client: marks its errors unless the create call was sent and not plainly refused."""

    def __init__(self, provider: str, action: str = "RunInstances") -> None:
        self.provider, self.action = provider, action
        self.sent = False
        self.refusal = ""

    @contextmanager
    def guard(self) -> Iterator[CreateWatch]:
        try:
            yield self
        except GpuplanError as exc:
            if not self.sent:
                mark(exc, self.refusal or f"{self.provider} created nothing: the launch failed before {self.action} "
                     "was sent")
            raise

    def sending(self) -> None:
        """Say just before the create call: an error from here on may have started machines."""
        self.sent = True

    def answered(self, code: str, request_id: str = "") -> None:
        """The create call came back with an error ``code``: a refusal created nothing (a fault of theirs may have)."""
        if code and not code.startswith(_UNSURE):
            self.sent = False
            self.refusal = (f"{self.provider} answered {self.action} with {code}"
                            f"{f' (RequestId {request_id})' if request_id else ''}: nothing was created")
