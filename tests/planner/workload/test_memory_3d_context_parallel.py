"""Memory of a context-parallel split: activations over cp, weights and gradients whole, optimizer over dp x cp."""

from __future__ import annotations

import pytest

from planner.perf.split import Degrees
from planner.workload.memory import GIB
from planner.workload.memory_3d import memory_3d
from planner.workload.spec import Recompute, TrainingWorkload, TransformerArch

# Llama 3 70B's shape: 80 layers, hidden 8192, 64 heads, 8 KV heads, vocab 128,256; 70.6e9 parameters
LLAMA3_70B = TransformerArch(name="llama-3-70b-mem-test", params=70.6e9, layers=80, hidden=8192, heads=64, kv_heads=8,
                             vocab=128256)


def test_cp2_halves_activations_and_shards_the_optimizer_over_dp_x_cp() -> None:
    w = TrainingWorkload(arch=LLAMA3_70B, tokens=1e12, seq_len=8192, context_parallel=2)
    m = memory_3d(w, Degrees(tp=4, pp=4, ep=1, dp=2, cp=2), Recompute.NONE)
    # a GPU holds 70.6e9 / (4 x 4) = 4.4125e9 parameters: 2 B weights, 2 B gradients, whatever cp
    assert m.weights * GIB == pytest.approx(4.4125e9 * 2)
    assert m.gradients * GIB == pytest.approx(4.4125e9 * 2)
    # 12 B of optimizer states (fp32 master, Adam m and v) sharded over dp x cp = 4 GPUs
    assert m.optimizer * GIB == pytest.approx(4.4125e9 * 12 / 4)
    # first stage, no recompute, flash attention: 80 layers' worth (4 micro-batches x 20 layers) of
    # 8192 x 8192 x 34 / 4 B (Korthikanti with sequence parallelism) = 4.5634e10 B a sequence, of which this GPU
    # holds its 4096 tokens' half; the last stage (20 layers + logits 8192 x 128,256 x 14 B / 4) is less
    first = 80 * 8192 * 8192 * 34 / 4
    assert m.activations_per_sample * GIB == pytest.approx(first / 2)  # type: ignore[operator]


def test_cp_divides_every_activation_term_interleaved_and_full_recompute_too() -> None:
    for rc in (Recompute.NONE, Recompute.SELECTIVE, Recompute.FULL):
        for v in (1, 4):
            one = memory_3d(TrainingWorkload(arch=LLAMA3_70B, tokens=1e12, seq_len=8192),
                            Degrees(4, 4, 1, 4, v), rc)
            four = memory_3d(TrainingWorkload(arch=LLAMA3_70B, tokens=1e12, seq_len=8192, context_parallel=4),
                             Degrees(4, 4, 1, 1, v, 4), rc)
            assert four.activations_per_sample == pytest.approx(one.activations_per_sample / 4)  # type: ignore[operator]
            # same 16 GPUs share the optimizer states either way (dp 4 or dp 1 x cp 4)
            assert four.optimizer == pytest.approx(one.optimizer)
            assert four.weights == pytest.approx(one.weights)
