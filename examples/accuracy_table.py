"""Print the accuracy tables of docs/accuracy.md from the shipped data: python examples/accuracy_table.py"""

from __future__ import annotations

import statistics
from collections import defaultdict

from pricing.catalog import Catalog
from planner.workload.accuracy import accuracy_rows, accuracy_summary
from planner.workload.memory import lambda_batch_checks
from planner.workload.ranges import HIGH_PERCENTILE, LOW_PERCENTILE, leave_one_out, spread


def main() -> None:
    catalog = Catalog.shipped()
    rows = accuracy_rows(catalog)
    s = accuracy_summary(rows)
    print(f"Included runs: {s['runs']}; median |error| {s['median_abs_error']:.1%}; worst {s['worst_ratio']:.2f}x\n")
    print("| run | GPU | GPUs | GPU-h basis | predicted GPU-h | published GPU-h | error | in headline | source |")
    print("|---|---|---:|---|---:|---:|---:|---|---|")
    for r in rows:
        pred = "-" if r.predicted_gpu_hours is None else f"{r.predicted_gpu_hours:,.0f}"
        err = "-" if r.error is None else f"{r.error:+.0%}"
        inc = "yes" if r.included else f"no: {r.reason}"
        basis = "stated" if r.basis == "stated" else "GPUs x wall time"
        print(f"| {r.run} | {r.gpu} | {r.gpus or 'n/r'} | {basis} | {pred} | {r.published_gpu_hours:,.1f} | {err} "
              f"| {inc} | {r.source[:90]} |")

    print(f"\nCalibrated ranges: P{LOW_PERCENTILE}-P{HIGH_PERCENTILE} of published/predicted GPU-hours\n")
    print("| class | runs | low x | high x |")
    print("|---|---:|---:|---:|")
    for cls in ("transformer", "image"):
        sp = spread(catalog, cls)
        print(f"| {cls} | {sp.runs} | {sp.low:.2f} | {sp.high:.2f} |")
    loo, summaries = leave_one_out(catalog)
    print("\nLeave-one-out (each run's range from the other runs of its class)\n")
    print("| class | runs | median abs error of the expected value | inside own range | share | median range |")
    print("|---|---:|---:|---:|---:|---|")
    for x in summaries:
        print(f"| {x.workload_class} | {x.runs} | {x.median_abs_error:.1%} | {x.inside} | {x.share_inside:.0%} "
              f"| x{x.median_low:.2f} to x{x.median_high:.2f} |")
    outside = [r for r in loo if not r.inside]
    print("\nOutside their leave-one-out range: " + ", ".join(
        f"{r.run} (published/predicted {r.ratio:.2f}, range {r.low:.2f}-{r.high:.2f})" for r in outside))

    print("\n| Lambda suite | rows | median predicted/measured | min | max |")
    print("|---|---:|---:|---:|---:|")
    by: dict[str, list[float]] = defaultdict(list)
    for c in lambda_batch_checks(catalog):
        by[c.suite].append(c.ratio)
    for suite, rs in sorted(by.items()):
        print(f"| {suite} | {len(rs)} | {statistics.median(rs):.2f} | {min(rs):.2f} | {max(rs):.2f} |")


if __name__ == "__main__":
    main()
