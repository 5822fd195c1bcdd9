"""Launch engines (SkyPilot, dstack) seen as compute clients: gpuplan runs their CLIs and keeps the ledger.

An engine launch is recorded like any other, with the engine as its provider and ``CLOUD:REGION``
as its region (``aws:us-east-1``); its one "machine" is the engine's cluster, managed job or run,
named ``gpuplan-<launch id>`` so a launch whose name never reached the ledger (a crash during the
engine's call) is found again by that name. State comes back from the engine (``sky status``,
``sky jobs queue``, ``dstack ps --json``) and ``down`` ends it through the engine.

The engine's own executable is run with a bounded time and its output read as text; a missing
executable is one line naming its install and set-up step. Nothing here reads credentials: the
engine uses its own.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from pricing.billing import BillingMode
from pricing.errors import CredentialsError, InputError, NotSupportedError, ProviderError
from pricing.text import printable
from providers.capabilities import (
    TAG_ID,
    TAG_MANAGED,
    ComputeClient,
    InstanceInfo,
    InstanceState,
    LaunchRequest,
    LaunchResult,
)

NAME_PREFIX = "gpuplan-"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
LAUNCH_TIMEOUT_S = 3600.0  # provisioning a cluster can take many minutes; a hung engine must still end
QUERY_TIMEOUT_S = 300.0
# Phrases of an engine's output that mean it has no usable credentials for the cloud (said as exit 3).
NO_CREDENTIALS = ("sky check", "no cloud access", "not enabled", "credentials", "dstack server", "dstack config",
                  "no backends", "not authenticated", "no default project", "cannot connect to dstack")


def tags_of(name: str) -> dict[str, str]:
    """The launch id and the managed mark an engine's cluster or run carries in its name."""
    base = name.split(":", 1)[-1]
    if not base.startswith(NAME_PREFIX + "gp-"):
        return {}
    return {TAG_ID: base[len(NAME_PREFIX):], TAG_MANAGED: "true"}


def split_region(region: str) -> tuple[str, str]:
    """``aws:us-east-1`` -> (``aws``, ``us-east-1``); the region may be empty (the engine picks one)."""
    cloud, _, where = region.partition(":")
    return cloud, where


class EngineCompute(ComputeClient):
    """What both engines share: running their executable, and the launch's name as its tags."""

    executable: str
    install: str  # one line: how to install it and make it usable, said when it is missing
    check: str  # the engine's own step that says whether it can use the cloud
    label: str  # the engine as messages name it ("SkyPilot", "dstack")
    starts: str  # what the engine does with machines, as its refusal of a subscription says it ("launches")

    def __init__(self, region: str, *, task_dir: Path | None = None, task_text: str | None = None,
                 command: Sequence[str] | None = None) -> None:
        self.region = region
        self.cloud, self.cloud_region = split_region(region)
        self.task_dir = task_dir
        self.task_text = task_text
        self._command = list(command) if command is not None else None

    def already_running(self, request: LaunchRequest) -> LaunchResult | None:
        """Refuse a subscription (engines start on-demand or spot machines), and return what the engine already runs
        under the launch's name: a retried launch starts nothing new."""
        if request.billing is BillingMode.MONTHLY:
            raise InputError(f"{self.label} {self.starts} on-demand or spot machines, not monthly subscriptions",
                             f"use --billing hourly or spot with --via {self.provider}")
        if request.dry_run:
            return None
        existing = self.list_by_tag(TAG_ID, tags_of(request.name).get("gpuplan:id", request.name))
        if not existing:
            return None
        return LaunchResult(instance_ids=tuple(i.instance_id for i in existing),
                            notes=(f"{self.label} already runs {request.name}; nothing new started",))

    def argv(self) -> list[str]:
        if self._command is not None:
            return list(self._command)
        found = shutil.which(self.executable)
        if found is None:
            raise NotSupportedError(f"{self.provider} is not installed (no `{self.executable}` on PATH)", self.install)
        return [found]

    def exec(self, args: Sequence[str], *, timeout: float = QUERY_TIMEOUT_S, what: str = "") -> str:
        """The engine's standard output for ``args``; a ProviderError (or CredentialsError) with its last words else."""
        argv = [*self.argv(), *args]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise ProviderError(f"`{self.executable} {' '.join(args[:2])}` did not finish in {timeout:.0f} s",
                                f"see it with `{self.executable}` itself; `gpuplan ls` shows what gpuplan knows"
                                ) from None
        except OSError as exc:
            raise NotSupportedError(f"cannot run {self.executable}: {exc.strerror or exc}", self.install) from None
        if done.returncode != 0:
            plain = ANSI.sub("", done.stderr or done.stdout or "")  # the engines colour their errors
            words = printable(" ".join(plain.split())).split(" ")
            said = ""
            for word in reversed(words):  # the engine's last words, whole, up to 400 characters: where it failed
                if len(said) + len(word) > 400:
                    break
                said = f"{word} {said}".strip()
            text = f"{self.provider} {what or args[0]} failed (exit {done.returncode}): {said or 'no output'}"
            if any(p in said.lower() for p in NO_CREDENTIALS):
                raise CredentialsError(text, self.check)
            raise ProviderError(text, f"{self.check}; then try again")
        return done.stdout

    def task_path(self, name: str) -> Path:
        """Write the launch's task file (gpuplan's export, named after the launch) and return its path."""
        if self.task_dir is None or self.task_text is None:
            raise ProviderError(f"no task to hand to {self.provider}", "launch it with `gpuplan launch --via`")
        self.task_dir.mkdir(parents=True, exist_ok=True)
        path = self.task_dir / f"{name}.yaml"
        # the run's name is the launch's: both engines take the file's `name` (dstack names the run by it)
        path.write_text(f"name: {json.dumps(name)}\n{self.task_text}", encoding="utf-8")
        return path

    def list_by_tag(self, key: str, value: str | None = None) -> list[InstanceInfo]:
        return [i for i in self.listing() if key in i.tags and (value is None or i.tags[key] == value)
                and not i.state.is_final]

    def listing(self) -> list[InstanceInfo]:
        """Every cluster, job or run the engine knows, as machines."""
        raise NotImplementedError

    def describe(self, instance_ids: list[str]) -> list[InstanceInfo]:
        found = {i.instance_id: i for i in self.listing()}
        return [found.get(i) or InstanceInfo(instance_id=i, state=InstanceState.TERMINATED, region=self.region)
                for i in dict.fromkeys(instance_ids)]
