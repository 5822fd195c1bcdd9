"""dstack as gpuplan's launcher: ``dstack apply -f TASK -y -d`` starts the run, ``dstack ps -a --json`` reads its
state back, ``dstack stop -y NAME`` ends it. The run's ``max_duration`` (written into the task by the launch)
is dstack's own hard time limit, so the TTL holds on dstack's server even when no gpuplan runs."""

from __future__ import annotations

import json
from typing import Any

from pricing.errors import ProviderError
from providers.capabilities import (
    InstanceInfo,
    InstanceState,
    LaunchRequest,
    LaunchResult,
)
from providers.engines.base import LAUNCH_TIMEOUT_S, EngineCompute, tags_of

STATES = {
    "pending": InstanceState.PENDING, "submitted": InstanceState.PENDING, "provisioning": InstanceState.PENDING,
    "running": InstanceState.RUNNING, "terminating": InstanceState.TERMINATING,
    "terminated": InstanceState.TERMINATED, "failed": InstanceState.TERMINATED, "done": InstanceState.TERMINATED,
}


def _host(run: dict[str, Any]) -> str | None:
    """The address dstack provisioned the run's first job on, where the answer has one."""
    submission = run.get("latest_job_submission")
    if not isinstance(submission, dict):
        jobs = run.get("jobs") or [{}]
        subs = jobs[0].get("job_submissions") if isinstance(jobs[0], dict) else None
        submission = subs[-1] if isinstance(subs, list) and subs and isinstance(subs[-1], dict) else {}
    data = submission.get("job_provisioning_data") if isinstance(submission, dict) else None
    host = data.get("hostname") if isinstance(data, dict) else None
    return host if isinstance(host, str) else None


class DstackCompute(EngineCompute):
    """Runs a dstack server starts for gpuplan, on the backend and region in ``region`` (``aws:us-east-1``)."""

    provider = "dstack"
    executable = "dstack"
    install = ("install dstack (pip install 'dstack[all]'), start or point it at a server (`dstack server`, then "
               "`dstack project add`), with the cloud's credentials in the server's config")
    label, starts = "dstack", "runs"
    check = ("start a dstack server with the cloud's backend (`dstack server`, ~/.dstack/server/config.yml) and add "
             "its project (`dstack project add`)")

    def run(self, request: LaunchRequest) -> LaunchResult:
        if (running := self.already_running(request)) is not None:
            return running
        name = request.name
        path = self.task_path(name)
        notes = [f"dstack task: {path}"]
        if request.expires_at is not None:
            notes.append("the task's max_duration is the TTL: dstack's server ends the run then")
        if request.dry_run:
            return LaunchResult(dry_run=True, notes=(*notes, (f"dstack has no dry run: `dstack apply -f {path}` shows "
                                                     "its plan and asks before starting anything")))
        self.exec(["apply", "-f", str(path), "-y", "-d"], timeout=LAUNCH_TIMEOUT_S, what="apply")
        notes.append(f"log in and follow it with `dstack attach {name}` (dstack's own SSH set-up)")
        return LaunchResult(instance_ids=(name,), notes=tuple(notes))

    def listing(self) -> list[InstanceInfo]:
        text = self.exec(["ps", "-a", "--json"], what="ps")
        try:
            runs = json.loads(text).get("runs") or []
        except (ValueError, AttributeError):
            raise ProviderError("`dstack ps --json` did not answer JSON", "update dstack (0.19 or later)") from None
        out: dict[str, InstanceInfo] = {}
        for run in runs if isinstance(runs, list) else []:
            spec = run.get("run_spec") if isinstance(run, dict) else None
            name = spec.get("run_name") if isinstance(spec, dict) else None
            if not isinstance(name, str) or not tags_of(name) or name in out:
                continue  # not gpuplan's, or an older run of the same name (dstack lists the newest first)
            state = STATES.get(str(run.get("status") or ""), InstanceState.UNKNOWN)
            out[name] = InstanceInfo(instance_id=name, state=state, region=self.region, tags=tags_of(name),
                                     public_ip=_host(run) if state is InstanceState.RUNNING else None)
        return list(out.values())

    def terminate(self, instance_ids: list[str]) -> None:
        for info in self.describe(instance_ids):
            if not info.state.is_final and info.state is not InstanceState.TERMINATING:
                self.exec(["stop", "-y", info.instance_id], what="stop")
