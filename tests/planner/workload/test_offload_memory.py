"""CPU optimizer offload (ZeRO-Offload) in the memory fit: hand-checked against the ZeRO-Offload paper's headline."""

from __future__ import annotations

import pytest

from planner.workload.inputs import arch_for, workload_from_options
from planner.workload.memory import GIB, fewest_gpus, layout, training_memory
from pricing.errors import InputError
from planner.workload.spec import Offload, Recompute, Sharding, TrainingWorkload

P7, P13 = 6_738_415_616, 13_015_864_320  # llama-2-7b and -13b parameter counts (planner/data/models.csv)
BUCKET_GIB = 5e8 * 2 / GIB  # DeepSpeed's default reduce bucket, 5e8 bf16 elements: 0.931 GiB


def _w(model: str, **kw: object) -> TrainingWorkload:
    return TrainingWorkload(arch=arch_for(model, None), **kw)  # type: ignore[arg-type]


def test_13b_trains_on_one_v100_32gb_only_with_offload() -> None:
    """ZeRO-Offload abstract (arXiv 2101.06840): 'train models with over 13 billion parameters on a single GPU'
    (a 32 GB V100). By hand at seq 1024, llama-2-13b (40 layers, hidden 5120, vocab 32000):
    GPU: weights 13.016e9 x 2 B = 24.244 GiB, one bucket 0.931, overhead 1.25 -> 26.425 GiB fixed;
    usable 32 (the label) less 8% headroom 2.56 -> 3.015 GiB for activations.
    Full recompute per sample: layer inputs 2 x 1024 x 5120 x 40 = 419.4 MB, one layer's activations
    34 x 1024 x 5120 = 178.3 MB, logits 1024 x 32000 x 14 B = 458.8 MB -> 1.0564e9 B = 0.984 GiB: micro-batch 3
    (3.015 / 0.984 = 3.06). Selective keeps 34 x 1024 x 5120 x 40 = 7.13e9 B = 6.6 GiB: does not fit.
    Host: 13.016e9 x (12 optimizer + 4 fp32 gradient) B = 193.95 GiB.
    Without offload even the optimizer alone (12 B/param = 145 GiB) is over 32 GiB."""
    w = _w("llama-2-13b", seq_len=1024)
    lay = layout(w, 32.0, 1)
    assert lay is not None and lay.offload and lay.sharding is Sharding.NONE
    assert lay.recompute is Recompute.FULL and lay.max_batch == 3
    m = lay.memory
    assert m.weights == pytest.approx(P13 * 2 / GIB) and m.weights == pytest.approx(24.244, abs=1e-3)
    assert m.gradients == pytest.approx(BUCKET_GIB) and m.optimizer == 0.0
    assert m.activations_per_sample == pytest.approx((2 * 1024 * 5120 * 40 + 34 * 1024 * 5120 + 1024 * 32000 * 14)
                                                     / GIB)
    assert m.host_offloaded == pytest.approx(193.95, abs=0.01)
    assert m.as_dict(3)["host_offloaded"] == pytest.approx(193.95, abs=0.01)
    assert layout(w.model_copy(update={"offload": Offload.NONE}), 32.0, 1) is None


def test_7b_full_adamw_fits_a_4090_only_with_offload() -> None:
    """llama-2-7b, bf16 AdamW, seq 2048 on an RTX 4090 (23.52 GiB usable, measured): weights 12.551 + bucket 0.931 +
    overhead 1.25 = 14.732; headroom 8% x 23.52 = 1.882 -> 6.906 GiB free. Full recompute per sample: 2 x 2048 x
    4096 x 32 + 34 x 2048 x 4096 + 2048 x 32000 x 14 = 1.7396e9 B = 1.620 GiB -> micro-batch 4.
    Host RAM 6.738e9 x 16 B = 100.41 GiB. Without offload: 16 B/param = 100 GiB on the card."""
    w = _w("llama-2-7b")
    lay = layout(w, 23.52, 1)
    assert lay is not None and lay.offload and lay.recompute is Recompute.FULL and lay.max_batch == 4
    assert lay.memory.host_offloaded == pytest.approx(P7 * 16 / GIB) == pytest.approx(100.41, abs=0.01)
    assert layout(w.model_copy(update={"offload": Offload.NONE}), 23.52, 1) is None
    assert "100.4 GiB of host RAM" in lay.describe()


def test_auto_prefers_no_offload_where_something_fits() -> None:
    # GPT-2 (124M) fits one 80 GB card without offload, so auto does not use it
    small = _w("gpt2")
    lay = layout(small, 80.0, 1)
    assert lay is not None and not lay.offload
    # pinned: used even where it is not needed
    pinned = layout(small.model_copy(update={"offload": Offload.CPU}), 80.0, 1)
    assert pinned is not None and pinned.offload


def test_zero2_offload_divides_host_states_and_keeps_weights_whole() -> None:
    """4 GPUs, ZeRO-2 + offload: each GPU keeps all 16-bit weights (12.551 GiB) and a bucket; its host process keeps
    a quarter of the states, 100.41 / 4 = 25.10 GiB."""
    w = _w("llama-2-7b")
    m = training_memory(w, 4, Sharding.ZERO2, Recompute.FULL, offload=True)
    assert m.weights == pytest.approx(P7 * 2 / GIB)
    assert m.gradients == pytest.approx(BUCKET_GIB) and m.optimizer == 0.0
    assert m.host_offloaded == pytest.approx(P7 * 16 / 4 / GIB)
    # a model smaller than one bucket keeps its own gradient size: 1e8 x 2 B
    tiny = TrainingWorkload(arch=arch_for(None, 1e8))
    assert training_memory(tiny, 1, offload=True).gradients == pytest.approx(1e8 * 2 / GIB)
    assert training_memory(w, 4, Sharding.ZERO2).host_offloaded == 0.0


def test_fewest_gpus_counts_sharded_gpus_unless_offload_is_pinned() -> None:
    w = _w("llama-2-7b")
    few = fewest_gpus(w, 23.52)
    assert few is not None and few.gpus > 1 and not few.offload  # "fewest GPUs sharded": the states on the GPUs
    pinned = fewest_gpus(w.model_copy(update={"offload": Offload.CPU}), 23.52)
    assert pinned is not None and pinned.gpus == 1 and pinned.offload


@pytest.mark.parametrize("flags", [{"method": "lora"}, {"method": "qlora"}, {"sharding": "zero3"},
                                   {"sharding": "zero1"}])
def test_offload_cpu_refuses_what_it_does_not_model(flags: dict[str, str]) -> None:
    with pytest.raises(InputError, match="offload"):
        workload_from_options(model="llama-2-7b", offload="cpu", **flags)  # type: ignore[arg-type]


def test_adapters_never_offload_under_auto() -> None:
    w = workload_from_options(model="llama-2-13b", method="lora")
    assert isinstance(w, TrainingWorkload)
    lay = layout(w, 23.52, 1)
    assert lay is None or not lay.offload
