"""The serving model's three constants, fitted to published serving measurements, and how far off it is.

``data/serving_runs.csv`` holds published throughputs (static and continuous batching) and
first-token latencies with their setup (model, GPU, tensor-parallel degree, formats, batch,
prompt and answer lengths). :func:`fit` finds the :class:`~planner.serve.roofline.Efficiency`
that minimises the squared log error over the rows marked ``fit``; ``holdout`` rows are never
fitted and report how the model does on results it did not see. :func:`leave_one_out`
refits without each row in turn; the 10th and 90th percentiles of measured/predicted over
those refits are the range every serving estimate carries (:class:`ServeSpread`).

The fitted constants ship in ``data/serving_fit.toml`` so that a plan does not refit on
every start; ``python -m planner.serve.calibration --write`` refreshes it, and a test
checks that the file equals a refit of the data, so the two cannot drift apart.
"""

from __future__ import annotations

import math
import statistics
import sys
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources

from pricing.catalog import GpuSpec
from pricing.datafiles import data_rows
from planner.perf.comm import intra_link
from planner.serve.roofline import (
    Efficiency, KvFormat, Model, Replica, WeightFormat, continuous_tokens_per_s, max_batch, static_tokens_per_s,
    ttft_seconds,
)
from planner.workload.inputs import arch_for
from planner.workload.ranges import HIGH_PERCENTILE, LOW_PERCENTILE, Spread, spread_from

FIT_FILE = "serving_fit.toml"
# Continuous batching in a throughput benchmark runs at whatever batch fits: the engine's cap is far above it
# (TensorRT-LLM's benchmark captures CUDA graphs up to 8192 sequences, perf-overview llm_options.yml).
UNCAPPED = 8192
ROUNDS = 5  # coordinate-descent rounds: the loss changes by under 0.1% after the fourth


@dataclass(frozen=True, slots=True)
class Run:
    """One published measurement, as the model sees it."""

    id: str
    use: str  # "fit" or "holdout"
    batching: str  # "static" or "continuous"
    metric: str  # "output_tokens_per_s" (whole system) or "ttft_ms"
    model: Model
    replica: Replica
    batch: int | None
    prompt: int
    output: int
    measured: float
    source: str


@lru_cache(maxsize=1)
def gpus_measured() -> tuple[frozenset[str], frozenset[str]]:
    """(GPUs with a published serving result, GPUs whose results the constants are fitted on)."""
    rows = data_rows("serving_runs.csv", "planner.data")
    return frozenset(r["gpu"] for r in rows), frozenset(r["gpu"] for r in rows if r["use"] == "fit")


def runs(gpus: Mapping[str, GpuSpec]) -> list[Run]:
    out = []
    for r in data_rows("serving_runs.csv", "planner.data"):
        spec = gpus[r["gpu"]]
        tp = int(r["gpus"])
        link = intra_link(spec.key, str(spec.interconnect)) if tp > 1 else None
        model = Model(arch_for(r["model"], None), WeightFormat(r["precision"]), KvFormat(r["kv_precision"]))
        value = float(r["value"]) * (tp if r["per"] == "gpu" else 1)
        out.append(Run(r["id"], r["use"], r["batching"], r["metric"], model,
                       Replica(spec, tp, link.bus_gbytes_s if link else None),
                       int(r["batch"]) if r["batch"] else None, int(r["prompt_tokens"]), int(r["output_tokens"]),
                       value, r["source"]))
    return out


def predict(run: Run, e: Efficiency) -> float:
    """The model's figure for what ``run`` measured, in the same unit."""
    m, r = run.model, run.replica
    if run.metric == "ttft_ms":
        return ttft_seconds(m, r, e, run.prompt) * 1000
    if run.batching == "static":
        assert run.batch is not None
        return static_tokens_per_s(m, r, e, batch=run.batch, prompt=run.prompt, output=run.output)
    b = min(UNCAPPED, max_batch(m, r, prompt=run.prompt, output=run.output))
    return continuous_tokens_per_s(m, r, e, batch=b, prompt=run.prompt, output=run.output) if b else 0.0


def ratio(run: Run, e: Efficiency) -> float:
    """Measured over predicted, as "how much faster reality was": a latency's ratio is inverted so that for
    every metric above 1 means the model was pessimistic."""
    p = predict(run, e)
    return p / run.measured if run.metric == "ttft_ms" else run.measured / p


def _loss(rs: Iterable[Run], e: Efficiency) -> float:
    return sum(math.log(ratio(r, e)) ** 2 for r in rs)


def _golden(f: Callable[[float], float], lo: float, hi: float, iters: int = 40) -> float:
    g = (math.sqrt(5) - 1) / 2
    a, b = lo, hi
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(iters):
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = f(d)
    return (a + b) / 2


# Bounds a physical constant can take: a fraction of the datasheet, at most 20 ms of fixed cost per pass and
# 50 ms per request.
BOUNDS = {"memory": (0.05, 1.0), "compute": (0.05, 1.0), "pass_s": (0.0, 0.02), "request_s": (0.0, 0.05)}


def fit(rs: list[Run]) -> Efficiency:
    """Coordinate descent with a golden-section search per constant, inside :data:`BOUNDS`."""
    e = Efficiency(memory=0.7, compute=0.5, pass_s=0.002, request_s=0.0)
    for _ in range(ROUNDS):
        for name, (lo, hi) in BOUNDS.items():
            best = _golden(lambda x, n=name: _loss(rs, _with(e, n, x)), lo, hi)
            e = _with(e, name, best)
    return e


def _with(e: Efficiency, name: str, value: float) -> Efficiency:
    return replace(e, **{name: value})


class ServeSpread(Spread):
    """:class:`planner.workload.ranges.Spread` over serving results: P10 and P90 of measured/predicted throughput,
    each run predicted by a fit that did not see it."""

    workload_class: str = "serving"

    @property
    def basis(self) -> str:
        return (f"P{LOW_PERCENTILE}-P{HIGH_PERCENTILE} of measured/predicted over {self.runs} published serving "
                f"results, each left out of its own fit (docs/performance.md): x{self.low:.2f} to x{self.high:.2f}")


def leave_one_out(rs: list[Run]) -> list[tuple[Run, float]]:
    """(run, measured/predicted) with each fit row predicted by a fit on the others."""
    fitted = [r for r in rs if r.use == "fit"]
    return [(r, ratio(r, fit([o for o in fitted if o is not r]))) for r in fitted]


def spread_of(ratios: list[float]) -> ServeSpread:
    return ServeSpread(**spread_from(ratios, "serving").model_dump())


@dataclass(frozen=True, slots=True)
class Calibration:
    efficiency: Efficiency
    spread: ServeSpread
    fit_runs: int


@lru_cache(maxsize=1)
def shipped() -> Calibration:
    """The constants and range in ``data/serving_fit.toml``."""
    data = tomllib.loads(resources.files("planner.data").joinpath(FIT_FILE).read_text(encoding="utf-8"))
    e, s = data["efficiency"], data["spread"]
    return Calibration(Efficiency(float(e["memory"]), float(e["compute"]), float(e["pass_s"]), float(e["request_s"])),
                       ServeSpread(low=float(s["low"]), high=float(s["high"]), runs=int(s["runs"])), int(e["fit_runs"]))


def calibrate(gpus: Mapping[str, GpuSpec]) -> tuple[Calibration, list[tuple[Run, float]], list[tuple[Run, float]]]:
    """A fresh fit: the calibration, the leave-one-out ratios, and the hold-out ratios under the full fit."""
    rs = runs(gpus)
    fitted = [r for r in rs if r.use == "fit"]
    e = fit(fitted)
    loo = leave_one_out(rs)
    held = [(r, ratio(r, e)) for r in rs if r.use == "holdout"]
    return Calibration(e, spread_of([x for _, x in loo]), len(fitted)), loo, held


def fit_toml(c: Calibration) -> str:
    e, s = c.efficiency, c.spread
    return (
        "# Written by `python -m planner.serve.calibration --write` from serving_runs.csv; a test refits and compares.\n"
        "[efficiency]\n"
        f"memory = {e.memory:.4f}  # fraction of datasheet memory bandwidth a decode step streams at\n"
        f"compute = {e.compute:.4f}  # fraction of peak tensor FLOP/s\n"
        f"pass_s = {e.pass_s:.6f}  # fixed seconds per forward pass\n"
        f"request_s = {e.request_s:.6f}  # fixed seconds before a request's first pass\n"
        f"fit_runs = {c.fit_runs}\n\n"
        "[spread]  # P10/P90 of measured/predicted, leave-one-out\n"
        f"low = {s.low:.4f}\nhigh = {s.high:.4f}\nruns = {s.runs}\n"
    )


def main(argv: list[str]) -> int:
    from pricing.catalog.shipped import shipped_gpus

    c, loo, held = calibrate(shipped_gpus())
    errors = sorted(abs(math.log(x)) for _, x in loo)
    print(f"fit: memory {c.efficiency.memory:.3f}, compute {c.efficiency.compute:.3f}, "
          f"pass {c.efficiency.pass_s * 1000:.2f} ms, request {c.efficiency.request_s * 1000:.2f} ms over {c.fit_runs} runs")
    print(f"leave-one-out: median |error| x{math.exp(statistics.median(errors)):.2f}, "
          f"range x{c.spread.low:.2f}-x{c.spread.high:.2f}, "
          f"inside: {sum(c.spread.low <= x <= c.spread.high for _, x in loo)}/{len(loo)}")
    for r, x in loo + held:
        print(f"  {r.id} {r.use:7} {r.metric:19} {r.model.arch.name:12} {r.replica.tp}x{r.replica.gpu.key:15} "
              f"b={r.batch or '-':>5} {r.prompt:>5}/{r.output:<5} measured {r.measured:>9.1f}  ratio {x:.2f}")
    if "--write" in argv:
        path = resources.files("planner.data").joinpath(FIT_FILE)
        with resources.as_file(path) as p:
            p.write_text(fit_toml(c), encoding="utf-8")
        print(f"wrote {FIT_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
