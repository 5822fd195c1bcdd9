"""The flags that describe a served model's load and latency, shared by estimate --serve and plan --serve."""

# No `from __future__ import annotations`: typer evaluates option annotations at run time.

from typing import Annotated, Optional

import typer

PANEL = "Serving"

ServeOpt = Annotated[Optional[str], typer.Option(
    "--serve", help="Serve this model (a preset, or 'custom' with --params) instead of training one.", rich_help_panel=PANEL)]
PromptTokensOpt = Annotated[Optional[int], typer.Option(
    "--prompt-tokens", help="Tokens in each request's prompt. [default: 1000]", rich_help_panel=PANEL)]
OutputTokensOpt = Annotated[Optional[int], typer.Option(
    "--output-tokens", help="Tokens in each answer. [default: 300]", rich_help_panel=PANEL)]
TtftOpt = Annotated[Optional[str], typer.Option(
    "--ttft", help="Time-to-first-token target, e.g. 1s or 800ms.", rich_help_panel=PANEL)]
TpotOpt = Annotated[Optional[str], typer.Option(
    "--tpot", help="Time-per-output-token target, e.g. 50ms.", rich_help_panel=PANEL)]
PercentileOpt = Annotated[Optional[str], typer.Option(
    "--percentile", help="Which TTFT the target bounds: p50 or p95. [default: p50]", rich_help_panel=PANEL)]
KvPrecisionOpt = Annotated[Optional[str], typer.Option(
    "--kv-precision", help="KV-cache format: fp16, bf16 or fp8. [default: fp16]", rich_help_panel=PANEL)]
MaxBatchOpt = Annotated[Optional[int], typer.Option(
    "--max-batch", help="Most sequences a replica runs at once (vLLM --max-num-seqs). [default: 256]",
    rich_help_panel=PANEL)]
RateOpt = Annotated[Optional[str], typer.Option(
    "--rate", help="Average load in requests per second, e.g. 20, 1200/min or 50000/d, or output tokens, e.g. 6000tok/s.", rich_help_panel=PANEL)]
HoursPerDayOpt = Annotated[Optional[float], typer.Option(
    "--hours-per-day", help="Hours a day the service runs. [default: 24]", rich_help_panel=PANEL)]
PeakRatioOpt = Annotated[Optional[float], typer.Option(
    "--peak-ratio", help="Peak load over the average: the fleet is sized for the peak. [default: 1]",
    rich_help_panel=PANEL)]
MonthsOpt = Annotated[Optional[int], typer.Option(
    "--months", help="Horizon the monthly cost is averaged over (terms, purchases). [default: 36]", rich_help_panel=PANEL)]
AllowSpotOpt = Annotated[bool, typer.Option(
    "--allow-spot", help="Let spot instances serve (they can be taken back mid-request).", rich_help_panel=PANEL)]
