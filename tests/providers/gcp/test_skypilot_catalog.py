"""Google Cloud's rows: a machine's price plus its GPUs', per region, from SkyPilot's GCP catalog."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import pytest

from providers.converter import to_csv
from providers.gcp.skypilot_catalog import rows

# Lines as SkyPilot's catalogs/v8/gcp/vms.csv has them (@006059e0f18acb1341e22a27751e9f80df6ba92f).
VMS = """InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GpuInfo,Region,AvailabilityZone,Price,SpotPrice
a2-highgpu-1g,12.0,85.0,,,,us-central1,us-central1-a,0.73948,0.36975
a2-highgpu-1g,12.0,85.0,,,,us-central1,us-central1-b,0.73948,0.36975
a2-ultragpu-1g,12.0,170.0,,,,us-central1,us-central1-a,1.09962,0.54978
g2-standard-4,4.0,16.0,,,,us-central1,us-central1-a,0.14679,0.05874
n1-standard-8,8.0,30.0,,,,us-central1,us-central1-a,0.38,0.10446
n1-standard-8,8.0,30.0,,,,us-central1,us-central1-b,0.38,0.10446
,,,A100,1,{'Gpus': [{'MemoryInfo': {'SizeInMiB': 40960}}]},us-central1,us-central1-a,2.93391,1.4341
,,,A100,1,{'Gpus': [{'MemoryInfo': {'SizeInMiB': 40960}}]},us-central1,us-central1-b,2.93391,1.4341
,,,A100-80GB,1,{'Gpus': [{'MemoryInfo': {'SizeInMiB': 81920}}]},us-central1,us-central1-a,1.8462,1.964
,,,L4,1,{'Gpus': [{'MemoryInfo': {'SizeInMiB': 24576}}]},us-central1,us-central1-a,0.56004,0.2231
,,,T4,1,{'Gpus': [{'MemoryInfo': {'SizeInMiB': 16384}}]},us-central1,us-central1-a,0.35,0.175
,,,T4,1,{'Gpus': [{'MemoryInfo': {'SizeInMiB': 16384}}]},us-central1,us-central1-b,0.35,0.175
,,,V100,1,{'Gpus': [{'MemoryInfo': {'SizeInMiB': 16384}}]},us-central1,us-central1-a,2.48,1.0885
"""
SHIPPED = Path(__file__).resolve().parents[3] / "pricing" / "data" / "instances" / "gcp.csv"
Run = Callable[..., tuple[int, str, str]]


def _by_name(text: str = VMS) -> dict[str, dict[str, str]]:
    found, _ = rows(io.StringIO(text), commit="006059e", read="2026-12-04")
    return {r["instance_type"]: r for r in found}


def test_a_row_is_the_machine_plus_its_gpus_on_demand_and_spot() -> None:
    a2 = _by_name()["a2-highgpu-1g"]
    # 0.73948 + 2.93391: Compute Engine's published a2-highgpu-1g rate in us-central1 is 3.673385 USD/h
    assert (a2["hourly"], a2["spot"]) == ("3.67339", "1.80385")
    assert (a2["gpu"], a2["gpu_count"], a2["vcpu"], a2["mem_gb"]) == ("A100-SXM4-40GB", "1", "12", "85")
    assert a2["zones"] == "us-central1-a;us-central1-b" and a2["zone"] == ""


def test_n1_gets_t4_v100_and_p100_attached_where_the_zone_prices_them() -> None:
    by = _by_name()
    assert by["n1-standard-8+1xT4"]["zones"] == "us-central1-a;us-central1-b"
    assert by["n1-standard-8+1xV100"]["zones"] == "us-central1-a"  # the V100 is listed in zone a only
    assert Decimal(by["n1-standard-8+1xT4"]["hourly"]) == Decimal("0.38") + Decimal("0.35")
    assert "n1-standard-8+1xP100" not in by
    assert by["g2-standard-4"]["gpu"] == "L4" and by["g2-standard-4"]["hourly"] == "0.70683"


def test_a_gpu_whose_spot_price_is_above_on_demand_is_reported_not_shipped() -> None:
    found, skipped = rows(io.StringIO(VMS), commit="x", read="2026-12-04")
    assert "a2-ultragpu-1g" not in {r["instance_type"] for r in found}
    assert [s.instance_type for s in skipped] == ["a2-ultragpu-1g"]


def test_zones_priced_differently_are_not_given_one_price() -> None:
    text = VMS.replace("us-central1-b,0.73948,0.36975", "us-central1-b,0.79948,0.36975")
    found, skipped = rows(io.StringIO(text), commit="x", read="2026-12-04")
    assert "a2-highgpu-1g" not in {r["instance_type"] for r in found}
    assert any(s.instance_type == "a2-highgpu-1g" and "differently" in s.reason for s in skipped)


def test_the_shipped_file_is_sourced_in_the_catalog_shape() -> None:
    text = SHIPPED.read_text(encoding="utf-8")
    shipped = list(csv.DictReader(io.StringIO(text)))
    assert to_csv(list(_by_name().values())).splitlines()[0] == text.splitlines()[0]
    assert len(shipped) == 142
    assert {r["region"] for r in shipped} == {"us-central1", "us-east1", "us-east4", "us-west1", "europe-west4",
                                              "asia-southeast1"}
    assert all("@006059e0" in r["source"] for r in shipped)
    # a size GCP does not sell on demand has no hourly price, only its spot price
    sold = [r for r in shipped if r["hourly"]]
    unsold = {r["instance_type"] for r in shipped if not r["hourly"]}
    assert unsold == {"a3-highgpu-1g", "a3-highgpu-2g", "a3-highgpu-4g"}
    assert all(Decimal(r["hourly"]) > 0 for r in sold)
    assert all(r["spot"] == "" or Decimal(r["spot"]) < Decimal(r["hourly"]) for r in sold)


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::PendingDeprecationWarning", "ignore::UserWarning")
def test_an_n1_winner_exports_its_machine_and_gpus_apart(gpuplan: Run, tmp_path: Path) -> None:
    from tests.gpuplan.render.test_export import dstack_parse, sky_validate

    code, out, err = gpuplan("plan", "--gpu-hours", "200", "--provider", "gcp", "--gpu", "T4", "--json", "--limit", "1")
    assert code == 0, err
    win = json.loads(out)["options"][0]
    assert win["offer"].startswith("n1-standard-") and "+" in win["offer"]
    sky, dst = tmp_path / "task.yaml", tmp_path / ".dstack.yml"
    args = ("plan", "--gpu-hours", "200", "--provider", "gcp", "--gpu", "T4", "--export")
    assert gpuplan(*args, "skypilot", str(sky))[0] == 0 and gpuplan(*args, "dstack", str(dst))[0] == 0
    task = sky_validate(sky)
    res = task["resources"]
    assert (res["cloud"], res["instance_type"], res["region"]) == ("gcp", win["offer"].split("+")[0], win["region"])
    assert res["accelerators"] == f"T4:{win['gpu_count']}"
    conf = dstack_parse(dst)
    assert conf.backends == ["gcp"] and conf.regions == [win["region"]]


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::PendingDeprecationWarning", "ignore::UserWarning")
def test_an_n1_export_passes_skypilots_resource_validation(gpuplan: Run, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """SkyPilot's own Task.validate() (each Resources.validate(): the machine exists in the region, the GPUs can be
    attached to it) over its GCP catalog seeded with the source's lines for the winner's machine and GPUs."""
    from tests.gpuplan.render.test_export import sky_validated

    path = tmp_path / "task.yaml"
    # one GPU a machine: with its disk and address priced per node, a 4 x T4 machine's shorter run now costs less
    code, out, err = gpuplan("plan", "--gpu-hours", "200", "--provider", "gcp", "--gpu", "T4", "--region",
                             "us-central1", "--max-gpus", "1", "--export", "skypilot", str(path), "--json")
    assert code == 0, err
    win = json.loads(out)["cheapest"]
    assert win["offer"] == "n1-standard-8+1xT4"  # the case the seeded lines below are about
    (res,) = sky_validated(path, tmp_path / "sky-catalog", monkeypatch, "gcp", VMS, ("T4",))
    assert (str(res.cloud), res.region, res.instance_type, res.accelerators) == ("GCP", "us-central1", "n1-standard-8",
                                                                              {"T4": 1})


def test_a_70b_run_is_planned_across_a3_machines_over_their_sourced_network(gpuplan: Run) -> None:
    code, out, err = gpuplan("plan", "--model", "llama-2-70b", "--tokens", "2e11", "--deadline", "30d", "--provider",
                             "gcp", "--json", "--limit", "0")
    assert code == 0, err
    opts = json.loads(out)["options"]
    a3 = [o for o in opts if o["offer"] == "a3-highgpu-8g" and o["nodes"] > 1]
    assert a3 and all(any("over 1,000 Gbps TCP" in n for n in o["notes"]) for o in a3)  # its sourced network
    assert {o["offer"] for o in opts if o["nodes"] > 1} <= {"a3-highgpu-8g", "a3-megagpu-8g", "a2-highgpu-8g",
                                                             "a2-megagpu-16g", "g2-standard-96"}  # the sourced ones


def test_skypilot_is_given_the_gpu_names_of_its_gcp_catalog() -> None:
    from gpuplan.render.export import accelerator_lines

    assert accelerator_lines("H100-SXM5-80GB", 8, "a3-megagpu-8g") == ['  accelerators: "H100-MEGA:8"']
    assert accelerator_lines("H100-SXM5-80GB", 8, "a3-highgpu-8g") == ['  accelerators: "H100:8"']
    assert accelerator_lines("P100-PCIE-16GB", 2, "n1-standard-16+2xP100") == ['  accelerators: "P100:2"']


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::PendingDeprecationWarning", "ignore::UserWarning")
def test_a_served_model_on_n1_exports_its_machine_and_gpus_apart(gpuplan: Run, tmp_path: Path) -> None:
    from tests.gpuplan.render.test_export import sky_validate

    path = tmp_path / "service.yaml"
    code, _, err = gpuplan("plan", "--serve", "llama-3-8b", "--rate", "5", "--provider", "gcp", "--gpu", "T4",
                           "--export", "skypilot", str(path))
    assert code == 0, err
    res = sky_validate(path)["resources"]
    assert res["instance_type"].startswith("n1-standard-") and "+" not in res["instance_type"]
    assert res["accelerators"].startswith("T4:")
