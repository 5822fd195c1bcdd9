"""The layout search tries CPU optimizer offload where the node's RAM holds it, and times it by hand."""

from __future__ import annotations

import pytest

from planner.perf import comm, links
from planner.perf.offload import host_for, host_params_per_s
from planner.plan.layout_choice import choose
from planner.workload.inputs import arch_for
from planner.workload.memory import layout
from planner.workload.spec import Offload, TrainingWorkload

P7 = 6_738_415_616
L40S_USABLE = 44.42  # planner/data/usable_vram.csv
NVSWITCH = comm.Link("NVSwitch", 450.0, True, "test")


def _w(**kw: object) -> TrainingWorkload:
    return TrainingWorkload(arch=arch_for("llama-2-7b", None), tokens=2e10, **kw)  # type: ignore[arg-type]


def _pcie4() -> comm.Link:
    link = links.collective_link("L40S", "pcie", 4)
    assert link is not None
    return link


def test_4x_l40s_with_384_gib_picks_zero2_offload_and_times_it_by_hand() -> None:
    """7B on one node of 4 L40S (g6e.12xlarge: 384 GiB of RAM; 4 x 25.1 = 100.4 GiB of states fit in 345.6).
    Offload frees 18.8 GiB of optimizer states and 2.2 GiB of gradients per GPU, so ZeRO-2 with full recompute runs
    micro-batch 15 where ZeRO-3 runs 8; by hand at 190 TFLOP/s:
    compute C = 8 x 6.738e9 x 15 x 2048 / 190e12 = 8.716 s; k = 4e6 / 4 / (15 x 2048) = 32.55 micro-batches;
    ZeRO-2 reduce-scatter 2 x 6.738e9 x 3/4 / 18e9 = 0.5615 s + gradients to the host 2 x 1.6846e9 / 20.06e9
    = 0.1680 s per micro-batch, under the half of C that PCIe hides, so only the 7.5% slowdown counts; the fp32
    gradients, 0.3359 s per step, hide too. Exposed per step: the CPU step 6.738e9 / 1.43e9 = 4.71 s and the return
    of the partition 0.168 s, over k x C = 283.7 s: about 1.7%."""
    w = _w()
    lay = layout(w, L40S_USABLE, 4)
    s = choose(w, lay, L40S_USABLE, 4, 1, _pcie4(), None, 190e12, host=host_for("Ada Lovelace", 384))
    assert not isinstance(s, str)
    assert s.layout == "zero2+offload+full-recompute" and s.micro_batch == 15
    c = 8 * P7 * 15 * 2048 / 190e12
    k = 4e6 / 4 / (15 * 2048)
    t_mb = 2 * P7 * 0.75 / 18e9 + 2 * P7 / 4 / 20.06e9
    t_step = 4 * P7 / 4 / 20.06e9
    exposed = P7 / host_params_per_s() + 2 * P7 / 4 / 20.06e9
    assert s.compute_s_per_microbatch == pytest.approx(c)
    assert s.offload is not None and s.offload["cpu_step_s"] == pytest.approx(P7 / host_params_per_s(), abs=1e-4)
    by_hand = k * c / (k * c + k * 0.075 * t_mb + 0.075 * t_step + exposed)
    assert s.intra_node == pytest.approx(by_hand, rel=1e-3) and s.intra_node == pytest.approx(0.977, abs=1e-3)
    assert "offload" in s.as_json() and s.as_json()["layout"] == "zero2+offload+full-recompute"


@pytest.mark.parametrize("ram", [110.0, None])
def test_not_where_host_ram_is_short_or_unknown(ram: float | None) -> None:
    # 100.4 GiB of states > 0.9 x 110 = 99 GiB: ZeRO-3 + full recompute, as without offload
    w = _w()
    s = choose(w, layout(w, L40S_USABLE, 4), L40S_USABLE, 4, 1, _pcie4(), None, 190e12,
               host=host_for("Ada Lovelace", ram))
    assert not isinstance(s, str) and s.offload is None and "offload" not in s.layout
    assert s.layout == "zero3+full-recompute"


def test_offload_none_is_never_tried_and_cpu_is_always_used() -> None:
    host = host_for("Ada Lovelace", 384)
    off = _w(offload=Offload.NONE)
    s = choose(off, layout(off, L40S_USABLE, 4), L40S_USABLE, 4, 1, _pcie4(), None, 190e12, host=host)
    assert not isinstance(s, str) and s.offload is None
    pinned = _w(offload=Offload.CPU)
    s = choose(pinned, layout(pinned, L40S_USABLE, 4), L40S_USABLE, 4, 1, _pcie4(), None, 190e12, host=host)
    assert not isinstance(s, str) and s.offload is not None
    assert all("offload" in a for a in s.alternatives)


def test_one_h100_fits_7b_only_with_offload_and_says_when_the_host_is_short() -> None:
    """One 80 GB GPU: 7B's 16 B/param (100 GiB) do not fit; offloaded, 12.6 GiB of weights do. A 256 GiB host holds
    the 100.4 GiB of states (230 usable); a 100 GiB host does not (90), and the option says so."""
    w = _w()
    lay = layout(w, 79.0, 1)
    assert lay is not None and lay.offload
    s = choose(w, lay, 79.0, 1, 1, NVSWITCH, None, 400e12, host=host_for("Hopper", 256))
    assert not isinstance(s, str) and s.layout.startswith("ddp+offload")
    # Gen5 PCIe (median of 35.19 and 56.30 GB/s measured): the partition is the whole model
    assert s.offload is not None and s.offload["params_back_s"] == pytest.approx(2 * P7 / 45.745e9, abs=1e-4)
    why = choose(w, lay, 79.0, 1, 1, NVSWITCH, None, 400e12, host=host_for("Hopper", 100))
    assert isinstance(why, str) and "host RAM" in why and "100 GiB" in why
