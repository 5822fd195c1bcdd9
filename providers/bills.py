"""What a cloud's billing API says a launch cost: the shape every bill reader answers in.

A bill reader (``providers/<cloud>/bills.py``, named in the cloud's registry record) reads the
cloud's own billing data for a month and hands back one :class:`BilledCost` per launch, day and
line of the bill. Launches are matched by the ``gpuplan:id`` tag every launch carries (AWS) or
by the instance ids the ledger recorded (clouds whose bill is per resource). Nothing here
imports an SDK.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

from pricing.errors import NotSupportedError

# The bill's lines, folded onto one vocabulary so estimates and bills compare line by line.
INSTANCE = "instance"  # the machine itself (EC2 compute, CVM)
DISK = "disk"  # block storage (EBS, CBS)
ADDRESS = "public address"  # public IPv4 / EIP
TRAFFIC = "traffic"  # data transfer, bandwidth
OTHER = "other"


@dataclass(frozen=True, slots=True)
class BilledCost:
    """One line of a cloud's bill for one launch on one day (or one month, for a bill kept by month)."""

    launch_id: str
    day: date  # the first day the figure covers
    days: int  # how many days it covers: 1 for a daily bill, the month's length for a monthly one
    line: str  # INSTANCE, DISK, ADDRESS, TRAFFIC or OTHER (the cloud's own name kept in ``detail``)
    amount: Decimal  # what was charged (AWS: unblended; Tencent: the cash and voucher total)
    currency: str
    final: bool  # the cloud says the figure will not change (AWS Estimated=false)
    detail: str = ""  # the cloud's own name of the line, e.g. "Amazon Elastic Compute Cloud - Compute"
    amortized: Decimal | None = None  # upfront fees spread over the term (AWS AmortizedCost), where given


@dataclass(frozen=True, slots=True)
class BillAnswer:
    """What one read of a cloud's bill for one month gave: the lines, and what could not be read or counted."""

    source: str  # the API and how it was asked, e.g. "AWS Cost Explorer GetCostAndUsage by tag gpuplan:id"
    costs: tuple[BilledCost, ...] = ()
    # Why there is no bill (missing rights, no billing API, throttled): the caller falls back to estimates and says so.
    unavailable: str | None = None
    notes: tuple[str, ...] = field(default=())  # lines skipped (another currency, an unknown launch), said once each


class BillReader(ABC):
    """Reads one cloud's bill for a month (``spend --billed``). Each read may be charged by the cloud: callers cache."""

    provider: str
    # Said once with the figures: how late the cloud's bill is, what it costs to ask, what must be set up first.
    caveats: tuple[str, ...] = ()

    @abstractmethod
    def read(self, start: date, end: date, launches: Mapping[str, tuple[str, ...]]) -> BillAnswer:
        """The bill's lines from ``start`` up to ``end`` (exclusive) for ``launches`` (launch id -> instance ids)."""

    def activate_tag(self) -> str:
        """Make the cloud's bill group cost by the ``gpuplan:id`` tag, where it must be told to; what it answered."""
        raise NotSupportedError(f"{self.provider}'s bill needs no tag activated", "run `gpuplan spend --billed`")
