"""A serving workload: which model, in which number formats, at what load and latency."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from planner.serve.engines import DEFAULT as DEFAULT_ENGINE, Engine
from planner.serve.roofline import KvFormat, Model, WeightFormat
from planner.workload.spec import TransformerArch

# vLLM's default --max-num-seqs (docs.vllm.ai EngineArgs: "Maximum number of sequences per iteration", 256): the
# batch a replica runs at most unless --max-batch says otherwise.
DEFAULT_MAX_BATCH = 256
DEFAULT_PROMPT_TOKENS = 1000
DEFAULT_OUTPUT_TOKENS = 300
# The share of the fleet's capacity a plan fills at the peak unless --max-load says otherwise: past ~80% busy
# the queue of an M/M/c system grows steeply under random arrivals (planner.serve.queueing), and a model that is
# slower than expected (its calibrated range) would push a fuller fleet past 100%.
DEFAULT_MAX_LOAD = 0.8


class Percentile(StrEnum):
    P50 = "p50"
    P95 = "p95"


@dataclass(frozen=True, slots=True, kw_only=True)
class ServeWorkload:
    arch: TransformerArch
    weights: WeightFormat = WeightFormat.BF16
    kv: KvFormat = KvFormat.FP16
    prompt_tokens: int = DEFAULT_PROMPT_TOKENS
    output_tokens: int = DEFAULT_OUTPUT_TOKENS
    rate: float | None = None  # average requests per second
    ttft_s: float | None = None
    tpot_s: float | None = None
    percentile: Percentile = Percentile.P50
    hours_per_day: float = 24.0
    peak_ratio: float = 1.0  # peak rate over the average: the fleet is sized for the peak
    max_batch: int = DEFAULT_MAX_BATCH
    max_load: float = DEFAULT_MAX_LOAD  # the most of the fleet's capacity the peak may use
    engine: Engine = DEFAULT_ENGINE  # the server the plan assumes and the exports run

    @property
    def model(self) -> Model:
        return Model(self.arch, self.weights, self.kv)

    @property
    def has_targets(self) -> bool:
        return self.ttft_s is not None or self.tpot_s is not None

    def as_json(self) -> dict[str, object]:
        moe: dict[str, object] = ({"active_params": self.arch.active_params, "experts": self.arch.experts,
                                   "experts_per_token": self.arch.experts_per_token} if self.arch.moe else {})
        return {"model": self.arch.name, "params": self.arch.params, **moe, "weights": self.weights.value,
                "kv_cache": self.kv.value, "prompt_tokens": self.prompt_tokens, "output_tokens": self.output_tokens,
                "rate_requests_per_s": self.rate, "ttft_s": self.ttft_s, "tpot_s": self.tpot_s,
                "percentile": self.percentile.value, "hours_per_day": self.hours_per_day,
                "peak_ratio": self.peak_ratio, "max_batch": self.max_batch,
                "max_load": self.max_load, "engine": self.engine.value}
