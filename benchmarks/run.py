"""Measure gpuplan's speed and memory against its targets (see README, Performance).

    python benchmarks/run.py                  # everything: 2.5 minutes on 2 cores (2026-12-04)
    python benchmarks/run.py --runs 5 --sizes 1000,10000 --only cold,scale
    python benchmarks/run.py --check          # exit 1 when a target is missed

(a) cold CLI: `gpuplan plan --gpu-hours 200`, `gpuplan offers`, `gpuplan --help` as fresh
processes, median of --runs runs, each as a ratio to a bare `import typer, pydantic, rich`
timed in the same run; (b) one plan over synthetic catalogs of --sizes offers given with
`--catalog`, in a fresh process each: load, plan and render time, time per 1k offers, peak
memory; (c) `gpuplan fit` and `gpuplan tco` over every GPU, cold, like (a); (d) the cluster
search: a deadline-bound plan over --cluster-size offers pinned to one node and searching
1..64 nodes per offer.

Targets: cold plan <= 1.2x the framework floor (a typer app that validates 25 pydantic rows and prints a
rich table; it replaced the first target, 1.5x the bare import, which is shown but not checked);
50k offers <= 1 s (load + plan + table);
peak memory <= 200 MB at 200k offers; time per 1k offers at the largest size within 1.5x
of that at 10k (linear growth); the cluster search at most 2x the planning time of one
node; (e, `--only shapes`) over 50k per-zone rows shaped like `offers -o csv`: the table <= 1 s and
`--json` <= 2 s over the plain plan, `offers -o csv` <= 1 s, and <= 250 MB peak at 200k rows in any
format. Nothing here runs in the default `pytest`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import cold, scale, shapes, synth  # noqa: E402

COLD_PLAN_RATIO = 1.5
COLD_PLAN_FLOOR_RATIO = 1.2  # the speed issue's: over a typer app that validates 25 rows and prints a table
OFFERS_50K_SECONDS = 1.0
MEMORY_200K_MB = 200.0
LINEAR_SLACK = 1.5
CLUSTER_SEARCH_RATIO = 2.0
# The speed issue's targets on catalogs shaped like real ones (per-zone rows), over the plain plan's time:
SHAPES_TABLE_OVER_S = 1.0  # plan as a table at 50k rows
SHAPES_JSON_OVER_S = 2.0  # plan --json (every option) at 50k rows
SHAPES_OFFERS_CSV_S = 1.0  # offers -o csv at 50k rows
SHAPES_PEAK_200K_MB = 250.0
# A job that one node of most offers cannot finish by the deadline: the plan searches 1..64
# nodes per offer for the fewest that can (the cluster search of the multi-node issue).
CLUSTER_JOB = ["--gpu-hours", "1000", "--deadline", "72h"]


@dataclass
class Target:
    name: str
    measured: str
    goal: str
    met: bool | None  # None: not measured in this run


def _ms(s: float | None) -> str:
    return "-" if s is None else f"{1000 * s:,.0f}"


def cold_section(runs: int, home: Path) -> tuple[list[str], dict[str, Any], list[Target]]:
    commands = cold.cli_commands(cold.tco_every_gpu())
    samples = cold.measure(commands, runs, home)
    bare = samples[cold.BARE]
    lines = [f"(a, c) cold CLI, fresh process each, median of {runs} runs (interleaved with the bare import)",
             f"  {'command':<46} {'wall ms':>8} {'x bare':>7} {'CPU ms':>8} {'x bare':>7}"]
    figures: dict[str, Any] = {}
    for name, s in samples.items():
        ratio = s.wall_median / bare.wall_median
        cpu_ratio = (s.cpu_median / bare.cpu_median) if s.cpu_median and bare.cpu_median else None
        lines.append(f"  {name:<46} {_ms(s.wall_median):>8} {ratio:>7.2f} {_ms(s.cpu_median):>8} "
                     f"{'-' if cpu_ratio is None else f'{cpu_ratio:.2f}':>7}")
        figures[name] = {"wall_median_s": s.wall_median, "wall_min_s": min(s.wall), "cpu_median_s": s.cpu_median,
                         "ratio_to_bare": ratio, "cpu_ratio_to_bare": cpu_ratio}
    plan = figures["gpuplan plan --gpu-hours 200"]["ratio_to_bare"]
    over_floor = samples["gpuplan plan --gpu-hours 200"].wall_median / samples[cold.FRAMEWORK_FLOOR].wall_median
    figures["gpuplan plan --gpu-hours 200"]["ratio_to_framework_floor"] = over_floor
    # The first target, 1.5x the bare import, is shown but not checked: the speed issue replaced it with the
    # framework floor, as running any typer command already costs ~1.8x the bare import (README, Performance).
    lines.append(f"  cold plan is {plan:.2f}x the bare import (the first target, {COLD_PLAN_RATIO}x, was replaced by "
                 f"{COLD_PLAN_FLOOR_RATIO}x the framework floor)")
    targets = [Target("cold `plan --gpu-hours 200` vs the framework floor", f"{over_floor:.2f}x",
                      f"<= {COLD_PLAN_FLOOR_RATIO}x", over_floor <= COLD_PLAN_FLOOR_RATIO)]
    return lines, figures, targets


def scale_section(sizes: list[int], workdir: Path, home: Path, timeout: float,
                  seed: int) -> tuple[list[str], dict[str, Any], list[Target]]:
    lines = ["(b) one plan over the shipped catalog plus N synthetic offers given with --catalog, fresh process each",
             f"  {'N':>8} {'offers':>8} {'options':>8} {'load s':>7} {'plan s':>7} {'out s':>7} {'total s':>7} "
             f"{'ms/1k offers':>12} {'peak MB':>8}"]
    figures: dict[str, Any] = {}
    for n in sizes:
        csv = synth.write_catalog(workdir / f"synthetic-{n}.csv", n, seed=seed)
        r = scale.run_child(csv, home, timeout)
        figures[str(n)] = r
        if "error" in r:
            lines.append(f"  {n:>8,} failed: {r['error']}")
            continue
        r["ms_per_1k_offers"] = 1000 * r["total_s"] / (r["offers"] / 1000)
        lines.append(f"  {n:>8,} {r['offers']:>8,} {r['options']:>8,} {r['load_s']:>7.2f} {r['plan_s']:>7.2f} "
                     f"{r['render_s']:>7.2f} {r['total_s']:>7.2f} {r['ms_per_1k_offers']:>12.1f} "
                     f"{r['peak_rss_mb']:>8.0f}")
        csv.unlink(missing_ok=True)
    targets = []
    at_50k = figures.get("50000")
    targets.append(Target("plan over 50k offers (load + plan + table)",
                          "-" if not at_50k else at_50k.get("error") or f"{at_50k['total_s']:.2f} s",
                          f"<= {OFFERS_50K_SECONDS:g} s",
                          None if not at_50k else ("error" not in at_50k and at_50k["total_s"] <= OFFERS_50K_SECONDS)))
    at_200k = figures.get("200000")
    targets.append(Target("peak memory at 200k offers",
                          "-" if not at_200k else at_200k.get("error") or f"{at_200k['peak_rss_mb']:.0f} MB",
                          f"<= {MEMORY_200K_MB:g} MB",
                          None if not at_200k
                          else ("error" not in at_200k and at_200k["peak_rss_mb"] <= MEMORY_200K_MB)))
    done = [(n, figures[str(n)]) for n in sizes if "error" not in figures[str(n)]]
    ref = next(((n, r) for n, r in done if n >= 10_000), None)
    if ref is not None and done[-1][0] > ref[0]:
        growth = done[-1][1]["ms_per_1k_offers"] / ref[1]["ms_per_1k_offers"]
        lines.append(f"  time per 1k offers at {done[-1][0]:,} is {growth:.2f}x that at {ref[0]:,} "
                     f"({'linear' if growth <= LINEAR_SLACK else 'faster than linear growth'})")
        targets.append(Target(f"growth {ref[0]:,} -> {done[-1][0]:,} offers (time per 1k)", f"{growth:.2f}x",
                              f"<= {LINEAR_SLACK}x", growth <= LINEAR_SLACK))
    return lines, figures, targets


def cluster_section(size: int, runs: int, workdir: Path, home: Path, timeout: float,
                    seed: int) -> tuple[list[str], dict[str, Any], list[Target]]:
    """(d) the same deadline-bound plan over ``size`` offers, pinned to one node and searching 1..64 nodes."""
    csv = synth.write_catalog(workdir / f"synthetic-{size}.csv", size, seed=seed)
    samples: dict[str, list[dict[str, Any]]] = {"one node (--nodes 1)": [], "1..64 nodes (default)": []}
    for _ in range(runs):  # alternated, so a busy machine slows both alike
        samples["one node (--nodes 1)"].append(scale.run_child(csv, home, timeout, *CLUSTER_JOB, "--nodes", "1"))
        samples["1..64 nodes (default)"].append(scale.run_child(csv, home, timeout, *CLUSTER_JOB))
    csv.unlink(missing_ok=True)
    lines = [f"(d) cluster search: `plan {' '.join(CLUSTER_JOB)}` over {size:,} synthetic offers, fresh process "
             f"each, median of {runs}",
             f"  {'nodes per offer':<24} {'options':>8} {'multi-node':>10} {'plan s':>7} {'total s':>7}"]
    figures: dict[str, Any] = {}
    for name, rs in samples.items():
        failed = next((r["error"] for r in rs if "error" in r), None)
        if failed:
            lines.append(f"  {name:<24} failed: {failed}")
            figures[name] = {"error": failed}
            continue
        plan_s = statistics.median(r["plan_s"] for r in rs)
        figures[name] = {"plan_s": plan_s, "total_s": statistics.median(r["total_s"] for r in rs),
                         "options": rs[0]["options"], "multi_node_options": rs[0]["multi_node_options"]}
        f = figures[name]
        lines.append(f"  {name:<24} {f['options']:>8,} {f['multi_node_options']:>10,} {plan_s:>7.2f} "
                     f"{f['total_s']:>7.2f}")
    one, many = (figures[k] for k in samples)
    if "error" in one or "error" in many:
        return lines, figures, [Target("cluster search vs one node (plan time)", "failed",
                                       f"<= {CLUSTER_SEARCH_RATIO}x", False)]
    ratio = many["plan_s"] / one["plan_s"]
    figures["ratio"] = ratio
    return lines, figures, [Target(f"cluster search 1..64 nodes vs one node, {size:,} offers (plan time)",
                                   f"{ratio:.2f}x", f"<= {CLUSTER_SEARCH_RATIO}x", ratio <= CLUSTER_SEARCH_RATIO)]


def shapes_section(sizes: list[int], workdir: Path, home: Path, timeout: float, seed: int,
                   runs: int = 3) -> tuple[list[str], dict[str, Any], list[Target]]:
    """(e) every output format over catalogs shaped like `offers -o csv` (per-zone rows), fresh process each,
    the median of ``runs`` (this machine's timings drift by a fifth from one minute to the next)."""
    plain = shapes.measure_median(["plan", "--gpu-hours", "200"], home, timeout, runs)
    lines = [f"(e) real catalog shapes (per-zone rows like `offers -o csv`), fresh process each, median of {runs} "
             f"(peak memory: the highest); the plain plan (shipped catalog) takes "
             f"{plain.get('wall_s', float('nan')):.2f} s",
             f"  {'rows':>8} " + " ".join(f"{name:>22}" for name in shapes.COMMANDS)]
    figures: dict[str, Any] = {"plain_plan": plain}
    for n in sizes:
        path = shapes.write_zoned_catalog(workdir / f"zoned-{n}.csv", n, seed=seed)
        row = {name: shapes.measure_median([*args, "--catalog", str(path)], home, timeout, runs)
               for name, args in shapes.COMMANDS.items()}
        figures[str(n)] = row
        lines.append(f"  {n:>8,} " + " ".join(
            f"{'failed':>22}" if "error" in r else f"{r['wall_s']:>8.2f} s {r['peak_mb']:>6.0f} MB  "
            for r in row.values()))
        path.unlink(missing_ok=True)
    base = plain.get("wall_s", 0.0)
    targets = []
    at_50k = figures.get("50000")
    for name, goal, over in (("plan (table)", SHAPES_TABLE_OVER_S, True), ("plan --json", SHAPES_JSON_OVER_S, True),
                             ("offers -o csv", SHAPES_OFFERS_CSV_S, False)):
        r = at_50k.get(name) if at_50k else None
        if r is None or "error" in r:
            targets.append(Target(f"{name}, 50k zoned rows", "-" if r is None else "failed", f"<= {goal:g} s", None))
            continue
        t = r["wall_s"] - base if over else r["wall_s"]
        targets.append(Target(f"{name}, 50k zoned rows{' (over the plain plan)' if over else ''}", f"{t:.2f} s",
                              f"<= {goal:g} s", t <= goal))
    at_200k = figures.get("200000")
    if at_200k:
        peak = max((r.get("peak_mb", 0) for r in at_200k.values()), default=0)
        targets.append(Target("peak memory, 200k zoned rows, any format", f"{peak:.0f} MB",
                              f"<= {SHAPES_PEAK_200K_MB:g} MB", peak <= SHAPES_PEAK_200K_MB))
    return lines, figures, targets


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--runs", type=int, default=15, help="timed runs per cold command (median reported)")
    ap.add_argument("--sizes", default="1000,10000,50000,200000", help="synthetic catalog sizes, comma-separated")
    ap.add_argument("--only", default="cold,scale,clusters,shapes",
                    help="sections to run: cold, scale, clusters, shapes (comma-separated)")
    ap.add_argument("--shape-sizes", default="10000,50000,200000", help="rows of the real-shape catalogs")
    ap.add_argument("--shape-runs", type=int, default=3, help="runs per real-shape command (median reported)")
    ap.add_argument("--cluster-size", type=int, default=50_000, help="synthetic offers for the cluster search")
    ap.add_argument("--timeout", type=float, default=900, help="seconds one catalog size may take")
    ap.add_argument("--seed", type=int, default=14, help="seed of the synthetic catalogs")
    ap.add_argument("--json", type=Path, help="also write every figure to this file")
    ap.add_argument("--check", action="store_true", help="exit 1 if a measured target is missed")
    args = ap.parse_args(argv)
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    print(f"gpuplan benchmarks: Python {platform.python_version()}, {platform.system()} {platform.machine()}, "
          f"{os.cpu_count()} CPUs", flush=True)
    figures: dict[str, Any] = {}
    targets: list[Target] = []
    with tempfile.TemporaryDirectory(prefix="gpuplan-bench-") as tmp:
        home, work = Path(tmp) / "home", Path(tmp) / "catalogs"
        if "cold" in only:
            lines, figures["cold"], found = cold_section(args.runs, home)
            targets += found
            print("\n".join(lines), flush=True)
        if "scale" in only:
            lines, figures["scale"], found = scale_section(sizes, work, home, args.timeout, args.seed)
            targets += found
            print("\n".join(lines), flush=True)
        if "shapes" in only:
            lines, figures["shapes"], found = shapes_section(
                [int(x) for x in args.shape_sizes.split(",") if x.strip()], work, home, args.timeout, args.seed,
                args.shape_runs)
            targets += found
            print("\n".join(lines), flush=True)
        if "clusters" in only:
            lines, figures["clusters"], found = cluster_section(args.cluster_size, min(args.runs, 3), work, home,
                                                                args.timeout, args.seed)
            targets += found
            print("\n".join(lines), flush=True)
    print("targets")
    for t in targets:
        verdict = "not measured" if t.met is None else ("met" if t.met else "MISSED")
        print(f"  {t.name:<52} {t.measured:>12}  goal {t.goal:<10} {verdict}")
    if args.json:
        figures["targets"] = [t.__dict__ for t in targets]
        args.json.write_text(json.dumps(figures, indent=2, default=str), encoding="utf-8")
    missed = [t for t in targets if t.met is False]
    return 1 if args.check and missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
