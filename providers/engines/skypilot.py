"""SkyPilot as gpuplan's launcher: ``sky launch -c NAME`` (hourly), ``sky jobs launch -n NAME`` (spot, with
SkyPilot's managed recovery from preemption), state from ``sky status`` / ``sky jobs queue``, and
``sky down`` / ``sky jobs cancel`` to end it.

SkyPilot's CLI prints tables, not JSON: a row is the one whose first word is the cluster's name (the
job queue: whose words include it), and its state is the word of that row that is one of SkyPilot's
states. A managed job's machine id is ``job:NAME``, so ``down`` knows to cancel it rather than
take a cluster down.
"""

from __future__ import annotations

from pricing.billing import BillingMode
from providers.capabilities import (
    InstanceInfo,
    InstanceState,
    LaunchRequest,
    LaunchResult,
)
from providers.engines.base import LAUNCH_TIMEOUT_S, EngineCompute, tags_of

JOB = "job:"
CLUSTER_STATES = {"INIT": InstanceState.PENDING, "UP": InstanceState.RUNNING, "STOPPED": InstanceState.STOPPED}
JOB_STATES = {
    "PENDING": InstanceState.PENDING, "SUBMITTED": InstanceState.PENDING, "STARTING": InstanceState.PENDING,
    "RUNNING": InstanceState.RUNNING, "RECOVERING": InstanceState.RUNNING, "CANCELLING": InstanceState.TERMINATING,
    "SUCCEEDED": InstanceState.TERMINATED, "CANCELLED": InstanceState.TERMINATED, "FAILED": InstanceState.TERMINATED,
    "FAILED_SETUP": InstanceState.TERMINATED, "FAILED_PRECHECKS": InstanceState.TERMINATED,
    "FAILED_NO_RESOURCE": InstanceState.TERMINATED, "FAILED_CONTROLLER": InstanceState.TERMINATED,
}


def _rows(text: str, states: dict[str, InstanceState], *, first: bool) -> dict[str, InstanceState]:
    """name -> state of each gpuplan row of a SkyPilot table (the first row of a name wins: the newest)."""
    out: dict[str, InstanceState] = {}
    for line in text.splitlines():
        words = line.split()
        names = [w for w in (words[:1] if first else words) if tags_of(w)]
        state = next((states[w] for w in words if w in states), None)
        if names and state is not None:
            out.setdefault(names[0], state)
    return out


class SkyPilotCompute(EngineCompute):
    """Clusters and managed jobs SkyPilot runs for gpuplan, on the cloud and region in ``region`` (aws:us-east-1)."""

    provider = "skypilot"
    executable = "sky"
    install = ("install SkyPilot for the cloud, e.g. pip install 'skypilot[aws]', then run `sky check` to enable "
               "the cloud's credentials")
    label, starts = "SkyPilot", "launches"
    check = "run `sky check`: it says which clouds SkyPilot can use, and what each one lacks"

    def __init__(self, region: str, *, idle_minutes: int | None = None, **options: object) -> None:
        super().__init__(region, **options)  # type: ignore[arg-type]
        self.idle_minutes = idle_minutes

    def run(self, request: LaunchRequest) -> LaunchResult:
        job = request.billing is BillingMode.SPOT
        if (running := self.already_running(request)) is not None:
            return running
        name = request.name
        path = self.task_path(name)
        notes = [f"SkyPilot task: {path}"]
        if job:
            args = ["jobs", "launch", "-y", "-d", "-n", name, str(path)]
            notes.append("a SkyPilot managed spot job: SkyPilot relaunches it after a preemption")
        else:
            args = ["launch", "-y", "-c", name, "--detach-run", str(path)]
            if self.idle_minutes is not None:
                args[1:1] = ["-i", str(self.idle_minutes), "--down"]
                notes.append(f"SkyPilot takes the cluster down after {self.idle_minutes} idle minutes (autostop)")
        if request.expires_at is not None:
            notes.append("SkyPilot has no hard time limit on a cluster: the TTL holds through `gpuplan down "
                         "--expired` (run it from cron)")
        if request.dry_run:
            # `sky jobs launch` has no dry run: `sky launch --dryrun` checks the same task's resources
            self.exec(["launch", "--dryrun", "-y", "-c", name, str(path)], timeout=LAUNCH_TIMEOUT_S,
                      what="launch --dryrun")
            return LaunchResult(dry_run=True, notes=(*notes, "SkyPilot's dry run passed: nothing was started"))
        self.exec(args, timeout=LAUNCH_TIMEOUT_S, what=" ".join(args[:2]) if job else "launch")
        notes.append(f"log in with `ssh {name}` (SkyPilot writes its own SSH config and key)" if not job else
                     f"follow it with `sky jobs logs -n {name}`")
        return LaunchResult(instance_ids=(f"{JOB}{name}" if job else name,),
                            notes=tuple(notes))

    def listing(self) -> list[InstanceInfo]:
        out = []
        clusters = _rows(self.exec(["status"], what="status"), CLUSTER_STATES, first=True)
        for name, state in clusters.items():
            ip = self._ip(name) if state is InstanceState.RUNNING else None
            out.append(InstanceInfo(instance_id=name, state=state, region=self.region, public_ip=ip,
                                    tags=tags_of(name)))
        jobs = _rows(self.exec(["jobs", "queue"], what="jobs queue"), JOB_STATES, first=False)
        out += [InstanceInfo(instance_id=f"{JOB}{name}", state=state, region=self.region, tags=tags_of(name))
                for name, state in jobs.items()]
        return out

    def _ip(self, name: str) -> str | None:
        words = self.exec(["status", "--ip", name], what="status --ip").split()
        return words[-1] if words else None

    def terminate(self, instance_ids: list[str]) -> None:
        for info in self.describe(instance_ids):
            if info.state.is_final or info.state is InstanceState.TERMINATING:
                continue
            if info.instance_id.startswith(JOB):
                self.exec(["jobs", "cancel", "-y", "-n", info.instance_id[len(JOB):]], what="jobs cancel")
            else:
                self.exec(["down", "-y", info.instance_id], what="down")
