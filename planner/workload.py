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

from pricing.catalog import data_rows
from pricing.errors import InputError, UnknownNameError, first_error
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
    """Enough of a transformer to count its memory: params always, the shape when known."""

    model_config = ConfigDict(frozen=True)

    name: str = "custom"
    params: float = Field(gt=0)
    layers: int | None = Field(default=None, gt=0)
    hidden: int | None = Field(default=None, gt=0)
    heads: int | None = Field(default=None, gt=0)
    kv_heads: int | None = Field(default=None, gt=0)
    vocab: int | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _heads_divide(self) -> TransformerArch:
        if self.hidden and self.heads and self.hidden % self.heads:
            raise ValueError(f"hidden size {self.hidden} is not a multiple of {self.heads} heads")
        return self

    @property
    def has_shape(self) -> bool:
        return None not in (self.layers, self.hidden, self.heads)


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


def arch_for(model: str | None, params: float | None, **shape: int | None) -> TransformerArch:
    """A transformer shape from a preset name, explicit numbers, or both (numbers win)."""
    base: dict[str, Any] = {}
    if model is not None:
        p = preset(model)
        if p.kind is not ModelKind.TRANSFORMER:
            raise InputError(f"{p.name} is an image model", "use --images/--epochs for image models")
        base = {"name": p.name, "params": p.params, "layers": p.layers, "hidden": p.hidden, "heads": p.heads,
                "kv_heads": p.kv_heads, "vocab": p.vocab}
    if params is not None:
        base["params"] = params
    base.update({k: v for k, v in shape.items() if v is not None})
    if "params" not in base:
        raise InputError("no model given", "name one with --model (e.g. llama-2-7b) or give --params 7e9")
    try:
        return TransformerArch(**base)
    except ValidationError as exc:
        raise InputError(f"bad model shape: {_first_error(exc)}") from None


def _first_error(exc: ValidationError) -> str:
    where, msg = first_error(exc)
    return f"{where}: {msg}" if where else msg


def build(cls: type[BaseModel], **fields: Any) -> Any:
    """A workload model from fields, turning validation errors into one InputError line."""
    try:
        return cls(**{k: v for k, v in fields.items() if v is not None})
    except ValidationError as exc:
        raise InputError(f"bad workload: {_first_error(exc)}") from None


def _toml_arch(data: dict[str, Any]) -> TransformerArch:
    shape = {k: data.pop(k) for k in ("layers", "hidden", "heads", "kv_heads", "vocab") if k in data}
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
    if kind in (WorkloadKind.TRAIN, WorkloadKind.INFER):
        data["arch"] = _toml_arch(data)
    try:
        return WorkloadSpec.model_validate({"workload": data}).workload
    except ValidationError as exc:
        raise InputError(f"bad workload in {str(p)!r}: {_first_error(exc)}",
                         "see examples/*.toml for the fields each kind takes") from None


def count(value: float | None, what: str) -> float | None:
    """Large counts as users type them ('2e12'), rejecting NaN, infinities and non-positive values."""
    return None if value is None else float(positive(value, what))


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
) -> TrainingWorkload | InferenceWorkload | ImageWorkload:
    """One workload from a TOML file or from flags (not both)."""
    from planner.units import parse_enum

    if workload_file is not None:
        if model is not None or params is not None:
            raise InputError("give either --workload or --model/--params, not both")
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
        return build(ImageWorkload, model=preset(model).name, images=images, epochs=epochs, precision=prec,
                     batch=batch, overhead=overhead, overhead_gb=overhead_gb)
    arch = arch_for(model, params, layers=layers, hidden=hidden, heads=heads, kv_heads=kv_heads, vocab=vocab)
    if infer:
        return build(InferenceWorkload, arch=arch, weight_bits=weight_bits, context=context, batch=batch,
                     overhead_gb=overhead_gb)

    return build(
        TrainingWorkload, arch=arch, tokens=tokens, seq_len=seq_len, micro_batch=batch, precision=prec,
        optimizer=parse_enum(Optimizer, optimizer, "--optimizer"),
        recompute=parse_enum(Recompute, recompute, "--recompute"),
        flash_attention=flash, sharding=parse_enum(Sharding, sharding, "--sharding"), mfu=mfu, overhead=overhead,
        overhead_gb=overhead_gb,
    )
