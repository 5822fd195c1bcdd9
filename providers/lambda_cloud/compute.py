"""Start, watch and end Lambda Cloud instances: the :class:`ComputeClient` of Lambda.

Decisions worth knowing:

- No tags. Lambda's API v1 has no tags and no client token, so a launch is named
  ``gpuplan-<launch id>`` and found again by that name: a retried ``run`` first looks for live
  instances of that name (nothing new starts), and ``ls`` after a crash finds the launch's
  machines by name. ``list_by_tag`` reads the two tags gpuplan needs (``gpuplan:id``,
  ``gpuplan:managed``) back from the name.
- Capacity first. ``/instance-types`` says which regions have capacity for each type now: a
  sold-out region is an error naming the regions that have it, before any launch call (Lambda
  rate-limits launches to about one per 10 s, so SkyPilot checks the same way).
- One SSH key. Lambda needs exactly one registered key per launch: the user's key is registered
  once under the name made from its fingerprint (:mod:`providers.ssh_keys`) and named at launch.
- Self-termination. Lambda bills an instance until it is terminated through its API, and that
  needs the account's API key on the machine: gpuplan puts no secret there, so ``--down-when`` /
  ``--idle`` are refused and the TTL is enforced from the user's side (``gpuplan down --expired``).
- Region. Lambda's API is account-wide; the client's region is the one it launches in unless
  the request names another, and ``describe``/``list`` see every region.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pricing.billing import BillingMode
from pricing.errors import CapacityError, InputError, ProviderError
from providers.capabilities import (
    TAG_ID,
    TAG_MANAGED,
    ComputeClient,
    InstanceInfo,
    InstanceState,
    LaunchRequest,
    LaunchResult,
)
from providers.lambda_cloud.api import LambdaApi, LambdaApiError, api_key
from providers.session import Sleep

PROVIDER = "lambda"
NAME_PREFIX = "gpuplan-"  # the launch's name: gpuplan-<launch id> (service.start names every launch so)
MAX_NAME = 64  # Lambda's instance names: at most 64 characters
MAX_USER_DATA = 1024 * 1024  # cloud-init user data: at most 1 MB

STATES = {
    "booting": InstanceState.PENDING,
    "active": InstanceState.RUNNING,
    # Lambda cannot reach it, but it exists and bills: counted as running so no launch with it is closed as failed
    # (a failed launch is out of `down --all`)
    "unhealthy": InstanceState.RUNNING,
    "terminating": InstanceState.TERMINATING,
    "terminated": InstanceState.TERMINATED,
    "preempted": InstanceState.TERMINATED,
}


def tags_of(name: str) -> dict[str, str]:
    """The tags a Lambda instance carries in its name: gpuplan's launch id, and that gpuplan manages it."""
    if not name.startswith(NAME_PREFIX + "gp-"):
        return {}
    return {TAG_ID: name[len(NAME_PREFIX):], TAG_MANAGED: "true"}


class LambdaCompute(ComputeClient):
    """Lambda Cloud instances, launched in ``region`` (``api`` and ``sleep`` are for tests)."""

    provider = PROVIDER
    default_image_has_driver = True  # Lambda Stack: Ubuntu with the NVIDIA driver, CUDA and PyTorch

    def __init__(self, region: str, *, api: LambdaApi | None = None, sleep: Sleep | None = None) -> None:
        self.region = region
        self._api = api
        self._sleep = sleep
        if api is None:
            api_key()  # no key is one line (exit 3) before anything is recorded or asked, not a failure mid-launch

    @property
    def api(self) -> LambdaApi:
        if self._api is None:
            self._api = LambdaApi(sleep=self._sleep)
        return self._api

    @classmethod
    def self_end(cls, cam_role: str | None) -> None:
        return None

    @classmethod
    def self_end_refusal(cls) -> tuple[str, str]:
        return (("a Lambda machine cannot end itself: Lambda bills it until it is terminated through its API, which "
                "needs the account's API key on the machine, and gpuplan puts no secret there"),
                ("give --ttl and run `gpuplan down --expired` from cron (e.g. */10 * * * * gpuplan down --expired "
                "--yes), or `gpuplan down ID` when the job ends"))

    # -- run --

    def run(self, request: LaunchRequest) -> LaunchResult:
        self._check(request)
        notes: list[str] = []
        if not request.dry_run:
            existing = self._named(request.name)
            if existing:
                return LaunchResult(instance_ids=tuple(i.instance_id for i in existing), zone=existing[0].region,
                                    notes=(f"instances named {request.name} already exist; nothing new started",))
        region = self._region_with_capacity(request)
        key_name = self._ssh_key(request, notes)
        notes += self._notes(request)
        if request.dry_run:
            return LaunchResult(zone=region, dry_run=True, notes=(
                (f"{request.instance_type} has capacity in {region} now (Lambda has no dry-run call: nothing was "
                "sent that starts a machine)"), *notes))
        body: dict[str, Any] = {"region_name": region, "instance_type_name": request.instance_type,
                                "ssh_key_names": [key_name], "quantity": request.count, "name": request.name}
        if request.user_data is not None:
            body["user_data"] = request.user_data
        data = self.api.post("/instance-operations/launch", body)
        ids = data.get("instance_ids") if isinstance(data, dict) else None
        if not isinstance(ids, list) or not ids or not all(isinstance(i, str) and i for i in ids):
            raise ProviderError("Lambda Cloud's launch answered without instance ids",
                                f"look for instances named {request.name} (`gpuplan ls` finds them) before retrying")
        return LaunchResult(instance_ids=tuple(ids), zone=region, notes=tuple(notes))

    def _check(self, request: LaunchRequest) -> None:
        if request.billing is not BillingMode.HOURLY:
            raise InputError(f"Lambda Cloud sells on-demand (hourly) instances through its API, not {request.billing}",
                             "use --billing hourly")
        if request.image:
            raise InputError("Lambda launches its Lambda Stack image (Ubuntu with the GPU driver, CUDA, PyTorch); "
                             "gpuplan does not pick another", "leave --image out")
        if len(request.name) > MAX_NAME:
            raise InputError(f"the instance name {request.name!r} is over Lambda's {MAX_NAME} characters")
        if request.user_data is not None and len(request.user_data.encode()) > MAX_USER_DATA:
            raise InputError("the boot script is over Lambda's 1 MB user-data limit",
                             "download a script from the boot script instead of inlining it")
        if request.ssh_public_key is None or request.ssh_key_name is None:
            raise InputError("Lambda launches every instance with exactly one SSH key, and none was given",
                             "pass --ssh-key ~/.ssh/id_ed25519.pub (or create one: ssh-keygen -t ed25519)")

    def _region_with_capacity(self, request: LaunchRequest) -> str:
        """The first region asked for that has capacity for the type now; else a CapacityError naming those that do."""
        types = self.api.get("/instance-types")
        entry = types.get(request.instance_type) if isinstance(types, dict) else None
        if not isinstance(entry, dict):
            known = ", ".join(sorted(types)[:12]) if isinstance(types, dict) else "none"
            raise InputError(f"Lambda Cloud has no instance type {request.instance_type}", f"its types: {known}")
        have = [str(r.get("name")) for r in entry.get("regions_with_capacity_available") or []
                if isinstance(r, dict) and r.get("name")]
        wanted = [request.zone] if request.zone else list(dict.fromkeys([*request.zones, request.region]))
        wanted = [w for w in wanted if w and w != "global"] or have[:1]
        for region in wanted:
            if region in have:
                return region
        where = ", ".join(wanted) or "any region"
        hint = (f"regions with capacity for it now: {', '.join(have)} (--region {have[0]})" if have else
                "no region has capacity for it now: try another instance type, or later")
        raise CapacityError(f"{request.instance_type} is sold out in {where} (Lambda Cloud has no capacity for it "
                            "there now)", hint)

    def _ssh_key(self, request: LaunchRequest, notes: list[str]) -> str:
        """The key's name on Lambda: found by its fingerprint name, else registered (a dry run says it would be)."""
        name, public = str(request.ssh_key_name), str(request.ssh_public_key)
        keys = self.api.get("/ssh-keys")
        for k in keys if isinstance(keys, list) else []:
            if isinstance(k, dict) and k.get("name") == name:
                notes.append(f"SSH key {name} already registered with Lambda: reused")
                return name
        if request.dry_run:
            notes.append(f"would register the SSH key with Lambda as {name}")
            return name
        self.api.post("/ssh-keys", {"name": name, "public_key": public})
        notes.append(f"registered the SSH key with Lambda as {name}")
        return name

    @staticmethod
    def _notes(request: LaunchRequest) -> list[str]:
        notes = ["public IP with SSH open by Lambda's account-wide firewall (gpuplan does not change it)"]
        if request.ssh_from:
            notes.append("--ssh-from is not applied: Lambda's firewall rules are account-wide (cloud.lambda.ai > "
                         "Firewall)")
        if request.disk_gb:
            notes.append("the disk is the instance type's own (Lambda sizes it per type)")
        if request.expires_at is not None:
            notes.append("Lambda has no timer that ends an instance: the TTL holds through `gpuplan down --expired` "
                         "(run it from cron)")
        return notes

    # -- describe, list, terminate --

    def _info(self, item: Mapping[str, Any]) -> InstanceInfo:
        region = item.get("region")
        kind = item.get("instance_type")
        name = str(item.get("name") or "")
        return InstanceInfo(
            instance_id=str(item["id"]), state=STATES.get(str(item.get("status") or ""), InstanceState.UNKNOWN),
            instance_type=str(kind.get("name") or "") if isinstance(kind, dict) else "",
            region=str(region.get("name") or "") if isinstance(region, dict) else "",
            public_ip=item.get("ip") if isinstance(item.get("ip"), str) else None,
            private_ip=item.get("private_ip") if isinstance(item.get("private_ip"), str) else None,
            tags=tags_of(name),
        )

    def _all(self) -> list[InstanceInfo]:
        data = self.api.get("/instances")
        if not isinstance(data, list) or not all(isinstance(i, dict) and i.get("id") for i in data):
            raise ProviderError("Lambda Cloud's instance list answered without a list of instances", "try again later")
        return [self._info(i) for i in data]

    def _named(self, name: str) -> list[InstanceInfo]:
        wanted = tags_of(name).get(TAG_ID)
        return [i for i in self._all() if wanted and i.tags.get(TAG_ID) == wanted and not i.state.is_final]

    def describe(self, instance_ids: list[str]) -> list[InstanceInfo]:
        found = {i.instance_id: i for i in self._all()}
        return [found.get(i) or InstanceInfo(instance_id=i, state=InstanceState.TERMINATED) for i in
                dict.fromkeys(instance_ids)]

    def list_by_tag(self, key: str, value: str | None = None) -> list[InstanceInfo]:
        return [i for i in self._all() if key in i.tags and (value is None or i.tags[key] == value)
                and not i.state.is_final]

    def terminate(self, instance_ids: list[str]) -> None:
        live = self._live(instance_ids)
        for attempt in range(2):
            if not live:
                return
            try:
                self.api.post("/instance-operations/terminate", {"instance_ids": live})
                return
            except LambdaApiError as err:
                if err.code != "global/object-does-not-exist" or attempt == 1:
                    raise
            live = self._live(live)  # one went away between the list and the call: end the rest

    def _live(self, ids: Sequence[str]) -> list[str]:
        return [i.instance_id for i in self.describe(list(ids))
                if i.state not in (InstanceState.TERMINATED, InstanceState.TERMINATING, InstanceState.FAILED)]
