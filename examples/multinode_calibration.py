"""Print the inter-node scaling calibration of docs/performance.md: python examples/multinode_calibration.py"""

from __future__ import annotations

import statistics

from planner.perf.cluster import calibration_points, fit_beta, loo_errors


def main() -> None:
    points = calibration_points()
    beta = fit_beta(points)
    rows = loo_errors(points)
    errors = [abs(e) for _, _, e in rows]
    print(f"beta = {beta:.3f} (median of {len(points)} points); leave-one-out |error|: median "
          f"{statistics.median(errors):.1%}, worst {max(errors):.1%}\n")
    print("| system | nodes x GPUs | network Gbps | step s | measured | predicted (LOO) | error |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for p, pred, err in rows:
        print(f"| {p.system} | {p.nodes} x {p.gpus_per_node} | {p.network_gbps:g} | {p.step_seconds:.3f} | "
              f"{p.scaling_efficiency:.1%} | {pred:.1%} | {err:+.0%} |")


if __name__ == "__main__":
    main()
