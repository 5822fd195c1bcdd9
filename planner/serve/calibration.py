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
from planner.serve.engines import BASE, BASE_FITS, BORROWS, DEFAULT, OWN, Engine, engine_of
from planner.serve.roofline import (
    Efficiency, KvFormat, Model, Replica, WeightFormat, continuous_tokens_per_s, link_kind, max_batch,
    pass_seconds, static_tokens_per_s, ttft_seconds,
)
from planner.workload.inputs import arch_for
from planner.workload.ranges import HIGH_PERCENTILE, LOW_PERCENTILE, Spread, spread_from

FIT_FILE = "serving_fit.toml"
# Continuous batching in a throughput benchmark runs at whatever batch fits: the engine's cap is far above it
# (TensorRT-LLM's benchmark captures CUDA graphs up to 8192 sequences, perf-overview llm_options.yml).
UNCAPPED = 8192
LATENCIES = frozenset({"ttft_ms", "itl_ms", "batch_latency_ms"})  # metrics where lower is faster
ROUNDS = 8  # coordinate-descent rounds: with six constants the loss settles by the eighth (1.788; 1.818 after five)


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
    engine: Engine


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
                       Replica(spec, tp, link.bus_gbytes_s if link else None, link_kind(str(spec.interconnect))),
                       int(r["batch"]) if r["batch"] else None, int(r["prompt_tokens"]), int(r["output_tokens"]),
                       value, r["source"], engine_of(r["engine"])))
    return out


def predict(run: Run, e: Efficiency) -> float:
    """The model's figure for what ``run`` measured, in the same unit."""
    m, r = run.model, run.replica
    if run.metric == "ttft_ms":
        return ttft_seconds(m, r, e, run.prompt) * 1000
    if run.metric == "itl_ms":  # one stream's time between tokens: a decode step at batch 1, halfway through
        return pass_seconds(m, r, e, batch=1, new_tokens=1, context=run.prompt + run.output / 2) * 1000
    if run.metric == "batch_latency_ms":  # a static batch from its prompts to its last tokens
        assert run.batch is not None
        tokens = static_tokens_per_s(m, r, e, batch=run.batch, prompt=run.prompt, output=run.output)
        return run.batch * run.output / tokens * 1000
    if run.batching == "static":
        assert run.batch is not None
        return static_tokens_per_s(m, r, e, batch=run.batch, prompt=run.prompt, output=run.output)
    b = min(UNCAPPED, max_batch(m, r, prompt=run.prompt, output=run.output))
    return continuous_tokens_per_s(m, r, e, batch=b, prompt=run.prompt, output=run.output) if b else 0.0


def ratio(run: Run, e: Efficiency) -> float:
    """Measured over predicted, as "how much faster reality was": a latency's ratio is inverted so that for
    every metric above 1 means the model was pessimistic."""
    p = predict(run, e)
    return p / run.measured if run.metric in LATENCIES else run.measured / p


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
BOUNDS = {"memory": (0.05, 1.0), "compute": (0.05, 1.0), "pass_s": (0.0, 0.02), "request_s": (0.0, 0.05),
          "seq_s": (0.0, 0.001), "overlap": (1.0, 8.0), "allreduce_s": (0.0, 1e-4)}


START = Efficiency(memory=0.7, compute=0.5, pass_s=0.002, request_s=0.0, seq_s=0.0, overlap=2.0)


def fit(rs: list[Run], start: Efficiency = START, names: Iterable[str] = tuple(BOUNDS), rounds: int = ROUNDS
        ) -> Efficiency:
    """Coordinate descent with a golden-section search per constant in ``names``, inside :data:`BOUNDS`, from
    ``start`` (the others stay as they are there)."""
    e = start
    for _ in range(rounds):
        for name in names:
            lo, hi = BOUNDS[name]
            best = _golden(lambda x, n=name, cur=e: _loss(rs, _with(cur, n, x)), lo, hi)
            e = _with(e, name, best)
    return e


def of_engine(rs: Iterable[Run], engine: Engine) -> list[Run]:
    return [r for r in rs if r.engine is engine and r.use == "fit"]


def fit_engines(rs: list[Run]) -> dict[Engine, Efficiency]:
    """Every constant on the base engine's results; each other engine with results refits its own (:data:`OWN`)
    from there."""
    base = fit(of_engine(rs, BASE), names=BASE_FITS)
    out = {BASE: base}
    for engine in Engine:
        if engine is not BASE and (own := of_engine(rs, engine)):
            out[engine] = fit(own, base, OWN)
    return out


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


LOO_ROUNDS = 3  # a refit without one row starts from the full fit, a few rounds from its optimum


def leave_one_out(rs: list[Run], full: Mapping[Engine, Efficiency] | None = None) -> list[tuple[Run, float]]:
    """(run, measured/predicted) with each fit row predicted by its engine's fit on the others (another engine's
    fit starts from the base engine's full fit, which never saw the row)."""
    full = full or fit_engines(rs)
    out = []
    for r in (r for r in rs if r.use == "fit"):
        others = [o for o in of_engine(rs, r.engine) if o is not r]
        e = (fit(others, full[BASE], BASE_FITS, rounds=LOO_ROUNDS) if r.engine is BASE
             else fit(others, full[BASE], OWN))
        out.append((r, ratio(r, e)))
    return out


def spread_of(ratios: list[float]) -> ServeSpread:
    return ServeSpread(**spread_from(ratios, "serving").model_dump())


@dataclass(frozen=True, slots=True)
class Calibration:
    efficiency: Efficiency
    spread: ServeSpread
    fit_runs: int  # of the engine's own results (0: borrowed)
    engine: Engine = BASE
    borrowed_from: Engine | None = None  # an engine with no published results uses this one's constants


@lru_cache(maxsize=4)
def shipped(engine: Engine = DEFAULT) -> Calibration:
    """The constants and range of ``engine`` in ``data/serving_fit.toml``."""
    data = tomllib.loads(resources.files("planner.data").joinpath(FIT_FILE).read_text(encoding="utf-8"))
    lender = BORROWS.get(engine)
    e = data[(lender or engine).value]
    c = Calibration(Efficiency(float(e["memory"]), float(e["compute"]), float(e["pass_s"]), float(e["request_s"]),
                               float(e["seq_s"]), float(e["overlap"]), float(e["allreduce_s"])),
                    ServeSpread(low=float(e["spread_low"]), high=float(e["spread_high"]), runs=int(e["spread_runs"])),
                    int(e["fit_runs"]), engine)
    return replace(c, fit_runs=0, borrowed_from=lender) if lender else c


def calibrate(gpus: Mapping[str, GpuSpec]) -> tuple[dict[Engine, Calibration], list[tuple[Run, float]],
                                                    list[tuple[Run, float]]]:
    """A fresh fit: each engine's calibration, the leave-one-out ratios, and the hold-out ratios under the full fit.

    The base engine's range is the spread of its own leave-one-out ratios; another engine's has too few results
    for its own percentiles, so it pools them with the base engine's."""
    rs = runs(gpus)
    full = fit_engines(rs)
    loo = leave_one_out(rs, full)
    held = [(r, ratio(r, full[r.engine])) for r in rs if r.use == "holdout" and r.engine in full]
    base = [x for r, x in loo if r.engine is BASE]
    out = {}
    for engine, e in full.items():
        own = [x for r, x in loo if r.engine is engine]
        out[engine] = Calibration(e, spread_of(own if engine is BASE else base + own), len(own), engine)
    return out, loo, held


def fit_toml(cs: Mapping[Engine, Calibration]) -> str:
    out = [("# Written by `python -m planner.serve.calibration --write` from serving_runs.csv; a test refits and "
            "compares."), (f"# {BASE.title} fits every constant; another engine refits {' and '.join(OWN)} on its "
                           "own results (planner/serve/engines.py).")]
    for engine, c in cs.items():
        e, s = c.efficiency, c.spread
        out += ["", f"[{engine.value}]",
                f"memory = {e.memory:.4f}  # fraction of datasheet memory bandwidth a decode step streams at",
                f"compute = {e.compute:.4f}  # fraction of peak tensor FLOP/s",
                f"pass_s = {e.pass_s:.6f}  # fixed seconds per forward pass",
                f"request_s = {e.request_s:.6f}  # fixed seconds before a request's first pass",
                f"seq_s = {e.seq_s:.8f}  # seconds per sequence in each pass",
                f"overlap = {e.overlap:.4f}  # memory and math per pass: 1 adds them, more overlaps them",
                f"allreduce_s = {e.allreduce_s:.8f}  # fixed seconds of one all-reduce over NVLink",
                f"fit_runs = {c.fit_runs}",
                "# P10/P90 of measured/predicted, leave-one-out",
                f"spread_low = {s.low:.4f}", f"spread_high = {s.high:.4f}", f"spread_runs = {s.runs}"]
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    from pricing.catalog.shipped import shipped_gpus

    cs, loo, held = calibrate(shipped_gpus())
    for engine, c in cs.items():
        e, mine = c.efficiency, [x for r, x in loo if r.engine is engine]
        errors = sorted(abs(math.log(x)) for x in mine)
        print(f"{engine.title}: memory {e.memory:.3f}, compute {e.compute:.3f}, pass {e.pass_s * 1000:.2f} ms, "
              f"request {e.request_s * 1000:.2f} ms, per sequence {e.seq_s * 1e6:.1f} us, overlap {e.overlap:.2f}, "
              f"all-reduce {e.allreduce_s * 1e6:.1f} us over {c.fit_runs} runs")
        print(f"  leave-one-out: median |error| x{math.exp(statistics.median(errors)):.2f}, "
              f"worst x{math.exp(errors[-1]):.2f}, range x{c.spread.low:.2f}-x{c.spread.high:.2f}, "
              f"inside: {sum(c.spread.low <= x <= c.spread.high for x in mine)}/{len(mine)}")
    for r, x in loo + held:
        print(f"  {r.id} {r.engine.value:6} {r.use:7} {r.metric:19} {r.model.arch.name:12} "
              f"{r.replica.tp}x{r.replica.gpu.key:15} b={r.batch or '-':>5} {r.prompt:>5}/{r.output:<5} "
              f"measured {r.measured:>9.1f}  ratio {x:.2f}")
    if "--write" in argv:
        path = resources.files("planner.data").joinpath(FIT_FILE)
        with resources.as_file(path) as p:
            p.write_text(fit_toml(cs), encoding="utf-8")
        print(f"wrote {FIT_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
