"""The flags that describe a served model, its load and latency: declared once, given to estimate, plan and tco
by :func:`takes_serving` in the groups each takes."""

# No `from __future__ import annotations`: typer evaluates option annotations at run time.

from typing import Annotated, Any, Callable, Optional, TypedDict

import typer

from gpuplan.cli.options import takes_flags

PANEL = "Serving"


class ServingFlags(TypedDict, total=False):
    serve: Annotated[Optional[str], typer.Option(
        "--serve", help="Serve this model (a preset, 'custom' with --params, or a service TOML file) instead of "
                        "training one.",
        rich_help_panel=PANEL)]
    rate: Annotated[Optional[str], typer.Option(
        "--rate", help="Average load in requests per second, e.g. 20, 1200/min or 50000/d, or output tokens, "
                       "e.g. 6000tok/s.",
        rich_help_panel=PANEL)]
    prompt_tokens: Annotated[Optional[int], typer.Option(
        "--prompt-tokens", help="Tokens in each request's prompt. [default: 1000]", rich_help_panel=PANEL)]
    output_tokens: Annotated[Optional[int], typer.Option(
        "--output-tokens", help="Tokens in each answer. [default: 300]", rich_help_panel=PANEL)]
    ttft: Annotated[Optional[str], typer.Option(
        "--ttft", help="Time-to-first-token target, e.g. 1s or 800ms.", rich_help_panel=PANEL)]
    tpot: Annotated[Optional[str], typer.Option(
        "--tpot", help="Time-per-output-token target, e.g. 50ms.", rich_help_panel=PANEL)]
    percentile: Annotated[Optional[str], typer.Option(
        "--percentile", help="Which TTFT the target bounds: p50 or p95. [default: p50]", rich_help_panel=PANEL)]
    kv_precision: Annotated[Optional[str], typer.Option(
        "--kv-precision", help="KV-cache format: fp16, bf16 or fp8. [default: fp16]", rich_help_panel=PANEL)]
    max_batch: Annotated[Optional[int], typer.Option(
        "--max-batch", help="Most sequences a replica runs at once (vLLM --max-num-seqs). [default: 256]",
        rich_help_panel=PANEL)]
    engine: Annotated[Optional[str], typer.Option(
        "--engine", help="Serving engine the plan assumes and --export runs: vllm, trtllm or sglang. [default: vllm]",
        rich_help_panel=PANEL)]
    hours_per_day: Annotated[Optional[float], typer.Option(
        "--hours-per-day", help="Hours a day the service runs. [default: 24]", rich_help_panel=PANEL)]
    peak_ratio: Annotated[Optional[float], typer.Option(
        "--peak-ratio", help="Peak load over the average: the fleet is sized for the peak. [default: 1]",
        rich_help_panel=PANEL)]
    max_load: Annotated[Optional[float], typer.Option(
        "--max-load", help="Most of the fleet's capacity the peak may use: headroom for random arrivals. "
        "[default: 0.8]", rich_help_panel=PANEL)]
    months: Annotated[Optional[int], typer.Option(
        "--months", help="Horizon the monthly cost is averaged over (terms, purchases). [default: 36]",
        rich_help_panel=PANEL)]
    allow_spot: Annotated[bool, typer.Option(
        "--allow-spot", help="Let spot instances serve (they can be taken back mid-request).", rich_help_panel=PANEL)]


# What each command takes: every serving command the model and request (MODEL); plan and tco the load
# (LOAD); plan its own horizon and hours (tco has --months and --hours-per-day of its own).
MODEL = frozenset({"serve", "prompt_tokens", "output_tokens", "ttft", "tpot", "percentile", "kv_precision",
                   "max_batch", "engine"})
LOAD = frozenset({"rate", "peak_ratio", "allow_spot", "max_load"})
HORIZON = frozenset({"hours_per_day", "months"})


def takes_serving(*groups: frozenset[str]) -> Callable[[Any], Any]:
    return takes_flags(ServingFlags, "serving", *groups)


def given(serving: ServingFlags) -> bool:
    """Whether any serving flag but --serve itself was given."""
    return any(v not in (None, False) for k, v in serving.items() if k != "serve")


def refuse_without_serve(serving: ServingFlags) -> None:
    """Serving flags describe a service: without --serve, say so rather than ignore them."""
    if serving.get("serve") is None and given(serving):
        from pricing.errors import InputError

        raise InputError("--rate, --prompt-tokens, --ttft and the other serving flags describe a service",
                         "add --serve MODEL")
