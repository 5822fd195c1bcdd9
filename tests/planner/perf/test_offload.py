"""Offload's time terms (planner/perf/offload.py) by hand, from planner/data/offload_host.csv's figures."""

from __future__ import annotations

import pytest

from planner.perf.offload import host_for, host_params_per_s, host_reserve, offload_seconds, pcie


def test_pcie_is_the_median_measured_pinned_rate_of_the_generation() -> None:
    # Gen3: P100 12.15, 2080 Ti 13.1 -> 12.625; Gen4: A100 25.13, A10 19.6, 4090 20.06 -> 20.06;
    # Gen5: H100 35.19, 5090 56.30 -> 45.745
    assert pcie("Volta")[0] == pytest.approx(12.625)
    assert pcie("Ampere")[0] == pytest.approx(20.06) and pcie("Ada Lovelace")[0] == pytest.approx(20.06)
    assert pcie("Hopper")[0] == pytest.approx(45.745)
    rate, basis = pcie("Blackwell")  # no generation row: Gen4 taken, and said so
    assert rate == pytest.approx(20.06) and "taken" in basis and "Blackwell" in basis


def test_host_rate_is_the_mean_of_two_deepspeed_measurements() -> None:
    # PR #735: 11.6e9 / 8.2 s = 1.415e9; ZenFlow core-binding blog: 1.54e9 / (1.365 - 0.240 - 0.77e9 x 2 / 25.13e9) s
    pr735 = 11.6e9 / 8.2
    blog = 1.54e9 / (1.365 - 0.240 - 0.77e9 * 2 / 25.13e9)
    assert host_params_per_s() == pytest.approx((pr735 + blog) / 2, rel=0.01)
    assert host_reserve() == pytest.approx(0.10)


def test_7b_on_a_4_gpu_gen4_node_by_hand() -> None:
    """llama-2-7b, ZeRO-2 + offload on one node of 4 Gen4 GPUs, 244 micro-batches per step:
    partition P = 6.738e9 / 4 = 1.6846e9 params.
    per micro-batch: 2 B x P / 20.06 GB/s = 0.16796 s (hides behind backward);
    per step, hidden: fp32 gradients 4 B x P / 20.06e9 = 0.3359 s;
    per step, exposed: the host updates 4 partitions, 6.738e9 / 1.43e9 = 4.71 s, and each 16-bit partition
    returns, 2 B x P / 20.06e9 = 0.168 s. ZenFlow's blog reports this setup's CPU path (4x A100, Llama-2-7B) as
    'longer than 4s': consistent."""
    p = 6_738_415_616 / 4
    o = offload_seconds(p, 2.0, 2.0, 244, 20.06, gpus_on_host=4)
    assert o.pcie_s_per_microbatch == pytest.approx(2 * p / 20.06e9) == pytest.approx(0.16796, abs=1e-4)
    assert o.pcie_s_per_step_hidden == pytest.approx(4 * p / 20.06e9)
    assert o.cpu_step_s == pytest.approx(4 * p / host_params_per_s()) and o.cpu_step_s > 4.0
    assert o.params_back_s == pytest.approx(2 * p / 20.06e9)
    assert o.exposed_s_per_step == pytest.approx(o.cpu_step_s + o.params_back_s)
    # no accumulation: gradients go to the host once, at the boundary, so nothing per micro-batch
    assert offload_seconds(p, 2.0, 2.0, 1, 20.06).pcie_s_per_microbatch == 0.0


def test_host_holds_states_with_ten_percent_kept() -> None:
    # 4 GPUs x 25.10 GiB = 100.4 GiB: a 384 GiB node holds it (345.6 usable), a 110 GiB one does not (99.0)
    assert host_for("Ada Lovelace", 384).holds(25.10, 4)
    assert not host_for("Ada Lovelace", 110).holds(25.10, 4)
    assert not host_for("Ada Lovelace", None).holds(1.0, 1)  # RAM unknown: not tried
    assert not host_for("Ada Lovelace", 0.0).holds(1.0, 1)  # the catalog's 0: unknown
