"""Print the held-out error per regime of docs/performance.md: python examples/physics_holdout.py"""

from __future__ import annotations

from planner.perf.holdout import all_points, summary
from pricing.catalog import Catalog


def main() -> None:
    points = all_points(Catalog.shipped())
    print("| regime | points | median abs error | worst |\n|---|---:|---:|---:|")
    for regime, (n, med, worst) in summary(points).items():
        print(f"| {regime} | {n} | {med:.1%} | {worst:.1%} |")
    print("\n| regime | point | predicted | measured | error |\n|---|---|---:|---:|---:|")
    for p in points:
        print(f"| {p.regime} | {p.name} | {p.predicted:.3f} | {p.measured:.3f} | {p.error:+.1%} |")


if __name__ == "__main__":
    main()
