"""The server command a service export runs: the engine the plan assumed (``--engine``), with the plan's layout.

Each engine gets the plan's tensor-parallel degree, its batch limit, the context the requests need and the
formats the speeds were estimated in: vLLM (``vllm serve``), SGLang (``python -m sglang.launch_server``) and
TensorRT-LLM (``trtllm-serve serve``, its PyTorch backend).
"""

from __future__ import annotations

import shlex

from planner.serve.engines import Engine
from planner.serve.fleet import Fleet, ServePlan

PORT = 8000
INSTALL = {Engine.VLLM: "pip install vllm", Engine.SGLANG: 'pip install "sglang[all]"',
           Engine.TRTLLM: "pip install tensorrt_llm"}
# TensorRT-LLM takes its KV-cache format from a YAML of LLM-API options (trtllm-serve --extra_llm_api_options)
TRTLLM_OPTIONS = "/tmp/gpuplan-llm-api.yml"


def _join(args: list[str]) -> str:
    return " ".join(a if a.startswith("$") else shlex.quote(a) for a in args)


def server_command(plan: ServePlan, f: Fleet) -> str:
    """The shell command that starts one instance's server(s) on :data:`PORT`."""
    w, lay = plan.workload, f.layout
    context = str(w.prompt_tokens + w.output_tokens)
    fp8_weights, fp8_kv = w.weights.value == "fp8", w.kv.value == "fp8"
    if w.engine is Engine.SGLANG:
        args = ["python", "-m", "sglang.launch_server", "--model-path", "$MODEL_ID", "--host", "0.0.0.0",
                "--port", str(PORT), "--tp-size", str(lay.tp), "--max-running-requests", str(lay.batch),
                "--context-length", context]
        args += ["--dp-size", str(lay.replicas)] if lay.replicas > 1 else []
        args += ["--quantization", "fp8"] if fp8_weights else []
        args += ["--kv-cache-dtype", "fp8_e4m3"] if fp8_kv else []
        return _join(args)
    if w.engine is Engine.TRTLLM:
        args = ["trtllm-serve", "serve", "$MODEL_ID", "--backend", "pytorch", "--host", "0.0.0.0", "--port",
                str(PORT), "--tp_size", str(lay.tp), "--max_batch_size", str(lay.batch), "--max_seq_len", context]
        if fp8_kv:
            args += ["--extra_llm_api_options", TRTLLM_OPTIONS]
            return f"echo 'kv_cache_dtype: fp8' > {TRTLLM_OPTIONS} && {_join(args)}"
        return _join(args)
    args = ["vllm", "serve", "$MODEL_ID", "--port", str(PORT), "--tensor-parallel-size", str(lay.tp),
            "--max-num-seqs", str(lay.batch), "--max-model-len", context]
    args += ["--data-parallel-size", str(lay.replicas)] if lay.replicas > 1 else []
    args += ["--quantization", "fp8"] if fp8_weights else []
    args += ["--kv-cache-dtype", "fp8"] if fp8_kv else []
    return _join(args)


def engine_notes(plan: ServePlan, f: Fleet) -> list[str]:
    """What the user must know to run the command as the plan assumed."""
    w, lay = plan.workload, f.layout
    notes = []
    if w.engine is Engine.TRTLLM and lay.replicas > 1:
        notes.append(f"# trtllm-serve runs one replica per server: this starts one (TP{lay.tp}); the plan's "
                     f"{lay.replicas} replicas per instance need one server each on its own GPUs and a balancer.")
    if w.engine is Engine.TRTLLM and w.weights.value == "fp8":
        notes.append("# TensorRT-LLM serves fp8 from a pre-quantised checkpoint (e.g. NVIDIA's ModelOpt FP8 "
                     "releases): point MODEL_ID at one.")
    return notes
