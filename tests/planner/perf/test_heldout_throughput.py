"""The independent held-out check of issue 41: measured tokens/s per GPU at 16-512 A100/H100 GPUs
(data/heldout_throughput.csv, none of it in data/mfu.csv) against gpuplan's estimate path.

The bounds hold the error as measured when written (python examples/physics_holdout.py), a little above it, so
that a model change that makes any group worse fails here; a change that makes it better passes and should
tighten them."""

from __future__ import annotations

import statistics

import pytest

from planner.perf.holdout import heldout_points, heldout_prediction
from pricing.catalog import Catalog
from pricing.datafiles import data_rows

CATALOG = Catalog.shipped()
POINTS = heldout_points(CATALOG)  # each run at its published tensor/pipeline degrees where gpuplan fits them
OWN = heldout_points(CATALOG, published=False)  # each run at gpuplan's own layout choice
ROWS = data_rows("heldout_throughput.csv", "planner.data")


def ratio(p: object) -> float:
    pred, meas = p.predicted, p.measured  # type: ignore[attr-defined]
    return max(pred / meas, meas / pred)


def group(prefix: str, gpu: str = "") -> list[object]:
    return [p for p, r in zip(POINTS, ROWS, strict=True) if r["run"].startswith(prefix) and gpu in r["gpu_key"]]


def test_rows_are_in_the_bars_scope_and_predicted() -> None:
    # the bar speaks of 16-512 A100/H100 GPUs
    assert len(POINTS) == len(ROWS) >= 30
    assert all(16 <= int(r["gpus"]) <= 512 and r["gpu_key"].startswith(("A100", "H100")) for r in ROWS)
    assert all(p.predicted > 0 for p in POINTS)


def test_whole_set_error_as_measured() -> None:
    # each row timed with the software stack it ran on (its stack column, --stack), its attention kernels (flash column,
    # --no-flash for the 2021 runs), its optimizer (optimizer column) and at its published tensor, pipeline and context
    # degrees (--tp/--pp/--cp, FSDP x TP as such) where gpuplan's memory count fits them. The bar (median
    # |error| <= 12%, worst <= 1.25x) when written: whole set of 41 rows median 10.4%, worst 1.27x (the Megatron-LM
    # paper's DeepSpeed ZeRO-3 175B row of 2021: not met by that row alone); the 35 rows since 2024 median 10.4%, worst
    # 1.23x (met). At gpuplan's own layout choice: median 10.5%, worst 1.43x (Megatron-LM's 2021 TP8 runs, against
    # which gpuplan picks data parallelism it times faster). The fourth pass ended at 12.9% / 1.40x (published) and
    # 12.4% / 1.67x (own); every row as PyTorch FSDP at its own choice (its starting point): 22.9%, 1.78x.
    assert statistics.median(abs(p.error) for p in POINTS) <= 0.11
    assert max(ratio(p) for p in POINTS) <= 1.28
    modern = [p for p, r in zip(POINTS, ROWS, strict=True) if not r["run"].startswith("Megatron-LM")]
    assert len(modern) == 35
    assert statistics.median(abs(p.error) for p in modern) <= 0.11
    assert max(ratio(p) for p in modern) <= 1.24
    assert statistics.median(abs(p.error) for p in OWN) <= 0.11
    assert max(ratio(p) for p in OWN) <= 1.44


def test_modern_a100_fsdp_rows_meet_the_bar() -> None:
    # the 2024 PyTorch FSDP runs on 64-128 A100 (torchtitan 7, IBM 3) are the one group that meets the bar:
    # median 8.4%, worst 1.21x when written
    a100 = group("torchtitan", "A100") + group("IBM", "A100")
    assert len(a100) == 10
    assert statistics.median(abs(p.error) for p in a100) <= 0.12
    assert max(ratio(p) for p in a100) <= 1.25


def test_ibm_fsdp_on_a100_and_h100() -> None:
    # IBM's FSDP runs (Llama 2 7B/13B/70B at batch 2 x 4096 on 128 A100 and 96 H100, no torch.compile) reached 50-57%
    # MFU on A100 and 34-37% on H100: gpuplan is within 1.12x on A100 but over-predicts all three H100 rows, by up to
    # 1.24x (7B), the opposite of NVIDIA's H100 tables below: on H100 the software stack decides more than gpuplan's
    # one level can.
    ibm = group("IBM")
    assert len(ibm) == 6
    assert statistics.median(abs(p.error) for p in ibm) <= 0.11
    assert max(ratio(p) for p in ibm) <= 1.26


def test_torchtitan_fsdp_on_a100() -> None:
    # torchtitan's FSDP2 runs on 64 A100: median 9.0% (8.0% before ZeRO-2 paid its per-step parameter all-gather,
    # which moves the 8B rows from ZeRO-2 to HSDP), worst 1.17x when written, every row predicted slower. The worst
    # is Llama 2 70B with op-level selective AC at micro-batch 1 (355 measured, 294 predicted): gpuplan's memory
    # count says no data-parallel layout fits it without recompute, so the 64% of its work timed without recompute
    # runs as tp8+pp8 with a pipeline bubble, where torchtitan ran plain FSDP.
    tt = group("torchtitan", "A100")
    assert len(tt) == 7
    assert statistics.median(abs(p.error) for p in tt) <= 0.095
    assert max(ratio(p) for p in tt) <= 1.23


def test_nvidia_h100_tables_with_their_stack() -> None:
    # NVIDIA's DGX H100 benchmark tables (dgxc-benchmarking v24.11.1: NeMo Llama 3.1 8B/70B, GPT-3 175B, Nemotron-4
    # 15B/340B; MaxText Llama 2 70B) reach 49-62% of the 989 TFLOP/s peak in bf16. Timed as PyTorch FSDP (the keyed
    # anchors' stack, whose per-micro-batch term NeMo and MaxText do not pay: data/stacks.csv) each came out 18-44%
    # slower (median 26.7%, worst 1.78x); timed with their own stack (megatron, jax), median 12.5% at NVIDIA's
    # tensor/pipeline degrees, worst 1.28x (Nemotron-4 340B on 128 GPUs, which gpuplan's memory count did not fit with
    # fp32 Adam states). With their context parallelism pinned and the 340B run's own 16-bit Adam (its config's
    # distributed_fused_adam dtype bf16) that row runs NVIDIA's tp8+pp8 at 0.0%: median 11.6%, worst 1.23x (Llama 3.1
    # 8B, -18.9%) when written.
    nv = group("dgxc")
    assert len(nv) == 12
    assert statistics.median(abs(p.error) for p in nv) <= 0.12
    assert max(ratio(p) for p in nv) <= 1.24
    nemotron = [p for p in nv if "340B" in p.name]  # type: ignore[attr-defined]
    assert all("tp8+pp8" in p.name and abs(p.error) < 0.05 for p in nemotron)  # type: ignore[attr-defined]


def test_megatron_and_jax_stacks_on_h100() -> None:
    # every H100 row not run on PyTorch (dgxc's 12, NeMo 24.07's 3 FP8, Megatron-Bridge 26.04.01's FP8 Llama 3 70B on
    # 64: the one row added after the stack rule was written): median 12.5% at their published degrees (11.6% once
    # their context parallelism is pinned too), 10.6% at gpuplan's own layout choice, worst 1.28x, when written. The
    # same rows timed as PyTorch FSDP (own choice) miss by a median of 30.5%, all slower (computed below): the stack
    # was most of the old miss.
    pick = [r["stack"] != "pytorch" and "H100" in r["gpu_key"] for r in ROWS]
    rows = [(p, r) for p, r, keep in zip(OWN, ROWS, pick, strict=True) if keep]
    assert len(rows) == 16
    assert statistics.median(abs(p.error) for p, _ in rows) <= 0.11  # type: ignore[attr-defined]
    assert max(ratio(p) for p, _ in rows) <= 1.28
    published = [p for p, keep in zip(POINTS, pick, strict=True) if keep]
    assert statistics.median(abs(p.error) for p in published) <= 0.12  # type: ignore[attr-defined]
    assert max(ratio(p) for p in published) <= 1.28
    as_pytorch = [heldout_prediction({**r, "stack": "pytorch"}, CATALOG, published=False)[0]
                  / p.measured - 1 for p, r in rows]  # type: ignore[attr-defined]
    assert statistics.median(abs(e) for e in as_pytorch) >= 0.2
    assert all(e < 0 for e in as_pytorch)  # as PyTorch FSDP every one of them is predicted slower


# Nemotron-4 340B and Llama 3.1 70B were left out while gpuplan timed their two counts on different layouts: at 128
# GPUs NVIDIA's TP8 PP8 needed ~84 GB a GPU in gpuplan's count with fp32 Adam states (tp8+pp16 there against tp8+pp8v4
# at 512: 1.261 against 0.981), and Llama 3.1 70B's tp4+pp4 did not fit at 64 GPUs without context parallelism (tp4+pp8
# against tp4+pp4v4: 1.075 against 0.989). With the 340B run's 16-bit Adam and the 70B's CP2 pinned both counts run one
# layout: tp8+pp8v4 (0.958 against 0.981) and tp4+pp4v4+cp2 (0.997 against 0.989) when written.
# MaxText Llama 2 70B is left out since its stack is timed (jax): the 45% of its work timed without recompute runs
# tp4+pp4 at 64 GPUs and tp4+pp4v4 at 512 in gpuplan's choice, another change of layout with the count.
@pytest.mark.parametrize("config", ["Llama 3.1 8B", "Llama 3.1 70B", "GPT-3 175B", "Nemotron-4 15B",
                                    "Nemotron-4 340B"])
def test_weak_scaling_per_gpu_follows_the_tables(config: str) -> None:
    # each NVIDIA table runs one configuration at its fewest and most GPUs in 16-512 (global batch grows with the
    # GPUs): per-GPU throughput falls by 0.8-3.1% over InfiniBand (e.g. Nemotron-4 15B 5789.4 -> 5611.0 tokens/s per
    # GPU from 16 to 512 H100, 0.969). Whatever the absolute level, gpuplan's network and layout model must keep
    # that ratio within 5% of the measured one (it does within 3.8% when written).
    pair = [(p, r) for p, r in zip(POINTS, ROWS, strict=True) if r["run"].startswith("dgxc") and config in r["run"]]
    assert len(pair) == 2
    (small, rs), (large, rl) = sorted(pair, key=lambda x: int(x[1]["gpus"]))
    assert int(rs["gpus"]) < int(rl["gpus"])
    measured = large.measured / small.measured  # type: ignore[attr-defined]
    predicted = large.predicted / small.predicted  # type: ignore[attr-defined]
    assert abs(predicted / measured - 1) <= 0.05


def test_other_h100_bf16_rows() -> None:
    # torchtitan on Grand Teton H100 (500 W, HBM2e: slower than the 700 W SXM5 gpuplan times) and NeMo AutoModel's
    # FSDP2 70B on DGX H100: median 15.4%, worst 1.24x when written. torchtitan's two FSDP x TP8 demonstrations
    # (vanilla, not async, TP) timed at their TP8 come out 1.17x and 1.19x; at gpuplan's own choice (no TP) they were
    # 1.40x: the exposed per-layer TP all-reduces are the difference. Since FSDP x TP is a layout of its own (TP8 with
    # ZeRO-3 over the replicas, its gathers every micro-batch) the three FSDP x TP rows are timed as they ran: 70B
    # +16.7%, 8B +18.7% (both hidden on the network, as with ZeRO-1 before: +16.8%, +18.9%), and 405B, which gpuplan's
    # memory count fitted only as tp8+pp8 with ZeRO-1 (-19.2%), fits at tp8 with FSDP and comes out +22.3%: over
    # like the other rows of these 500 W, HBM2e GPUs, which gpuplan times as 700 W SXM5; worst 1.223x (bounds kept).
    rows = group("torchtitan", "H100") + group("NeMo AutoModel")
    assert len(rows) == 6
    assert statistics.median(abs(p.error) for p in rows) <= 0.16
    assert max(ratio(p) for p in rows) <= 1.25
    demos = [(p, o) for p, o, r in zip(POINTS, OWN, ROWS, strict=True)
             if r["run"].startswith("torchtitan") and "compile" in r["run"] and r["tp"] == "8"]
    assert len(demos) == 2
    assert all(1.0 < ratio(p) <= 1.2 < ratio(o) for p, o in demos)


def test_tensor_and_pipeline_parallel_fp8_rows() -> None:
    # NeMo 24.07's FP8 runs (TP/PP/CP on DGX H100) and Megatron-Bridge 26.04.01's Llama 3 70B: timed as PyTorch FSDP
    # they came out 31-37% slower (Megatron-Bridge 33%); with the megatron stack -1.6%, -4.1%, -12.9% (CP2, not
    # modelled: tp4+pp8 timed) and -15.6% when written; -7.2%, -4.1%, -6.1% (CP2 pinned: tp4+pp4v4+cp2) and -15.6% once
    # context parallelism was modelled (and the first row's own change since).
    nemo = group("NeMo 24.07") + group("Megatron-Bridge")
    assert len(nemo) == 4
    assert max(ratio(p) for p in nemo) <= 1.20
    assert all(p.error < 0.05 for p in nemo)  # type: ignore[attr-defined]


def test_megatron_2021_rows_with_their_standard_attention() -> None:
    # Megatron-LM's 2021 runs (Narayanan et al., Table 1 weak scaling; and its ZeRO-3 175B row, run on DeepSpeed) came
    # a year before FlashAttention: their attention wrote and read the seq x seq scores (planner/workload/
    # attention_traffic.py). Timed as FlashAttention runs they came out 1.18-1.40x faster than measured at their
    # published TP/PP; with their standard attention timed, when written: 1.7B 0.95x, 3.6B 1.02x, 7.5B 1.08x, 18.4B
    # 1.16x, 39.1B 1.14x, ZeRO-3 175B 1.27x (median 10.8%). What is left grows with the tensor-parallel degree (TP1
    # 0.95x ... TP8 1.16x): those runs had no sequence parallelism (Megatron-LM's --sequence-parallel first landed on
    # main on 2022-05-20), so each tensor rank ran the layer norms and dropouts on the whole sequence, which gpuplan's
    # TP layouts split (Korthikanti et al. 2022, Table 4: 6% of the forward pass of a 22B layer at TP8), not modelled.
    meg = group("Megatron-LM")
    assert len(meg) == 6
    assert all(0.9 < p.predicted / p.measured <= 1.28 for p in meg)  # type: ignore[attr-defined]
    assert statistics.median(abs(p.error) for p in meg) <= 0.12  # type: ignore[attr-defined]
    rows = [r for r in ROWS if r["run"].startswith("Megatron-LM")]
    assert all(r["flash"] == "no" for r in rows)
    for p, r in zip(meg, rows, strict=True):
        # the scores' memory traffic is what moved them: timed with FlashAttention each is 3-47% faster when written,
        # the most where the sequence is longest against the width (1.7B: s/h = 0.89; 39.1B: 0.25)
        as_flash, _ = heldout_prediction({**r, "flash": "yes"}, CATALOG)
        assert 1.02 < as_flash / p.predicted < 1.5, r["run"]  # type: ignore[attr-defined]
    own = [p for p, r in zip(OWN, ROWS, strict=True) if r["run"].startswith("Megatron-LM")]
    assert all(0.9 < p.predicted / p.measured <= 1.44 for p in own)  # type: ignore[attr-defined]
    # the split's exposed tensor-parallel traffic is what the published degrees add: each TP run is slower there
    for pub, mine, r in zip(meg, own, rows, strict=True):
        if r["tp"] and int(r["tp"]) > 1:
            assert pub.predicted < mine.predicted  # type: ignore[attr-defined]


def _layer_matmuls(model: str) -> tuple[float, float]:
    """(recomputed, all) forward matmul weights of one Llama layer under torchtitan's op-level SAC, which keeps every
    op's output except every second matmul of the layer: of wq wk wv wo w1 w3 w2 it recomputes wk, wo and w3."""
    m = next(r for r in data_rows("models.csv", "planner.data") if r["name"] == model)
    h, kv, ffn = int(m["hidden"]), int(m["kv_heads"]) * int(m["hidden"]) // int(m["heads"]), int(m["ffn_hidden"])
    return h * kv + h * h + h * ffn, 2 * h * h + 2 * h * kv + 3 * h * ffn


def test_partial_recompute_shares_follow_the_layer_shapes() -> None:
    # op-level SAC rows carry F = recomputed / all forward matmuls of a layer; by hand for Llama 3 8B:
    # (4096*1024 + 4096^2 + 4096*14336) / (2*4096^2 + 2*4096*1024 + 3*4096*14336) = 79.7M / 218.1M = 0.365
    done, total = _layer_matmuls("llama-3-8b")
    assert done == pytest.approx(79.69e6, rel=1e-3) and total == pytest.approx(218.1e6, rel=1e-3)
    # every torchtitan partial row but 'selective layer' (every second layer: 0.5) is op-level SAC
    op_rows = [r for r in ROWS if r["run"].startswith("torchtitan") and r["recompute"].startswith("partial:")
               and "selective layer" not in r["run"]]
    assert len(op_rows) == 5
    for r in op_rows:
        d, t = _layer_matmuls(r["model"])
        assert float(r["recompute"].split(":")[1]) == pytest.approx(d / t, abs=0.002), r["run"]


def test_partial_recompute_lies_between_none_and_full() -> None:
    # recomputing a share of the forward costs more than recomputing nothing and less than recomputing everything
    row = next(r for r in ROWS if r["run"] == "torchtitan Llama 3 8B selective layer AC")
    part, _ = heldout_prediction(row, CATALOG)
    none, _ = heldout_prediction(dict(row, recompute="none"), CATALOG)
    full, _ = heldout_prediction(dict(row, recompute="full"), CATALOG)
    assert full < part < none
    # F = 0.5: seconds per token the mean of the two, so tokens/s their harmonic mean
    assert part == pytest.approx(2 / (1 / none + 1 / full), rel=1e-9)


def test_context_parallel_rows_are_timed_at_their_published_layout() -> None:
    # the five Megatron-Core rows that ran CP2 (NeMo 24.07's FP8 70B, dgxc's 8B and 70B) are timed at their published
    # tensor, pipeline and context degrees: CP2 halves each GPU's activations, which is what lets NVIDIA's tp4+pp4 fit
    # the 70B at micro-batch 1 in gpuplan's count (before context parallelism was modelled the 64-GPU rows fell back to
    # tp4+pp8). NeMo AutoModel's FSDP2 + CP2 row has no tensor/pipeline degrees: gpuplan's data-parallel (FSDP) family
    # has no context parallelism, so it stays at gpuplan's own choice.
    cp_rows = [(p, r) for p, r in zip(POINTS, ROWS, strict=True) if r["cp"]]
    assert len(cp_rows) == 6
    for p, r in cp_rows:
        layout = p.name.split(" [", 1)[1]  # type: ignore[attr-defined]
        if not r["tp"]:
            assert "cp" not in layout
            continue
        parts = layout.rstrip("]").split("+")
        assert "cp2" in parts and "does not fit" not in layout, p.name  # type: ignore[attr-defined]
        tp, pp = int(r["tp"]), int(r["pp"])
        assert (f"tp{tp}" in parts) == (tp > 1) and any(x.startswith(f"pp{pp}") for x in parts) == (pp > 1)
