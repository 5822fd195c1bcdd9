"""A tensor/pipeline split the user pins (--tp/--pp): timed as given, or refused with the reason."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

Run = Callable[..., tuple[int, str, str]]


def scaling(gpuplan: Run, *args: str) -> dict:
    code, out, err = gpuplan("estimate", "--tokens", "1e10", "--json", *args)
    assert code == 0, err
    return json.loads(out)["scaling"]


def test_the_pinned_split_is_timed_with_its_tensor_traffic(gpuplan: Run) -> None:
    # Llama 2 70B on 32 H100 (4 x 8 over NVSwitch) at tp8 x pp2, micro-batch 1 x 4096, no recompute: each GPU's stage
    # holds 40 layers, each with 4 ring all-reduces of 4096 x 8192 x 2 bytes, 2 x 7/8 of it sent:
    # 40 x 4 x 2 x 0.875 x 4096 x 8192 x 2 = 1.879e10 bytes over NVLink 4's 337.5 GB/s = 0.0557 s a micro-batch
    s = scaling(gpuplan, "--model", "llama-2-70b", "--gpu", "h100", "--gpus", "32", "--seq-len", "4096",
                "--batch", "1", "--recompute", "none", "--tp", "8", "--pp", "2")
    assert s["tensor_parallel"] == 8 and s["pipeline_parallel"] == 2 and s["data_parallel"] == 2
    assert s["layout"].startswith("tp8+pp2")
    assert s["tp_s_per_microbatch"] == pytest.approx(40 * 4 * 2 * 0.875 * 4096 * 8192 * 2 / 337.5e9, rel=1e-3)
    assert s["alternatives"] == []  # nothing competes with a pinned split


def test_tp1_pp1_keeps_the_job_data_parallel(gpuplan: Run) -> None:
    # Llama 3 70B on 64 H100 at 1 x 8192 tokens on the megatron stack: the search picks a tensor/pipeline split;
    # --tp 1 --pp 1 asks for data parallelism alone
    common = ("--model", "llama-3-70b", "--gpu", "h100", "--gpus", "64", "--seq-len", "8192", "--batch", "1",
              "--stack", "megatron")
    assert "tensor_parallel" in scaling(gpuplan, *common)
    dp = scaling(gpuplan, *common, "--tp", "1", "--pp", "1")
    assert "tensor_parallel" not in dp and dp["strategy"] in ("ddp", "zero1", "zero2", "zero3", "hsdp")


@pytest.mark.parametrize(("args", "says"), [
    (["--gpu", "l40s", "--gpus", "8", "--tp", "2"], "tensor parallelism runs inside an NVLink node"),
    (["--gpu", "h100", "--gpus", "8", "--tp", "3"], "3 tensor-parallel GPUs do not divide a node's 8"),
    (["--gpu", "h100", "--gpus", "8", "--pp", "3"], "3 pipeline stages do not divide"),
    (["--gpu", "h100", "--gpus", "1", "--tp", "2"], "--tp/--pp split a job over several GPUs"),
    (["--gpu", "h100", "--gpus", "8", "--tp", "0"], "--tp must be a whole number of 1 or more"),
    (["--gpu", "h100", "--gpus", "8", "--tp", "2", "--method", "lora"], "distributed optimizer (ZeRO-1)"),
])
def test_a_split_that_cannot_run_is_an_error_not_a_silent_fallback(gpuplan: Run, args: list[str], says: str) -> None:
    code, out, err = gpuplan("estimate", "--model", "llama-2-7b", "--tokens", "1e10", *args)
    assert code == 2 and says in err and "Traceback" not in err
    assert out == ""


def test_plan_keeps_the_offers_that_can_run_the_split(gpuplan: Run) -> None:
    code, out, err = gpuplan("plan", "--model", "llama-2-70b", "--tokens", "2e11", "--deadline", "30d", "--tp", "8",
                             "--json", "--limit", "0")
    assert code == 0, err
    j = json.loads(out)
    assert j["options"] and all(o["scaling"]["tensor_parallel"] == 8 for o in j["options"])
    # an offer of one or four GPUs a node cannot hold eight tensor ranks: excluded, with the reason
    reasons = [e["reason"] for e in j["excluded"]]
    assert any("8 tensor-parallel GPUs do not divide a node's 1" in r for r in reasons)
