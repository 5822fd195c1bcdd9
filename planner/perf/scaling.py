"""Multi-GPU scaling efficiency by workload class and interconnect (NVLink vs PCIe).

``data/scaling.csv`` holds measured efficiencies (throughput on n GPUs / (n x one
GPU)) per workload class, interconnect and GPU count, each with its source. Rows more
than 5% above linear are left out (a batch or system difference between the two runs,
not scaling) and the rest are capped at 1; the median per (class, interconnect, n) is
used. Between measured counts the efficiency is interpolated on log2(n); beyond the
largest it stays at the last measured value.

A slower link never scales better: where the PCIe figure for a count comes out above
NVLink's (runs on different machines, at counts where data-parallel training is not
link-bound, so the data do not resolve a difference), PCIe takes NVLink's value. An
NVLink bridge joins a pair of cards: NVLink for 2 GPUs, PCIe beyond. A fraction of a
GPU (vGPU slice) or one GPU scales perfectly by definition.
"""

from __future__ import annotations

import math
from collections import defaultdict
from functools import lru_cache
from itertools import pairwise

from pricing.catalog import Interconnect
from pricing.datafiles import data_rows
from planner.perf.speed import WorkloadClass

# Above this, two runs differ by more than how many GPUs they used.
SUPERLINEAR = 1.05


@lru_cache(maxsize=1)
def scaling_table() -> dict[tuple[WorkloadClass, Interconnect], list[tuple[float, float, int]]]:
    """Per (class, interconnect): sorted (gpus, median efficiency, row count) points; kept between runs by the
    program (pricing.derived), as reading the rows was ~2 ms of every cold plan."""
    from pathlib import Path

    from pricing.datafiles import data_path
    from pricing.derived import derived

    sources = [data_path("scaling.csv", "planner.data"), Path(__file__)]
    return derived("scaling", sources, _scaling_table, types=(WorkloadClass, Interconnect))  # type: ignore[no-any-return]


def _scaling_table() -> dict[tuple[WorkloadClass, Interconnect], list[tuple[float, float, int]]]:
    import statistics  # here: the module costs a cold command ~1 ms to import, for one median per point

    points: dict[tuple[WorkloadClass, Interconnect, float], list[float]] = defaultdict(list)
    for r in data_rows("scaling.csv", "planner.data"):
        eff = float(r["efficiency"])
        if eff > SUPERLINEAR:
            continue
        key = (WorkloadClass(r["workload_class"]), Interconnect(r["interconnect"]), float(r["gpus"]))
        points[key].append(min(1.0, eff))
    table: dict[tuple[WorkloadClass, Interconnect], list[tuple[float, float, int]]] = defaultdict(list)
    for (cls, ic, n), effs in sorted(points.items()):
        table[(cls, ic)].append((n, statistics.median(effs), len(effs)))
    return dict(table)


def _measured(gpus: float, interconnect: Interconnect, cls: WorkloadClass) -> float:
    """The interpolated median of one interconnect's own rows."""
    points = [(1.0, 1.0)] + [(n, e) for n, e, _ in scaling_table().get((cls, interconnect), [])]
    if len(points) == 1:
        raise ValueError(f"no scaling measurements for {cls} over {interconnect}")
    x = math.log2(gpus)
    for (n0, e0), (n1, e1) in pairwise(points):
        if gpus <= n1:
            x0, x1 = math.log2(n0), math.log2(n1)
            return e0 + (e1 - e0) * (x - x0) / (x1 - x0)
    return points[-1][1]


def efficiency(gpus: float, interconnect: Interconnect, cls: WorkloadClass = WorkloadClass.TRANSFORMER) -> float:
    """Fraction of linear speed-up reached on ``gpus`` GPUs over ``interconnect`` for ``cls``."""
    if gpus <= 1:
        return 1.0
    if interconnect is Interconnect.NVLINK_BRIDGE:
        interconnect = Interconnect.NVLINK if gpus <= 2 else Interconnect.PCIE
    nvlink = min(1.0, _measured(gpus, Interconnect.NVLINK, cls))
    if interconnect is Interconnect.NVLINK:
        return nvlink
    return min(nvlink, _measured(gpus, Interconnect.PCIE, cls))
