"""A100 PCIe apart from SXM: the same datasheet peak at a lower power limit runs at its measured share (issue 41)."""

from __future__ import annotations

import pytest

from planner.perf.speed import SpeedPrecision, WorkloadClass, relative_speed
from planner.workload.estimate import board_factor, default_mfu
from planner.workload.spec import Precision
from tests.planner.workload.test_lora_moe import CAT


@pytest.mark.parametrize(("pcie", "sxm"), [("A100-PCIE-40GB", "A100-SXM4-40GB"), ("A100-PCIE-80GB", "A100-SXM4-80GB")])
def test_a100_pcie_runs_at_its_measured_share_of_sxm(pcie: str, sxm: str) -> None:
    assert CAT.gpus[pcie].tensor_fp16_tflops == CAT.gpus[sxm].tensor_fp16_tflops  # the peak cannot tell them apart
    measured = relative_speed(CAT, pcie, sxm, WorkloadClass.TRANSFORMER, SpeedPrecision.MIXED)
    assert measured.measured and 0.85 < measured.relative < 1.0  # Lambda's transformer benchmarks, both boards
    for gpus in (8, 256):
        p, s = default_mfu(CAT.gpus[pcie], gpus, Precision.BF16, CAT)[0], default_mfu(CAT.gpus[sxm], gpus,
                                                                                         Precision.BF16, CAT)[0]
        assert p == pytest.approx(s * measured.relative)


def test_boards_with_their_own_anchors_or_peak_are_left_alone() -> None:
    for gpu in ("A100-SXM4-40GB", "H100-SXM5-80GB", "H100-PCIE-80GB", "L40S"):
        assert board_factor(CAT.gpus[gpu], CAT) is None, gpu
