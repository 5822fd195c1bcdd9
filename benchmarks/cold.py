"""Cold command-line latency: each command as a fresh process, against a bare library import.

The reference is ``python -c "import typer, pydantic, rich"`` run the same number of times,
interleaved with the commands in a shuffled order per round, so a busy machine slows both
alike and the ratio stays meaningful. Each command runs once first to warm the OS file
cache and write bytecode (an installed package ships it compiled); the children run
without ``PYTHONDONTWRITEBYTECODE`` for that reason, with their config, cache and data
directories in a throw-away folder so no user config, refreshed cache or catalog file
changes what is measured (and no real last plan is overwritten).
"""

from __future__ import annotations

import os
import random
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BARE = "bare import"
TYPER_FLOOR = "typer floor: a 1-option command, no gpuplan"
# What running any typer command costs beyond the bare import: typer imports its parameter
# adapters, pydantic's model machinery and importlib.metadata (pydantic's plugin lookup) only
# when a command runs. Shown for scale; no gpuplan command can be faster than this.
_TYPER_FLOOR_SCRIPT = """
from typing import Annotated, Optional
import typer
app = typer.Typer(pretty_exceptions_enable=False, rich_markup_mode=None)
@app.callback()
def root(debug: Annotated[bool, typer.Option("--debug")] = False) -> None: ...
@app.command()
def plan(gpu_hours: Annotated[Optional[str], typer.Option("--gpu-hours")] = None) -> None: print(gpu_hours)
app()
"""

FRAMEWORK_FLOOR = "framework floor: typer + 25 pydantic rows + rich table"
# The speed issue's floor for a cold plan: a one-command typer app that validates 25 pydantic rows (a small
# catalog) and prints a rich table of the 12 cheapest, with nothing of gpuplan in it. What any CLI built on the
# chosen libraries pays to answer with a table; `plan --gpu-hours 200` is held to 1.2x it.
_FRAMEWORK_FLOOR_SCRIPT = """
from typing import Annotated, Optional
import typer
from pydantic import BaseModel
app = typer.Typer(pretty_exceptions_enable=False, rich_markup_mode=None)
class Row(BaseModel):
    provider: str
    instance_type: str
    region: str
    gpu: str
    gpu_count: int
    hourly: float
@app.callback()
def root(debug: Annotated[bool, typer.Option("--debug")] = False) -> None: ...
@app.command()
def plan(gpu_hours: Annotated[Optional[float], typer.Option("--gpu-hours")] = None) -> None:
    from rich.console import Console
    from rich.table import Table
    rows = [Row.model_validate({"provider": "aws", "instance_type": f"p{i}.xlarge", "region": "us-east-1",
                                "gpu": "A100", "gpu_count": 1 + i % 8, "hourly": 1.5 + i}) for i in range(25)]
    table = Table(title=f"Ways to get {gpu_hours:g} GPU-hours")
    for column in ("#", "provider", "offer", "region", "GPUs", "cost"):
        table.add_column(column)
    cheapest = sorted(rows, key=lambda r: r.hourly * gpu_hours / r.gpu_count)[:12]
    for i, r in enumerate(cheapest, 1):
        table.add_row(str(i), r.provider, r.instance_type, r.region, f"{r.gpu_count}x {r.gpu}",
                      f"{r.hourly * gpu_hours / r.gpu_count:,.2f}")
    Console().print(table)
app()
"""


@dataclass
class Sample:
    """Wall and CPU (user + system) seconds of each run of one command."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)

    @property
    def wall_median(self) -> float:
        return statistics.median(self.wall)

    @property
    def cpu_median(self) -> float | None:
        return statistics.median(self.cpu) if self.cpu else None


def child_env(home: Path) -> dict[str, str]:
    """The children's environment: bytecode written, and gpuplan's files in a throw-away ``home``."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if sys.platform.startswith("linux"):
        # platformdirs' own lookup, as a user's run does it, pointed at the throw-away home
        env.pop("GPUPLAN_HOME", None)
        for var in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"):
            env[var] = str(home / var.lower())
    else:
        env["GPUPLAN_HOME"] = str(home)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    env["COLUMNS"] = "160"
    return env


def gpuplan(*args: str) -> list[str]:
    return [sys.executable, "-m", "gpuplan", *args]


def cli_commands(tco_args: list[str]) -> dict[str, list[str]]:
    """The commands of the issue: the reference import, --help, plan, offers, fit and tco over every GPU."""
    return {
        BARE: [sys.executable, "-c", "import typer, pydantic, rich"],
        TYPER_FLOOR: [sys.executable, "-c", _TYPER_FLOOR_SCRIPT, "plan", "--gpu-hours", "200"],
        FRAMEWORK_FLOOR: [sys.executable, "-c", _FRAMEWORK_FLOOR_SCRIPT, "plan", "--gpu-hours", "200"],
        "gpuplan --help": gpuplan("--help"),
        "gpuplan plan --gpu-hours 200": gpuplan("plan", "--gpu-hours", "200"),
        "gpuplan offers": gpuplan("offers"),
        "gpuplan fit --model llama-2-7b (every GPU)": gpuplan("fit", "--model", "llama-2-7b"),
        "gpuplan tco (every GPU, bought or rented)": gpuplan("tco", "--usage", "300", "--months", "36", *tco_args),
    }


def tco_every_gpu() -> list[str]:
    """``--buy 8x<gpu>`` for every GPU with a card price, ``--vs`` the smallest priced type of every rented GPU."""
    from pricing.catalog import Catalog

    cat = Catalog.shipped()
    # eight of each: the slowest cards (a P4 does ~76 reference GPU-hours a month) still cover the usage
    args = [f"--buy=8x{gpu}" for gpu in sorted({c.gpu for c in cat.cards})]
    smallest: dict[str, str] = {}
    for row in sorted(cat.instances, key=lambda r: (r.gpu_count, r.instance_type)):
        if row.hourly is not None:
            smallest.setdefault(row.gpu, row.instance_type)
    return args + [f"--vs={t}" for t in smallest.values()]


def run_once(cmd: list[str], env: dict[str, str]) -> tuple[float, float | None]:
    """(wall seconds, CPU seconds or None where the OS does not say) of one run; a failure raises."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if hasattr(os, "wait4"):
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        cpu: float | None = usage.ru_utime + usage.ru_stime
    else:  # pragma: no cover - Windows
        proc.wait()
        wall, cpu = time.perf_counter() - start, None
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.stderr:
        proc.stderr.close()
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[2:])} exited {proc.returncode}: {err.strip()[-500:]}")
    return wall, cpu


def measure(commands: dict[str, list[str]], runs: int, home: Path, *, seed: int = 14) -> dict[str, Sample]:
    """``runs`` timed runs of every command, interleaved in a shuffled order each round."""
    env = child_env(home)
    for cmd in commands.values():
        run_once(cmd, env)  # warm-up: bytecode, file cache
    samples = {name: Sample() for name in commands}
    rng = random.Random(seed)
    names = list(commands)
    for _ in range(runs):
        rng.shuffle(names)
        for name in names:
            wall, cpu = run_once(commands[name], env)
            samples[name].wall.append(wall)
            if cpu is not None:
                samples[name].cpu.append(cpu)
    return samples
