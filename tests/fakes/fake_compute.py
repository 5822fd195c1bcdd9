"""An in-memory compute client with a provider's state machine, for launch-service tests.

Machines go PENDING -> RUNNING after ``pending_polls`` describes, honour ClientTokens, carry
tags, and can be told to fail: refuse capacity in some zones, LAUNCH_FAILED, raise mid-call.
The provider-facing tests use the real SDKs against the fake CVM endpoint and moto instead.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from datetime import UTC, datetime

from pricing.errors import CapacityError, ProviderError
from providers.capabilities import ComputeClient, InstanceInfo, InstanceState, LaunchRequest, LaunchResult

_ids = itertools.count(1)


@dataclass
class Machine:
    instance_id: str
    instance_type: str
    zone: str
    tags: dict[str, str]
    state: InstanceState = InstanceState.PENDING
    polls: int = 0
    fail: bool = False


@dataclass
class Cloud:
    """State shared by every client of one fake provider (as the real cloud is)."""

    machines: dict[str, Machine] = field(default_factory=dict)
    tokens: dict[str, list[str]] = field(default_factory=dict)
    sold_out: set[str] = field(default_factory=set)
    pending_polls: int = 1
    launch_failed: bool = False
    max_start: int | None = None  # start at most this many machines per call (partial launches)
    fail_next_run: Exception | None = None
    slow_terminate: bool = False  # TERMINATING never advances (an expired prepaid Tencent machine, a slow cloud)
    fail_terminate: set[str] = field(default_factory=set)  # instance ids whose TerminateInstances call fails
    calls: list[str] = field(default_factory=list)
    public_ip: str = "203.0.113.7"  # what describe answers for a running machine (a hostile endpoint: anything)
    zone_text: str | None = None  # a zone name as a hostile endpoint might send it
    fail_describe: Exception | None = None  # every describe and list raises this (an unreachable endpoint)
    requests: list[LaunchRequest] = field(default_factory=list)  # every launch asked for, dry runs included

    def live(self) -> list[Machine]:
        return [m for m in self.machines.values() if m.state not in (InstanceState.TERMINATED, InstanceState.FAILED)]


class FakeCompute(ComputeClient):
    def __init__(self, cloud: Cloud, provider: str = "aws", region: str = "us-east-1") -> None:
        self.cloud = cloud
        self.provider = provider
        self.region = region

    def run(self, request: LaunchRequest) -> LaunchResult:
        self.cloud.calls.append("run")
        self.cloud.requests.append(request)
        if request.dry_run:
            return LaunchResult(dry_run=True)
        if (exc := self.cloud.fail_next_run) is not None:
            self.cloud.fail_next_run = None
            raise exc
        if request.client_token in self.cloud.tokens:
            return LaunchResult(instance_ids=tuple(self.cloud.tokens[request.client_token]), zone=request.zone)
        zones = [request.zone] if request.zone else list(request.zones) or [self.region + "a"]
        for zone in zones:
            if zone in self.cloud.sold_out:
                if request.zone:
                    raise CapacityError(f"{request.instance_type} is sold out in {zone}")
                continue
            n = min(request.count, self.cloud.max_start or request.count)
            ids = []
            for _ in range(n):
                m = Machine(f"i-{next(_ids):08x}", request.instance_type, zone, dict(request.tags),
                            fail=self.cloud.launch_failed)
                self.cloud.machines[m.instance_id] = m
                ids.append(m.instance_id)
            self.cloud.tokens[request.client_token] = ids
            return LaunchResult(instance_ids=tuple(ids), zone=zone, image=request.image or "img-default",
                                notes=("image: the fake's default",) if request.image is None else ())
        raise CapacityError(f"{request.instance_type} is sold out in every zone tried: {', '.join(zones)}")

    def _info(self, m: Machine) -> InstanceInfo:
        return InstanceInfo(instance_id=m.instance_id, state=m.state, instance_type=m.instance_type,
                            region=self.region, zone=self.cloud.zone_text or m.zone,
                            public_ip=self.cloud.public_ip if m.state is InstanceState.RUNNING
                            else None, private_ip="10.0.0.7", tags=m.tags, launched_at=datetime.now(UTC))

    def describe(self, instance_ids: list[str]) -> list[InstanceInfo]:
        self.cloud.calls.append("describe")
        if self.cloud.fail_describe is not None:
            raise self.cloud.fail_describe
        out = []
        for i in instance_ids:
            m = self.cloud.machines.get(i)
            if m is None:
                out.append(InstanceInfo(instance_id=i, state=InstanceState.TERMINATED))
                continue
            m.polls += 1
            if m.state is InstanceState.PENDING and m.polls >= self.cloud.pending_polls:
                m.state = InstanceState.FAILED if m.fail else InstanceState.RUNNING
            elif m.state is InstanceState.TERMINATING and not self.cloud.slow_terminate:
                m.state = InstanceState.TERMINATED
            out.append(self._info(m))
        return out

    def terminate(self, instance_ids: list[str]) -> None:
        self.cloud.calls.append("terminate")
        if self.cloud.fail_terminate & set(instance_ids):
            raise ProviderError("InternalError: TerminateInstances failed")
        for i in instance_ids:
            m = self.cloud.machines.get(i)
            if m is not None and m.state not in (InstanceState.TERMINATED, InstanceState.FAILED):
                m.state = InstanceState.TERMINATING

    def list_by_tag(self, key: str, value: str | None = None) -> list[InstanceInfo]:
        self.cloud.calls.append("list_by_tag")
        if self.cloud.fail_describe is not None:
            raise self.cloud.fail_describe
        return [self._info(m) for m in self.cloud.live() if key in m.tags and (value is None or m.tags[key] == value)]


def broken(message: str = "connection reset") -> ProviderError:
    return ProviderError(message)
