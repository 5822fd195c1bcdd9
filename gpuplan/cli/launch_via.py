"""``gpuplan launch --via skypilot|dstack``: the engine launches, gpuplan quotes, budgets, records, lists and ends it.

The launch command has quoted the machine and held it to ``--max-cost`` and the ledger's budgets before
this runs. Here the engine's task is written (the same resources ``plan --export`` writes, named after
the launch), the intent recorded with the engine as provider and ``CLOUD:REGION`` as region, the engine
run, and its cluster, managed job or run recorded as the launch's machine. ``ls`` reads its state from
the engine and ``down`` ends it through the engine.
"""

from __future__ import annotations

from typing import Any

from pricing.errors import InputError

ENGINES = ("skypilot", "dstack")


def check_via(engine: str, provider: str, boot: Any) -> str:
    """The engine's name, refusing one that cannot run ``provider`` or a boot flag it cannot carry."""
    from providers.registry import CLOUDS, engine_runs

    name = engine.strip().lower()
    if name not in ENGINES:
        raise InputError(f"--via {engine!r}: gpuplan launches through skypilot or dstack")
    if not engine_runs(name, provider):
        clouds = ", ".join(sorted(c for c, v in CLOUDS.items() if name in v.engines))
        raise InputError(f"{name} does not launch on {provider}", f"{name} launches: {clouds}; or leave --via out")
    if boot is not None and (boot.driver is not None or boot.cam_role is not None):
        raise InputError("--driver and --cam-role are for gpuplan's own launches", f"{name} sets up its machines")
    if boot is not None and boot.idle_seconds is not None and name == "dstack":
        raise InputError("--idle has no dstack counterpart for a task", "use --ttl (dstack's max_duration)")
    return name


def task_text(engine: str, q: Any, cat: Any, boot: Any) -> str:
    """The engine's task for the quoted launch."""
    from gpuplan.render.engine_task import dstack_task, skypilot_task
    from launch.service import launch_disk_gb

    spec = q.spec
    row = next((i for i in cat.instances if i.instance_type == q.offer and i.provider == spec.provider), None)
    if row is None:
        raise InputError(f"{q.offer} is not in the catalog's {spec.provider} rows", "gpuplan offers")
    setup = boot.setup if boot is not None else None
    run = boot.run if boot is not None else None
    quoted = f"{q.unit_price.amount} {q.unit_price.currency.value}/h per machine"
    common = {"cloud": spec.provider, "region": q.region, "offer": q.offer, "gpu": row.gpu,
              "gpu_count": float(row.gpu_count), "nodes": spec.count, "billing": str(spec.billing),
              "disk_gb": launch_disk_gb(spec), "setup": setup, "run": run, "quoted": quoted}
    if engine == "skypilot":
        return skypilot_task(**common)
    return dstack_task(**common, gpu_memory_gb=cat.gpus[row.gpu].vram_gb, ttl_hours=spec.ttl_hours)


def launch_via(engine: str, q: Any, cat: Any, boot: Any, *, dry_run: bool, as_json: bool, fx: Any,
               wait_hours: Any, poll: float, steps: tuple[Any, Any, Any]) -> None:
    """``steps``: the launch command's crash seam, wait and report, shared so both paths behave alike."""
    from gpuplan.cli.launch_shared import say
    from gpuplan.ledger import open_ledger
    from gpuplan.paths import data_dir
    from launch.service import start
    from pricing.billing import BillingMode
    from providers.registry import compute_client

    crash_point, wait, report = steps
    text = task_text(engine, q, cat, boot)
    region = f"{q.spec.provider}:{q.region}"
    options: dict[str, Any] = {"task_dir": data_dir() / "engines", "task_text": text}
    if engine == "skypilot" and boot is not None:
        # --down-when done: SkyPilot's autodown once the job ends; --idle: after that many idle minutes
        if boot.idle_seconds is not None:
            options["idle_minutes"] = max(1, boot.idle_seconds // 60)
        elif boot.down_when_done:
            options["idle_minutes"] = 0
    client: Any = compute_client(engine, region, **options)  # an EngineCompute
    client.argv()  # a missing engine is one line (what to install, how to enable the cloud) before anything is recorded
    spec = q.spec.model_copy(update={"provider": engine, "boot": None})
    via = q.model_copy(update={"spec": spec, "region": region, "zone": None, "zones": ()})
    job = engine == "skypilot" and q.spec.billing is BillingMode.SPOT
    say(f"launching through {engine} on {q.spec.provider} {q.region}" + (" (a managed spot job)" if job else ""))
    with open_ledger() as ledger:
        out = start(via, ledger=ledger, client=client, progress=say, checkpoint=crash_point, fx=fx)
        if not dry_run and not job:
            out = wait(out, ledger, client, wait_hours, poll)
    report(out, dry_run, as_json, cat)
