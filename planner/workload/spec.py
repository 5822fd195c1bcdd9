"""What the user wants to run, described by its model and data rather than by GPU-hours.

A workload is one of four pydantic models, given by CLI flags or by a TOML file
(``--workload FILE``, see ``examples/``):

- :class:`TrainingWorkload`: a transformer trained or fine-tuned on ``tokens`` tokens;
- :class:`InferenceWorkload`: a transformer serving ``batch`` sequences of ``context`` tokens;
- :class:`ImageWorkload`: a named image model trained on ``images`` x ``epochs``;
- :class:`GpuHoursWorkload`: plain GPU-hours measured on a reference GPU.

Named presets (``data/models.csv``) carry each model's architecture with its source
(:mod:`planner.workload.presets`); :mod:`planner.workload.inputs` builds a workload from
flags or a TOML file.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from pricing.errors import InputError
from planner.workload.presets import ModelPreset, preset


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
        t = {"mixed": "bf16", "amp": "bf16", "tf32": "fp32", "float32": "fp32", "bfloat16": "bf16",
             "float16": "fp16"}.get(t, t)
        try:
            return cls(t)
        except ValueError:
            raise InputError(f"unknown precision {text!r}", "use fp32, fp16, bf16, fp8 (or mixed)") from None


class Optimizer(StrEnum):
    ADAMW = "adamw"
    SGD = "sgd"
    ADAFACTOR = "adafactor"
    ADAM_8BIT = "adam8bit"
    ADAMW_BF16 = "adamw-bf16"  # 16-bit moments, no 32-bit master copy (NeMo's distributed_fused_adam, dtype bf16)


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


class Stack(StrEnum):
    """The training software a run uses: it sets which per-micro-batch costs its GPUs pay (planner/data/stacks.csv)."""

    PYTORCH = "pytorch"  # PyTorch FSDP/FSDP2, DeepSpeed, Composer/llm-foundry, torchtitan: the keyed anchors' stack
    MEGATRON = "megatron"  # Megatron-LM/Megatron-Core, NeMo, Megatron-Bridge
    JAX = "jax"  # MaxText and other XLA-compiled stacks


class Offload(StrEnum):
    """Optimizer states (and fp32 gradients) in host RAM, updated by the CPU (DeepSpeed ZeRO-Offload, ZeRO-2);
    AUTO uses it only where nothing fits without it (a layout search may pick it where it trains faster)."""

    AUTO = "auto"
    NONE = "none"
    CPU = "cpu"


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
            raise ValueError(f"active parameters ({self.active_params:.4g}) exceed total parameters "
                             f"({self.params:.4g})")
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
    stack: Stack = Stack.PYTORCH
    offload: Offload = Offload.AUTO
    method: Method = Method.FULL
    lora_rank: int = Field(default=DEFAULT_LORA_RANK, gt=0)
    lora_targets: LoraTargets = LoraTargets.ALL_LINEAR
    mfu: float | None = Field(default=None, gt=0, le=1)
    overhead: float | None = Field(default=None, ge=0)  # goodput overhead, fraction of run time
    overhead_gb: float | None = Field(default=None, ge=0)
    # tokens per optimizer step over all GPUs; None: 4M (Llama 2, Touvron et al. 2023, table 1). Micro-batches
    # accumulate to it, so it sets how often a once-per-step all-reduce runs.
    global_batch_tokens: float | None = Field(default=None, gt=0)
    # a layout the user pins (--tp/--pp): tensor parallelism inside a node, pipeline stages across nodes; None: searched
    tensor_parallel: int | None = Field(default=None, ge=1)
    pipeline_parallel: int | None = Field(default=None, ge=1)
    # context parallelism the user pins (--cp): each sequence split over this many GPUs (Megatron-Core); None: none,
    # never searched
    context_parallel: int | None = Field(default=None, ge=1)

    @property
    def split_pinned(self) -> bool:
        """Whether the user pinned a tensor, pipeline or context split (a degree above 1)."""
        return (self.tensor_parallel or 1) > 1 or (self.pipeline_parallel or 1) > 1 or self.cp > 1

    @property
    def cp(self) -> int:
        """Context-parallel degree: GPUs that share each sequence (1 without --cp)."""
        return self.context_parallel or 1

    @model_validator(mode="after")
    def _offload_full(self) -> TrainingWorkload:
        # LoRA/QLoRA adapters' optimizer states are megabytes: moving them to the CPU saves nothing worth its time
        if self.offload is Offload.CPU and self.method is not Method.FULL:
            raise ValueError("--offload cpu moves full training's optimizer states to host RAM; LoRA/QLoRA adapters' "
                             "states are too small for it to help (use --offload none or auto)")
        if self.offload is Offload.CPU and self.sharding in (Sharding.ZERO1, Sharding.ZERO3, Sharding.FSDP):
            raise ValueError("--offload cpu is modelled with ZeRO-2 (DeepSpeed ZeRO-Offload), not "
                             f"{self.sharding.value} (use --sharding zero2 or auto)")
        return self

    @model_validator(mode="after")
    def _split_as_megatron(self) -> TrainingWorkload:
        # tensor/pipeline layouts are timed as Megatron runs them: full training, distributed optimizer (ZeRO-1); or
        # as torchtitan runs FSDP x TP: ZeRO-3 over the replicas, one pipeline stage (planner/perf/parallel3d.py)
        fsdp = self.sharding in (Sharding.ZERO3, Sharding.FSDP)
        if self.split_pinned and fsdp and (self.pipeline_parallel or 1) > 1:
            raise ValueError(f"--sharding {self.sharding.value} with --tp is timed as FSDP x TP (torchtitan's 2D "
                             "layout) at one pipeline stage; FSDP under pipeline stages is not modelled: drop --pp, "
                             "or use --sharding zero1 (the distributed optimizer) with --pp")
        if self.split_pinned and (self.method is not Method.FULL or self.offload is Offload.CPU
                                  or not (fsdp or self.sharding in (Sharding.AUTO, Sharding.ZERO1))):
            raise ValueError("--tp/--pp/--cp layouts are timed with full training and the distributed optimizer "
                             "(ZeRO-1) or FSDP (ZeRO-3, --tp only): drop --method lora/qlora, --offload cpu and "
                             "--sharding other than zero1, zero3 or fsdp")
        if fsdp and self.cp > 1:
            raise ValueError("--cp is timed with Megatron-Core's distributed optimizer (ZeRO-1); FSDP with context "
                             "parallelism is not modelled: use --sharding zero1 or auto with --cp")
        if (cp := self.cp) > 1:
            # Megatron-Core's causal load balancing cuts each sequence into 2 x cp chunks, two per GPU (Transformer
            # Engine asserts 'Sequence length per GPU needs to be divisible by 2!')
            if self.seq_len % (2 * cp):
                raise ValueError(f"--cp {cp} splits each sequence into 2 x {cp} = {2 * cp} chunks (Megatron-Core's "
                                 f"causal load balancing): --seq-len {self.seq_len} is not divisible by {2 * cp}")
            if not self.flash_attention:
                raise ValueError("--cp runs attention as Transformer Engine's ring of FlashAttention/cuDNN fused "
                                 "attention steps: drop --no-flash")
        return self


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
