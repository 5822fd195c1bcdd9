"""A workload from what the user typed: command-line flags or a TOML file (same names)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from pricing.errors import InputError, first_error
from pricing.money import to_decimal
from planner.units import positive
from planner.workload.presets import ModelKind, preset
from planner.workload.spec import (
    GpuHoursWorkload,
    ImageWorkload,
    InferenceWorkload,
    LoraTargets,
    Method,
    Offload,
    Optimizer,
    Precision,
    Recompute,
    Sharding,
    Stack,
    TrainingWorkload,
    TransformerArch,
    WorkloadKind,
    WorkloadSpec,
)


def arch_for(model: str | None, params: float | None, *, active_params: float | None = None,
             experts: int | None = None, experts_per_token: int | None = None,
             **shape: int | None) -> TransformerArch:
    """A transformer from a preset name, explicit numbers, or both (numbers win).

    Whatever of the shape is still missing is inferred from the parameter count
    (:func:`planner.workload.shapes.infer_shape`) and named in ``inferred``.
    """
    base: dict[str, Any] = {}
    if model is not None:
        p = preset(model)
        if p.kind is not ModelKind.TRANSFORMER:
            raise InputError(f"{p.name} is an image model", "use --images/--epochs for image models")
        base = {"name": p.name, "params": p.params, "layers": p.layers, "hidden": p.hidden, "heads": p.heads,
                "kv_heads": p.kv_heads, "vocab": p.vocab, "ffn_hidden": p.ffn_hidden, "gated_mlp": p.gated_mlp,
                "active_params": p.active_params, "experts": p.experts, "experts_per_token": p.experts_per_token}
    if params is not None:
        base["params"] = params
    more = {"active_params": active_params, "experts": experts, "experts_per_token": experts_per_token, **shape}
    base.update({k: v for k, v in more.items() if v is not None})
    if "params" not in base:
        raise InputError("no model given", "name one with --model (e.g. llama-2-7b) or give --params 7e9")
    try:
        arch = TransformerArch(**base)
        if arch.has_shape and arch.vocab:
            return arch
        from planner.workload.shapes import infer_shape

        s = infer_shape(arch.compute_params, layers=arch.layers, hidden=arch.hidden, heads=arch.heads,
                        vocab=arch.vocab)
        filled = {"layers": s.layers, "hidden": s.hidden, "heads": s.heads, "vocab": s.vocab}
        if arch.ffn_hidden is None:
            filled["ffn_hidden"] = s.ffn_hidden
        return TransformerArch(**{**base, **filled, "inferred": s.inferred})
    except ValidationError as exc:
        raise InputError(f"bad model shape: {_first_error(exc)}") from None


def _first_error(exc: ValidationError) -> str:
    where, msg = first_error(exc)
    msg = msg.removeprefix("Value error, ")
    return f"{where}: {msg}" if where else msg


def build(cls: type[BaseModel], **fields: Any) -> Any:
    """A workload model from fields, turning validation errors into one InputError line."""
    try:
        return cls(**{k: v for k, v in fields.items() if v is not None})
    except ValidationError as exc:
        raise InputError(f"bad workload: {_first_error(exc)}") from None


_ARCH_KEYS = ("layers", "hidden", "heads", "kv_heads", "vocab", "active_params", "experts", "experts_per_token")


def _toml_arch(data: dict[str, Any]) -> TransformerArch:
    shape = {k: data.pop(k) for k in _ARCH_KEYS if k in data}
    return arch_for(data.pop("model", None), data.pop("params", None), **shape)


_NAME_KEYS = ("kind", "model", "ref_gpu", "workload_class", "precision", "optimizer", "recompute", "sharding",
              "stack", "offload", "method", "lora_targets")


def _check_keys(p: Path, kind: str, data: dict[str, Any]) -> None:
    """Refuse what validation would silently accept: a misspelt key (dropped) or a boolean where a number belongs
    (TOML's ``true`` would read as 1 token)."""
    import difflib

    from planner.workload.spec import GpuHoursWorkload, ImageWorkload, InferenceWorkload, TrainingWorkload

    classes: dict[str, type[BaseModel]] = {WorkloadKind.TRAIN: TrainingWorkload, WorkloadKind.INFER: InferenceWorkload,
                                           WorkloadKind.IMAGE: ImageWorkload, WorkloadKind.GPU_HOURS: GpuHoursWorkload}
    cls = classes.get(kind)
    if cls is None:
        return  # validation names the kinds
    fields = cls.model_fields
    known = set(fields) - {"arch"}
    if "arch" in fields:
        known |= {"model", "params", *_ARCH_KEYS}
    for key, value in data.items():
        if key not in known:
            close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.6)
            hint = f"did you mean {close[0]!r}?" if close else f"a {kind} workload takes: {', '.join(sorted(known))}"
            raise InputError(f"unknown key {key!r} in workload file {str(p)!r}", hint)
        takes_bool = key in fields and "bool" in str(fields[key].annotation)
        if isinstance(value, bool) and not takes_bool:
            raise InputError(f"{key} = {str(value).lower()} in workload file {str(p)!r}: expected a "
                             f"{'name' if key in _NAME_KEYS else 'number'}")
        if key in _NAME_KEYS and not isinstance(value, str):
            raise InputError(f"{key} = {value!r} in workload file {str(p)!r}: expected a name in quotes",
                             f'e.g. {key} = "{"llama-2-7b" if key == "model" else "..."}"')


def load_workload(path: str | Path) -> TrainingWorkload | InferenceWorkload | ImageWorkload | GpuHoursWorkload:
    """Read a workload TOML file (see ``examples/*.toml``)."""
    p = Path(path)
    try:
        raw = tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"workload file {str(p)!r} not found") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read workload file {str(p)!r}: {exc}") from None
    data = dict(raw.get("workload", raw))
    kind = str(data.get("kind", "train")).lower()
    data["kind"] = kind
    _check_keys(p, kind, data)
    for key in ("precision",):
        if key in data and kind != WorkloadKind.GPU_HOURS:
            data[key] = Precision.parse(str(data[key]))
    for key in ("method", "lora_targets"):
        if isinstance(data.get(key), str):
            data[key] = data[key].strip().lower()
    if kind in (WorkloadKind.TRAIN, WorkloadKind.INFER):
        data["arch"] = _toml_arch(data)
    try:
        return WorkloadSpec.model_validate({"workload": data}).workload
    except ValidationError as exc:
        raise InputError(f"bad workload in {str(p)!r}: {_first_error(exc)}",
                         "see examples/*.toml for the fields each kind takes") from None


def count(value: float | str | None, what: str) -> float | None:
    """Large counts as users type them ('2e12'), rejecting NaN, infinities and non-positive values."""
    return None if value is None else float(positive(value, what))


def whole(value: int | str | None, what: str, minimum: int = 1) -> int | None:
    """A whole number of at least ``minimum`` as typed ('16'), or an InputError naming ``what``."""
    if value is None:
        return None
    d = to_decimal(value, what)
    if d != d.to_integral_value() or d < minimum:
        raise InputError(f"{what} must be a whole number of {minimum} or more, got {value}")
    return int(d)


def _lora_options(method: str | None, rank: int | str | None, targets: str | None) -> dict[str, Any]:
    from planner.units import parse_enum

    m = parse_enum(Method, method, "--method")
    if m in (None, Method.FULL) and (rank is not None or targets is not None):
        raise InputError("--lora-rank and --lora-targets need --method lora or qlora")
    t = None
    if targets is not None:
        try:
            t = LoraTargets(targets.strip().lower())
        except ValueError:
            raise InputError(f"unknown --lora-targets {targets!r}",
                             f"use one of {', '.join(x.value for x in LoraTargets)}") from None
    return {"method": m, "lora_rank": whole(rank, "--lora-rank"), "lora_targets": t}


def workload_from_options(
    *,
    workload_file: str | None = None,
    model: str | None = None,
    params: float | None = None,
    layers: int | None = None,
    hidden: int | None = None,
    heads: int | None = None,
    kv_heads: int | None = None,
    vocab: int | None = None,
    tokens: float | None = None,
    seq_len: int | None = None,
    global_batch: float | None = None,
    batch: int | None = None,
    precision: str | None = None,
    optimizer: str | None = None,
    recompute: str | None = None,
    flash: bool | None = None,
    sharding: str | None = None,
    stack: str | None = None,
    tp: int | None = None,
    pp: int | None = None,
    cp: int | None = None,
    offload: str | None = None,
    mfu: float | None = None,
    overhead: float | None = None,
    overhead_gb: float | None = None,
    images: float | None = None,
    epochs: float | None = None,
    infer: bool = False,
    weight_bits: int | None = None,
    context: int | None = None,
    method: str | None = None,
    lora_rank: int | str | None = None,
    lora_targets: str | None = None,
    active_params: float | str | None = None,
    experts: int | str | None = None,
    experts_per_token: int | str | None = None,
) -> TrainingWorkload | InferenceWorkload | ImageWorkload:
    """One workload from a TOML file or from flags (not both)."""
    from planner.units import parse_enum

    lora = _lora_options(method, lora_rank, lora_targets)
    active, n_experts = count(active_params, "--active-params"), whole(experts, "--experts", 2)
    per_token = whole(experts_per_token, "--experts-per-token")
    moe = {"active_params": active, "experts": n_experts, "experts_per_token": per_token}
    if workload_file is not None:
        if model is not None or params is not None:
            raise InputError("give either --workload or --model/--params, not both")
        if any(v is not None for v in (*lora.values(), *moe.values())):
            raise InputError("give --method/--lora-*/--active-params/--experts* in the workload file, not as flags "
                             "with --workload")
        w = load_workload(workload_file)
        if w.kind == "gpu-hours":
            raise InputError("this command needs a model workload, not plain GPU-hours",
                             "use `gpuplan plan --gpu-hours` for those")
        return w  # type: ignore[return-value]
    prec = Precision.parse(precision) if precision else None
    tokens, images, params = count(tokens, "--tokens"), count(images, "--images"), count(params, "--params")
    if (model is not None and preset(model).kind is ModelKind.IMAGE) or images is not None:
        if model is None:
            raise InputError("--images needs an image model", "e.g. --model resnet50")
        if any(v is not None for v in (*lora.values(), *moe.values())):
            raise InputError("--method, --lora-* and --active-params/--experts* apply to transformers",
                             "image models train all their weights")
        return build(ImageWorkload, model=preset(model).name, images=images, epochs=epochs, precision=prec,
                     batch=batch, overhead=overhead, overhead_gb=overhead_gb)
    arch = arch_for(model, params, layers=layers, hidden=hidden, heads=heads, kv_heads=kv_heads, vocab=vocab,
                    active_params=active, experts=n_experts, experts_per_token=per_token)
    if infer:
        if any(v is not None for v in lora.values()):
            raise InputError("--method and --lora-* describe training", "for 4-bit inference use --weight-bits 4")
        return build(InferenceWorkload, arch=arch, weight_bits=weight_bits, context=context, batch=batch,
                     overhead_gb=overhead_gb)

    return build(
        TrainingWorkload, arch=arch, tokens=tokens, seq_len=seq_len, micro_batch=batch, precision=prec,
        optimizer=parse_enum(Optimizer, optimizer, "--optimizer"),
        recompute=parse_enum(Recompute, recompute, "--recompute"),
        flash_attention=flash, sharding=parse_enum(Sharding, sharding, "--sharding"),
        stack=parse_enum(Stack, stack, "--stack"), offload=parse_enum(Offload, offload, "--offload"), mfu=mfu,
        overhead=overhead, overhead_gb=overhead_gb,
        tensor_parallel=whole(tp, "--tp"), pipeline_parallel=whole(pp, "--pp"),
        context_parallel=whole(cp, "--cp"),
        global_batch_tokens=count(global_batch, "--global-batch"), **lora,
    )
