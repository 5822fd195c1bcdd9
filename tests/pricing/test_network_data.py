"""Truth tests for the shipped network and multi-node scaling data.

The cluster planner multiplies node cost by node count and divides speed by a scaling
efficiency calibrated on these rows, so a bad row here silently mis-ranks every cluster.
"""
from __future__ import annotations

import csv
from collections import defaultdict
from datetime import date
from importlib import resources

import pytest

INSTANCE_FILES = {"aws": "instances/aws.csv", "tencent": "instances/tencent.csv", "gcp": "instances/gcp.csv",
                  "azure": "instances/azure.csv"}
# Clouds whose every shipped type has a network row; GCP's and Azure's have rows only where a source gives the
# figure for that type (the others are not planned across nodes: "its network is unknown").
COMPLETE = ("aws", "tencent")
FABRICS = {"efa", "rdma", "ethernet", ""}
GPUDIRECT = {"yes", "no", ""}
EVIDENCE = ("VERIFIED", "DERIVED", "RECALLED")


def _rows(package: str, name: str) -> list[dict[str, str]]:
    text = resources.files(package).joinpath(name).read_text(encoding="utf-8")
    return list(csv.DictReader(line for line in text.splitlines() if not line.startswith("#")))


def _networks() -> list[dict[str, str]]:
    return _rows("pricing.data", "networks.csv")


def _multinode() -> list[dict[str, str]]:
    return _rows("planner.data", "multinode.csv")


def _catalog_types() -> dict[str, set[str]]:
    return {p: {r["instance_type"] for r in _rows("pricing.data", f)} for p, f in INSTANCE_FILES.items()}


@pytest.mark.parametrize(("package", "name"), [("pricing.data", "networks.csv"), ("planner.data", "multinode.csv")])
def test_every_row_has_a_source_a_real_date_and_says_how_sure_it_is(package: str, name: str) -> None:
    rows = _rows(package, name)
    assert rows
    for r in rows:
        assert r["source"].strip(), r
        assert date.fromisoformat(r["as_of"]) <= date(2026, 12, 31), r  # a real date, not free text
        assert any(word in r["notes"] for word in EVIDENCE), r


def test_every_network_row_names_an_instance_the_catalog_ships() -> None:
    shipped = _catalog_types()
    for r in _networks():
        assert r["instance_type"] in shipped[r["provider"]], r["instance_type"]


def test_every_shipped_instance_type_has_exactly_one_network_row() -> None:
    # A type without a row would plan clusters with no network at all; two rows would be ambiguous.
    seen: dict[tuple[str, str], int] = defaultdict(int)
    for r in _networks():
        seen[(r["provider"], r["instance_type"])] += 1
    for provider, types in _catalog_types().items():
        if provider not in COMPLETE:
            continue
        for t in types:
            assert seen[(provider, t)] == 1, (provider, t)


def test_network_figures_are_empty_or_positive_and_use_the_known_vocabulary() -> None:
    for r in _networks():
        assert r["network_gbps"] == "" or float(r["network_gbps"]) > 0, r["instance_type"]
        assert r["fabric"] in FABRICS, r["instance_type"]
        assert r["gpudirect"] in GPUDIRECT, r["instance_type"]


def test_gpudirect_is_only_claimed_over_an_rdma_capable_fabric() -> None:
    for r in _networks():
        if r["gpudirect"] == "yes":
            assert r["fabric"] in {"efa", "rdma"}, r["instance_type"]


@pytest.mark.parametrize(("instance_type", "gbps", "fabric"), [
    ("p5.48xlarge", 3200.0, "efa"),
    ("p4d.24xlarge", 400.0, "efa"),
    ("p4de.24xlarge", 400.0, "efa"),
    ("p3dn.24xlarge", 100.0, "efa"),
    ("p3.16xlarge", 25.0, "ethernet"),
])
def test_the_issue_reference_networks(instance_type: str, gbps: float, fabric: str) -> None:
    (row,) = [r for r in _networks() if r["instance_type"] == instance_type]
    assert (float(row["network_gbps"]), row["fabric"]) == (gbps, fabric)


def test_plain_tencent_gn_families_are_not_rdma_clusters() -> None:
    for r in _networks():
        if r["provider"] == "tencent":
            assert r["fabric"] != "efa" and r["gpudirect"] != "yes", r["instance_type"]


def test_scaling_efficiency_is_a_fraction_of_linear() -> None:
    rows = _multinode()
    for r in rows:
        assert 0 < float(r["scaling_efficiency"]) <= 1.05, r
        assert int(r["nodes"]) >= 1 and int(r["gpus_per_node"]) >= 1, r
        assert float(r["network_gbps"]) > 0 and r["fabric"] in FABRICS - {""}, r


def test_derived_efficiency_matches_the_throughputs_it_was_derived_from() -> None:
    # Rows of one group share system, model, metric and source; efficiency is per-GPU throughput
    # relative to the smallest reported scale of that group.
    groups: dict[tuple[str, str, str, str], list[dict[str, str]]] = defaultdict(list)
    for r in _multinode():
        if not r["metric"].startswith("scaling efficiency"):
            groups[(r["system"], r["model"], r["metric"], r["source"])].append(r)
    assert groups
    for key, rows in groups.items():
        assert len(rows) >= 2, key
        per_gpu = {int(r["nodes"]): float(r["value"]) / (int(r["nodes"]) * int(r["gpus_per_node"])) for r in rows}
        base = per_gpu[min(per_gpu)]
        for r in rows:
            assert float(r["scaling_efficiency"]) == pytest.approx(per_gpu[int(r["nodes"])] / base, abs=0.0015), r


def test_calibration_spans_three_network_classes_with_enough_multi_node_points() -> None:
    points = [r for r in _multinode() if int(r["nodes"]) > 1]
    assert len(points) >= 8
    classes = set()
    for r in points:
        gbps = float(r["network_gbps"])
        if gbps <= 25:
            classes.add("ethernet-class")
        elif 100 <= gbps <= 400:
            classes.add("100-400")
        elif gbps >= 1600:
            classes.add(">=1600")
    assert classes == {"ethernet-class", "100-400", ">=1600"}
