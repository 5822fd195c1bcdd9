"""Print the accuracy tables of docs/accuracy.md from the shipped data: python examples/accuracy_table.py"""

from __future__ import annotations

import statistics
from collections import defaultdict

from pricing.catalog import Catalog
from planner.estimate import accuracy_rows, accuracy_summary
from planner.memory import lambda_batch_checks


def main() -> None:
    catalog = Catalog.shipped()
    rows = accuracy_rows(catalog)
    s = accuracy_summary(rows)
    print(f"Included runs: {s['runs']}; median |error| {s['median_abs_error']:.1%}; worst {s['worst_ratio']:.2f}x\n")
    print("| run | GPU | GPUs | predicted GPU-h | published GPU-h | error | in headline | source |")
    print("|---|---|---:|---:|---:|---:|---|---|")
    for r in rows:
        pred = "-" if r.predicted_gpu_hours is None else f"{r.predicted_gpu_hours:,.0f}"
        err = "-" if r.error is None else f"{r.error:+.0%}"
        inc = "yes" if r.included else f"no: {r.reason}"
        print(f"| {r.run} | {r.gpu} | {r.gpus or 'n/r'} | {pred} | {r.published_gpu_hours:,.1f} | {err} | {inc} | {r.source[:90]} |")
    print("\n| Lambda suite | rows | median predicted/measured | min | max |")
    print("|---|---:|---:|---:|---:|")
    by: dict[str, list[float]] = defaultdict(list)
    for c in lambda_batch_checks(catalog):
        by[c.suite].append(c.ratio)
    for suite, rs in sorted(by.items()):
        print(f"| {suite} | {len(rs)} | {statistics.median(rs):.2f} | {min(rs):.2f} | {max(rs):.2f} |")


if __name__ == "__main__":
    main()
