"""`gpuplan estimate --serve` and `plan --serve` as a user runs them: JSON contracts, layouts and errors."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

Run = Callable[..., tuple[int, str, str]]


def estimate(gpuplan: Run, *args: str) -> dict:
    code, out, err = gpuplan("estimate", "--serve", *args, "--json")
    assert code == 0, err
    return json.loads(out)


def test_estimate_serve_contract_has_a_range_around_the_expected_rate(gpuplan: Run) -> None:
    out = estimate(gpuplan, "llama-3-8b", "--gpu", "h100", "--precision", "fp8", "--prompt-tokens", "1000",
                   "--output-tokens", "300")
    t = out["output_tokens_per_s"]
    assert 0 < t["low"] < t["expected"] < t["high"]
    lay = out["max_throughput"]["layout"]
    assert lay["tensor_parallel"] == 1 and lay["replicas"] == 1
    assert lay["batch_per_replica"] <= 256  # vLLM's default --max-num-seqs
    r = out["max_throughput"]["requests_per_s"]["expected"]
    assert r == pytest.approx(t["expected"] / 300, rel=1e-3)
    assert out["workload"]["weights"] == "fp8" and out["gpu"] == "H100-SXM5-80GB"


def test_a_70b_model_needs_tensor_parallelism_on_80gb_cards(gpuplan: Run) -> None:
    one = estimate(gpuplan, "llama-3-70b", "--gpu", "h100", "--gpus", "1")
    assert one["fits"] is False and "do not fit" in one["reason"] and one["output_tokens_per_s"] is None
    eight = estimate(gpuplan, "llama-3-70b", "--gpu", "h100", "--gpus", "8")
    lay = eight["max_throughput"]["layout"]
    assert lay["tensor_parallel"] >= 2 and lay["tensor_parallel"] * lay["replicas"] == 8


def test_a_latency_target_trades_throughput_for_speed(gpuplan: Run) -> None:
    free = estimate(gpuplan, "llama-3-8b", "--gpu", "a100-80gb")
    tight = estimate(gpuplan, "llama-3-8b", "--gpu", "a100-80gb", "--tpot", "30ms")
    lay = tight["at_targets"]["layout"]
    assert lay["tpot_s"] <= 0.030 and lay["batch_limited_by"] == "latency"
    assert tight["at_targets"]["output_tokens_per_s"]["expected"] < free["output_tokens_per_s"]["expected"]
    impossible = estimate(gpuplan, "llama-3-8b", "--gpu", "l4", "--tpot", "5ms")
    assert "cannot meet" in impossible["at_targets"]["reason"]


def test_fp8_doubles_compute_bound_serving_on_an_h100_but_not_on_an_a100(gpuplan: Run) -> None:
    def rate(gpu: str, p: str) -> float:
        return estimate(gpuplan, "llama-3-8b", "--gpu", gpu, "--precision", p, "--max-batch", "64",
                        "--prompt-tokens", "4000", "--output-tokens", "50")["output_tokens_per_s"]["expected"]
    # long prompts make each iteration compute-bound: only Hopper has an fp8 matmul rate, twice its 16-bit one
    assert rate("h100", "fp8") / rate("h100", "bf16") == pytest.approx(2, rel=0.15)
    assert rate("a100-80gb", "fp8") / rate("a100-80gb", "bf16") == pytest.approx(1, rel=0.05)
    est = estimate(gpuplan, "llama-3-8b", "--gpu", "a100-80gb", "--precision", "fp8")
    assert any("no fp8 tensor rate" in n for n in est["notes"])


@pytest.mark.parametrize(("args", "says"), [
    (["--ttft", "1y"], "cannot read --ttft"),
    (["--percentile", "p99"], "unknown --percentile"),
    (["--tokens", "1e9"], "describes training"),
    (["--gpus", "1.5"], "whole number"),
    (["--precision", "fp4"], "unknown --precision"),
    (["--prompt-tokens", "0"], "--prompt-tokens must be"),
])
def test_bad_serving_input_is_a_message_not_a_traceback(gpuplan: Run, args: list[str], says: str) -> None:
    code, out, err = gpuplan("estimate", "--serve", "llama-3-8b", "--gpu", "h100", *args)
    assert code == 2 and says in err and "Traceback" not in err


def test_serving_flags_without_serve_say_what_is_missing(gpuplan: Run) -> None:
    code, _, err = gpuplan("estimate", "--model", "llama-2-7b", "--tokens", "1e9", "--gpu", "h100", "--ttft", "1s")
    assert code == 2 and "--serve" in err


def test_the_table_names_layout_latency_and_range(gpuplan: Run) -> None:
    code, out, err = gpuplan("estimate", "--serve", "llama-3-8b", "--gpu", "l40s", "--ttft", "1s")
    assert code == 0, err
    for word in ("max throughput", "layout", "TTFT", "range", "at the targets"):
        assert word in out
