"""What every command shares: option types, settings and catalog from flags, output helpers.

A leaf of the CLI package: command modules import it, it imports no command module.
"""

# No `from __future__ import annotations` here: typer would have to eval every option
# annotation of every command at start-up, which costs a cold `gpuplan plan` ~0.1 s.

import functools
import inspect
import sys
from collections.abc import Callable, Iterable
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional, TypedDict, TypeVar, cast, get_args

import typer

from pricing.errors import InputError

if TYPE_CHECKING:
    from pricing.catalog import Catalog
    from planner.settings import Settings

OutputOpt = Annotated[Optional[str], typer.Option("--output", "-o", help="table, json, csv or markdown.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON, the stable contract the README describes.")]
CurrencyOpt = Annotated[Optional[str], typer.Option(
    "--currency", help="Display currency: USD, CNY, EUR, GBP, JPY, SGD or HKD. [default: USD]")]
FxOpt = Annotated[
    Optional[list[str]],
    typer.Option("--fx", help="Exchange rate to use, e.g. USD/CNY=7.1 (repeatable); overrides the shipped rate."),
]
HoursPerMonthOpt = Annotated[
    Optional[float], typer.Option("--hours-per-month", help="Hours in a month for subscriptions. [default: 730]")
]
CatalogOpt = Annotated[
    Optional[list[Path]],
    typer.Option("--catalog", help="Extra catalog CSV (the `offers -o csv` columns) layered over shipped and "
                                   "refreshed prices (repeatable)."),
]
DiscountOpt = Annotated[
    Optional[list[str]],
    typer.Option("--discount", help="Enterprise discount on every price of a provider, e.g. aws=0.85 for 15% off "
                                    "(repeatable)."),
]
SpotPriceOpt = Annotated[
    Optional[str],
    typer.Option("--spot-price", help="typical (median over zones) or cheapest (the cheapest zone now). "
                                      "[default: typical]"),
]
SpotEstimatesOpt = Annotated[
    bool,
    typer.Option("--spot-estimates", help="Also rank spot prices gpuplan estimated where no source lists one "
                                          "(marked *). [default: off]"),
]
ProviderOpt = Annotated[Optional[list[str]], typer.Option("--provider", help="tencent, aws or local (repeatable).")]
GpuFilterOpt = Annotated[Optional[list[str]], typer.Option(
    "--gpu", help="Only these GPUs (repeatable; names are forgiving; a family such as v100 selects every variant).")]
RegionOpt = Annotated[Optional[list[str]], typer.Option(
    "--region", help="Region or zone prefix, e.g. us-east-1, ap-guangzhou (repeatable; one no offer has is an error).")]
WideOpt = Annotated[bool, typer.Option(
    "--wide", help="Show every table column at full width, however narrow the terminal.")]
MinVramOpt = Annotated[Optional[float], typer.Option("--min-vram", help="Least VRAM per GPU, in GB.")]

class WorkloadFlags(TypedDict, total=False):
    """The workload flags a command took, by name, for ``workload_from_options(**flags)``.

    Each workload flag is declared here and nowhere else; :func:`takes_workload` gives a
    command the flags of its groups, in this order (the order of their --help lines).
    A flag the command does not take is absent, so workload_from_options uses its default.
    """

    workload_file: Annotated[Optional[str], typer.Option("--workload", help="Workload TOML file (see examples/).")]
    model: Annotated[Optional[str], typer.Option("--model", help="Preset name, e.g. llama-2-7b, bert-large, resnet50.")]
    params: Annotated[Optional[float], typer.Option("--params", help="Parameters, e.g. 7e9 (overrides the preset).")]
    layers: Annotated[Optional[int], typer.Option("--layers", help="Transformer layers.")]
    hidden: Annotated[Optional[int], typer.Option("--hidden", help="Hidden size.")]
    heads: Annotated[Optional[int], typer.Option("--heads", help="Attention heads.")]
    kv_heads: Annotated[Optional[int], typer.Option("--kv-heads", help="Key/value heads (GQA).")]
    vocab: Annotated[Optional[int], typer.Option("--vocab", help="Vocabulary size.")]
    tokens: Annotated[Optional[float], typer.Option("--tokens", help="Training tokens, e.g. 2e10.")]
    seq_len: Annotated[Optional[int], typer.Option("--seq-len", help="Training sequence length. [default: 2048]")]
    global_batch: Annotated[Optional[float], typer.Option(
        "--global-batch", help="Training tokens per optimizer step, all GPUs together. [default: 4e6, Llama 2's]")]
    batch: Annotated[Optional[int], typer.Option(
        "--batch", help="Micro-batch per GPU (training) or sequences (inference).")]
    precision: Annotated[Optional[str], typer.Option("--precision", help="fp32, fp16, bf16 or fp8. [default: bf16]")]
    optimizer: Annotated[Optional[str], typer.Option(
        "--optimizer", help="adamw, sgd, adafactor, adam8bit or adamw-bf16 (16-bit moments, no fp32 master copy, as "
        "NeMo's bf16 distributed Adam). [default: adamw]")]
    recompute: Annotated[Optional[str], typer.Option(
        "--recompute", help="auto, none, selective or full. [default: auto]")]
    flash: Annotated[Optional[bool], typer.Option(
        "--flash/--no-flash", help="FlashAttention. --no-flash: standard attention kernels, whose seq x seq scores "
        "take activation memory and time crossing GPU memory. [default: on]")]
    sharding: Annotated[Optional[str], typer.Option(
        "--sharding", help="auto, none, zero1, zero2, zero3 or fsdp. [default: auto]")]
    stack: Annotated[Optional[str], typer.Option(
        "--stack", help="Training software: pytorch (FSDP, DeepSpeed, torchtitan), megatron (Megatron-Core, NeMo) or "
                        "jax (MaxText); sets the per-micro-batch costs. [default: pytorch]")]
    tp: Annotated[Optional[int], typer.Option(
        "--tp", help="Tensor-parallel GPUs to pin, inside one NVLink node (default: the layout search picks).")]
    pp: Annotated[Optional[int], typer.Option(
        "--pp", help="Pipeline stages to pin, across nodes (default: the layout search picks).")]
    cp: Annotated[Optional[int], typer.Option(
        "--cp", help="Context-parallel GPUs to pin: each sequence is split over them (Megatron-Core ring attention; "
                     "--seq-len divisible by 2 x cp), with the distributed optimizer; never searched: without --cp "
                     "no layout uses it (default: none).")]
    offload: Annotated[Optional[str], typer.Option(
        "--offload", help="Optimizer states in host RAM (ZeRO-Offload): auto, none or cpu. [default: auto]")]
    mfu: Annotated[Optional[float], typer.Option(
        "--mfu", help="Model FLOPs utilization, e.g. 0.4 (default: per GPU generation).")]
    overhead: Annotated[Optional[float], typer.Option(
        "--overhead", help="Goodput overhead, e.g. 0.1 = 10% (default: derived).")]
    overhead_gb: Annotated[Optional[float], typer.Option(
        "--overhead-gb", help="Framework memory per GPU in GB. [default: 1.25]")]
    images: Annotated[Optional[float], typer.Option("--images", help="Dataset images, e.g. 1281167 (image models).")]
    epochs: Annotated[Optional[float], typer.Option("--epochs", help="Epochs over the images. [default: 1]")]
    infer: Annotated[bool, typer.Option("--infer", help="Inference (weights + KV cache) instead of training.")]
    weight_bits: Annotated[Optional[int], typer.Option(
        "--weight-bits", help="Inference weight bits: 16, 8 or 4. [default: 16]")]
    context: Annotated[Optional[int], typer.Option("--context", help="Inference context length. [default: 4096]")]
    # Typed as text and parsed by planner.workload.inputs so that 'abc', 'nan' or '-1' get one clear line.
    method: Annotated[Optional[str], typer.Option(
        "--method", help="full, lora (frozen 16-bit base) or qlora (frozen 4-bit NF4 base). [default: full]")]
    lora_rank: Annotated[Optional[str], typer.Option("--lora-rank", help="LoRA adapter rank. [default: 16]")]
    lora_targets: Annotated[Optional[str], typer.Option(
        "--lora-targets", help="Matrices with adapters: qv, attn or all-linear. [default: all-linear]")]
    active_params: Annotated[Optional[str], typer.Option(
        "--active-params", help="Mixture of experts: parameters used per token, e.g. 12.9e9 (FLOPs use these).")]
    experts: Annotated[Optional[str], typer.Option(
        "--experts", help="Mixture of experts: routed experts per layer (for expert-parallel sharding).")]
    experts_per_token: Annotated[Optional[str], typer.Option(
        "--experts-per-token", help="Mixture of experts: experts each token is routed to.")]


# The groups of workload flags, by what a command does with the workload. Every workload
# command takes MODEL_AND_TRAINING; plan and estimate cost a run, so they take its size and
# speed (RUN); fit and estimate take the model's shape and numerics (SHAPE); fit alone sizes
# inference and framework memory (MEMORY). plan's --precision is its own option: it also sets
# the speed class of --gpu-hours work.
MODEL_AND_TRAINING = frozenset({
    "workload_file", "model", "params", "seq_len", "batch", "optimizer", "recompute", "sharding", "offload", "method",
    "lora_rank", "lora_targets", "active_params", "experts", "experts_per_token",
})
RUN = frozenset({"tokens", "stack", "tp", "pp", "cp", "mfu", "overhead", "images", "epochs", "global_batch"})
SHAPE = frozenset({"layers", "hidden", "heads", "kv_heads", "vocab", "precision", "flash"})
MEMORY = frozenset({"overhead_gb", "infer", "weight_bits", "context"})
# With --serve the workload flags describe the served model: its size, its experts and SHAPE but flash.
SERVED_MODEL = frozenset({"params", "active_params", "experts", "experts_per_token"})
TRAINING_ONLY = (MODEL_AND_TRAINING | RUN | {"flash"}) - SERVED_MODEL

_Command = TypeVar("_Command", bound=Callable[..., Any])


def takes_flags(flags_type: type, param: str, *groups: frozenset[str]) -> Callable[[_Command], _Command]:
    """Give a command the flags of ``groups`` (declared once, in ``flags_type``) where its ``param`` parameter stands.

    typer reads a command's options from its signature and cannot share a group of them, so
    the command's signature, as typer sees it, has the flags in place of ``param``; the
    command itself gets their values as one dict of ``flags_type``.
    """
    declared = flags_type.__annotations__
    taken = frozenset().union(*groups)
    if unknown := sorted(taken - declared.keys()):
        raise TypeError(f"not {param} flags: {', '.join(unknown)}")
    # A switch is off unless given; any other flag not given is None, so the default downstream applies.
    defaults = {name: False if get_args(annotation)[0] is bool else None
                for name, annotation in declared.items() if name in taken}

    def decorate(command: _Command) -> _Command:
        signature = inspect.signature(command)
        own = list(signature.parameters)
        if param not in own:
            raise TypeError(f"{command.__name__} needs a `{param}: {flags_type.__name__}` parameter for its flags")
        if clash := sorted(taken & set(own)):
            raise TypeError(f"{command.__name__} declares {param} flags of its own: {', '.join(clash)}")
        at = own.index(param)
        kind = signature.parameters[param].kind
        flags = [inspect.Parameter(name, kind, default=default, annotation=declared[name])
                 for name, default in defaults.items()]

        @functools.wraps(command)
        def run(*args: Any, **kwargs: Any) -> Any:
            values = {name: kwargs.pop(name, default) for name, default in defaults.items()}
            return command(*args, **{param: values}, **kwargs)

        params = list(signature.parameters.values())
        run.__signature__ = signature.replace(parameters=[*params[:at], *flags, *params[at + 1:]])  # type: ignore[attr-defined]
        return cast(_Command, run)

    return decorate


def takes_workload(*groups: frozenset[str]) -> Callable[[_Command], _Command]:
    """The workload flags of ``groups`` where a command's ``workload`` parameter stands (:func:`takes_flags`)."""
    return takes_flags(WorkloadFlags, "workload", *groups)


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


def emit(text: str | Iterable[str] | None) -> None:
    """Print a command's answer; one given in pieces (a streamed JSON plan) is written as it comes."""
    if text is None:
        return
    if isinstance(text, str):
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    last = ""
    for piece in text:
        if piece:
            sys.stdout.write(piece)
            last = piece
    if not last.endswith("\n"):
        sys.stdout.write("\n")


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
    # every value is parsed and typed here: the model's validator (built on first use) is for the Python API
    return Constraints.model_construct(
        deadline_hours=parse_duration(deadline) if deadline is not None else None,
        budget=parse_money(budget, settings.currency) if budget is not None else None,
        min_vram_gb=float(bounded(positive(min_vram, "--min-vram"), "min_vram")) if min_vram is not None else None,
        providers=(frozenset(parse_provider(p, cat) for p in names)
                   if (names := parse_multi(provider, "--provider")) else None),
        billing=modes,
        regions=tuple(r) if (r := parse_multi(region, "--region")) else None,
        gpus=gpus,
        max_gpus=float(bounded(positive(max_gpus, "--max-gpus"), "max_gpus")) if max_gpus is not None else None,
    )


def write_file(path: Path, text: str) -> None:
    """A report the user asked for (--html, --markdown), or one line saying why it could not be written."""
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None
