"""FSDP x TP pinned from the command line (--tp N --sharding zero3/fsdp), searched beside ZeRO-1 under --tp alone,
and refused with the reason where gpuplan does not model it."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

Run = Callable[..., tuple[int, str, str]]

# Llama 3.1 405B's shape (heldout_throughput.csv's torchtitan row) on 128 H100 at 8192 tokens, full recompute, a
# 32-sequence step as torchtitan ran it (local batch 2 x 16 FSDP ranks)
LLAMA_405B = ("--params", "405.85e9", "--layers", "126", "--hidden", "16384", "--heads", "128", "--vocab", "128256",
              "--gpu", "h100", "--gpus", "128", "--seq-len", "8192", "--recompute", "full",
              "--global-batch", str(32 * 8192))


def scaling(gpuplan: Run, *args: str) -> dict:
    code, out, err = gpuplan("estimate", "--tokens", "1e10", "--json", *args)
    assert code == 0, err
    return json.loads(out)["scaling"]


@pytest.mark.parametrize("sharding", ["zero3", "fsdp"])
def test_pinned_fsdp_x_tp_is_timed_with_its_gathers(gpuplan: Run, sharding: str) -> None:
    s = scaling(gpuplan, *LLAMA_405B, "--tp", "8", "--sharding", sharding)
    assert s["layout"] == "tp8+zero3+full-recompute"
    assert (s["tensor_parallel"], s["pipeline_parallel"], s["data_parallel"]) == (8, 1, 16)
    # per micro-batch each GPU gathers its 2 B x 405.85e9 / 8 = 101.46e9 B forward and backward and reduce-scatters
    # the gradients over 16 replicas: 3 x 101.46e9 x 15/16 = 285.36e9 B; the replicas span 16 p5 nodes, whose NIC
    # carries the 8 tensor ranks' rings: 8 x 285.36e9 B over 3,200 Gbps EFA at 80% (320 GB/s) = 7.134 s
    assert s["fsdp_s_per_microbatch"] == pytest.approx(8 * 3 * 2 * 405.85e9 / 8 * 15 / 16 / 320e9, rel=1e-3)
    assert s["dp_s_per_step"] == 0.0
    # 32 sequences over 16 replicas: micro-batch 2, no accumulation (the fit allows up to 3 on 80 GB)
    assert s["micro_batch"] == 2
    assert s["alternatives"] == []  # the sharding was pinned too: nothing else was timed


def test_tp_alone_keeps_the_sharding_that_fits_and_says_why_the_other_lost(gpuplan: Run) -> None:
    # 405B at tp8 with ZeRO-1 keeps its share's weights and gradients whole (405.85e9 / 8 x 4 B = 189 GiB): only FSDP
    # fits a single stage, so --tp 8 --pp 1 gets FSDP x TP and says ZeRO-1 does not fit
    s = scaling(gpuplan, *LLAMA_405B, "--tp", "8", "--pp", "1")
    assert s["layout"] == "tp8+zero3+full-recompute"
    assert s["alternatives"] and s["alternatives"][0].startswith("tp8+zero1: does not fit")
    # Llama 2 70B on 64 H100 at 4096 tokens: both fit; FSDP frees the memory for a larger micro-batch, and the
    # alternative names ZeRO-1's share of its speed
    s = scaling(gpuplan, "--model", "llama-2-70b", "--gpu", "h100", "--gpus", "64", "--seq-len", "4096", "--tp", "8",
                "--pp", "1")
    layouts = {s["layout"].split("+")[1], s["alternatives"][0].split(" ")[0].split("+")[1]}
    assert layouts == {"zero1", "zero3"}
    assert "of the chosen layout's tokens per GPU-second" in s["alternatives"][0]


@pytest.mark.parametrize(("args", "says"), [
    (["--tp", "8", "--pp", "2", "--sharding", "zero3"], "FSDP under pipeline stages is not modelled"),
    (["--tp", "8", "--sharding", "fsdp", "--offload", "cpu"], "--offload cpu is modelled with ZeRO-2"),
    (["--tp", "8", "--sharding", "zero2"], "--sharding other than zero1, zero3 or fsdp"),
])
def test_fsdp_x_tp_that_gpuplan_does_not_model_is_refused(gpuplan: Run, args: list[str], says: str) -> None:
    code, out, err = gpuplan("estimate", "--model", "llama-2-70b", "--gpu", "h100", "--gpus", "64", "--tokens", "1e10",
                             *args)
    assert code == 2 and says in " ".join(err.split()) and "Traceback" not in err
    assert out == ""
