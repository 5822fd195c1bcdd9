from __future__ import annotations

import csv
import math
import statistics
from importlib import resources

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pricing.catalog import Catalog, Interconnect
from planner.perf import speed as perf
from planner.perf.speed import (
    SpeedPrecision as Precision,
    WorkloadClass,
    fit_speeds,
    log_speed,
    measured_log_speeds,
    relative_speed,
    spec_figures,
)
from planner.perf.scaling import SUPERLINEAR, efficiency

CLASSES = [(c, p) for c in WorkloadClass for p in Precision]
REF = "V100-SXM2-32GB"
CAT = Catalog.shipped()


def speed(gpu: str, cls: WorkloadClass = WorkloadClass.TRANSFORMER, precision: Precision = Precision.MIXED,
          catalog: Catalog = CAT) -> float:
    return relative_speed(catalog, gpu, REF, cls, precision).relative


def test_the_fit_recovers_known_speeds() -> None:
    truth = {"a": 1.0, "b": 2.0, "c": 3.5}
    difficulty = {"m1": 10.0, "m2": 0.5, "m3": 123.0}
    rows = [(g, m, s * d) for g, s in truth.items() for m, d in difficulty.items() if (g, m) != ("c", "m1")]
    fitted = fit_speeds(rows)
    for g in truth:
        assert math.exp(fitted[g] - fitted["a"]) == pytest.approx(truth[g] / truth["a"], rel=1e-6)


@pytest.mark.parametrize(("cls", "precision"), CLASSES)
def test_every_catalog_gpu_gets_a_speed(cls: WorkloadClass, precision: Precision) -> None:
    for key in CAT.gpus:
        assert speed(key, cls, precision) > 0
    assert speed(REF, cls, precision) == pytest.approx(1)


def test_hopper_beats_ampere_beats_volta_for_mixed_transformers() -> None:
    """Lambda's PyTorch fp16 benchmark, BERT-large SQuAD fine-tune, sentences/s on one GPU:
    V100 16GB 57, A100 80GB SXM4 152, H100 80GB SXM5 301
    (github.com/lambdal/deeplearning-benchmark pytorch/pytorch-train-throughput-fp16.csv @0551cb70)."""
    assert speed("V100-SXM2-32GB") < speed("A100-SXM4-80GB") < speed("H100-SXM5-80GB")


def test_a100_beats_the_l40s_for_mixed_transformers() -> None:
    """The same Lambda table puts the RTX 6000 Ada, the L40S's AD102 twin, well behind both A100s:
    BERT-large SQuAD 79 sentences/s against 140 (A100 80GB PCIe) and 152 (A100 80GB SXM4),
    Transformer-XL large 16,049 against 17,082 and 17,918 tokens/s
    (github.com/lambdal/deeplearning-benchmark pytorch/pytorch-train-throughput-fp16.csv @0551cb70).
    The twinship is the next test's source."""
    l40s = speed("L40S")
    assert l40s < speed("A100-PCIE-80GB") < speed("H100-SXM5-80GB")
    assert l40s < speed("A100-SXM4-80GB")


def test_the_l40s_runs_like_the_rtx_6000_ada_its_twin() -> None:
    """Both are AD102 with 18,176 CUDA cores and 568 Tensor Cores: the RTX 6000 Ada datasheet
    (960 GB/s, 1457.0 sparse FP8 TFLOPS) and the L40/L40S table in
    github.com/stillwater-sc/kpu-sim docs/design/nvidia-gpu-products.md; the L40S datasheet gives
    864 GB/s and 362.05 dense FP16/BF16 TFLOPS. Same silicon, so within 15% in every class."""
    for cls, precision in CLASSES:
        ratio = speed("L40S", cls, precision) / speed("RTX-6000-ADA", cls, precision)
        assert 0.85 <= ratio <= 1.15, (cls, precision, ratio)


UNMEASURED = [(g, c, p) for c, p in CLASSES for g in CAT.gpus
              if perf.SAME_SPEED.get(g, g) not in measured_log_speeds(CAT, c, p)]


@pytest.mark.parametrize(("gpu", "cls", "precision"), UNMEASURED)
def test_an_estimate_comes_from_a_measured_gpu_of_the_same_architecture(
        gpu: str, cls: WorkloadClass, precision: Precision) -> None:
    s = relative_speed(CAT, gpu, REF, cls, precision)
    assert not s.measured and "estimate" in s.basis
    anchor = s.basis.split("estimate from ")[1].split(" ")[0]
    assert anchor in measured_log_speeds(CAT, cls, precision)
    assert CAT.gpus[anchor].arch == CAT.gpus[gpu].arch
    # The anchor has every figure the estimate scales by.
    mine, theirs = spec_figures(CAT.gpus[gpu], precision), spec_figures(CAT.gpus[anchor], precision)
    assert all(t is not None for m, t in zip(mine, theirs, strict=True) if m is not None)


WITH_TENSOR = sorted(g for g, c, p in UNMEASURED if CAT.gpus[g].tensor_fp16_tflops and CAT.gpus[g].fp32_tflops)


@settings(max_examples=25, deadline=None)
@given(gpu=st.sampled_from(WITH_TENSOR), factor=st.floats(min_value=0.25, max_value=4.0))
def test_an_estimate_never_crosses_precisions(gpu: str, factor: float) -> None:
    """Mixed precision scales by tensor TFLOPS only, fp32 by FP32 TFLOPS only: changing the
    other precision's figure must not move the estimate."""
    spec = CAT.gpus[gpu]
    assert spec.fp32_tflops is not None and spec.tensor_fp16_tflops is not None
    fp32_changed = CAT.with_gpus({**CAT.gpus, gpu: spec.model_copy(update={"fp32_tflops": spec.fp32_tflops * factor})})
    tensor_changed = CAT.with_gpus(
        {**CAT.gpus, gpu: spec.model_copy(update={"tensor_fp16_tflops": spec.tensor_fp16_tflops * factor})})
    for cls in WorkloadClass:
        assert speed(gpu, cls, Precision.MIXED, fp32_changed) == pytest.approx(speed(gpu, cls, Precision.MIXED))
        assert speed(gpu, cls, Precision.FP32, tensor_changed) == pytest.approx(speed(gpu, cls, Precision.FP32))


def test_same_silicon_runs_at_the_same_speed() -> None:
    for cls, precision in CLASSES:
        assert relative_speed(CAT, "V100-SXM2-16GB", REF, cls, precision).relative == pytest.approx(1)


def leave_one_out_errors() -> dict[tuple[WorkloadClass, Precision], dict[str, float]]:
    """Hide each measured GPU, estimate it from the others, and compare with its measurement."""
    out: dict[tuple[WorkloadClass, Precision], dict[str, float]] = {}
    original = perf.measured_log_speeds
    for cls, precision in CLASSES:
        measured = dict(original(CAT, cls, precision))
        errors = {}
        for gpu in measured:
            held = {g: s for g, s in measured.items() if g != gpu}
            perf.measured_log_speeds = lambda cat, c, p, _h=held: _h  # type: ignore[assignment]
            try:
                est, was_measured, _ = log_speed.__wrapped__(CAT, gpu, cls, precision)
            finally:
                perf.measured_log_speeds = original
            assert not was_measured
            errors[gpu] = abs(math.exp(est - measured[gpu]) - 1)
        out[(cls, precision)] = errors
    return out


def test_spec_estimate_error_on_held_out_measured_gpus() -> None:
    """The numbers published in docs/performance.md; this guards the rule against regressions."""
    errors = leave_one_out_errors()
    every = [e for per_gpu in errors.values() for e in per_gpu.values()]
    assert statistics.median(every) < 0.10
    assert max(every) < 0.75
    for per_gpu in errors.values():
        assert statistics.median(per_gpu.values()) < 0.15


def _scaling_rows() -> list[dict[str, str]]:
    text = resources.files("planner.data").joinpath("scaling.csv").read_text(encoding="utf-8")
    return list(csv.DictReader(line for line in text.splitlines() if not line.startswith("#")))


def _median_of_rows(cls: str, ic: str, n: int) -> float:
    effs = [min(1.0, float(r["efficiency"])) for r in _scaling_rows()
            if (r["workload_class"], r["interconnect"], int(r["gpus"])) == (cls, ic, n)
            and float(r["efficiency"]) <= SUPERLINEAR]
    return statistics.median(effs)


def test_efficiency_at_a_measured_count_is_the_median_of_its_rows() -> None:
    for cls in WorkloadClass:
        for n in (2, 4, 8):
            assert efficiency(n, Interconnect.NVLINK, cls) == pytest.approx(_median_of_rows(cls, "nvlink", n))
            pcie = min(_median_of_rows(cls, "pcie", n), _median_of_rows(cls, "nvlink", n))
            assert efficiency(n, Interconnect.PCIE, cls) == pytest.approx(pcie)


def test_every_scaling_row_names_its_class_and_a_known_interconnect() -> None:
    rows = _scaling_rows()
    assert {r["workload_class"] for r in rows} == {c.value for c in WorkloadClass}
    assert {r["interconnect"] for r in rows} <= {"nvlink", "pcie"}
    for cls in WorkloadClass:
        for ic in ("nvlink", "pcie"):
            assert any(r["workload_class"] == cls and r["interconnect"] == ic for r in rows), (cls, ic)


@given(cls=st.sampled_from(list(WorkloadClass)), n=st.floats(min_value=1, max_value=512))
def test_a_slower_interconnect_never_scales_better(cls: WorkloadClass, n: float) -> None:
    nvlink = efficiency(n, Interconnect.NVLINK, cls)
    bridge = efficiency(n, Interconnect.NVLINK_BRIDGE, cls)
    pcie = efficiency(n, Interconnect.PCIE, cls)
    assert 0 < pcie <= bridge <= nvlink <= 1


@pytest.mark.parametrize("ic", list(Interconnect))
@pytest.mark.parametrize("n", [0.25, 1])
def test_one_gpu_or_a_slice_scales_perfectly(ic: Interconnect, n: float) -> None:
    for cls in WorkloadClass:
        assert efficiency(n, ic, cls) == 1
