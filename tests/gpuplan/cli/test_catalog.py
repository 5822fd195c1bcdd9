"""`--catalog FILE`, `offers -o csv` round trip and `gpuplan catalog show|refresh` through the CLI."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from tests.fixtures.catalogs import instance_csv

Run = Callable[..., CliResult]

CHEAP_V100 = "mylab,rack.v100x1,rack,V100-SXM2-32GB,1,8,64,lab-1,,,USD,0.01,,,,,,,,,internal chargeback,2026-11-01,"


def test_a_user_catalog_adds_offers_that_plan_ranks(gpuplan: Run, tmp_path: Path) -> None:
    mine = tmp_path / "mine.csv"
    mine.write_text(instance_csv(CHEAP_V100), encoding="utf-8")
    code, out, err = gpuplan("plan", "--gpu-hours", "200", "--catalog", str(mine), "--json")
    assert code == 0, err
    plan = json.loads(out)
    assert (plan["cheapest"]["provider"], plan["cheapest"]["offer"]) == ("mylab", "rack.v100x1")
    assert plan["cheapest"]["cost"] == "2.00"  # 200 h x 0.01 USD on the reference GPU itself
    assert any("user" in layer for layer in plan["assumptions"]["catalog_layers"])


def test_offers_csv_round_trips_through_catalog(gpuplan: Run, tmp_path: Path) -> None:
    code, out, _ = gpuplan("offers", "--provider", "aws", "--gpu", "h100", "-o", "csv")
    assert code == 0 and out.startswith("provider,instance_type,")
    edited = out.replace("aws,", "aws-negotiated,")
    path = tmp_path / "edited.csv"
    path.write_text(edited, encoding="utf-8")
    code, out2, err = gpuplan("offers", "--provider", "aws-negotiated", "--catalog", str(path), "--json")
    assert code == 0, err
    rows = json.loads(out2)["offers"]
    assert rows and {r["provider"] for r in rows} == {"aws-negotiated"}
    # One offer per instance type and region: the shipped AWS rows are per zone and fold back.
    places = {tuple(line.split(",")[1:8:6]) for line in out.strip().splitlines()[1:]}
    assert len(rows) == len(places)


def test_offers_csv_carries_notes_without_the_data_files_research_trail(gpuplan: Run) -> None:
    """The shipped rows keep how each figure was checked ("VERIFIED text: ..."): that is for the data's maintainers."""
    code, out, _ = gpuplan("offers", "-o", "csv")
    assert code == 0 and out.count("\n") > 100
    assert not any(w in out.upper() for w in ("VERIFIED", "RECALLED", "WEAK SOURCE"))


def test_a_bad_user_catalog_is_one_line_with_file_and_line(gpuplan: Run, tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text(instance_csv(CHEAP_V100.replace("0.01", "cheap")), encoding="utf-8")
    code, out, err = gpuplan("plan", "--gpu-hours", "200", "--catalog", str(bad))
    assert code == 2 and out == ""
    assert f"{bad} line 2" in err and "Traceback" not in err


@pytest.mark.parametrize("row, column", [
    (CHEAP_V100.replace(",0.01,", ",0,"), "hourly"),  # used to crash plan
    (CHEAP_V100.replace(",0.01,", ",-0,"), "hourly"),
    (CHEAP_V100.replace(",0.01,", ",1e27,"), "hourly"),
    (CHEAP_V100.replace("V100-SXM2-32GB,1,", "V100-SXM2-32GB,1e9,"), "gpu_count"),  # used to rank first at 0.00
])
def test_a_user_catalog_number_out_of_range_is_refused_not_ranked(gpuplan: Run, tmp_path: Path, row: str,
                                                                   column: str) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text(instance_csv(row), encoding="utf-8")
    code, out, err = gpuplan("plan", "--gpu-hours", "200", "--catalog", str(bad))
    assert code == 2 and out == "", err
    assert f"{bad} line 2: {column}" in err and "Traceback" not in err and "internal error" not in err


def test_catalog_show_lists_the_layers(gpuplan: Run, tmp_path: Path) -> None:
    mine = tmp_path / "mine.csv"
    mine.write_text(instance_csv(CHEAP_V100), encoding="utf-8")
    code, out, _ = gpuplan("catalog", "show", "--catalog", str(mine), "--json")
    assert code == 0
    layers = json.loads(out)["layers"]
    assert [(x["layer"], x["rows"]) for x in layers][1:] == [("user", 1)]
    assert layers[0]["layer"] == "shipped" and layers[0]["rows"] > 100


def test_without_a_refresh_the_plan_says_prices_are_not_live(gpuplan: Run) -> None:
    code, out, _ = gpuplan("plan", "--gpu-hours", "200", "--json")
    assert code == 0
    assert "not live" in json.loads(out)["assumptions"]["prices"]


def test_refresh_of_a_provider_without_live_prices_is_refused(gpuplan: Run) -> None:
    code, _, err = gpuplan("catalog", "refresh", "--provider", "local", "--region", "x")
    assert code == 2 and "no live prices" in err


def test_clear_refuses_a_misspelt_provider_and_refresh_points_other_clouds_to_gpuhunt(gpuplan: Run) -> None:
    code, _, err = gpuplan("catalog", "clear", "--provider", "tencnet")
    assert code == 2 and "did you mean tencent" in err  # was: exit 0, "no refreshed prices for tencnet"
    code, _, err = gpuplan("catalog", "refresh", "--provider", "gcp", "--region", "us-central1")
    assert code == 2 and "--provider gcp --source gpuhunt" in " ".join(err.split())


def test_a_typo_region_suggests_each_close_name_once(gpuplan: Run) -> None:
    code, _, err = gpuplan("plan", "--gpu-hours", "100", "--region", "us-eest-1")
    close = err.split("closest known: ")[1].splitlines()[0].split(", ")
    assert code == 2 and len(close) == len(set(close)) == 3, err
