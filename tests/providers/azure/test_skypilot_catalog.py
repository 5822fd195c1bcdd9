"""Azure's rows: NC/ND sizes from a SkyPilot catalog of Azure, GPUs by series, unknown or doubtful sizes reported."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from providers.azure.skypilot_catalog import rows
from providers.converter import to_csv

# Lines as the source has them (coopslarhette/skypilot-catalog catalogs/v8/azure/vms.csv @20291d7e).
VMS = """InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,Generation
Standard_D4s_v5,,,4.0,16,,0.192,0.0192,eastus,"V1,V2"
Standard_NC24ads_A100_v4,A100-80GB,1,24.0,220,A100-80GB,3.673,0.444433,eastus,V2
Standard_NC40ads_H100_v5,H100,1,40.0,320,H100,6.98,6.98,eastus,V2
Standard_NC4as_T4_v3,T4,1,4.0,28,T4,0.526,0.062699,eastus,"V1,V2"
Standard_NC6,K80,1,6.0,56,K80,0.9,0.099,westus2,V1
Standard_NC6s_v3,V100,1,6.0,112,V100,3.06,0.35343,westus2,"V1,V2"
Standard_NC6_Promo,K80,1,6.0,56,K80,0.18,,westus2,V1
Standard_ND40rs_v2,V100-32GB,8,40.0,672,V100-32GB,22.032,2.42352,eastus,V2
Standard_ND96amsr_A100_v4,A100-80GB,8,96.0,1800,A100-80GB,32.77,3.6047,eastus,V2
Standard_ND96asr_v4,A100,8,96.0,900,A100,27.197,2.99167,eastus,V2
Standard_ND96isr_H100_v5,H100,12,96.0,1900,H100,98.32,98.32,eastus,V2
"""
EASTUS2_T4 = 'Standard_NC4as_T4_v3,T4,1,4.0,28,T4,0.526,0.05786,eastus2,"V1,V2"\n'  # the same source
SHIPPED = Path(__file__).resolve().parents[3] / "pricing" / "data" / "instances" / "azure.csv"
Run = Callable[..., tuple[int, str, str]]


def _by_size() -> dict[str, dict[str, str]]:
    found, _ = rows(io.StringIO(VMS), commit="20291d7", read="2026-12-04")
    return {r["instance_type"]: r for r in found}


def test_each_series_gets_the_gpu_its_size_page_names() -> None:
    gpu = {size: (r["gpu"], r["gpu_count"]) for size, r in _by_size().items()}
    assert gpu == {
        "Standard_NC24ads_A100_v4": ("A100-PCIE-80GB", "1"), "Standard_NC4as_T4_v3": ("T4", "1"),
        "Standard_NC6s_v3": ("V100-PCIE-16GB", "1"), "Standard_ND40rs_v2": ("V100-SXM2-32GB", "8"),
        "Standard_ND96amsr_A100_v4": ("A100-SXM4-80GB", "8"), "Standard_ND96asr_v4": ("A100-SXM4-40GB", "8"),
    }


def test_prices_are_the_sources_per_region_with_spot() -> None:
    t4 = _by_size()["Standard_NC4as_T4_v3"]
    assert (t4["region"], t4["hourly"], t4["spot"], t4["currency"]) == ("eastus", "0.526", "0.062699", "USD")
    assert "@20291d7" in t4["source"] and t4["as_of_kind"] == "read_date"


def test_k80_h100_nvl_and_a_doubtful_gpu_count_are_reported_not_guessed() -> None:
    _, skipped = rows(io.StringIO(VMS), commit="x", read="2026-12-04")
    why = {s.instance_type: s.reason for s in skipped}
    assert set(why) == {"Standard_NC6", "Standard_NC6_Promo", "Standard_NC40ads_H100_v5", "Standard_ND96isr_H100_v5"}
    assert "H100 NVL" in why["Standard_NC40ads_H100_v5"] and "12 x H100" in why["Standard_ND96isr_H100_v5"]


def test_a_spot_price_not_below_pay_as_you_go_is_no_spot_price() -> None:
    text = VMS.replace("3.06,0.35343,westus2", "3.06,3.06,westus2")
    found, _ = rows(io.StringIO(text), commit="x", read="2026-12-04")
    v100 = next(r for r in found if r["instance_type"] == "Standard_NC6s_v3")
    assert v100["spot"] == "" and "not below" in v100["notes"]


def test_a_series_whose_gpu_the_source_names_otherwise_is_reported() -> None:
    found, skipped = rows(io.StringIO(VMS.replace("Standard_ND96asr_v4,A100,8", "Standard_ND96asr_v4,A100,4")),
                          commit="x", read="2026-12-04")
    assert "Standard_ND96asr_v4" not in {r["instance_type"] for r in found}
    assert any(s.instance_type == "Standard_ND96asr_v4" and "4 x A100" in s.reason for s in skipped)


def test_the_shipped_file_is_what_the_converter_writes_in_the_catalog_shape() -> None:
    shipped = list(csv.DictReader(io.StringIO(SHIPPED.read_text(encoding="utf-8"))))
    assert to_csv(list(_by_size().values())).splitlines()[0] == SHIPPED.read_text(encoding="utf-8").splitlines()[0]
    assert len(shipped) == 64 and {r["region"] for r in shipped} == {"eastus", "eastus2", "southcentralus", "westus2",
                                                                     "westus3"}
    assert all(r["source"].startswith("github.com/coopslarhette/skypilot-catalog") for r in shipped)


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::PendingDeprecationWarning", "ignore::UserWarning")
def test_azure_offers_plan_and_export_to_files_the_engines_accept(gpuplan: Run, tmp_path: Path) -> None:
    code, out, err = gpuplan("offers", "--provider", "azure", "--region", "eastus", "--json")
    assert code == 0, err
    assert {o["gpu"] for o in json.loads(out)["offers"]} >= {"T4", "A100-SXM4-80GB", "V100-SXM2-32GB"}
    from tests.gpuplan.render.test_export import dstack_parse, sky_validate

    sky, dst = tmp_path / "task.yaml", tmp_path / ".dstack.yml"
    assert gpuplan("plan", "--gpu-hours", "200", "--provider", "azure", "--export", "skypilot", str(sky))[0] == 0
    assert gpuplan("plan", "--gpu-hours", "200", "--provider", "azure", "--export", "dstack", str(dst))[0] == 0
    task = sky_validate(sky)
    # an N-series GPU size (with its disk and address priced, the 8 x A100 ND96asr_v4's short run wins)
    assert task["resources"]["cloud"] == "azure" and task["resources"]["instance_type"].startswith("Standard_N")
    conf = dstack_parse(dst)
    assert conf.backends == ["azure"] and conf.regions == [task["resources"]["region"]]


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::PendingDeprecationWarning", "ignore::UserWarning")
def test_an_azure_export_passes_skypilots_resource_validation(gpuplan: Run, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """SkyPilot's own Task.validate() over its Azure catalog seeded with the source's lines."""
    from tests.gpuplan.render.test_export import sky_validated

    path = tmp_path / "task.yaml"
    # one T4 a machine: with the disk and address priced per node, bigger T4 sizes' shorter runs cost less
    code, out, err = gpuplan("plan", "--gpu-hours", "200", "--provider", "azure", "--region", "eastus", "--gpu", "T4",
                             "--max-gpus", "1", "--export", "skypilot", str(path), "--json")
    assert code == 0, err
    win = json.loads(out)["cheapest"]
    assert win["offer"] == "Standard_NC4as_T4_v3"  # the size the seeded lines below list in every region of eastus*
    (res,) = sky_validated(path, tmp_path / "sky-catalog", monkeypatch, "azure", VMS + EASTUS2_T4,
                           ("T4", "V100", "A100", "A100-80GB", "V100-32GB"))
    assert (str(res.cloud), res.region, res.instance_type) == ("Azure", win["region"], "Standard_NC4as_T4_v3")
