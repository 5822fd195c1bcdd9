"""Print the held-out error per regime of docs/performance.md: python examples/physics_holdout.py"""

from __future__ import annotations

from planner.perf.holdout import all_points, summary, tcp_bounds
from pricing.catalog import Catalog


def main() -> None:
    points = all_points(Catalog.shipped())
    print("| regime | points | median abs error | worst |\n|---|---:|---:|---:|")
    for regime, (n, med, worst) in summary(points).items():
        print(f"| {regime} | {n} | {med:.1%} | {worst:.1%} |")
    print("\n| regime | point | predicted | measured | error |\n|---|---|---:|---:|---:|")
    for p in points:
        print(f"| {p.regime} | {p.name} | {p.predicted:.3f} | {p.measured:.3f} | {p.error:+.1%} |")
    # TCP Ethernet: no measured run gives its sequence length, so each gives the compute the model needs instead
    print("\n| TCP Ethernet run | kept | traffic s/micro-batch | compute needed (x traffic) |\n|---|---:|---:|---:|")
    for b in tcp_bounds():
        print(f"| {b.name} | {b.measured:.2f} | {b.traffic_s:.2f} | {b.compute_s:.1f} s ({b.ratio:.2f}x) |")


if __name__ == "__main__":
    main()
