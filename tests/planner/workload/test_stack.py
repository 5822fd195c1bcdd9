"""The training software a run uses (--stack, data/stacks.csv): which per-micro-batch costs its GPUs pay."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from planner.workload.estimate import estimate_training
from planner.workload.inputs import workload_from_options
from planner.workload.spec import Recompute, Stack, TrainingWorkload
from pricing.catalog import Catalog
from pricing.datafiles import data_rows

CAT = Catalog.shipped()
Run = Callable[..., tuple[int, str, str]]


def util(stack: str, gpu: str = "h100", mb: int = 1, model: str = "llama-2-13b", seq: int = 4096) -> float:
    w = workload_from_options(model=model, tokens=1e10, seq_len=seq, overhead=0.0, stack=stack)
    assert isinstance(w, TrainingWorkload)
    e = estimate_training(w, CAT.gpu(gpu), 16, recompute=Recompute.NONE, catalog=CAT, micro_batch=mb)
    return float(e.assumptions["hardware_utilization"])


def test_every_stack_has_one_sourced_row() -> None:
    rows = data_rows("stacks.csv", "planner.data")
    assert sorted(r["stack"] for r in rows) == sorted(s.value for s in Stack)
    assert all(r["per_microbatch_term"] in ("charged", "not charged") and r["source"] and r["as_of"] for r in rows)
    # the keyed anchors ran on PyTorch FSDP, so that stack (the default) pays the term they were fitted with
    assert next(r for r in rows if r["stack"] == "pytorch")["per_microbatch_term"] == "charged"
    assert TrainingWorkload.model_fields["stack"].default is Stack.PYTORCH


def test_the_dropped_term_is_fixed_seconds_per_micro_batch() -> None:
    # what megatron/jax drop is a fixed cost per micro-batch: in seconds per FLOP (1/u) it is c2 x 4096/tokens, so the
    # gap between the stacks' inverse utilisations halves when the micro-batch doubles (same sequence, so the same
    # attention share; 1 x 4096 and 2 x 4096 tokens both lie inside the Hopper anchors' 4,096-65,536)
    gap1 = 1 / util("pytorch", mb=1) - 1 / util("megatron", mb=1)
    gap2 = 1 / util("pytorch", mb=2) - 1 / util("megatron", mb=2)
    assert gap1 > 0
    assert gap1 / gap2 == pytest.approx(2.0, rel=5e-3)  # the utilisations are given to 4 digits
    # the other terms stay: a megatron GPU is still below its peak, and jax drops the same term
    assert util("megatron") < 1.0
    assert util("jax") == util("megatron")


def test_gpus_without_keyed_anchors_keep_their_tiers() -> None:
    # V100 has no keyed anchors: its utilisation is the median tier of whole published runs (their stacks' costs
    # inside), which the stack does not change
    assert util("megatron", gpu="v100") == util("pytorch", gpu="v100")


def test_cli_takes_the_stack_and_says_what_it_changes(gpuplan: Run) -> None:
    common = ["estimate", "--model", "llama-2-13b", "--gpu", "h100", "--gpus", "16", "--tokens", "1e10",
              "--seq-len", "4096", "--batch", "1", "--json"]
    (code_m, out_m, err_m), (code_p, out_p, err_p) = gpuplan(*common, "--stack", "megatron"), gpuplan(*common)
    assert code_m == 0 and code_p == 0, err_m + err_p
    mj, pj = json.loads(out_m), json.loads(out_p)
    assert "megatron stack: the per-micro-batch term" in mj["assumptions"]["mfu_basis"]
    assert "stack" not in pj["assumptions"]["mfu_basis"]
    assert mj["gpu_hours"]["expected"] < pj["gpu_hours"]["expected"]
    code, _, err = gpuplan(*common, "--stack", "deepspeed")
    assert code == 2 and "unknown --stack 'deepspeed'" in err and "pytorch, megatron, jax" in err
    assert "Traceback" not in err
