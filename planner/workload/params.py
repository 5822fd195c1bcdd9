"""Where a model's parameters sit, and how many a training step touches.

Memory (``planner.workload.memory``) and FLOPs (``planner.workload.estimate``) both start here:

- **Mixture of experts**: routed expert weights are split over the expert-parallel GPUs,
  the rest (attention, embeddings, dense or shared MLPs) is replicated. With E experts of
  which k serve each token, total - active = (E - k) experts' worth of weights, so all
  experts together hold (total - active) * E / (E - k). FLOPs use the active parameters
  (Kaplan et al. 2020: N is the parameters a token passes through; the DeepSeek-V3 report
  counts 37B of 671B).
- **LoRA** (Hu et al. 2021, arXiv 2106.09685): each adapted d_in x d_out matrix gains
  r * (d_in + d_out) trainable parameters. Targets: ``qv`` (the LoRA paper), ``attn``
  (q, k, v, o), ``all-linear`` (attention and MLP, the QLoRA paper's setting).
- **QLoRA** (Dettmers et al. 2023, arXiv 2305.14314, section 3): the frozen linear weights
  are NF4, 4 bits each, plus double-quantized constants: 8/64 + 32/(64*256) = 0.127 bits
  per parameter (blocks of 64 weights with an 8-bit constant, blocks of 256 constants with
  a 32-bit one). Embeddings and the output head stay 16-bit: bitsandbytes replaces linear
  layers only, and transformers keeps the output head unquantized (RECALLED behaviour of
  ``get_keys_to_not_convert``); counting them at 16 bits overstates a tied model slightly.
- **Step FLOPs per token**: forward 2N, backward 4N, half of it for activation gradients
  and half for weight gradients (Kaplan et al. 2020, section 2.1). A frozen base still
  needs the activation gradients but not its weight gradients: 4*N + 6*N_adapter. The
  LoRA paper measured 43.1 against 32.5 tokens/s per V100 for GPT-3 175B (section 4.2,
  footnote 5): 1.33x, below the 1.5x this count allows, so LoRA times may come out ~12% low.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from pricing.errors import InputError
from planner.workload.spec import LoraTargets, Method, TrainingWorkload, TransformerArch

NF4_DQ_BITS = 4 + 8 / 64 + 32 / (64 * 256)  # QLoRA section 3: 4.127 bits per quantized weight


def expert_params(arch: TransformerArch) -> float:
    """All routed experts' weights; 0 for a dense model or one without an expert count."""
    if not arch.moe or arch.experts is None or arch.experts_per_token is None:
        return 0.0
    assert arch.active_params is not None
    e, k = arch.experts, arch.experts_per_token
    return (arch.params - arch.active_params) * e / (e - k)


def embedding_params(arch: TransformerArch) -> float:
    """Input embedding and output head (counted untied), 0 without a shape."""
    if arch.vocab is None or arch.hidden is None:
        return 0.0
    return 2.0 * arch.vocab * arch.hidden


def _mlp_matrices(arch: TransformerArch) -> int:
    return 3 if arch.gated_mlp else 2


def adapter_params(arch: TransformerArch, rank: int, targets: LoraTargets) -> float:
    """Trainable LoRA parameters of rank ``rank`` on ``targets``."""
    if not arch.has_shape:
        raise InputError("LoRA needs the model's shape", "give --layers, --hidden and --heads, or a preset --model")
    assert arch.layers is not None and arch.hidden is not None and arch.heads is not None
    h = arch.hidden
    kv = (arch.kv_heads or arch.heads) * (h / arch.heads)
    q, k, v, o = 2 * h, h + kv, h + kv, 2 * h  # d_in + d_out of each projection
    per_layer = {LoraTargets.QV: q + v, LoraTargets.ATTN: q + k + v + o}.get(targets, q + k + v + o)
    if targets is LoraTargets.ALL_LINEAR:
        m = _mlp_matrices(arch)
        experts = expert_params(arch)
        if experts and arch.experts:
            # each expert is an MLP; its width follows from the experts' weight count
            width = experts / (arch.layers * arch.experts * m * h)
            per_layer += arch.experts * m * (h + width)
        else:
            per_layer += m * (h + (arch.ffn_hidden or 4 * h))
    return float(rank * per_layer * arch.layers)


class ParamGroups(BaseModel):
    """Parameter counts by how they are stored and sharded."""

    model_config = ConfigDict(frozen=True)

    dense: float  # replicated over expert-parallel ranks (everything but routed experts)
    experts: float  # routed experts, split over the expert-parallel ranks
    embeddings: float  # part of ``dense``: stays 16-bit under QLoRA
    adapters: float  # trainable LoRA parameters (0 for full training)
    method: Method

    @property
    def total(self) -> float:
        return self.dense + self.experts


def param_groups(w: TrainingWorkload) -> ParamGroups:
    a = w.arch
    experts = expert_params(a)
    adapters = 0.0 if w.method is Method.FULL else adapter_params(a, w.lora_rank, w.lora_targets)
    return ParamGroups(dense=a.params - experts, experts=experts,
                       embeddings=min(embedding_params(a), a.params - experts),
                       adapters=adapters, method=w.method)


def frozen_bytes_per_param(w: TrainingWorkload) -> tuple[float, float]:
    """(bytes per frozen linear weight, bytes per frozen embedding weight) under LoRA/QLoRA."""
    sixteen = 2.0 if w.precision.mixed else 4.0
    if w.method is Method.QLORA:
        return NF4_DQ_BITS / 8, 2.0
    return sixteen, sixteen


def step_flops_per_token(w: TrainingWorkload, full_recompute: bool) -> tuple[float, float, str]:
    """(model FLOPs, hardware FLOPs) per training token and the formula, for ``w``."""
    n = w.arch.compute_params
    name = "N_active" if w.arch.moe else "N"
    if w.method is Method.FULL:
        model, formula = 6.0 * n, f"6*{name}*D"
        extra = 2.0 * n
    else:
        na = param_groups(w).adapters
        model, formula = 4.0 * n + 6.0 * na, f"(4*{name} + 6*N_adapter)*D"
        extra = 2.0 * (n + na)
    if full_recompute:
        return model, model + extra, formula + " + one recomputed forward pass"
    return model, model, formula
