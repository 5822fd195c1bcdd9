"""The serving engines a plan can assume, and what each is calibrated on.

TensorRT-LLM has the most published results (NVIDIA's performance tables): every constant of
the model is fitted on them. Another engine with published results refits only what differs
between engines on the same hardware: how much of the bandwidth its kernels stream at, its fixed
cost per step and of each all-reduce (:data:`OWN`). An engine with none borrows another's constants and says so.
"""

from __future__ import annotations

from enum import StrEnum


class Engine(StrEnum):
    VLLM = "vllm"
    TRTLLM = "trtllm"
    SGLANG = "sglang"

    @property
    def title(self) -> str:
        return {"vllm": "vLLM", "trtllm": "TensorRT-LLM", "sglang": "SGLang"}[self.value]


BASE = Engine.TRTLLM  # fits every constant
OWN = ("memory", "pass_s", "allreduce_s")  # what another engine refits on its own results
# What the base engine fits: every constant but the all-reduce latency, which keeps its 8 us estimate. Its
# tensor-parallel results are mostly an old static engine's (v0.6.1), whose slowness at TP2/TP4 a fitted latency
# soaks up: fitted, it comes out at 68 us and then over-predicts NIM's single-stream 70B step by 1.45x.
BASE_FITS = ("memory", "compute", "pass_s", "request_s", "seq_s", "overlap")
# No published SGLang result with the setup stated (lengths, batch, formats) was found: it borrows vLLM's
# constants, and the plan says so. Basis: a third-party comparison on one H100 and one L40S (runinfra.ai/news/
# vllm-vs-sglang-vs-tensorrt-llm-benchmark, vLLM 0.23.0, SGLang 0.5.13, read 2026-12-05): "SGLang tracked vLLM
# within a few percent".
BORROWS = {Engine.SGLANG: Engine.VLLM}
DEFAULT = Engine.VLLM  # what the exports run unless told otherwise, so what a plan assumes


def engine_of(text: str) -> Engine:
    """The engine of a ``serving_runs.csv`` row (``tensorrt-llm 0.6.1``, ``vllm``, ``sglang 0.4``)."""
    name = text.strip().lower().split()[0]
    return {"tensorrt-llm": Engine.TRTLLM, "trtllm": Engine.TRTLLM, "vllm": Engine.VLLM,
            "sglang": Engine.SGLANG}[name]
