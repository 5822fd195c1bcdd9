from __future__ import annotations

import csv
import math
import statistics
from importlib import resources

import pytest

from pricing.catalog import Catalog, Interconnect
from planner.perf import SpeedPrecision as Precision, WorkloadClass, fit_speeds, log_speed, measured_log_speeds, relative_speed
from planner.scaling import efficiency

CLASSES = [(c, p) for c in WorkloadClass for p in Precision]

CAT = Catalog.shipped()


def test_the_fit_recovers_known_speeds() -> None:
    truth = {"a": 1.0, "b": 2.0, "c": 3.5}
    difficulty = {"m1": 10.0, "m2": 0.5, "m3": 123.0}
    rows = [(g, m, s * d) for g, s in truth.items() for m, d in difficulty.items() if (g, m) != ("c", "m1")]
    fitted = fit_speeds(rows)
    for g in truth:
        assert math.exp(fitted[g] - fitted["a"]) == pytest.approx(truth[g] / truth["a"], rel=1e-6)


@pytest.mark.parametrize(("cls", "precision"), CLASSES)
def test_every_catalog_gpu_gets_a_speed(cls: WorkloadClass, precision: Precision) -> None:
    for key in Catalog.shipped().gpus:
        s = relative_speed(CAT, key, "V100-SXM2-32GB", cls, precision)
        assert s.relative > 0
    assert relative_speed(CAT, "V100-SXM2-32GB", "V100-SXM2-32GB", cls, precision).relative == pytest.approx(1)


def test_measured_ordering_matches_the_generations() -> None:
    speed = {g: relative_speed(CAT, g, "V100-SXM2-32GB", WorkloadClass.TRANSFORMER, Precision.MIXED).relative
             for g in ("V100-SXM2-32GB", "A100-SXM4-80GB", "H100-SXM5-80GB")}
    assert speed["V100-SXM2-32GB"] < speed["A100-SXM4-80GB"] < speed["H100-SXM5-80GB"]


def test_same_silicon_runs_at_the_same_speed() -> None:
    for cls, precision in CLASSES:
        a = relative_speed(CAT, "V100-SXM2-16GB", "V100-SXM2-32GB", cls, precision)
        assert a.relative == pytest.approx(1)


def test_spec_fallback_is_labelled() -> None:
    s = relative_speed(CAT, "T4", "V100-SXM2-32GB", WorkloadClass.CNN, Precision.MIXED)
    assert not s.measured and "estimate" in s.basis


def test_spec_fallback_error_on_held_out_measured_gpus() -> None:
    """Hide each measured GPU, estimate it from specs, and compare with its measurement."""
    from planner import perf

    errors = []
    for cls, precision in CLASSES:
        measured = dict(measured_log_speeds(CAT, cls, precision))
        for gpu in list(measured):
            held = {g: s for g, s in measured.items() if g != gpu}
            perf.measured_log_speeds.cache_clear()
            original = perf.measured_log_speeds
            perf.measured_log_speeds = lambda cat, c, p, _h=held: _h  # type: ignore[assignment]
            try:
                est, was_measured, _ = log_speed.__wrapped__(CAT, gpu, cls, precision)
            finally:
                perf.measured_log_speeds = original
            assert not was_measured
            errors.append(abs(math.exp(est - measured[gpu]) - 1))
    # Documented in docs/performance.md; guards against a regression of the fallback.
    assert statistics.median(errors) < 0.30
    assert max(errors) < 1.5


def _scaling_rows() -> list[dict[str, str]]:
    text = resources.files("planner.data").joinpath("scaling.csv").read_text(encoding="utf-8")
    return list(csv.DictReader(text.splitlines()))


def test_efficiency_at_a_measured_count_is_the_median_of_its_rows() -> None:
    rows = [float(r["efficiency"]) for r in _scaling_rows() if r["interconnect"] == "pcie" and r["gpus"] == "8"]
    assert efficiency(8, Interconnect.PCIE) == pytest.approx(min(1.0, statistics.median(rows)))


@pytest.mark.parametrize("ic", list(Interconnect))
@pytest.mark.parametrize("n", [0.25, 1, 2, 3, 4, 8, 16, 64])
def test_efficiency_is_a_fraction(ic: Interconnect, n: float) -> None:
    e = efficiency(n, ic)
    assert 0 < e <= 1
    if n <= 1:
        assert e == 1
