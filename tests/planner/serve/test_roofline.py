"""The serving pass times: hand-checked bytes, FLOPs and seconds, and the shape of the curves."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pricing.catalog.shipped import shipped_gpus
from planner.serve.roofline import (
    GIB, Efficiency, KvFormat, Model, Replica, WeightFormat, continuous_step, continuous_tokens_per_s, max_batch,
    pass_seconds, ttft_seconds,
)
from planner.workload.inputs import arch_for

GPUS = shipped_gpus()
E = Efficiency(memory=0.7, compute=0.5, pass_s=0.001, request_s=0.0, seq_s=1e-5, overlap=1.0)


def model(name: str, w: str = "fp16", kv: str = "fp16") -> Model:
    return Model(arch_for(name, None), WeightFormat(w), KvFormat(kv))


def test_kv_cache_per_token_of_llama_2_70b_by_hand() -> None:
    # 2 (K and V) x 80 layers x 8 KV heads x 128 head dim x 2 bytes
    assert model("llama-2-70b").kv_bytes_per_token == 2 * 80 * 8 * 128 * 2
    assert model("llama-2-70b", kv="fp8").kv_bytes_per_token == 2 * 80 * 8 * 128


def test_one_decode_step_at_batch_1_is_the_weights_read_at_the_fitted_bandwidth() -> None:
    m, a100 = model("llama-2-7b"), GPUS["A100-SXM4-80GB"]
    r = Replica(a100, 1, None)
    weights = 6_738_415_616 * 2
    kv = 100 * 2 * 32 * 32 * 128 * 2  # 100 tokens of context, 32 layers x 32 KV heads x 128
    flops = 2 * 6_738_415_616 + 4 * 32 * 4096 * 100  # one token: its matmuls and its attention over 100
    # overlap 1: the memory traffic and the math add up, plus the fixed cost of a pass and of its one sequence
    expected = (weights + kv) / (2039e9 * 0.7) + flops / (312e12 * 0.5) + 0.001 + 1e-5
    assert pass_seconds(m, r, E, batch=1, new_tokens=1, context=100) == pytest.approx(expected, rel=1e-9)
    assert expected - 0.001 - 1e-5 < 1.02 * weights / (2039e9 * 0.7)  # the weights' read takes the time


def test_a_long_prefill_is_compute_bound_at_the_fitted_fraction_of_peak() -> None:
    m, h100 = model("llama-2-7b", "fp8", "fp8"), GPUS["H100-SXM5-80GB"]
    p = 4096
    flops = 2 * 6_738_415_616 * p + 4 * 32 * 4096 * p * p / 2
    read = 6_738_415_616 + p / 2 * 2 * 32 * 32 * 128  # fp8 weights and the prompt's fp8 KV cache, once
    # fp8 on Hopper: the measured 1.6x of the 16-bit rate, not the datasheet's 2x
    expected = flops / (1.6 * 989e12 * 0.5) + read / (3350e9 * 0.7) + 0.001 + 1e-5
    assert ttft_seconds(m, Replica(h100, 1, None), E, p) == pytest.approx(expected, rel=1e-9)


def test_fp8_speeds_up_matmuls_by_its_measured_gain_where_the_gpu_has_an_fp8_rate() -> None:
    assert WeightFormat.FP8.tensor_multiplier("Hopper") == 1.6
    assert WeightFormat.FP8.tensor_multiplier("Ada Lovelace") == 1.6
    assert WeightFormat.FP8.tensor_multiplier("Ampere") == 1
    assert WeightFormat.INT8.tensor_multiplier("Ampere") == 1.6
    assert WeightFormat.INT4.tensor_multiplier("Hopper") == 1


def test_a_mixture_of_experts_reads_only_the_experts_its_tokens_touch() -> None:
    m = model("mixtral-8x7b", "fp8")
    total, active = 46_702_792_704, 12_879_925_248
    experts = (total - active) / (1 - 2 / 8)  # all 8 experts' weights
    shared = total - experts
    assert m.weight_bytes_read(1) == pytest.approx(shared + experts * 2 / 8, rel=1e-9)  # one token: 2 of 8
    assert m.weight_bytes_read(1) == pytest.approx(active, rel=1e-9)
    assert m.weight_bytes_read(4) == pytest.approx(shared + experts * (1 - (6 / 8) ** 4), rel=1e-9)
    assert m.weight_bytes_read(256) == pytest.approx(total, rel=1e-6)  # a large batch touches every expert
    assert model("llama-3-8b").weight_bytes_read(1) == model("llama-3-8b").weight_bytes


def test_the_kv_cache_fills_what_the_weights_leave() -> None:
    m, h100 = model("llama-2-7b"), GPUS["H100-SXM5-80GB"]
    free = 80 * GIB * 0.9 - 6_738_415_616 * 2
    per_seq = (1000 + 300 / 2) * m.kv_bytes_per_token
    assert max_batch(m, Replica(h100, 1, None), prompt=1000, output=300) == int(free // per_seq)


def test_a_model_larger_than_the_card_does_not_fit() -> None:
    assert max_batch(model("llama-2-70b"), Replica(GPUS["H100-SXM5-80GB"], 1, None), prompt=10, output=10) == 0
    assert max_batch(model("llama-2-70b"), Replica(GPUS["H100-SXM5-80GB"], 2, 675.0), prompt=10, output=10) > 0


def test_tensor_parallelism_charges_the_all_reduces_on_the_bus() -> None:
    m, h100 = model("llama-2-70b"), GPUS["H100-SXM5-80GB"]
    slow, fast = Replica(h100, 4, 12.0), Replica(h100, 4, 675.0)
    kw = {"batch": 64, "new_tokens": 1, "context": 500}
    gap = pass_seconds(m, slow, E, **kw) - pass_seconds(m, fast, E, **kw)
    ring = 2 * 80 * 64 * 8192 * 2 * 2 * 3 / 4  # two all-reduces per layer, 2(t-1)/t of the activations
    assert gap == pytest.approx(ring / 12e9 - ring / 675e9, rel=1e-9)
    # over PCIe each of the 160 all-reduces also waits longer to start: 30 us against 8 us over NVLink
    pcie = Replica(h100, 4, 675.0, "pcie")
    assert pass_seconds(m, pcie, E, **kw) - pass_seconds(m, fast, E, **kw) == pytest.approx(160 * 22e-6, rel=1e-9)


@settings(max_examples=60, deadline=None)
@given(b=st.integers(1, 400), more=st.integers(1, 400), out=st.integers(1, 4000))
def test_a_bigger_batch_never_lowers_throughput_and_never_shortens_the_step(b: int, more: int, out: int) -> None:
    m, r = model("llama-3-8b", "fp8", "fp8"), Replica(GPUS["H100-SXM5-80GB"], 1, None)
    kw = {"prompt": 500, "output": out}
    assert continuous_step(m, r, E, batch=b + more, **kw) >= continuous_step(m, r, E, batch=b, **kw)
    assert continuous_tokens_per_s(m, r, E, batch=b + more, **kw) >= continuous_tokens_per_s(m, r, E, batch=b, **kw)


@settings(max_examples=60, deadline=None)
@given(prompt=st.integers(1, 30000), more=st.integers(1, 30000))
def test_a_longer_prompt_never_fits_more_sequences_nor_answers_sooner(prompt: int, more: int) -> None:
    m, r = model("llama-3-8b"), Replica(GPUS["L40S"], 1, None)
    assert max_batch(m, r, prompt=prompt + more, output=300) <= max_batch(m, r, prompt=prompt, output=300)
    assert ttft_seconds(m, r, E, prompt + more) > ttft_seconds(m, r, E, prompt)
