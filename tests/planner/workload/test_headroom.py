"""Memory with headroom: a fit keeps 8% (at least 1.5 GiB) of usable memory free (issue 41)."""

from __future__ import annotations

import pytest

from planner.workload.fit import fit_entries
from planner.workload.inputs import workload_from_options
from planner.workload.memory import headroom_gb, training_memory
from planner.workload.spec import Recompute, Sharding
from tests.planner.workload.test_lora_moe import CAT


def test_headroom_is_eight_percent_with_a_floor() -> None:
    assert headroom_gb(23.52) == pytest.approx(1.8816)  # RTX 4090's usable 23.52 GiB
    assert headroom_gb(14.75) == 1.5  # T4: 8% would be 1.18 GiB
    assert headroom_gb(80.0) == pytest.approx(6.4)


def test_multi_gpu_jobs_count_nccl_buffers() -> None:
    w = workload_from_options(model="llama-2-7b", tokens=1e9)
    one, two = training_memory(w, 1, Sharding.NONE, Recompute.NONE), training_memory(w, 2, Sharding.NONE,
                                                                                      Recompute.NONE)
    assert two.overhead - one.overhead == pytest.approx(0.5)


@pytest.mark.parametrize(("model", "method", "gpu"), [
    ("llama-2-7b", "lora", "RTX-4090"), ("llama-2-13b", "qlora", "RTX-4090"), ("llama-2-7b", "qlora", "T4")])
def test_no_fit_says_fits_above_92_percent_of_usable_memory(model: str, method: str, gpu: str) -> None:
    """Before issue 41 these three said "fits" at 99.9%, 96.9% and 98.7% of usable memory without recompute."""
    w = workload_from_options(model=model, method=method, tokens=1e9)
    (e,) = fit_entries(w, [CAT.gpus[gpu]], 1, CAT)
    assert e["fits"]
    assert e["memory_gb"]["total"] <= 0.92 * e["usable_gb"]
    assert e["usable_gb"] - e["memory_gb"]["total"] >= 1.5
    assert e["layout"]["recompute"] != "none"  # near the edge the fit takes recompute for a larger batch
    assert e["headroom_note"] and "free for transient peaks" in e["headroom_note"]


def test_a_pinned_batch_that_only_fits_without_headroom_does_not_fit() -> None:
    w = workload_from_options(model="llama-2-7b", method="lora", tokens=1e9, recompute="full")
    (edge,) = fit_entries(w, [CAT.gpus["RTX-4090"]], 1, CAT)
    over = workload_from_options(model="llama-2-7b", method="lora", tokens=1e9, recompute="full",
                                 batch=edge["max_batch_size"] + 1)
    (e,) = fit_entries(over, [CAT.gpus["RTX-4090"]], 1, CAT)
    assert not e["fits"]
    assert "not counted as fitting" in e["headroom_note"]


def test_an_inference_fit_keeps_the_same_headroom() -> None:
    """Llama-2-13B at 8-bit weights on an RTX 4090 (usable 23.52 GiB), context 4096, by hand:
    weights 13,015,864,320 B = 12.122 GiB, + 1.25 GiB framework = 13.372; KV per sequence 2 x 40 layers x 40 heads x
    128 x 2 B x 4096 = 3.125 GiB. Without headroom 3 sequences fit (22.747 GiB, 96.7%); keeping 1.88 GiB free leaves
    21.638 GiB, so 2 (19.622 GiB, 83.4%). Before, `fit --infer` said max batch 3 and "fits" at 96.7%."""
    w = workload_from_options(model="llama-2-13b", infer=True, weight_bits=8, context=4096)
    (e,) = fit_entries(w, [CAT.gpus["RTX-4090"]], 1, CAT)
    assert e["fits"] and e["max_batch_size"] == 2
    assert e["memory_gb"]["total"] == pytest.approx(19.622, abs=0.002)
    assert e["used_share"] <= 0.92 and "max batch 2 rather than 3" in e["headroom_note"]
    pinned = workload_from_options(model="llama-2-13b", infer=True, weight_bits=8, context=4096, batch=3)
    (p,) = fit_entries(pinned, [CAT.gpus["RTX-4090"]], 1, CAT)
    assert not p["fits"] and p["used_share"] == pytest.approx(0.967, abs=0.001)
    assert "not counted as fitting" in p["headroom_note"]


@pytest.mark.parametrize("infer", [False, True])
def test_no_fit_of_any_shipped_gpu_says_fits_above_92_percent(infer: bool) -> None:
    """The issue's bar over every shipped GPU, for training (full, LoRA, QLoRA) and inference, at the max batch and
    at pinned batches: wherever `fit` says "fits", the total it reports is at most 92% of usable memory."""
    specs = sorted({s.key: s for s in CAT.gpus.values() if s.vram_gb}.values(), key=lambda s: s.key)
    checked = 0
    for model in ("gpt2-xl", "llama-2-7b", "llama-2-13b", "mixtral-8x7b"):
        for method in (("full",) if infer else ("full", "lora", "qlora")):
            for batch in (None, 1, 4):
                w = workload_from_options(model=model, infer=infer, batch=batch,
                                          **({"context": 4096} if infer else {"method": method, "seq_len": 2048}))
                for e in fit_entries(w, specs, 1, CAT):
                    if e["fits"]:
                        checked += 1
                        assert e["memory_gb"]["total"] <= 0.92 * e["usable_gb"] + 1e-9, (model, method, batch, e)
    assert checked > 50  # the sweep saw fits, not only refusals
