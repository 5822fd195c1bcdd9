"""GPU-hours and wall-clock time of a workload on a GPU type and count.

Transformers: training FLOPs = 6*N*D (Kaplan et al. 2020, arXiv 2001.08361), and full
activation recompute adds one forward pass, 8*N*D of hardware work (Narayanan et al.
2021, arXiv 2104.04473). Time = hardware FLOPs / (GPUs x dense peak x utilization).
N is the active parameter count of a mixture of experts; LoRA/QLoRA train with
(4*N + 6*N_adapter)*D (``planner.workload.params``). The calibrated low/high range around each
estimate is ``planner.workload.ranges``.

Utilization defaults come from ``data/mfu.csv`` (sourced MFU/HFU anchors). Where the micro-batch is known (the
layout model fixes it) and the architecture has enough anchors with their work sourced, the utilisation is keyed
by that work (``planner.workload.utilisation``: hidden size, tokens per micro-batch, attention share of the
hardware FLOPs), with no step in the GPU count. Otherwise (a published run, FP8, an architecture without keyed
anchors) it is the median, per GPU architecture and scale (up to 64 GPUs: one node or a few; more: a cluster), of
the hardware FLOP utilization each run reached: HFU where the source gives it (runs
with recompute count the recompute), else MFU, else reported TFLOP/s over the dense
peak. The anchors ran on NVLink machines; on PCIe the time grows by the ratio of the
measured scaling efficiencies (``planner.perf.scaling``).

Goodput overhead (restarts, evaluation, checkpointing, stragglers) is derived from the
one run that reports both its MFU and its GPU-hours: Llama 3.1 405B, 41% MFU on 16K
H100s, 30.84M GPU-hours for 15.6T tokens (see :func:`goodput_overhead`).

Image models: measured images/sec per GPU from the shipped Lambda benchmarks (median
over suites), else scaled from a measured GPU by :func:`planner.perf.relative_speed`.
"""

from __future__ import annotations

import statistics
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict

from pricing.catalog import Catalog, GpuSpec, Interconnect
from pricing.datafiles import data_rows
from pricing.errors import InputError
from planner.workload.anchors import MfuAnchor, mfu_anchors, peak_tflops
from planner.workload.spec import ImageWorkload, Method, Precision, Recompute, TrainingWorkload

NODE_SCALE_MAX_GPUS = 64
@lru_cache(maxsize=1024)  # a plan asks for every offer's GPU, count and precision, often the same ones
def _anchor_utilizations(spec: GpuSpec, gpus: float, precision: Precision,
                         catalog: Catalog) -> tuple[tuple[float, ...], str, bool]:
    """The utilizations of the anchors closest to this GPU architecture, scale and precision, which anchors they
    are, and whether they are of the GPU's own architecture."""
    cat = catalog
    fp8 = precision is Precision.FP8
    cluster = gpus > NODE_SCALE_MAX_GPUS

    def scale_ok(a: MfuAnchor) -> bool:
        # a run with no count is a whole pretraining run: cluster scale
        is_cluster = a.gpu_count is None or a.gpu_count > NODE_SCALE_MAX_GPUS
        return is_cluster == cluster

    usable = [a for a in mfu_anchors() if a.gpu_key and a.fp8 == fp8 and a.utilization(cat) is not None]
    scale = "cluster (>64 GPUs)" if cluster else "node (<=64 GPUs)"
    def own(a: MfuAnchor) -> bool:
        return cat.gpus[a.gpu_key].arch == spec.arch

    tiers = [
        (lambda a: own(a) and scale_ok(a), f"{spec.arch} anchors at {scale} scale", True),
        (own, f"{spec.arch} anchors at any scale", True),
        (scale_ok, f"all anchors at {scale} scale (none for {spec.arch})", False),
        (lambda a: True, f"all anchors (none for {spec.arch})", False),
    ]
    for keep, basis, of_its_own in tiers:
        vals = [u for a in usable if keep(a) and (u := a.utilization(cat)) is not None]
        if vals:
            return tuple(vals), basis, of_its_own
    raise InputError("no MFU anchors for this precision", "give --mfu")


def _shape(w: TrainingWorkload) -> tuple[int, int, int]:
    """(layers, hidden, heads) of ``w``'s model, the missing ones inferred from its parameter count."""
    a = w.arch
    if a.layers is not None and a.hidden is not None and a.heads is not None:
        return a.layers, a.hidden, a.heads
    from planner.workload.shapes import infer_shape

    shape = infer_shape(a.compute_params, layers=a.layers, hidden=a.hidden, heads=a.heads)
    return shape.layers, shape.hidden, shape.heads


def work_utilization(w: TrainingWorkload, spec: GpuSpec, precision: Precision, full: bool, dense_per_token: float,
                     micro_batch: int | None, catalog: Catalog) -> tuple[float, float, str] | None:
    """(utilisation of the dense hardware FLOPs, attention FLOPs per token, why) from the model keyed by the work
    (:mod:`planner.workload.utilisation`), or None where the architecture and precision have too few keyed anchors.

    The fitted utilisation is of the hardware FLOPs with the attention scores counted; the planner's FLOPs count
    (and the layout model's compute time) leaves them out, so the figure returned is that utilisation times
    dense / (dense + attention): the same seconds per token either way."""
    from planner.workload import utilisation as ut

    fp8 = precision is Precision.FP8
    # FP8 is the bf16 model with the linear layers' GEMMs sped up (planner.workload.fp8): its own three anchors
    # are too few to fit, and they are small models where the FP8 gain is least
    fitted = ut.coefficients(catalog, spec.arch, False)
    if fitted is None:
        return None
    coef, stack_text = ut.for_stack(fitted[0], str(w.stack))
    n = fitted[1]
    layers, hidden, _ = _shape(w)
    mb = micro_batch or w.micro_batch
    if not mb:
        # the work is unknown (a published run, an estimate with no layout): the median tiers describe whole runs
        # at that scale, their communication included, which the keyed model leaves to the layout model
        return None
    # with context parallelism (--cp) each GPU's kernels run 1/cp of each sequence; attention still spans all of it
    tokens = float(mb * w.seq_len) / w.cp
    attn = ut.attention_flops_per_token(layers, hidden, w.seq_len, full)
    work = ut.Work(hidden, tokens, attn / (dense_per_token + attn))
    clamped = ut.clamp(work, catalog, spec.arch, False)
    kernel = ut.predict(coef, clamped)
    fp8_text = ""
    if fp8:
        from planner.workload import fp8 as f8

        g = f8.gemm_share(coef, clamped)
        s, pairs = f8.gemm_speedup(catalog)
        gain = f8.speedup(g, s)
        # the fitted utilisation is of the bf16 peak; the estimate divides by the FP8 peak
        kernel *= gain * peak_tflops(spec, Precision.BF16)[0] / peak_tflops(spec, Precision.FP8)[0]
        fp8_text = (f"; FP8 x{gain:.2f} faster than bf16: the linear GEMMs take {g:.0%} of the bf16 time and run "
                    f"{s:.2f}x faster (median over {pairs} measured bf16/FP8 pairs, planner.workload.fp8), the "
                    "rest keeps its bf16 time")
    util = kernel * dense_per_token / (dense_per_token + attn)
    mb_text = f"micro-batch {mb} x {w.seq_len}" + (f" / context parallel {w.cp}" if w.cp > 1 else "")
    why = (f"{kernel:.3f} of the {'FP8' if fp8 else 'bf16'} peak in hardware FLOPs with attention counted, keyed by "
           f"the work: hidden {hidden}, {mb_text} tokens per micro-batch, attention {work.attention_share:.0%} of "
           f"the FLOPs; fitted on {n} {spec.arch} bf16 anchors of data/mfu.csv (planner.workload.utilisation)"
           f"{stack_text}{fp8_text}")
    return util, attn, why


def default_mfu(spec: GpuSpec, gpus: float, precision: Precision, catalog: Catalog) -> tuple[float, str]:
    """Median utilization of the anchors closest to this GPU architecture, scale and precision; a board with the
    same peak as its anchored sibling but lower power and clocks (A100 PCIe against SXM) runs at its measured share."""
    vals, basis, _ = _anchor_utilizations(spec, gpus, precision, catalog)
    util, why = statistics.median(vals), f"median of {len(vals)} {basis} in data/mfu.csv"
    if (board := board_factor(spec, catalog)) is not None:
        util, why = util * board[0], f"{why}; {board[1]}"
    return util, why


@lru_cache(maxsize=64)
def board_factor(spec: GpuSpec, catalog: Catalog) -> tuple[float, str] | None:
    """(measured speed / sibling's, why) for a GPU no anchor ran on whose datasheet peak equals an anchored board's
    of its architecture: the same silicon at a lower power limit (A100 PCIe 250-300 W against SXM4 400 W) sustains
    lower clocks, which the peak does not show but the Lambda transformer benchmarks measure. None otherwise."""
    from planner.perf.speed import SpeedPrecision, WorkloadClass, relative_speed

    anchored = {a.gpu_key for a in mfu_anchors() if a.gpu_key}
    if spec.key in anchored or spec.tensor_fp16_tflops is None:
        return None
    siblings = sorted(k for k in anchored if (g := catalog.gpus.get(k)) is not None and g.arch == spec.arch
                      and g.tensor_fp16_tflops == spec.tensor_fp16_tflops and g.vram_gb == spec.vram_gb)
    siblings = siblings or sorted(k for k in anchored if (g := catalog.gpus.get(k)) is not None and g.arch == spec.arch
                                  and g.tensor_fp16_tflops == spec.tensor_fp16_tflops)
    for sib in siblings:
        s = relative_speed(catalog, spec.key, sib, WorkloadClass.TRANSFORMER, SpeedPrecision.MIXED)
        if s.measured and s.relative < 1.0:
            return s.relative, f"x{s.relative:.2f}: {spec.key} measures that share of {sib}'s speed at the same peak"
    return None


def unanchored_spread(spec: GpuSpec, gpus: float, precision: Precision, catalog: Catalog) -> tuple[float, float] | None:
    """How far the utilisation of a GPU whose architecture has no anchor may lie from the median it is given.

    (median / P90, median / P10) of the anchors :func:`default_mfu` takes the median of, the factors its GPU-hours
    may be off by: an L40S or a T4 is given the median of Ampere, Hopper and Volta runs, and nothing measured
    says whether an Ada or Turing card reaches it. None where the architecture has anchors of its own.
    """
    try:
        vals, _, own = _anchor_utilizations(spec, gpus, precision, catalog)
    except InputError:
        return None
    if own or len(vals) < 2:
        return None
    deciles = statistics.quantiles(sorted(vals), n=10, method="inclusive")
    median = statistics.median(vals)
    return median / deciles[-1], median / deciles[0]


@lru_cache(maxsize=1)
def published_runs() -> tuple[dict[str, str], ...]:
    return tuple(data_rows("published_runs.csv", "planner.data"))


@lru_cache(maxsize=8)
def goodput_overhead(catalog: Catalog) -> tuple[float, str]:
    """Extra run time beyond pure training steps, derived from Llama 3.1 405B.

    reported MFU / (6*N*D / (GPU-hours x 3600 x dense peak)) - 1: the share of paid GPU
    time that did not turn into training steps at the reported rate.
    """
    run = next(r for r in published_runs() if r["run"] == "llama-3.1-405b")
    gpus = int(run["gpu_count"])
    anchor = next(a for a in mfu_anchors() if "405B pretraining" in a.run and a.gpu_count == gpus)
    assert anchor.mfu is not None
    peak, _ = peak_tflops(catalog.gpus[run["gpu_key"]], Precision.BF16)
    effective = 6 * float(run["params"]) * float(run["tokens"]) / (float(run["gpu_hours"]) * 3600 * peak * 1e12)
    overhead = anchor.mfu / effective - 1
    return overhead, (
        f"{overhead:.1%}: Llama 3.1 405B reported {anchor.mfu:.0%} MFU on {gpus:,} H100s but its "
        f"{float(run['gpu_hours']):,.0f} GPU-hours imply {effective:.1%}"
    )


# Published runs that do not report a GPU count: any count above the node scale gives
# the same GPU-hours (wall time x count cancels), so one cluster-sized count stands in.
UNREPORTED_COUNT = 2048


def run_workload(r: dict[str, str]) -> tuple[TrainingWorkload, int]:
    """A published transformer run (a ``published_runs.csv`` row with tokens) as the workload gpuplan estimates."""
    from planner.workload.spec import TransformerArch

    active = float(r["active_params"]) if r["active_params"] else None
    arch = TransformerArch(name=r["run"], params=float(r["params"]), active_params=active)
    if active is not None and (shaped := _moe_preset(r["run"], arch)) is not None:
        arch = shaped  # its shape and experts let the layout model place expert parallelism and its all-to-all
    w = TrainingWorkload(arch=arch,
                         tokens=float(r["tokens"]), precision=Precision.parse(r["precision"] or "bf16"),
                         recompute=Recompute.NONE)
    return w, int(r["gpu_count"]) if r["gpu_count"] else UNREPORTED_COUNT


def _moe_preset(name: str, arch: Any) -> Any:
    """The preset of a published MoE run's name with the same parameter counts and an expert count, else None."""
    from planner.workload.inputs import arch_for
    from planner.workload.presets import presets

    if name not in presets():
        return None
    a = arch_for(name, None)
    same = a.params == arch.params and a.active_params == arch.active_params
    return a if same and a.experts and a.has_shape else None


def interconnect_factor(gpus: float, interconnect: Interconnect) -> tuple[float, str | None]:
    """Slow-down against the NVLink machines the MFU anchors ran on."""
    from planner.perf.scaling import efficiency

    if gpus <= 1 or interconnect is Interconnect.NVLINK:
        return 1.0, None
    f = efficiency(gpus, interconnect) / efficiency(gpus, Interconnect.NVLINK)
    if f >= 1:
        return 1.0, None
    return f, f"{interconnect} instead of NVLink: {f:.0%} of NVLink multi-GPU throughput (measured scaling)"


class Estimate(BaseModel):
    """GPU-hours and wall-clock of one workload on ``gpus`` x ``gpu``."""

    model_config = ConfigDict(frozen=True)

    gpu: str
    gpus: float
    wall_hours: float
    gpu_hours: float
    flops: float | None
    assumptions: dict[str, Any]
    notes: tuple[str, ...] = ()


def _overhead(user: float | None, catalog: Catalog) -> tuple[float, str]:
    if user is not None:
        return user, "given (--overhead)"
    return goodput_overhead(catalog)


def _standard_attention(w: TrainingWorkload, spec: GpuSpec, rc: Recompute, hw_per_token: float, peak: float,
                        util: float, catalog: Catalog) -> tuple[float, float, str]:
    """(utilisation with the score matrices' memory time added, the share of time they take, why) for attention run
    without FlashAttention (:mod:`planner.workload.attention_traffic`): seconds per token = hardware FLOPs / (peak x
    utilisation) + score bytes / streamed memory bandwidth."""
    from planner.workload import attention_traffic as at

    layers, _, heads = _shape(w)
    if not spec.mem_bw_gbs:
        return util, 0.0, f"standard attention (--no-flash): no memory bandwidth known for {spec.key}, not timed"
    again = rc in (Recompute.FULL, Recompute.SELECTIVE)
    share = at.streaming_share(catalog)[0]
    mem_s = at.seconds_per_token(spec.mem_bw_gbs, share, layers, heads, w.seq_len, again)
    flop_s = hw_per_token / (peak * 1e12 * util)
    time_share = mem_s / (flop_s + mem_s)
    per_token = at.score_bytes_per_token(layers, heads, w.seq_len, again)
    why = (f"standard attention (--no-flash): the seq x seq scores cross memory, {per_token / 1e6:,.1f} MB a token "
           f"({layers} layers x {heads} heads x {w.seq_len}{' with the recomputed forward' if again else ''}) at "
           f"{share:.0%} of {spec.mem_bw_gbs:g} GB/s: {time_share:.0%} of the time")
    return util * flop_s / (flop_s + mem_s), time_share, why


def estimate_training(
    w: TrainingWorkload,
    spec: GpuSpec,
    gpus: float,
    interconnect: Interconnect = Interconnect.NVLINK,
    recompute: Recompute | None = None,
    *,
    catalog: Catalog,
    moe_factor: float | tuple[float, str] | None = None,
    micro_batch: int | None = None,
) -> Estimate:
    """Time to train ``w`` on ``gpus`` x ``spec``; ``recompute`` and ``micro_batch`` are the layout's choice when
    known (``micro_batch``, else the workload's own, keys the utilisation by the work; with neither it is the median
    of the anchors at that GPU architecture and scale).

    ``moe_factor``: the mixture-of-experts utilisation share, alone or as (share, why)
    (:func:`planner.plan.moe_share.moe_utilization`); None or 1.0: as dense."""
    if w.tokens is None:
        raise InputError("no training tokens given", "give --tokens, e.g. --tokens 2e10")
    from planner.workload.params import param_groups, step_flops_per_token

    rc = recompute or (Recompute.NONE if w.recompute is Recompute.AUTO else w.recompute)
    full = rc is Recompute.FULL
    per_token, hw_per_token, formula = step_flops_per_token(w, full)
    model_flops, hw_flops = per_token * w.tokens, hw_per_token * w.tokens
    peak, peak_basis = peak_tflops(spec, w.precision)
    attn_per_token = 0.0
    if w.mfu is not None:
        util, util_basis = w.mfu, "given (--mfu)"
    elif (keyed := work_utilization(w, spec, w.precision, full, hw_per_token, micro_batch, catalog)) is not None:
        util, attn_per_token, util_basis = keyed
        if (board := board_factor(spec, catalog)) is not None:
            util, util_basis = util * board[0], f"{util_basis}; {board[1]}"
    else:
        util, util_basis = default_mfu(spec, gpus, w.precision, catalog)
    if w.mfu is None and w.arch.moe:
        # the MoE share applies to either dense figure; it is fitted on the layout path (planner.plan.moe_share),
        # which the plan layer's callers pass in with its basis
        factor, why = (moe_factor if isinstance(moe_factor, tuple) else
                       (moe_factor, "given") if moe_factor is not None else
                       (1.0, "as dense: no mixture-of-experts share given"))
        if factor != 1.0 or moe_factor is None:
            util, util_basis = util * factor, f"{util_basis}; {why}"
    attn_mem_share = 0.0
    if not w.flash_attention and w.mfu is None:
        util, attn_mem_share, why = _standard_attention(w, spec, rc, hw_per_token, peak, util, catalog)
        util_basis = f"{util_basis}; {why}"
    ic, ic_note = interconnect_factor(gpus, interconnect)
    overhead, overhead_basis = _overhead(w.overhead, catalog)
    step_hours = hw_flops / (gpus * peak * 1e12 * util * ic) / 3600
    wall = step_hours * (1 + overhead)
    notes = [n for n in (ic_note,) if n]
    if full:
        notes.append(f"full activation recompute: {formula} of hardware work")
    a = w.arch
    assumptions: dict[str, Any] = {"flops_formula": formula, "params": a.params}
    if a.moe:
        assert a.active_params is not None
        assumptions["active_params"] = a.active_params
        notes.append(f"mixture of experts: FLOPs use the {a.active_params / 1e9:.3g}B active of "
                     f"{a.params / 1e9:.3g}B parameters; memory holds every expert's weights, gradients and "
                     "optimizer states, split over the GPUs by expert parallelism (`gpuplan fit`)")
    if w.method is not Method.FULL:
        adapters = param_groups(w).adapters
        assumptions["trainable_params"] = adapters
        base = "4-bit NF4 base" if w.method is Method.QLORA else "16-bit base"
        notes.append(f"{w.method.value}: frozen {base}, {adapters / 1e6:,.1f}M rank-{w.lora_rank} adapter parameters "
                     f"({w.lora_targets.value}) trained; no weight gradients for the base")
        if w.method is Method.QLORA:
            notes.append("qlora: 4-bit dequantization work is not in the FLOPs count, so the time is a lower bound")
    if a.shape_inferred:
        notes.append(f"shape inferred from the parameter count: {a.layers} layers, hidden {a.hidden}, {a.heads} heads")
    return Estimate(
        gpu=spec.key,
        gpus=gpus,
        wall_hours=wall,
        gpu_hours=wall * gpus,
        flops=model_flops,
        assumptions={
            **assumptions,
            "tokens": w.tokens,
            "peak_tflops": peak,
            "peak_basis": peak_basis,
            "mfu": round(util * model_flops / hw_flops, 4),
            "hardware_utilization": round(util, 4),
            "attention_flops_per_token": attn_per_token,
            "micro_batch": micro_batch or w.micro_batch,
            "mfu_basis": util_basis,
            "goodput_overhead": round(overhead, 4),
            "overhead_basis": overhead_basis,
            "interconnect_factor": round(ic, 4),
            "attention_memory_share": round(attn_mem_share, 4),
            "recompute": rc.value,
        },
        notes=tuple(notes),
    )


def image_throughput(w: ImageWorkload, spec: GpuSpec, catalog: Catalog) -> tuple[float, str, bool]:
    """Images/sec on one ``spec`` GPU: measured median, or scaled from a measured GPU."""
    from planner.perf.speed import SAME_SPEED, SpeedPrecision, WorkloadClass, benchmark_rows, relative_speed

    p = w.preset
    if not p.benchmark_model:
        raise InputError(f"no measured throughput for {p.name}", "use a model with Lambda benchmarks, e.g. resnet50")
    label = w.precision.benchmark_label
    rows = [r for r in benchmark_rows() if r.model == p.benchmark_model and r.precision == label
            and r.throughput and r.gpu_key and r.suite != "lambda-blog-2020"]
    # the GPU's own rows first; boards of the same silicon (perf.SAME_SPEED) only when it has none
    used = [r for r in rows if r.gpu_key == spec.key] or [
        r for r in rows if SAME_SPEED.get(r.gpu_key, r.gpu_key) == SAME_SPEED.get(spec.key, spec.key)]
    own = [r.throughput for r in used if r.throughput]
    if own:
        suites = ", ".join(sorted({r.suite for r in used}))
        return statistics.median(own), f"measured: median of {len(own)} Lambda row(s) ({suites})", True
    if not rows:
        raise InputError(f"no {label} throughput measured for {p.name}")
    by_gpu: dict[str, list[float]] = {}
    for r in rows:
        if r.throughput:
            by_gpu.setdefault(r.gpu_key, []).append(r.throughput)
    anchor = max(by_gpu, key=lambda k: (len(by_gpu[k]), k))
    prec = SpeedPrecision.FP32 if w.precision is Precision.FP32 else SpeedPrecision.MIXED
    speed = relative_speed(catalog, spec.key, anchor, WorkloadClass.CNN, prec)
    value = statistics.median(by_gpu[anchor]) * speed.relative
    return value, f"{anchor} measured x {speed.relative:.2f} relative CNN speed ({speed.basis})", False


def estimate_images(
    w: ImageWorkload, spec: GpuSpec, gpus: float, interconnect: Interconnect = Interconnect.NVLINK, *,
    catalog: Catalog,
) -> Estimate:
    from planner.perf.scaling import efficiency

    if w.images is None:
        raise InputError("no dataset size given", "give --images, e.g. --images 1281167 for ImageNet-1k")
    per_gpu, basis, measured = image_throughput(w, spec, catalog)
    from planner.perf.speed import WorkloadClass

    eff = efficiency(gpus, interconnect, WorkloadClass.CNN) if gpus > 1 else 1.0
    overhead, overhead_basis = _overhead(w.overhead, catalog)
    samples = w.images * w.epochs
    step_hours = samples / (per_gpu * gpus * eff) / 3600
    wall = step_hours * (1 + overhead)
    p = w.preset
    # training ~ 3x forward (backward ~ 2x forward, as 2N/4N per token for transformers);
    # torchvision's GFLOPS figure counts multiply-accumulates, so forward = 2 x GMACs
    flops = 3 * 2 * p.gmacs * 1e9 * samples if p.gmacs else None
    notes = [] if measured else [f"throughput is a {basis}"]
    if gpus > 1:
        notes.append(f"{eff:.0%} scaling efficiency on {gpus:g} GPUs over {interconnect}")
    return Estimate(
        gpu=spec.key, gpus=gpus, wall_hours=wall, gpu_hours=wall * gpus, flops=flops,
        assumptions={
            "images_per_sec_per_gpu": round(per_gpu, 1),
            "throughput_source": basis,
            "scaling_efficiency": round(eff, 4),
            "goodput_overhead": round(overhead, 4),
            "overhead_basis": overhead_basis,
            "samples": samples,
        },
        notes=tuple(notes),
    )
