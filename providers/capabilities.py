"""Optional capabilities a provider may have, beyond listing and quoting offers.

Modelled on dstack's backend ``Compute`` classes with capability mixins: a provider
that can read live prices has a :class:`PriceFetcher`; one that can start machines has
a :class:`ComputeClient`. Each lives in ``providers/<cloud>/`` and is the only code that
imports the cloud's SDK; :mod:`providers.registry` imports it lazily, so planning never
loads an SDK. The types here are plain pydantic values so the launch ledger can store
them and tests can build them.
"""

from __future__ import annotations

import ipaddress
from abc import ABC, abstractmethod
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, field_validator

from pricing.billing import BillingMode
from pricing.catalog import Catalog, InstanceType
from pricing.text import printable

TAG_ID = "gpuplan:id"  # the launch record an instance belongs to
TAG_EXPIRES = "gpuplan:expires"  # ISO-8601 UTC time after which `gpuplan down --expired` ends it
TAG_MANAGED = "gpuplan:managed"  # "true" on everything gpuplan starts, for --reconcile


@dataclass(frozen=True)
class ImageChoice:
    """The machine image a compute client picked when the user named none, and how it was found."""

    image_id: str
    note: str  # said with the launch (LaunchResult.notes): which image, found how


class InstanceState(StrEnum):
    """Provider states folded onto one vocabulary (Tencent PENDING/RUNNING/..., EC2 pending/running/...)."""

    PENDING = "pending"
    RUNNING = "running"
    STOPPING = "stopping"
    STOPPED = "stopped"
    TERMINATING = "terminating"
    TERMINATED = "terminated"
    FAILED = "failed"  # Tencent LAUNCH_FAILED: never ran, nothing to pay
    UNKNOWN = "unknown"

    @property
    def is_final(self) -> bool:
        return self in (InstanceState.TERMINATED, InstanceState.FAILED)


class LaunchRequest(BaseModel):
    """Everything a compute client needs to start ``count`` identical machines."""

    model_config = ConfigDict(frozen=True)

    region: str
    zone: str | None = None  # None: the client picks a zone that sells the type, and fails over
    zones: tuple[str, ...] = ()  # candidate zones in preference order when ``zone`` is None
    instance_type: str
    billing: BillingMode = BillingMode.HOURLY  # hourly, monthly or spot
    months: int = Field(default=1, ge=1)  # monthly (prepaid) period
    count: int = Field(default=1, ge=1)
    image: str | None = None  # None: the provider's default GPU image (the result says which)
    client_token: str  # idempotency: a retried call with the same token starts nothing new
    name: str = "gpuplan"
    tags: dict[str, str] = {}
    user_data: str | None = None  # plain text; clients encode it as the API wants
    expires_at: datetime | None = None  # the TTL: a cloud with a timed termination (Tencent ActionTimer) ends it then
    disk_gb: int | None = None
    # Tencent: each machine's public bandwidth cap in Mbps (0: no public address); None: the client's own default
    bandwidth_mbps: int | None = None
    cluster: bool = False  # several nodes: one placement group / HPC cluster, EFA/RDMA where the type has it
    dry_run: bool = False
    # An SSH public key to log in with: imported once as the key pair ``ssh_key_name`` and reused (see ssh_keys)
    ssh_public_key: str | None = None
    ssh_key_name: str | None = None
    ssh_from: tuple[str, ...] = ()  # CIDR blocks SSH may come from (normalized); () for anywhere
    # Tencent: the CAM role the machine runs with (its boot script terminates it with the role's temporary keys)
    cam_role: str | None = None
    installs_driver: bool = False  # the user data installs the GPU driver (the launch notes say so)


class InstanceInfo(BaseModel):
    """One machine as the provider describes it now."""

    model_config = ConfigDict(frozen=True)

    instance_id: str
    state: InstanceState
    instance_type: str = ""
    region: str = ""
    zone: str = ""
    public_ip: str | None = None
    private_ip: str | None = None
    tags: dict[str, str] = {}
    launched_at: datetime | None = None

    @field_validator("instance_id", "instance_type", "region", "zone", mode="after")
    @classmethod
    def _printable(cls, value: str) -> str:
        return printable(value)

    @field_validator("tags", mode="after")
    @classmethod
    def _printable_tags(cls, value: dict[str, str]) -> dict[str, str]:
        return {printable(k): printable(v) for k, v in value.items()}

    @field_validator("public_ip", "private_ip", mode="after")
    @classmethod
    def _address(cls, value: str | None) -> str | None:
        """Only an IP address is kept: these go into printed ssh and torchrun lines that users paste."""
        if value is None:
            return None
        try:
            return str(ipaddress.ip_address(value.strip()))
        except ValueError:
            return None


class LaunchResult(BaseModel):
    """What a run call did: ids of the machines it started (none on a dry run)."""

    model_config = ConfigDict(frozen=True)

    instance_ids: tuple[str, ...] = ()
    zone: str | None = None
    image: str | None = None
    dry_run: bool = False
    cloud_ends_at: datetime | None = None  # when the cloud itself terminates the machines (a timer set at launch)
    notes: tuple[str, ...] = ()  # e.g. "image: the newest public Ubuntu 22.04 with the GPU driver ..."

    @field_validator("instance_ids", "notes", mode="after")
    @classmethod
    def _printable_all(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(printable(v) for v in value)

    @field_validator("zone", "image", mode="after")
    @classmethod
    def _printable(cls, value: str | None) -> str | None:
        return None if value is None else printable(value)


class PriceFetcher(ABC):
    """Reads live prices (and stock where the API gives it) as catalog rows."""

    provider: str

    @abstractmethod
    def fetch(self, region: str, catalog: Catalog) -> list[InstanceType]:
        """Every GPU offer of ``region`` in the catalog's row schema, stamped with source and as-of.

        ``catalog`` supplies facts the API lacks (GPU model keys, interconnect); rows for GPU
        models the catalog does not know are left out rather than guessed.
        """


class SelfEnd(StrEnum):
    """How a machine ends itself from inside (``launch --down-when done``, ``--idle``), with no secret on it."""

    SHUTDOWN = "shutdown"  # an OS shutdown terminates it (AWS: shutdown behaviour 'terminate')
    TENCENT_ROLE = "tencent-role"  # TerminateInstances on itself with its CAM role's temporary keys (metadata)


class ComputeClient(ABC):
    """Starts, describes and ends machines. Every method raises a :class:`pricing.errors.GpuplanError`."""

    provider: str
    region: str
    # Whether the default image (when the user names none) carries the NVIDIA driver.
    default_image_has_driver: bool = True

    @classmethod
    def self_end(cls, cam_role: str | None) -> SelfEnd | None:
        """How a machine of this cloud ends itself, or None where it cannot without a secret on it."""
        return None

    @classmethod
    def self_end_refusal(cls) -> tuple[str, str]:
        """Why a machine of this cloud cannot end itself, and what to do instead (when self_end is None)."""
        return (f"a {cls.provider} machine cannot end itself", "use --ttl, or `gpuplan down ID` when the job ends")

    @abstractmethod
    def run(self, request: LaunchRequest) -> LaunchResult:
        """Start the machines, or with ``dry_run`` only validate (both 'success' and DryRunOperation mean yes)."""

    @abstractmethod
    def describe(self, instance_ids: list[str]) -> list[InstanceInfo]:
        """Current state of each id; an id the provider no longer knows comes back TERMINATED."""

    @abstractmethod
    def terminate(self, instance_ids: list[str]) -> None:
        """Ask the provider to end the machines (idempotent: ending an ended one is no error)."""

    @abstractmethod
    def list_by_tag(self, key: str, value: str | None = None) -> list[InstanceInfo]:
        """Machines carrying tag ``key`` (with ``value`` when given), in any live state."""

    def account(self) -> str:
        """Which cloud account (and endpoint) this client speaks for, as a stable name with no secret in it; "" when
        it cannot tell. A launch records it, and only a listing through the same account may call its machines
        gone (another account's listing cannot see them)."""
        return ""

    def ttl_user_data(self, ttl_hours: Decimal) -> str | None:
        """A boot script that ends the machine after ``ttl_hours``, or None where that would not stop the billing.

        The default is None: on a cloud where a shutdown from inside the OS only stops the
        machine (and the bill runs on), ``gpuplan down --expired`` is the only TTL backstop.
        """
        return None
