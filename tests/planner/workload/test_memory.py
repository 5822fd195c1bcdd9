"""Memory model: sourced per-parameter figures, activation formula, fit and sharding."""

from __future__ import annotations

import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.workload.memory import (
    GIB,
    Recompute,
    Sharding,
    activation_bytes_per_sample,
    fewest_gpus,
    lambda_batch_checks,
    state_bytes_per_param,
    layout,
    training_memory,
)
from planner.workload.spec import Offload, Optimizer, Precision, TrainingWorkload
from planner.workload.inputs import arch_for
from pricing.catalog import Catalog


def train(model: str = "llama-2-7b", **kw: object) -> TrainingWorkload:
    return TrainingWorkload(arch=arch_for(model, None), **kw)  # type: ignore[arg-type]


def test_mixed_precision_adam_is_16_bytes_per_param() -> None:
    m = training_memory(train(precision=Precision.BF16, optimizer=Optimizer.ADAMW))
    params = train().arch.params
    assert (m.weights + m.gradients + m.optimizer) * GIB / params == pytest.approx(16)


def test_zero_stages_divide_the_right_states() -> None:
    w = train()
    one = training_memory(w)
    z1, z2, z3 = (training_memory(w, 8, s) for s in (Sharding.ZERO1, Sharding.ZERO2, Sharding.ZERO3))
    assert z1.optimizer == pytest.approx(one.optimizer / 8) and z1.gradients == one.gradients
    assert z2.gradients == pytest.approx(one.gradients / 8) and z2.weights == one.weights
    assert z3.weights == pytest.approx(one.weights / 8)


def test_korthikanti_activation_formula() -> None:
    w = train(seq_len=2048, flash_attention=False, precision=Precision.BF16)
    a = w.arch
    s, h, heads, layers, v = 2048, a.hidden, a.heads, a.layers, a.vocab
    # plus the logits at the loss: 16-bit, their fp32 upcast, log-softmax's fp32 output and the fp32 gradient of the
    # logits at the loss's backward, 2 + 4 + 4 + 4 bytes
    expected = layers * s * h * (34 + 5 * heads * s / h) + s * v * 14  # type: ignore[operator]
    assert activation_bytes_per_sample(w, Recompute.NONE) == pytest.approx(expected)
    flash = activation_bytes_per_sample(train(seq_len=2048), Recompute.NONE)
    full = activation_bytes_per_sample(train(seq_len=2048), Recompute.FULL)
    assert full < flash < expected  # type: ignore[operator]


def test_70b_bf16_adamw_fits_no_single_gpu_but_fits_sharded() -> None:
    w = train("llama-2-70b", seq_len=4096, precision=Precision.BF16, optimizer=Optimizer.ADAMW)
    for spec in Catalog.shipped().gpus.values():
        assert layout(w, spec.vram_gb, 1) is None, spec.key
    few = fewest_gpus(w, 80)
    assert few is not None and 8 < few.gpus <= 32
    assert layout(w, 80, few.gpus) is not None and layout(w.model_copy(update={"sharding": Sharding.ZERO3}), 80,
                                                          few.gpus - 1) is None


def test_7b_full_finetune_needs_sharding_on_one_a100() -> None:
    w = train("llama-2-7b", seq_len=4096)
    # without optimizer offload; with it (auto) one A100 holds the 16-bit weights, 12.6 GiB, and the states go to the
    # host
    assert layout(w.model_copy(update={"offload": Offload.NONE}), 80, 1) is None
    one = layout(w, 80, 1)
    assert one is not None and one.offload
    lay = layout(w, 80, 8)
    assert lay is not None and lay.sharding is not Sharding.NONE


def test_lambda_bert_batch_sizes() -> None:
    """Lambda's batch sizes are large batches that fit, not OOM thresholds: the model may only exceed them modestly.

    The newer v1/v2 suite fills memory; the older v0 suite ran about half of what fits.
    """
    checks = lambda_batch_checks(Catalog.shipped())
    v1 = [c.ratio for c in checks if c.suite == "lambda-pytorch-v1v2"]
    v0 = [c.ratio for c in checks if c.suite == "lambda-pytorch-v0"]
    assert len(v1) >= 40 and len(v0) >= 40
    assert 0.9 <= statistics.median(v1) <= 1.15
    assert min(v1) >= 0.9 and max(v1) <= 1.3  # within 10% below / 30% above every measured batch
    assert all(r >= 0.9 for r in v0)


@settings(max_examples=40, deadline=None)
@given(vram=st.floats(4, 200), extra=st.floats(0, 100), seq=st.integers(128, 8192))
def test_more_vram_never_lowers_max_batch(vram: float, extra: float, seq: int) -> None:
    m = training_memory(train("gpt2", seq_len=seq))
    assert (m.max_batch(vram + extra) or 0) >= (m.max_batch(vram) or 0)


@settings(max_examples=40, deadline=None)
@given(seq=st.integers(1, 16384), more=st.integers(0, 16384), flash=st.booleans(),
       rc=st.sampled_from([Recompute.NONE, Recompute.SELECTIVE, Recompute.FULL]))
def test_longer_sequence_never_lowers_activation_memory(seq: int, more: int, flash: bool, rc: Recompute) -> None:
    a = activation_bytes_per_sample(train("llama-2-7b", seq_len=seq, flash_attention=flash), rc)
    b = activation_bytes_per_sample(train("llama-2-7b", seq_len=seq + more, flash_attention=flash), rc)
    assert b >= a  # type: ignore[operator]


def test_zero3_holds_two_gathered_layers_of_16_bit_weights_on_every_gpu() -> None:
    from planner.workload.params import param_groups

    w = train("llama-2-70b", seq_len=4096, precision=Precision.BF16)
    g = param_groups(w)
    one_layer = (g.dense - g.embeddings) * 2 / w.arch.layers / 2**30  # type: ignore[operator]
    sharded = training_memory(w, 16, Sharding.ZERO3, Recompute.FULL)
    assert sharded.gathered == pytest.approx(2 * one_layer)  # 3.2 GiB for 70B: a layer is ~0.86B params
    assert training_memory(w, 16, Sharding.ZERO2, Recompute.FULL).gathered == 0
    assert training_memory(w, 1, Sharding.ZERO3, Recompute.FULL).gathered == 0  # nothing to gather alone
    # it counts against the fit: more GPUs are needed than the sharded states alone ask
    assert sharded.fixed == pytest.approx(sharded.weights + sharded.gradients + sharded.optimizer + sharded.gathered
                                          + sharded.overhead)


def test_measured_usable_memory_is_below_the_label_and_sourced() -> None:
    from pricing.datafiles import data_rows

    gpus = Catalog.shipped().gpus
    rows = data_rows("usable_vram.csv", "planner.data")
    assert len(rows) >= 8
    for r in rows:
        label = gpus[r["gpu"]].vram_gb
        # the driver's and ECC's share: a few percent of the label, never more than it
        assert 0.9 * label <= float(r["usable_gib"]) < label, r
        assert r["source"].startswith("https://github.com/") and "VERIFIED" in r["notes"], r


def test_a_fit_is_against_the_usable_memory_where_it_was_measured() -> None:
    from planner.workload.fit import fit_entries
    from planner.workload.memory import usable_vram

    cat = Catalog.shipped()
    l40s, h200 = cat.gpus["L40S"], cat.gpus["H200-SXM-141GB"]
    assert usable_vram(l40s)[0] == 44.42 and usable_vram(h200)[0] == h200.vram_gb  # no measurement: the label
    w = train("llama-2-7b", seq_len=4096, precision=Precision.BF16)
    (entry,) = fit_entries(w, [l40s], 1, cat)
    assert (entry["vram_gb"], entry["usable_gb"]) == (48, 44.42) and "github.com" in entry["usable_basis"]
    lay = layout(w, 44.42, 4)
    assert lay is not None and entry["fewest_gpus"]["gpus"] == fewest_gpus(w, 44.42).gpus  # type: ignore[union-attr]


def test_16_bit_adam_keeps_its_moments_in_16_bits_and_no_master_copy() -> None:
    # NeMo's distributed_fused_adam with dtype bf16 (NVIDIA's Nemotron-4 340B config): m and v 2 B each, no fp32 master:
    # 2 + 2 + 4 = 8 B a parameter, against mixed-precision AdamW's 2 + 2 + 12 = 16
    assert state_bytes_per_param(Precision.BF16, Optimizer.ADAMW_BF16) == (2.0, 2.0, 4.0)
    assert state_bytes_per_param(Precision.BF16, Optimizer.ADAMW) == (2.0, 2.0, 12.0)
    # in fp32 training the weights are the master copy: fp32 moments, as AdamW
    assert state_bytes_per_param(Precision.FP32, Optimizer.ADAMW_BF16) == state_bytes_per_param(Precision.FP32,
                                                                                                Optimizer.ADAMW)


def test_optimizer_names_parse_with_or_without_their_dash() -> None:
    from planner.units import parse_enum
    from planner.workload.spec import Sharding

    assert parse_enum(Optimizer, "adamw-bf16", "--optimizer") is Optimizer.ADAMW_BF16
    assert parse_enum(Optimizer, " AdamW-BF16 ", "--optimizer") is Optimizer.ADAMW_BF16
    assert parse_enum(Optimizer, "adam-8bit", "--optimizer") is Optimizer.ADAM_8BIT  # dashes forgiven as before
    assert parse_enum(Sharding, "zero-3", "--sharding") is Sharding.ZERO3
