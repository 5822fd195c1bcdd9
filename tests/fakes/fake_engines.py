"""Fake ``sky`` and ``dstack`` executables for tests: the commands gpuplan runs, strictly, with state in a JSON file.

:func:`install` writes both into a folder to put first on PATH. Each call is recorded (``calls``) and
checked as the real CLI would take it: the flags gpuplan passes, a task file that parses as the
engine's YAML with only the fields the engine knows. ``no_credentials`` in the state makes a launch
fail as SkyPilot's and dstack's do when no cloud is enabled. Tables are printed in the real CLIs'
column layout (``sky status``: NAME INFRA RESOURCES STATUS AUTOSTOP LAUNCHED); ``dstack ps --json``
answers the fields gpuplan reads.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
SKY_TASK = {"name", "num_nodes", "resources", "setup", "run"}
SKY_RESOURCES = {"cloud", "region", "instance_type", "accelerators", "use_spot", "disk_size"}
DSTACK_TASK = {"name", "type", "nodes", "commands", "resources", "spot_policy", "backends", "regions",
               "instance_types", "max_duration"}
IP = "198.51.100.7"


def install(folder: Path, state: Path) -> dict[str, str]:
    """Write ``sky`` and ``dstack`` into ``folder``; the environment entries that put them first on PATH."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("sky", "dstack"):
        exe = folder / name
        exe.write_text(f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(ROOT)!r})\n"
                       f"from tests.fakes.fake_engines import main\nsys.exit(main({name!r}, sys.argv[1:]))\n")
        exe.chmod(0o755)
    if not state.exists():
        state.write_text(json.dumps({"clusters": {}, "jobs": [], "runs": [], "calls": []}))
    return {"PATH": f"{folder}{os.pathsep}{os.environ.get('PATH', '')}", "FAKE_ENGINE_STATE": str(state)}


def main(engine: str, args: list[str]) -> int:
    path = Path(os.environ["FAKE_ENGINE_STATE"])
    state = json.loads(path.read_text())
    state["calls"].append([engine, *args])
    try:
        code = (_sky if engine == "sky" else _dstack)(state, args)
    finally:
        path.write_text(json.dumps(state))
    return code


def _fail(text: str) -> int:
    print(text, file=sys.stderr)
    return 1


def _flag(args: list[str], *names: str) -> str | None:
    for n in names:
        if n in args:
            return args[args.index(n) + 1]
    return None


def _task(path: str, allowed: set[str]) -> dict[str, Any] | None:
    task = yaml.safe_load(Path(path).read_text())
    if not isinstance(task, dict) or set(task) - allowed:
        return None
    return task


def _sky(state: dict[str, Any], args: list[str]) -> int:
    if args[:1] == ["launch"]:
        name, file = _flag(args, "-c"), args[-1]
        task = _task(file, SKY_TASK)
        if not name or "-y" not in args or task is None or set(task.get("resources") or {}) - SKY_RESOURCES:
            return _fail(f"sky launch: bad call or task: {args}")
        if state.get("no_credentials"):
            return _fail("No cloud access is enabled. Run `sky check` to enable access to at least one cloud.")
        if "--dryrun" in args:
            print("Dryrun finished.")
            return 0
        state["clusters"][name] = {"status": "UP", "cloud": task["resources"]["cloud"],
                                   "autodown": "--down" in args, "idle": _flag(args, "-i")}
        print(f"Cluster {name} launched.")
        return 0
    if args[:1] == ["status"]:
        if "--ip" in args:
            c = state["clusters"].get(args[-1])
            if c is None or c["status"] != "UP":
                return _fail(f"Cluster {args[-1]} not found or not up.")
            print(IP)
            return 0
        print("Clusters\nNAME  INFRA  RESOURCES  STATUS  AUTOSTOP  LAUNCHED")
        for name, c in state["clusters"].items():
            print(f"{name}  {c['cloud'].upper()} (us-east-1)  1x(gpus=V100:1, p3.2xlarge)  {c['status']}  -  1 min ago")
        return 0
    if args[:1] == ["down"]:
        if "-y" not in args or state["clusters"].pop(args[-1], None) is None:
            return _fail(f"sky down: bad call or no cluster: {args}")
        print(f"Terminating cluster {args[-1]}...done.")
        return 0
    if args[:2] == ["jobs", "launch"]:
        name, task = _flag(args, "-n"), _task(args[-1], SKY_TASK)
        if not name or "-y" not in args or task is None or "run" not in task:
            return _fail(f"sky jobs launch: bad call or task: {args}")
        if state.get("no_credentials"):
            return _fail("No cloud access is enabled. Run `sky check` to enable access to at least one cloud.")
        state["jobs"].insert(0, {"id": len(state["jobs"]) + 1, "name": name, "status": "STARTING"})
        print(f"Managed job {name} submitted.")
        return 0
    if args[:2] == ["jobs", "queue"]:
        print("Fetching managed job statuses...\nManaged jobs\n"
              "ID  TASK  NAME  REQUESTED  SUBMITTED  TOT. DURATION  JOB DURATION  #RECOVERIES  STATUS")
        for j in state["jobs"]:
            if j["status"] == "STARTING":
                j["status"] = "RUNNING"
            print(f"{j['id']}  -  {j['name']}  1x[V100:1]  1 min ago  1m  1m  0  {j['status']}")
        return 0
    if args[:2] == ["jobs", "cancel"]:
        name = _flag(args, "-n")
        live = [j for j in state["jobs"] if j["name"] == name and j["status"] in ("STARTING", "RUNNING")]
        if "-y" not in args or not live:
            return _fail(f"sky jobs cancel: bad call or no live job: {args}")
        for j in live:
            j["status"] = "CANCELLED"
        return 0
    return _fail(f"fake sky does not know: {args}")


def _dstack(state: dict[str, Any], args: list[str]) -> int:
    if args[:1] == ["apply"]:
        file = _flag(args, "-f")
        task = _task(file, DSTACK_TASK) if file else None
        if task is None or "-y" not in args or "-d" not in args or task.get("type") != "task":
            return _fail(f"dstack apply: bad call or task: {args}")
        if state.get("no_credentials"):
            return _fail("No backends configured. Configure them in ~/.dstack/server/config.yml (dstack server).")
        state["runs"].insert(0, {"name": task["name"], "status": "running", "max_duration": task.get("max_duration")})
        return 0
    if args[:1] == ["ps"]:
        if "--json" not in args:
            return _fail("the fake answers `dstack ps --json` only")
        print(json.dumps({"project": "main", "runs": [
            {"run_spec": {"run_name": r["name"]}, "status": r["status"],
             "latest_job_submission": {"job_provisioning_data": {"hostname": IP}}} for r in state["runs"]]}))
        return 0
    if args[:1] == ["stop"]:
        live = [r for r in state["runs"] if r["name"] == args[-1] and r["status"] == "running"]
        if "-y" not in args or not live:
            return _fail(f"dstack stop: bad call or no live run: {args}")
        live[0]["status"] = "terminated"
        return 0
    return _fail(f"fake dstack does not know: {args}")
