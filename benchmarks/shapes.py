"""Catalogs shaped like real ones, and every output format timed over them (the speed issue's item 1).

A real catalog is mostly per-zone rows: gpuplan's own `offers -o csv` (most AWS rows are one
zone's spot price), SkyPilot's AWS catalog and gpuhunt's. :func:`write_zoned_catalog` copies the
shipped catalog's rows, as `offers -o csv` writes them, into synthetic regions until it has N
rows: the same mix of region-wide and per-zone rows, the same instance types, prices times a
regional factor of 0.85-1.35 (made up: every row's source says so). Each command then runs
as a fresh process, `plan` as a table, `--json` and `-o csv`, and `offers -o csv`, timed wall
clock with the peak memory of that process.
"""

from __future__ import annotations

import csv
import json
import random
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.cold import ROOT, child_env
from benchmarks.synth import AS_OF, SOURCE, region_name

COMMANDS = {
    "plan (table)": ["plan", "--gpu-hours", "200"],
    "plan --json": ["plan", "--gpu-hours", "200", "--json"],
    "plan -o csv": ["plan", "--gpu-hours", "200", "-o", "csv"],
    "offers -o csv": ["offers", "-o", "csv"],
}
_PRICES = ("hourly", "hourly_high", "monthly", "monthly_high", "spot", "spot_high", "reserved_1y", "reserved_3y")


# The clouds whose shipped rows the speed targets were set on (the speed issue): AWS's per-zone rows with
# Tencent's and Lambda's region-wide ones, about 4 zone rows in 5. The region-wide GCP, Azure and Alibaba
# rows shipped since would make the synthetic catalogs mostly region-wide, the easy shape.
SHAPED_ON = ("tencent", "aws", "lambda")


def shipped_rows() -> list[dict[str, str]]:
    from pricing.catalog import Catalog
    from pricing.catalog.parse import instances_csv

    rows = csv.DictReader(instances_csv(Catalog.shipped().instances).splitlines())
    return [r for r in rows if r["provider"] in SHAPED_ON]


def _zone(zone: str, old: str, region: str) -> str:
    """ap-guangzhou-3 in region X is X-3; an AWS zone id (use1-az2) is X-az2."""
    return region + zone[len(old):] if zone.startswith(old) else f"{region}-{zone.rsplit('-', 1)[-1]}"


def write_zoned_catalog(path: Path, n: int, *, seed: int = 14) -> Path:
    """``n`` rows shaped like the shipped catalog (per-zone and region-wide), in synthetic regions."""
    base = shipped_rows()
    rng = random.Random(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    regions = sorted({r["region"] for r in base})  # each shipped region gets synthetic regions of its own
    with path.open("w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(base[0]), lineterminator="\n")
        w.writeheader()
        made, i = 0, 0
        while made < n:
            for r in base:
                if made == n:
                    break
                old = r["region"]
                region = region_name(i * len(regions) + regions.index(old))
                out = dict(r, region=region, source=SOURCE, as_of=AS_OF, notes="")
                out["zone"] = _zone(r["zone"], old, region) if r["zone"] else ""
                out["zones"] = ";".join(_zone(z, old, region) for z in r["zones"].split(";") if z)
                factor = rng.uniform(0.85, 1.35)
                for c in _PRICES:
                    if r[c]:
                        out[c] = f"{float(r[c]) * factor:.4f}"
                w.writerow(out)
                made += 1
            i += 1
    return path


def measure(args: list[str], home: Path, timeout: float) -> dict[str, Any]:
    """Wall seconds and peak MB of one `gpuplan ARGS` process (run by a small wrapper that reads its rusage)."""
    cmd = [sys.executable, "-m", "benchmarks.shapes", "--child", *args]
    try:
        done = subprocess.run(cmd, env=child_env(home), cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"ran past {timeout:g} s"}
    if done.returncode != 0:
        return {"error": done.stderr.strip()[-300:]}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def measure_median(args: list[str], home: Path, timeout: float, runs: int) -> dict[str, Any]:
    """``measure`` ``runs`` times: the median wall seconds and the highest peak MB (the first failure, if any)."""
    import statistics

    results = [measure(args, home, timeout) for _ in range(runs)]
    if failed := next((r for r in results if "error" in r), None):
        return failed
    return {"wall_s": statistics.median(r["wall_s"] for r in results), "peak_mb": max(r["peak_mb"] for r in results),
            "walls_s": [r["wall_s"] for r in results]}


def _child(args: list[str]) -> int:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "gpuplan", *args], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        print(done.stderr[-300:], file=sys.stderr)
        return 1
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(json.dumps({"wall_s": wall, "peak_mb": peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024}))
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        raise SystemExit(_child(sys.argv[2:]))
    raise SystemExit("usage: python -m benchmarks.run --only shapes")
