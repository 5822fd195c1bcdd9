"""Planning time and peak memory over a synthetic catalog fed through ``--catalog``.

Each size runs in a fresh child process (``python -m benchmarks.scale CSV OUT``) so its peak
resident memory is its own. The child runs ``gpuplan plan --gpu-hours 200 --catalog CSV``
itself, in-process after the imports, with its table going to /dev/null: the layered catalog
(shipped < refreshed cache < the CSV), the plan, then the table and the saved last plan.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.cold import ROOT, child_env


def _rss_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024  # bytes on macOS, KiB elsewhere


def measure_plan(csv: Path, *, gpu_hours: str = "200", extra: list[str] | None = None) -> dict[str, Any]:
    """Run ``gpuplan plan --gpu-hours 200 --catalog CSV [EXTRA]`` in this process (after its imports).

    Returns phase times (s) and memory (MB).

    The phases are timed by wrapping the functions the command calls, so what is measured
    is the command itself, not a copy of it.
    """
    import gpuplan.cli as cli
    import gpuplan.cli.plan as command
    import planner.plan as planning
    import gpuplan.last_plan as last_plan
    import gpuplan.render.plan as report
    from providers.registry import all_providers

    times: dict[str, float] = {}
    seen: dict[str, Any] = {}

    def timed(phase: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                seen[phase] = fn(*args, **kwargs)
                return seen[phase]
            finally:
                times[phase] = times.get(phase, 0.0) + time.perf_counter() - start

        return run

    patched = [(command, "catalog_from", "load"), (planning, "make_plan", "plan"), (report, "render_plan", "table"),
               (last_plan, "remember", "remember")]
    originals = [(module, name, getattr(module, name)) for module, name, _ in patched]
    argv = sys.argv
    for module, name, phase in patched:
        setattr(module, name, timed(phase, getattr(module, name)))
    before = _rss_mb()
    sys.argv = ["gpuplan", "plan", "--gpu-hours", gpu_hours, "--catalog", str(csv), *(extra or [])]
    start = time.perf_counter()
    try:
        cli.main()
    except SystemExit as exc:
        if exc.code not in (0, None):
            raise RuntimeError(f"gpuplan plan exited {exc.code}") from None
    finally:
        total = time.perf_counter() - start
        sys.argv = argv
        for module, name, fn in originals:
            setattr(module, name, fn)
    peak = _rss_mb()
    cat, plan = seen["load"], seen["plan"]
    offers = sum(len(p.list_offers()) for p in all_providers(cat))  # outside the timed phases
    return {
        "rows": len(cat.instances), "offers": offers, "options": len(plan.options), "excluded": len(plan.excluded),
        # reads every option (costed in full), so only where it is asked about: the cluster search
        "multi_node_options": sum(o.nodes > 1 for o in plan.options) if extra else None,
        "load_s": times["load"], "plan_s": times["plan"], "render_s": times["table"] + times["remember"],
        "total_s": total, "rss_before_mb": before, "peak_rss_mb": peak,
    }


def run_child(csv: Path, home: Path, timeout: float, *args: str) -> dict[str, Any]:
    """:func:`measure_plan` in a fresh process; ``args`` are `plan` flags after ``--gpu-hours``
    (itself one of them, as ``--gpu-hours N``, to replace 200); ``{"error": ...}`` when it fails or runs past
    ``timeout``."""
    out = csv.with_suffix(".json")
    out.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "benchmarks.scale", str(csv), str(out), *args]
    try:
        proc = subprocess.run(cmd, env=child_env(home), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              timeout=timeout, text=True)
    except subprocess.TimeoutExpired:
        return {"error": f"ran past {timeout:g} s"}
    if proc.returncode != 0 or not out.exists():
        return {"error": f"exit {proc.returncode}: {proc.stderr.strip()[-300:]}"}
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return result


def main(argv: list[str]) -> int:
    csv, out, extra = Path(argv[0]), Path(argv[1]), argv[2:]
    sys.stdout = open(os.devnull, "w")  # the table goes nowhere; only the figures matter
    hours = "200"
    if extra[:1] == ["--gpu-hours"]:
        hours, extra = extra[1], extra[2:]
    result = measure_plan(csv, gpu_hours=hours, extra=extra)
    out.write_text(json.dumps(result), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
