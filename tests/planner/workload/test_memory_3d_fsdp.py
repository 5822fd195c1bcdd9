"""Per-GPU memory of FSDP x TP (planner/workload/memory_3d.py, ``zero == 3``), counted by hand."""

from __future__ import annotations

import pytest

from planner.perf.split import Degrees
from planner.workload.memory import GIB
from planner.workload.memory_3d import max_micro_batch, memory_3d
from planner.workload.spec import Recompute, TrainingWorkload, TransformerArch

# Llama 3.1 405B as heldout_throughput.csv's torchtitan row gives it: 126 layers, hidden 16384, 128 heads, vocab 128256,
# params 2 x 128256 x 16384 + 126 x (2 x 16384^2 + 2 x 16384 x 1024 + 3 x 16384 x 53248) = 405.85e9 (the row's count)
LLAMA_405B = TransformerArch(name="llama-405b-test", params=405.85e9, layers=126, hidden=16384, heads=128, vocab=128256)
FSDP_TP8 = Degrees(tp=8, pp=1, ep=1, dp=16, zero=3)  # 128 x 80 GB: 8 tensor ranks x 16 FSDP replicas


def _w405(**kw: object) -> TrainingWorkload:
    return TrainingWorkload(arch=LLAMA_405B, tokens=1e12, seq_len=8192, **kw)  # type: ignore[arg-type]


def test_405b_tp8_zero3_memory_on_80gb_by_hand() -> None:
    m = memory_3d(_w405(), FSDP_TP8, Recompute.FULL)
    # a GPU's share: 405.85e9 / 8 tensor ranks / 16 replicas = 3.17070e9 params; 2 B weights, 2 B gradients, 12 B
    # AdamW states (fp32 master, m, v), every one of them sharded over the replicas
    share = 405.85e9 / 8 / 16
    assert share == pytest.approx(3.170703e9, rel=1e-6)
    assert m.weights * GIB == pytest.approx(share * 2)  # 6.341e9 B = 5.906 GiB
    assert m.gradients * GIB == pytest.approx(share * 2)  # 5.906 GiB
    assert m.optimizer * GIB == pytest.approx(share * 12)  # 38.05e9 B = 35.43 GiB
    # gathered: two transformer blocks (one computing, one prefetched) and the output head, of the 1/8 tensor share,
    # 2 B each. Block: (405.85e9 - 2 x 128256 x 16384 = 4.2027e9 embeddings) / 126 = 3.18767e9 params; head:
    # 128256 x 16384 = 2.10135e9. (2 x 3.18767e9 + 2.10135e9) / 8 x 2 B = 2.11917e9 B = 1.9737 GiB
    block = (405.85e9 - 2 * 128256 * 16384) / 126
    assert block == pytest.approx(3.18767e9, rel=1e-5)
    assert m.gathered * GIB == pytest.approx((2 * block + 128256 * 16384) / 8 * 2, rel=1e-9)
    assert m.gathered == pytest.approx(1.9737, abs=1e-4)
    # activations a sequence, full recompute, sequence parallel over 8: 126 layer inputs of 2 x 8192 x 16384 / 8 B
    # = 33,554,432 B each (4,227,858,432 B), one layer recomputed 8192 x 16384 x 34 / 8 = 570,425,344 B, and the
    # logits with their gradient 8192 x 128256 x 14 / 8 = 1,838,678,016 B: 6,636,961,792 B = 6.1811 GiB
    assert m.activations_per_sample * GIB == pytest.approx(126 * 33_554_432 + 570_425_344 + 1_838_678_016)
    # fixed: 5.906 + 5.906 + 35.435 + 1.974 + overhead 1.25 + NCCL 0.5 = 50.970 GiB; 80 GB less the 8% headroom
    # (6.4) leaves 22.63 GiB: 3 sequences of 6.181 GiB
    fixed = (share * 16 + (2 * block + 128256 * 16384) / 8 * 2) / GIB + 1.25 + 0.5
    assert fixed == pytest.approx(50.970, abs=1e-3)
    assert max_micro_batch(_w405(), FSDP_TP8, Recompute.FULL, 80.0) == int((80.0 - 6.4 - fixed) // 6.1811) == 3
    # ZeRO-1 keeps the share's weights and gradients whole: 405.85e9 / 8 x 4 B = 202.9e9 B = 189 GiB, over 80 GB
    assert max_micro_batch(_w405(), Degrees(tp=8, pp=1, ep=1, dp=16), Recompute.FULL, 80.0) == 0
