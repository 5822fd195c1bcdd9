"""What the user wants to run, described by its model and data rather than by GPU-hours.

A workload is one of four pydantic models, given by CLI flags or by a TOML file
(``--workload FILE``, see ``examples/``):

- :class:`TrainingWorkload`: a transformer trained or fine-tuned on ``tokens`` tokens;
- :class:`InferenceWorkload`: a transformer serving ``batch`` sequences of ``context`` tokens;
- :class:`ImageWorkload`: a named image model trained on ``images`` x ``epochs``;
- :class:`GpuHoursWorkload`: plain GPU-hours measured on a reference GPU.

Named presets (``data/models.csv``) carry each model's architecture with its source.
"""

from __future__ import annotations

import difflib
import tomllib
from datetime import date
from enum import StrEnum
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from pricing.datafiles import data_rows
from pricing.errors import InputError, UnknownNameError, first_error
from pricing.money import to_decimal
from planner.units import positive


class Precision(StrEnum):
    """Training or serving number format; fp16/bf16/fp8 mean mixed precision with fp32 master weights."""

    FP32 = "fp32"
    FP16 = "fp16"
    BF16 = "bf16"
    FP8 = "fp8"

    @property
    def mixed(self) -> bool:
        return self is not Precision.FP32

    @property
    def benchmark_label(self) -> str:
        """The precision column of data/benchmarks.csv: fp16 is Lambda's mixed-precision (AMP) run."""
        return "fp16" if self.mixed else "fp32"

    @classmethod
    def parse(cls, text: str) -> Precision:
        t = text.strip().lower()
        # "mixed"/"amp" are what `gpuplan plan --precision` has always taken.
        t = {"mixed": "bf16", "amp": "bf16", "tf32": "fp32", "float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}.get(t, t)
        try:
            return cls(t)
        except ValueError:
            raise InputError(f"unknown precision {text!r}", "use fp32, fp16, bf16, fp8 (or mixed)") from None


class Optimizer(StrEnum):
    ADAMW = "adamw"
    SGD = "sgd"
    ADAFACTOR = "adafactor"
    ADAM_8BIT = "adam8bit"


class Recompute(StrEnum):
    """Activation recomputation; AUTO picks the least that fits (full recompute costs ~1/3 more compute)."""

    AUTO = "auto"
    NONE = "none"
    SELECTIVE = "selective"
    FULL = "full"


class Sharding(StrEnum):
    """Data-parallel sharding of model states across the job's GPUs; AUTO picks the least that fits."""

    AUTO = "auto"
    NONE = "none"
    ZERO1 = "zero1"
    ZERO2 = "zero2"
    ZERO3 = "zero3"
    FSDP = "fsdp"  # FSDP FULL_SHARD shards like ZeRO-3


class Method(StrEnum):
    """How the weights are trained: all of them, or low-rank adapters on a frozen base."""

    FULL = "full"
    LORA = "lora"  # frozen 16-bit base (Hu et al. 2021, arXiv 2106.09685)
    QLORA = "qlora"  # frozen NF4 base with double quantization (Dettmers et al. 2023, arXiv 2305.14314)


class LoraTargets(StrEnum):
    """Which weight matrices get adapters."""

    QV = "qv"  # the LoRA paper's choice: query and value projections
    ATTN = "attn"  # query, key, value and output projections
    ALL_LINEAR = "all-linear"  # attention and MLP: the QLoRA paper's choice, needed to match full fine-tuning


# QLoRA paper, section 4 / Figure 4: with adapters on all linear layers, ranks 8-64 gave
# the same quality, so the default takes a low one of those; 16 is also the default the
# issue asks for. Adapters are small: rank barely moves the memory answer.
DEFAULT_LORA_RANK = 16


class WorkloadKind(StrEnum):
    TRAIN = "train"
    INFER = "infer"
    IMAGE = "image"
    GPU_HOURS = "gpu-hours"


class ModelKind(StrEnum):
    TRANSFORMER = "transformer"
    IMAGE = "image"


class ModelPreset(BaseModel):
    """One named model with its architecture and where the numbers come from."""

    model_config = ConfigDict(frozen=True)

    name: str
    kind: ModelKind
    family: str
    params: int
    layers: int | None = None
    hidden: int | None = None
    heads: int | None = None
    kv_heads: int | None = None
    vocab: int | None = None
    ffn_hidden: int | None = None
    gated_mlp: bool = False  # SwiGLU-style gate/up/down MLP (three matrices) instead of two
    active_params: int | None = None  # mixture of experts: parameters used per token
    experts: int | None = None  # routed experts per MoE layer
    experts_per_token: int | None = None
    max_seq_len: int | None = None
    gmacs: float | None = None  # forward multiply-accumulates per image, in billions (image models)
    benchmark_model: str = ""  # the model's name in data/benchmarks.csv, where Lambda measured it
    source: str
    as_of: date
    notes: str = ""


def _opt_int(text: str) -> int | None:
    return int(text) if text.strip() else None


@lru_cache(maxsize=1)
def presets() -> dict[str, ModelPreset]:
    out: dict[str, ModelPreset] = {}
    for r in data_rows("models.csv", "planner.data"):
        out[r["name"]] = ModelPreset(
            name=r["name"],
            kind=ModelKind(r["kind"]),
            family=r["family"],
            params=int(r["params"]),
            layers=_opt_int(r["layers"]),
            hidden=_opt_int(r["hidden"]),
            heads=_opt_int(r["heads"]),
            kv_heads=_opt_int(r["kv_heads"]),
            vocab=_opt_int(r["vocab"]),
            ffn_hidden=_opt_int(r["ffn_hidden"]),
            gated_mlp=r["mlp"] == "swiglu",
            active_params=_opt_int(r["active_params"]),
            experts=_opt_int(r["experts"]),
            experts_per_token=_opt_int(r["experts_per_token"]),
            max_seq_len=_opt_int(r["max_seq_len"]),
            gmacs=float(r["gmacs"]) if r["gmacs"].strip() else None,
            benchmark_model=r["benchmark_model"],
            source=r["source"],
            as_of=date.fromisoformat(r["as_of"]),
            notes=r["notes"],
        )
    return out


def _fold(name: str) -> str:
    return name.strip().lower().replace("_", "-").replace(" ", "-").replace(".", "-")


def preset(name: str) -> ModelPreset:
    """A preset by name, forgiving case and punctuation ('Llama 2 7B' finds llama-2-7b)."""
    table = presets()
    folded = {_fold(k): k for k in table}
    folded.update({_fold(k).replace("-", ""): k for k in table})
    key = folded.get(_fold(name)) or folded.get(_fold(name).replace("-", ""))
    if key is None:
        close = difflib.get_close_matches(_fold(name), list(table), n=4, cutoff=0.5)
        raise UnknownNameError("model", name, close, "gpuplan fit --list-models")
    return table[key]


class TransformerArch(BaseModel):
    """Enough of a transformer to count its memory: params always, the shape when known.

    A mixture-of-experts model also has ``active_params`` (used per token: its FLOPs),
    and, for expert-parallel sharding, ``experts`` and ``experts_per_token``. Fields
    named in ``inferred`` were filled in by :func:`planner.workload.shapes.infer_shape`.
    """

    model_config = ConfigDict(frozen=True)

    name: str = "custom"
    params: float = Field(gt=0)
    layers: int | None = Field(default=None, gt=0)
    hidden: int | None = Field(default=None, gt=0)
    heads: int | None = Field(default=None, gt=0)
    kv_heads: int | None = Field(default=None, gt=0)
    vocab: int | None = Field(default=None, gt=0)
    ffn_hidden: int | None = Field(default=None, gt=0)
    gated_mlp: bool = False
    active_params: float | None = Field(default=None, gt=0)
    experts: int | None = Field(default=None, ge=2)
    experts_per_token: int | None = Field(default=None, gt=0)
    inferred: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _consistent(self) -> TransformerArch:
        if self.hidden and self.heads and self.hidden % self.heads:
            raise ValueError(f"hidden size {self.hidden} is not a multiple of {self.heads} heads")
        if self.active_params is not None and self.active_params > self.params:
            raise ValueError(f"active parameters ({self.active_params:.4g}) exceed total parameters ({self.params:.4g})")
        if (self.experts is None) != (self.experts_per_token is None):
            raise ValueError("give both the expert count and the experts per token (--experts, --experts-per-token)")
        if self.experts is not None and self.experts_per_token is not None:
            if self.experts_per_token >= self.experts:
                raise ValueError(f"{self.experts_per_token} experts per token is not fewer than {self.experts} experts")
            if self.active_params is None or self.active_params >= self.params:
                raise ValueError("a mixture of experts needs active parameters below the total (--active-params)")
        return self

    @property
    def has_shape(self) -> bool:
        return None not in (self.layers, self.hidden, self.heads)

    @property
    def moe(self) -> bool:
        return self.active_params is not None and self.active_params < self.params

    @property
    def compute_params(self) -> float:
        """Parameters each token passes through: the FLOPs count uses these (active ones for MoE)."""
        return self.active_params if self.active_params is not None else self.params

    @property
    def shape_inferred(self) -> bool:
        return bool(self.inferred)


class TrainingWorkload(BaseModel):
    model_config = ConfigDict(frozen=True)

    kind: Literal[WorkloadKind.TRAIN] = WorkloadKind.TRAIN
    arch: TransformerArch
    tokens: float | None = Field(default=None, gt=0)
    seq_len: int = Field(default=2048, gt=0)
    micro_batch: int | None = Field(default=None, gt=0)
    precision: Precision = Precision.BF16
    optimizer: Optimizer = Optimizer.ADAMW
    recompute: Recompute = Recompute.AUTO
    flash_attention: bool = True
    sharding: Sharding = Sharding.AUTO
    method: Method = Method.FULL
    lora_rank: int = Field(default=DEFAULT_LORA_RANK, gt=0)
    lora_targets: LoraTargets = LoraTargets.ALL_LINEAR
    mfu: float | None = Field(default=None, gt=0, le=1)
    overhead: float | None = Field(default=None, ge=0)  # goodput overhead, fraction of run time
    overhead_gb: float | None = Field(default=None, ge=0)


class InferenceWorkload(BaseModel):
    model_config = ConfigDict(frozen=True)

    kind: Literal[WorkloadKind.INFER] = WorkloadKind.INFER
    arch: TransformerArch
    weight_bits: Literal[16, 8, 4] = 16
    context: int = Field(default=4096, gt=0)
    batch: int | None = Field(default=None, gt=0)
    overhead_gb: float | None = Field(default=None, ge=0)


class ImageWorkload(BaseModel):
    model_config = ConfigDict(frozen=True)

    kind: Literal[WorkloadKind.IMAGE] = WorkloadKind.IMAGE
    model: str
    images: float | None = Field(default=None, gt=0)
    epochs: float = Field(default=1, gt=0)
    precision: Precision = Precision.BF16
    batch: int | None = Field(default=None, gt=0)
    overhead: float | None = Field(default=None, ge=0)
    overhead_gb: float | None = Field(default=None, ge=0)

    @property
    def preset(self) -> ModelPreset:
        return preset(self.model)


class GpuHoursWorkload(BaseModel):
    model_config = ConfigDict(frozen=True)

    kind: Literal[WorkloadKind.GPU_HOURS] = WorkloadKind.GPU_HOURS
    gpu_hours: float = Field(gt=0)
    ref_gpu: str | None = None
    workload_class: str = "transformer"
    precision: str = "mixed"


Workload = Annotated[
    TrainingWorkload | InferenceWorkload | ImageWorkload | GpuHoursWorkload, Field(discriminator="kind")
]


class WorkloadSpec(BaseModel):
    """The TOML file's shape: ``[workload]`` with ``kind`` and that kind's fields."""

    workload: Workload


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
    batch: int | None = None,
    precision: str | None = None,
    optimizer: str | None = None,
    recompute: str | None = None,
    flash: bool | None = None,
    sharding: str | None = None,
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
        flash_attention=flash, sharding=parse_enum(Sharding, sharding, "--sharding"), mfu=mfu, overhead=overhead,
        overhead_gb=overhead_gb, **lora,
    )
