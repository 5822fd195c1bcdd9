"""`catalog refresh --source gpuhunt`: the real gpuhunt library reads a fabricated bucket on 127.0.0.1."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.fakes.gpuhunt_bucket import serve, write_bucket

Run = Callable[..., tuple[int, str, str]]
H100_8X = {"instance_name": "gpu_8x_h100_sxm5", "location": "us-east-1", "price": 2.0, "cpu": 208, "memory": 1800,
           "gpu_count": 8, "gpu_name": "H100", "gpu_memory": 80, "spot": False}
CATALOGS = {
    "lambdalabs": [H100_8X, {"instance_name": "gpu_1x_b200", "location": "us-east-1", "price": 5.0, "cpu": 26,
                             "memory": 360, "gpu_count": 1, "gpu_name": "B200", "gpu_memory": 180, "spot": False}],
    "gcp": [
        {"instance_name": "a2-highgpu-1g", "location": "us-central1-a", "price": 3.67, "cpu": 12, "memory": 85,
         "gpu_count": 1, "gpu_name": "A100", "gpu_memory": 40, "spot": False},
        {"instance_name": "a2-highgpu-1g", "location": "us-central1-a", "price": 1.1, "cpu": 12, "memory": 85,
         "gpu_count": 1, "gpu_name": "A100", "gpu_memory": 40, "spot": True},
        {"instance_name": "g2-standard-4", "location": "us-central1-b", "price": 0.71, "cpu": 4, "memory": 16,
         "gpu_count": 1, "gpu_name": "L4", "gpu_memory": 24, "spot": False},
    ],
}


@pytest.fixture
def bucket(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    write_bucket(tmp_path / "bucket", CATALOGS)
    with serve(tmp_path / "bucket") as url:
        monkeypatch.setenv("GPUHUNT_CATALOG_URL", url)
        yield url


def _plan_winner(gpuplan: Run) -> dict:
    code, out, err = gpuplan("plan", "--gpu-hours", "200", "--json")
    assert code == 0, err
    return json.loads(out)["options"][0]


def test_a_cheap_market_price_changes_the_winner(gpuplan: Run, bucket: str) -> None:
    before = _plan_winner(gpuplan)
    code, out, err = gpuplan("catalog", "refresh", "--source", "gpuhunt", "--provider", "lambda,gcp", "--json")
    assert code == 0, err
    refreshed = json.loads(out)
    assert {(r["provider"], r["region"]) for r in refreshed["refreshed"]} == {("lambda", "us-east-1"),
                                                                              ("gcp", "us-central1")}
    assert refreshed["unknown_gpus"] == {"lambda": ["B200 180 GB"]}
    after = _plan_winner(gpuplan)
    assert (after["provider"], after["offer"], after["region"]) == ("lambda", "gpu_8x_h100_sxm5", "us-east-1")
    assert after != before
    # 200 reference GPU-hours on 8 H100s at the fabricated 2 USD an hour
    assert float(after["instance_cost"]) == pytest.approx(float(after["wall_hours"]) * 2.0, abs=0.01)


def test_market_rows_keep_spot_zones_and_their_source(gpuplan: Run, bucket: str) -> None:
    assert gpuplan("catalog", "refresh", "--source", "gpuhunt", "--provider", "gcp")[0] == 0
    code, out, err = gpuplan("offers", "--provider", "gcp", "--region", "us-central1", "--json")
    assert code == 0, err
    offers = {o["offer"]: o for o in json.loads(out)["offers"]}  # the live rows replace the shipped ones there
    a2 = offers["a2-highgpu-1g"]
    assert (a2["gpu"], a2["region"], a2["hourly"], a2["spot"]) == ("A100-SXM4-40GB", "us-central1", "3.67", "1.1")
    assert a2["live"] and bucket in a2["source"] and "20261201" in a2["source"]
    assert offers["g2-standard-4"]["gpu"] == "L4"


def test_a_provider_gpuhunt_has_no_catalog_of_is_named(gpuplan: Run, bucket: str) -> None:
    code, _, err = gpuplan("catalog", "refresh", "--source", "gpuhunt", "--provider", "tencent")
    assert code == 2 and "gpuhunt catalog" in err and "Traceback" not in err


def test_an_unreachable_bucket_changes_nothing(gpuplan: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    before = _plan_winner(gpuplan)
    monkeypatch.setenv("GPUHUNT_CATALOG_URL", "http://127.0.0.1:9")  # nothing listens on the discard port
    code, _, err = gpuplan("catalog", "refresh", "--source", "gpuhunt", "--provider", "gcp")
    assert code != 0 and "cache was left as it was" in err
    assert _plan_winner(gpuplan) == before


def test_the_plan_path_never_imports_gpuhunt() -> None:
    code = ("import sys; from gpuplan import cli; sys.argv=['gpuplan','plan','--gpu-hours','200','--json'];\n"
            "try:\n    cli.main()\nexcept SystemExit:\n    pass\n"
            "assert 'gpuhunt' not in sys.modules, 'gpuhunt imported'")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::PendingDeprecationWarning", "ignore::UserWarning")
def test_a_gcp_winner_from_the_market_exports_to_files_the_engines_accept(gpuplan: Run, bucket: str,
                                                                         tmp_path: Path) -> None:
    from tests.gpuplan.render.test_export import dstack_parse, sky_validate

    assert gpuplan("catalog", "refresh", "--source", "gpuhunt", "--provider", "gcp")[0] == 0
    sky, dst = tmp_path / "task.yaml", tmp_path / ".dstack.yml"
    args = ("plan", "--gpu-hours", "20", "--provider", "gcp", "--region", "us-central1", "--billing", "hourly")
    assert gpuplan(*args, "--export", "skypilot", str(sky))[0] == 0
    assert gpuplan(*args, "--export", "dstack", str(dst))[0] == 0
    task = sky_validate(sky)
    assert (task["resources"]["cloud"], task["resources"]["region"]) == ("gcp", "us-central1")
    conf = dstack_parse(dst)
    assert conf.backends == ["gcp"] and conf.regions == ["us-central1"]


def test_offers_group_by_gpu_shows_each_gpus_cheapest_offer_across_providers(gpuplan: Run, bucket: str) -> None:
    assert gpuplan("catalog", "refresh", "--source", "gpuhunt", "--provider", "gcp,lambda")[0] == 0
    code, out, err = gpuplan("offers", "--group-by", "gpu", "--json")
    assert code == 0, err
    groups = {g["gpu"]: g for g in json.loads(out)["groups"]}
    h100 = groups["H100-SXM5-80GB"]
    assert h100["cheapest_offer"] == "lambda gpu_8x_h100_sxm5 us-east-1" and h100["cheapest_per_gpu_hour"] == "0.25"
    assert {"aws", "lambda"} <= set(h100["providers"])
    per = [float(g["cheapest_per_gpu_hour"]) for g in groups.values() if g["cheapest_per_gpu_hour"]]
    assert per == sorted(per)
    code, _, err = gpuplan("offers", "--group-by", "zone")
    assert code == 2 and "--group-by" in err
