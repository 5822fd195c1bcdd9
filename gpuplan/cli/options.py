"""What every command shares: option types, settings and catalog from flags, output helpers.

A leaf of the CLI package: command modules import it, it imports no command module.
"""

# No `from __future__ import annotations` here: typer would have to eval every option
# annotation of every command at start-up, which costs a cold `gpuplan plan` ~0.1 s.

import sys
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from pricing.errors import InputError

if TYPE_CHECKING:
    from pricing.catalog import Catalog
    from gpuplan.settings import Settings

OutputOpt = Annotated[Optional[str], typer.Option("--output", "-o", help="table, json, csv or markdown.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Shortcut for -o json.")]
CurrencyOpt = Annotated[Optional[str], typer.Option("--currency", help="Display currency: USD or CNY. [default: USD]")]
FxOpt = Annotated[
    Optional[list[str]],
    typer.Option("--fx", help="Exchange rate to use, e.g. USD/CNY=7.1 (repeatable); overrides the shipped rate."),
]
HoursPerMonthOpt = Annotated[
    Optional[float], typer.Option("--hours-per-month", help="Hours in a month for subscriptions. [default: 730]")
]
CatalogOpt = Annotated[
    Optional[list[Path]],
    typer.Option("--catalog", help="Extra catalog CSV (the `offers -o csv` columns) layered over shipped and refreshed prices (repeatable)."),
]
DiscountOpt = Annotated[
    Optional[list[str]],
    typer.Option("--discount", help="Enterprise discount on every price of a provider, e.g. aws=0.85 for 15% off (repeatable)."),
]
SpotPriceOpt = Annotated[
    Optional[str],
    typer.Option("--spot-price", help="typical (median over zones) or cheapest (the cheapest zone now). [default: typical]"),
]
ProviderOpt = Annotated[Optional[list[str]], typer.Option("--provider", help="tencent, aws or local (repeatable).")]
GpuFilterOpt = Annotated[Optional[list[str]], typer.Option("--gpu", help="Only these GPUs (repeatable; names are forgiving; a family such as v100 selects every variant).")]
RegionOpt = Annotated[Optional[list[str]], typer.Option("--region", help="Region or zone prefix, e.g. us-east-1, ap-guangzhou (repeatable; one no offer has is an error).")]
WideOpt = Annotated[bool, typer.Option("--wide", help="Show every table column at full width, however narrow the terminal.")]
MinVramOpt = Annotated[Optional[float], typer.Option("--min-vram", help="Least VRAM per GPU, in GB.")]

WorkloadFileOpt = Annotated[Optional[str], typer.Option("--workload", help="Workload TOML file (see examples/).")]
ModelOpt = Annotated[Optional[str], typer.Option("--model", help="Preset name, e.g. llama-2-7b, bert-large, resnet50.")]
ParamsOpt = Annotated[Optional[float], typer.Option("--params", help="Parameters, e.g. 7e9 (overrides the preset).")]
LayersOpt = Annotated[Optional[int], typer.Option("--layers", help="Transformer layers.")]
HiddenOpt = Annotated[Optional[int], typer.Option("--hidden", help="Hidden size.")]
HeadsOpt = Annotated[Optional[int], typer.Option("--heads", help="Attention heads.")]
KvHeadsOpt = Annotated[Optional[int], typer.Option("--kv-heads", help="Key/value heads (GQA).")]
VocabOpt = Annotated[Optional[int], typer.Option("--vocab", help="Vocabulary size.")]
TokensOpt = Annotated[Optional[float], typer.Option("--tokens", help="Training tokens, e.g. 2e10.")]
SeqLenOpt = Annotated[Optional[int], typer.Option("--seq-len", help="Training sequence length. [default: 2048]")]
BatchOpt = Annotated[Optional[int], typer.Option("--batch", help="Micro-batch per GPU (training) or sequences (inference).")]
PrecisionOpt = Annotated[Optional[str], typer.Option("--precision", help="fp32, fp16, bf16 or fp8. [default: bf16]")]
OptimizerOpt = Annotated[Optional[str], typer.Option("--optimizer", help="adamw, sgd, adafactor or adam8bit. [default: adamw]")]
RecomputeOpt = Annotated[Optional[str], typer.Option("--recompute", help="auto, none, selective or full. [default: auto]")]
FlashOpt = Annotated[Optional[bool], typer.Option("--flash/--no-flash", help="Flash attention. [default: on]")]
ShardingOpt = Annotated[Optional[str], typer.Option("--sharding", help="auto, none, zero1, zero2, zero3 or fsdp. [default: auto]")]
MfuOpt = Annotated[Optional[float], typer.Option("--mfu", help="Model FLOPs utilization, e.g. 0.4 (default: per GPU generation).")]
OverheadOpt = Annotated[Optional[float], typer.Option("--overhead", help="Goodput overhead, e.g. 0.1 = 10% (default: derived).")]
OverheadGbOpt = Annotated[Optional[float], typer.Option("--overhead-gb", help="Framework memory per GPU in GB. [default: 1.25]")]
ImagesOpt = Annotated[Optional[float], typer.Option("--images", help="Dataset images, e.g. 1281167 (image models).")]
EpochsOpt = Annotated[Optional[float], typer.Option("--epochs", help="Epochs over the images. [default: 1]")]
InferOpt = Annotated[bool, typer.Option("--infer", help="Inference (weights + KV cache) instead of training.")]
WeightBitsOpt = Annotated[Optional[int], typer.Option("--weight-bits", help="Inference weight bits: 16, 8 or 4. [default: 16]")]
ContextOpt = Annotated[Optional[int], typer.Option("--context", help="Inference context length. [default: 4096]")]
# Typed as text and parsed by planner.workload.spec so that 'abc', 'nan' or '-1' get one clear line.
MethodOpt = Annotated[Optional[str], typer.Option("--method", help="full, lora (frozen 16-bit base) or qlora (frozen 4-bit NF4 base). [default: full]")]
LoraRankOpt = Annotated[Optional[str], typer.Option("--lora-rank", help="LoRA adapter rank. [default: 16]")]
LoraTargetsOpt = Annotated[Optional[str], typer.Option("--lora-targets", help="Matrices with adapters: qv, attn or all-linear. [default: all-linear]")]
ActiveParamsOpt = Annotated[Optional[str], typer.Option("--active-params", help="Mixture of experts: parameters used per token, e.g. 12.9e9 (FLOPs use these).")]
ExpertsOpt = Annotated[Optional[str], typer.Option("--experts", help="Mixture of experts: routed experts per layer (for expert-parallel sharding).")]
ExpertsPerTokenOpt = Annotated[Optional[str], typer.Option("--experts-per-token", help="Mixture of experts: experts each token is routed to.")]


def settings_from(
    currency: str | None = None,
    fx: list[str] | None = None,
    hours_per_month: float | None = None,
    discount: list[str] | None = None,
    **more: Any,
) -> "Settings":
    from gpuplan.settings import load_settings

    return load_settings(
        currency=currency,
        fx=tuple(fx) if fx else None,
        hours_per_month=None if hours_per_month is None else Decimal(repr(hours_per_month)),
        discount=tuple(discount) if discount else None,
        **more,
    )


def catalog_from(settings: "Settings", files: list[Path] | None = None) -> "Catalog":
    """The catalog for this command: shipped < refreshed cache < config files < --catalog files."""
    from gpuplan.settings import load_catalog

    return load_catalog(settings, tuple(files or ()))


def use_wide(wide: bool) -> None:
    """Every table command sets it, so one run's --wide never leaks into the next in-process run."""
    from gpuplan.console import set_wide

    set_wide(wide)


def emit(text: str | None) -> None:
    if text is not None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


def parse_multi(values: list[str] | None, flag: str = "the option") -> list[str] | None:
    """Repeatable options that also accept comma-separated lists; an empty value is refused.

    ``--gpu ""`` would otherwise filter nothing and answer for every GPU.
    """
    if values is None:
        return None
    out = []
    for item in values:
        parts = [v.strip() for v in item.split(",")]
        if not any(parts):
            raise InputError(f"{flag} is empty", f"give a value, or leave {flag} out")
        out += [v for v in parts if v]
    return out or None


def not_empty(value: str | None, flag: str) -> str | None:
    """A single-valued option, refusing ``""`` (which would silently mean 'not given')."""
    if value is not None and not value.strip():
        raise InputError(f"{flag} is empty", f"give a value, or leave {flag} out")
    return value


def build_constraints(
    *,
    deadline: str | None,
    budget: str | None,
    min_vram: float | None,
    provider: list[str] | None,
    billing: list[str] | None,
    region: list[str] | None,
    gpu: list[str] | None,
    max_gpus: float | None,
    settings: "Settings",
    catalog: "Catalog",
) -> Any:
    cat = catalog
    from pricing.billing import BillingMode
    from providers.registry import parse_provider
    from planner.plan import Constraints
    from planner.limits import bounded
    from planner.units import parse_duration, parse_money, positive

    modes = None
    if (names := parse_multi(billing, "--billing")) is not None:
        try:
            modes = frozenset(BillingMode(b.lower()) for b in names)
        except ValueError:
            known = ", ".join(m.value for m in BillingMode)
            raise InputError(f"unknown billing mode in {', '.join(names)}", f"use {known}") from None
    gpus = None
    if (names := parse_multi(gpu, "--gpu")) is not None:
        gpus = frozenset(spec.key for g in names for spec in cat.gpu_family(g))
    deadline, budget = not_empty(deadline, "--deadline"), not_empty(budget, "--budget")
    return Constraints(
        deadline_hours=parse_duration(deadline) if deadline is not None else None,
        budget=parse_money(budget, settings.currency) if budget is not None else None,
        min_vram_gb=float(bounded(positive(min_vram, "--min-vram"), "min_vram")) if min_vram is not None else None,
        providers=frozenset(parse_provider(p, cat) for p in names) if (names := parse_multi(provider, "--provider")) else None,
        billing=modes,
        regions=tuple(r) if (r := parse_multi(region, "--region")) else None,
        gpus=gpus,
        max_gpus=float(bounded(positive(max_gpus, "--max-gpus"), "max_gpus")) if max_gpus is not None else None,
    )
