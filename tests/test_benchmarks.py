"""The benchmarks still run: a synthetic catalog is a valid --catalog file, and one tiny plan measures.

The benchmarks themselves (`python benchmarks/run.py`) are not part of the test run; these
checks take a fraction of a second and keep them from rotting.
"""

from __future__ import annotations

import csv
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import planner.plan as planning
from benchmarks import cold, scale, synth
from pricing.catalog import INSTANCE_COLUMNS, Catalog, Layer
from pricing.money import Currency
from tests.conftest import CliResult


def test_synthetic_rows_are_distinct_priced_offers_on_real_gpus(tmp_path: Path) -> None:
    path = synth.write_catalog(tmp_path / "s.csv", 600)
    with path.open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 600 and list(rows[0]) == list(INSTANCE_COLUMNS)
    assert len({(r["provider"], r["instance_type"], r["region"]) for r in rows}) == 600
    gpus = Catalog.shipped().gpus
    assert {r["gpu"] for r in rows} <= set(gpus)
    assert {r["currency"] for r in rows} == {Currency.USD.value, Currency.CNY.value}  # the clouds' two
    assert len({r["provider"] for r in rows}) >= 4
    assert all(float(r["hourly"]) > 0 for r in rows)
    cat = Catalog.load(user_files=[path])
    assert sum(1 for r in cat.instances if r.layer is Layer.USER) == 600


def test_one_tiny_plan_is_measured_through_the_cli_and_leaves_it_as_it_was(tmp_path: Path) -> None:
    make_plan = planning.make_plan
    argv = list(sys.argv)
    result = scale.measure_plan(synth.write_catalog(tmp_path / "s.csv", 40))
    assert result["offers"] >= 40 and result["options"] > result["offers"]
    assert 0 < result["load_s"] < result["total_s"] and result["plan_s"] > 0
    assert result["peak_rss_mb"] >= result["rss_before_mb"] > 0
    assert planning.make_plan is make_plan and sys.argv == argv


def test_a_cold_run_reports_wall_and_cpu_time_and_a_failure_raises(tmp_path: Path) -> None:
    env = cold.child_env(tmp_path)
    wall, cpu = cold.run_once([sys.executable, "-c", "pass"], env)
    assert wall > 0 and (cpu is None or cpu >= 0)
    with pytest.raises(RuntimeError, match="exited 3"):
        cold.run_once([sys.executable, "-c", "raise SystemExit(3)"], env)


def test_the_tco_benchmark_names_every_gpu_with_a_card_price() -> None:
    args = cold.tco_every_gpu()
    bought = {a.removeprefix("--buy=8x") for a in args if a.startswith("--buy=")}
    assert bought == {c.gpu for c in Catalog.shipped().cards}
    assert any(a.startswith("--vs=") for a in args)


def test_every_benchmarked_gpuplan_command_runs(gpuplan: Callable[..., CliResult]) -> None:
    # The cold benchmark stops at the first command that fails; catch that here, not there.
    for name, cmd in cold.cli_commands(cold.tco_every_gpu()).items():
        if cmd[1:3] == ["-m", "gpuplan"] and "--help" not in cmd:
            code, _, err = gpuplan(*cmd[3:])
            assert code == 0, (name, err)


def test_the_cluster_search_job_plans_clusters_and_one_node_plans_none(tmp_path: Path) -> None:
    """Benchmark (d) compares the search with a plan pinned to one node: both must answer, only one with clusters."""
    from benchmarks.run import CLUSTER_JOB

    csv_path = synth.write_catalog(tmp_path / "s.csv", 300)
    hours, rest = CLUSTER_JOB[1], CLUSTER_JOB[2:]
    searched = scale.measure_plan(csv_path, gpu_hours=hours, extra=rest)
    pinned = scale.measure_plan(csv_path, gpu_hours=hours, extra=[*rest, "--nodes", "1"])
    assert searched["multi_node_options"] > 0 and pinned["multi_node_options"] == 0
    assert searched["options"] > pinned["options"] > 0


def test_zoned_catalogs_keep_the_shipped_mix_of_per_zone_rows_and_say_they_are_made_up(tmp_path: Path) -> None:
    import csv

    from benchmarks.shapes import shipped_rows, write_zoned_catalog
    from benchmarks.synth import SOURCE

    shipped = shipped_rows()
    n = len(shipped) * 3
    with write_zoned_catalog(tmp_path / "z.csv", n).open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == n and {r["source"] for r in rows} == {SOURCE}
    zoned = sum(1 for r in rows if r["zone"])
    assert zoned == 3 * sum(1 for r in shipped if r["zone"]) and zoned > n / 2  # mostly per-zone, as shipped
    assert all(r["zone"].startswith(r["region"]) for r in rows if r["zone"])
    assert len({(r["provider"], r["instance_type"], r["region"], r["zone"]) for r in rows}) == n  # no duplicates
    # gpuplan reads it as a --catalog: every row, none refused
    from pricing.catalog.parse import read_instance_file
    from pricing.catalog import Layer

    assert len(read_instance_file(tmp_path / "z.csv", Layer.USER)) == n
