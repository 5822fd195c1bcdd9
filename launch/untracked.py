"""Machines tagged by gpuplan that no ledger launch tracks: found by their tag (`ls --reconcile`) and ended
(`down --untracked`)."""

from __future__ import annotations

import time
from collections.abc import Callable

from providers.capabilities import TAG_MANAGED, ComputeClient, InstanceInfo
from launch.ledger import Ledger


def reconcile(ledger: Ledger, client: ComputeClient, provider: str, region: str) -> list[InstanceInfo]:
    """Machines tagged by gpuplan in ``region`` that the ledger does not track: unknown to it, or recorded as ended
    while the cloud lists them alive (a listing through another account once closed them; they bill)."""
    known = ledger.tracked_instance_ids()
    return [i for i in client.list_by_tag(TAG_MANAGED, "true") if i.instance_id not in known and not i.state.is_final]


def end_untracked(client: ComputeClient, machines: list[InstanceInfo], *, timeout: float, poll: float,
                  sleep: Callable[[float], None] = time.sleep) -> tuple[list[str], list[str]]:
    """Terminate tagged machines no ledger knows (``reconcile`` found them); (ended, still ending)."""
    ids = [i.instance_id for i in machines]
    if not ids:
        return [], []
    client.terminate(ids)
    deadline = time.monotonic() + timeout
    while True:
        infos = client.describe(ids)
        live = [i.instance_id for i in infos if not i.state.is_final]
        if not live or time.monotonic() > deadline:
            return [i for i in ids if i not in live], live
        sleep(poll)
