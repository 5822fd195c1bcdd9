"""Multi-GPU scaling efficiency by interconnect (NVLink vs PCIe).

``data/scaling.csv`` holds measured efficiencies (throughput on n GPUs / (n x one
GPU)) per interconnect and GPU count, each with its source. Between measured counts
the efficiency is interpolated on log2(n); beyond the largest it stays at the last
measured value. A fraction of a GPU (vGPU slice) or one GPU scales perfectly by
definition.
"""

from __future__ import annotations

import math
from collections import defaultdict
from functools import lru_cache

from pricing.catalog import Interconnect, data_rows


@lru_cache(maxsize=1)
def scaling_table() -> dict[Interconnect, list[tuple[float, float, str]]]:
    """Per interconnect: sorted (gpus, median efficiency, sources) points."""
    points: dict[tuple[Interconnect, float], list[tuple[float, str]]] = defaultdict(list)
    for r in data_rows("scaling.csv", "planner.data"):
        points[(Interconnect(r["interconnect"]), float(r["gpus"]))].append((float(r["efficiency"]), r["source"]))
    table: dict[Interconnect, list[tuple[float, float, str]]] = defaultdict(list)
    for (ic, n), vals in sorted(points.items()):
        effs = sorted(v for v, _ in vals)
        mid = len(effs) // 2
        median = effs[mid] if len(effs) % 2 else (effs[mid - 1] + effs[mid]) / 2
        table[ic].append((n, median, "; ".join(sorted({s for _, s in vals}))))
    return dict(table)


def efficiency(gpus: float, interconnect: Interconnect) -> float:
    """Fraction of linear speed-up reached on ``gpus`` GPUs over ``interconnect``."""
    if gpus <= 1:
        return 1.0
    if interconnect is Interconnect.NVLINK_BRIDGE:
        interconnect = Interconnect.NVLINK if gpus <= 2 else Interconnect.PCIE
    points = [(1.0, 1.0)] + [(n, e) for n, e, _ in scaling_table().get(interconnect, [])]
    if len(points) == 1:
        raise ValueError(f"no scaling measurements for {interconnect}")
    x = math.log2(gpus)
    for (n0, e0), (n1, e1) in zip(points, points[1:], strict=False):
        if gpus <= n1:
            x0, x1 = math.log2(n0), math.log2(n1)
            return min(1.0, e0 + (e1 - e0) * (x - x0) / (x1 - x0))
    return min(1.0, points[-1][1])
