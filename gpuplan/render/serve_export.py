"""Hand a serving plan's fleet to an engine: a SkyPilot service or a dstack service running the plan's server.

The fleet exported is the cheapest one the engine can run (a plan's first fleet may be cards to
buy, or on Tencent Cloud, which neither engine supports). Each instance runs the server the plan
assumed (``--engine``: vLLM, SGLang or TensorRT-LLM, :mod:`gpuplan.render.serve_engines`) with the
plan's layout (tensor parallel, replicas, the batch); the engines run ``instances`` copies and autoscale up
to ``instances_if_slow`` on requests per second, the rate one instance is expected to serve.
The server command is the user's to change (another engine, a quantised checkpoint).
"""

from __future__ import annotations

import math
from pathlib import Path

from pricing.errors import InputError
from pricing.money import money_text
from providers.registry import engine_runs
from planner.serve.fleet import Fleet, ServePlan
from gpuplan.render.export import Engine, dstack_gpu, dstack_placement, q, sky_resources
from gpuplan.render.serve_engines import INSTALL, PORT, engine_notes, server_command
# Public Hugging Face repositories of the presets' chat/instruct checkpoints; any other model gets a placeholder.
HF_IDS = {
    "llama-2-7b": "meta-llama/Llama-2-7b-chat-hf", "llama-2-13b": "meta-llama/Llama-2-13b-chat-hf",
    "llama-2-70b": "meta-llama/Llama-2-70b-chat-hf", "llama-3-8b": "meta-llama/Meta-Llama-3-8B-Instruct",
    "llama-3-70b": "meta-llama/Meta-Llama-3-70B-Instruct", "mistral-7b": "mistralai/Mistral-7B-Instruct-v0.1",
    "mixtral-8x7b": "mistralai/Mixtral-8x7B-Instruct-v0.1", "gpt-j-6b": "EleutherAI/gpt-j-6b",
}
PLACEHOLDER = "your-org/your-model"
# Repositories that serve their files only to accounts that accepted the licence (Meta's and Mistral AI's on
# Hugging Face are gated): the server needs the user's token. A placeholder may be private: it gets one too.
GATED_ORGS = ("meta-llama/", "mistralai/", PLACEHOLDER)
# The disk beyond the checkpoint, in GB: the machine image, the engine's Python environment (vLLM with PyTorch and
# CUDA libraries is several GB of wheels) and its compile and CUDA-graph caches. An estimate with room to spare,
# not a measured figure; dstack's default disk is 100 GB, SkyPilot's 256 GB.
DISK_BESIDES_CHECKPOINT_GB = 60
DISK_CHECKPOINT_SLACK = 1.1  # tokenizer and config files, and a partial download beside a complete one


def gated(model: str) -> bool:
    return model.startswith(GATED_ORGS)


def checkpoint_gb(plan: ServePlan) -> float:
    """GB the server downloads: fp8 weights are quantised on load from the 16-bit checkpoint (vLLM's
    ``--quantization fp8``), so only int8/int4 (pre-quantised checkpoints) are smaller than 2 bytes a weight."""
    w = plan.workload
    per_param = w.weights.bytes_per_param if w.weights.value in ("int8", "int4") else 2.0
    return w.arch.params * per_param / 1e9


def disk_gb(plan: ServePlan) -> int:
    """The disk an instance needs: the checkpoint with some slack, plus the image, engine and caches."""
    return math.ceil(checkpoint_gb(plan) * DISK_CHECKPOINT_SLACK + DISK_BESIDES_CHECKPOINT_GB)


def exportable(plan: ServePlan, engine: Engine) -> tuple[int, Fleet]:
    """(rank, fleet) of the cheapest fleet ``engine`` runs; an InputError naming why when there is none."""
    for i, f in enumerate(plan.options, 1):
        if f.provider != "local" and engine_runs(engine, f.provider) and str(f.billing) in ("hourly", "spot"):
            return i, f
    raise InputError(f"no fleet in the plan is one {engine} can run: nothing was written",
                     f"{engine} rents by the hour or spot on the clouds it supports: plan with --provider aws")


def _header(plan: ServePlan, rank: int, f: Fleet) -> list[str]:
    w = plan.workload
    lines = [f"# Written by gpuplan: {w.arch.name} at {w.rate:g} requests/s ({w.prompt_tokens} prompt + "
             f"{w.output_tokens} output tokens), {f.instances} x {f.offer} ({f.gpu_count} x {f.gpu}) {f.billing} in "
             f"{f.region}",
             f"# Estimated {money_text(f.cost_per_month.amount, plan.currency)} a month "
             f"({money_text(f.cost_per_million_tokens.amount, plan.currency, places=3)} per million output tokens); "
             f"{f.instances_if_slow} instances if the model serves at the low end of its range.",
             f"# Each instance: {f.layout.replicas} replica(s) x tensor parallel {f.layout.tp}, batch {f.layout.batch},"
             f" TTFT {f.ttft_s * 1000:,.0f} ms ({plan.workload.percentile} at the peak), "
             f"TPOT {f.layout.tpot_s * 1000:,.1f} ms (gpuplan's estimates)."]
    if rank > 1:
        lines.append(f"# The plan's #1 ({plan.cheapest.provider} {plan.cheapest.offer} {plan.cheapest.billing}) is not "
                     f"something the engine runs: this is its #{rank}.")
    if HF_IDS.get(w.arch.name) is None:
        lines.append(f"# Set MODEL_ID to your checkpoint ({PLACEHOLDER} is a placeholder).")
    if w.weights.value in ("int8", "int4"):
        lines.append(f"# {w.weights} weights: point MODEL_ID at a pre-quantised checkpoint (GPTQ/AWQ), "
                     f"{w.engine.title} detects it.")
    lines += [f"# Speeds estimated for {w.engine.title} (--engine {w.engine.value}): the file runs it.",
              *engine_notes(plan, f)]
    return lines


def _target_rps(f: Fleet, plan: ServePlan) -> float:
    per_instance = f.capacity_tokens_per_s / f.instances / plan.workload.output_tokens
    return round(per_instance, 2)


def skypilot_service(plan: ServePlan, rank: int, f: Fleet, name: str) -> str:
    model = HF_IDS.get(plan.workload.arch.name, PLACEHOLDER)
    lines = [*_header(plan, rank, f), f"name: {q(name)}", "service:", "  readiness_probe: /v1/models"]
    if f.instances_if_slow > f.instances:
        lines += ["  replica_policy:", f"    min_replicas: {f.instances}", f"    max_replicas: {f.instances_if_slow}",
                  f"    target_qps_per_replica: {_target_rps(f, plan)}"]
    else:
        lines.append(f"  replicas: {f.instances}")
    lines += ["envs:", f"  MODEL_ID: {q(model)}"]
    if gated(model):  # a secret SkyPilot resolves at launch: sky serve up FILE --secret HF_TOKEN
        lines += [(f"# {model} is gated on Hugging Face: launch with --secret HF_TOKEN (your token, read from your "
                   "environment)"), "secrets:", "  HF_TOKEN: null"]
    lines += ["resources:", *sky_resources(f.provider, f.region, f.offer, f.gpu, f.gpu_count, str(f.billing))]
    lines += [f"  disk_size: {disk_gb(plan)}  # GB: the checkpoint ({checkpoint_gb(plan):,.0f} GB), image and caches",
              f"  ports: {PORT}",
              "setup: |", f"  {INSTALL[plan.workload.engine]}", "run: |", f"  {server_command(plan, f)}"]
    return "\n".join(lines) + "\n"


def dstack_service(plan: ServePlan, rank: int, f: Fleet, name: str, gpu_memory_gb: float) -> str:
    model = HF_IDS.get(plan.workload.arch.name, PLACEHOLDER)
    # HF_TOKEN without a value: dstack takes it from the environment `dstack apply` runs in
    token = ["  - HF_TOKEN"] if gated(model) else []
    lines = [*_header(plan, rank, f), "type: service", f"name: {q(name)}", "env:", f"  - {q('MODEL_ID=' + model)}",
             *token, "commands:", f"  - {q(INSTALL[plan.workload.engine])}", f"  - {q(server_command(plan, f))}",
             f"port: {PORT}", f"model: {q(model)}"]
    if f.instances_if_slow > f.instances:
        lines += [f"replicas: {q(f'{f.instances}..{f.instances_if_slow}')}", "scaling:", "  metric: rps",
                  f"  target: {_target_rps(f, plan)}"]
    else:
        lines.append(f"replicas: {f.instances}")
    lines += ["resources:", f"  gpu: {dstack_gpu(f.gpu, gpu_memory_gb, f.gpu_count)}",
              f"  disk: {q(f'{disk_gb(plan)}GB..')}  # the checkpoint ({checkpoint_gb(plan):,.0f} GB), "
              "image and caches",
              *dstack_placement(f.provider, f.region, str(f.billing))]
    return "\n".join(lines) + "\n"


def export_service(plan: ServePlan, engine: Engine, path: Path, *, name: str, gpu_memory_gb: dict[str, float]
                   ) -> tuple[Path, int, Fleet]:
    """Write the cheapest fleet ``engine`` runs to ``path``; nothing is written when there is none."""
    if not path.parent.exists():
        raise InputError(f"folder {path.parent} does not exist: nothing was written", "create it or pick another path")
    rank, f = exportable(plan, engine)
    text = (skypilot_service(plan, rank, f, name) if engine is Engine.SKYPILOT
            else dstack_service(plan, rank, f, name, gpu_memory_gb[f.gpu]))
    path.write_text(text, encoding="utf-8")
    return path, rank, f
