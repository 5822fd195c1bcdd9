"""Lambda Cloud's rows: read from SkyPilot's catalog of it, mapped to catalog GPUs, shipped in one region-free row."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from providers.converter import to_csv
from providers.lambda_cloud.skypilot_catalog import rows

# Lines as SkyPilot's catalogs/v8/lambda/vms.csv has them (@0f4070387edc953d7004cff197940e1918a1d6aa).
VMS = """InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice
cpu_4x_general,,,4.0,16.0,0.2,us-east-1,,
gpu_1x_a100,A100,1.0,30.0,200.0,1.99,us-east-1,"{'Gpus': [{'Name': 'A100', 'Manufacturer': 'NVIDIA', \
'Count': 1.0, 'MemoryInfo': {'SizeInMiB': 40960}}], 'TotalGpuMemoryInMiB': 40960}",
gpu_1x_a100,A100,1.0,30.0,200.0,1.99,us-west-1,"{'Gpus': [{'Name': 'A100', 'Manufacturer': 'NVIDIA', \
'Count': 1.0, 'MemoryInfo': {'SizeInMiB': 40960}}], 'TotalGpuMemoryInMiB': 40960}",
gpu_8x_a100,A100,8.0,124.0,1800.0,15.92,us-east-1,"{'Gpus': [{'Name': 'A100', 'Manufacturer': 'NVIDIA', \
'Count': 8.0, 'MemoryInfo': {'SizeInMiB': 40960}}], 'TotalGpuMemoryInMiB': 40960}",
gpu_1x_h100_pcie,H100,1.0,26.0,200.0,3.29,us-east-1,"{'Gpus': [{'Name': 'H100', 'Manufacturer': 'NVIDIA', \
'Count': 1.0, 'MemoryInfo': {'SizeInMiB': 81920}}], 'TotalGpuMemoryInMiB': 81920}",
gpu_8x_h100_sxm5,H100,8.0,208.0,1800.0,31.92,us-east-1,"{'Gpus': [{'Name': 'H100', 'Manufacturer': 'NVIDIA', \
'Count': 8.0, 'MemoryInfo': {'SizeInMiB': 81920}}], 'TotalGpuMemoryInMiB': 81920}",
gpu_1x_b200_sxm6,B200,1.0,26.0,360.0,6.99,us-east-1,"{'Gpus': [{'Name': 'B200', 'Manufacturer': 'NVIDIA', \
'Count': 1.0, 'MemoryInfo': {'SizeInMiB': 184320}}], 'TotalGpuMemoryInMiB': 184320}",
"""
Run = Callable[..., tuple[int, str, str]]


def test_each_gpu_type_is_one_row_whose_zones_are_its_regions() -> None:
    found, skipped = rows(io.StringIO(VMS), commit="0f40703", read="2026-12-04")
    by = {r["instance_type"]: r for r in found}
    assert set(by) == {"gpu_1x_a100", "gpu_8x_a100", "gpu_1x_h100_pcie", "gpu_8x_h100_sxm5"}
    assert by["gpu_1x_a100"]["zones"] == "us-east-1;us-west-1" and by["gpu_1x_a100"]["region"] == "global"
    assert by["gpu_8x_a100"]["hourly"] == "15.92" and by["gpu_8x_a100"]["gpu_count"] == "8"
    assert "@0f40703" in by["gpu_8x_a100"]["source"]


def test_the_type_name_decides_the_form_factor_and_unknown_gpus_are_reported() -> None:
    found, skipped = rows(io.StringIO(VMS), commit="x", read="2026-12-04")
    gpu = {r["instance_type"]: r["gpu"] for r in found}
    assert gpu == {"gpu_1x_a100": "A100-PCIE-40GB", "gpu_8x_a100": "A100-SXM4-40GB",
                   "gpu_1x_h100_pcie": "H100-PCIE-80GB", "gpu_8x_h100_sxm5": "H100-SXM5-80GB"}
    assert [(s.instance_type, "B200" in s.reason) for s in skipped] == [("gpu_1x_b200_sxm6", True)]


def test_a_type_priced_differently_by_region_is_not_given_one_price() -> None:
    text = VMS.replace("1.99,us-west-1", "2.49,us-west-1")
    found, skipped = rows(io.StringIO(text), commit="x", read="2026-12-04")
    assert "gpu_1x_a100" not in {r["instance_type"] for r in found}
    assert any(s.instance_type == "gpu_1x_a100" and "differ" in s.reason for s in skipped)


def test_the_output_is_the_shipped_files_shape() -> None:
    found, _ = rows(io.StringIO(VMS), commit="x", read="2026-12-04")
    shipped = Path(__file__).resolve().parents[2] / "pricing" / "data" / "instances" / "lambda.csv"
    assert to_csv(found).splitlines()[0] == shipped.read_text(encoding="utf-8").splitlines()[0]


def test_shipped_lambda_rows_are_sourced_and_plannable(gpuplan: Run) -> None:
    shipped = Path(__file__).resolve().parents[2] / "pricing" / "data" / "instances" / "lambda.csv"
    rs = list(csv.DictReader(io.StringIO(shipped.read_text(encoding="utf-8"))))
    assert len(rs) == 18
    for r in rs:
        assert r["source"].startswith("github.com/skypilot-org/skypilot-catalog catalogs/v8/lambda/vms.csv @0f40703")
        assert float(r["hourly"]) > 0 and len(r["zones"].split(";")) == 17
    code, out, err = gpuplan("offers", "--provider", "lambda", "--region", "us-east-1", "--json")
    assert code == 0, err
    assert len(json.loads(out)["offers"]) == 18


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::PendingDeprecationWarning", "ignore::UserWarning")
def test_a_lambda_winner_exports_to_files_the_engines_accept(gpuplan: Run, tmp_path: Path) -> None:
    from tests.gpuplan.render.test_export import dstack_parse, sky_validate

    sky, dst = tmp_path / "task.yaml", tmp_path / ".dstack.yml"
    assert gpuplan("plan", "--gpu-hours", "200", "--provider", "lambda", "--export", "skypilot", str(sky))[0] == 0
    assert gpuplan("plan", "--gpu-hours", "200", "--provider", "lambda", "--export", "dstack", str(dst))[0] == 0
    task = sky_validate(sky)
    assert task["resources"]["cloud"] == "lambda" and "region" not in task["resources"]
    assert task["resources"]["instance_type"].startswith("gpu_")
    conf = dstack_parse(dst)
    assert conf.backends == ["lambda"] and not conf.regions


def test_launch_on_lambda_asks_for_its_api_key_and_an_engine_only_cloud_names_the_engines(
        gpuplan: Run, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from pricing.errors import CredentialsError, NotSupportedError
    from providers.registry import compute_client

    monkeypatch.delenv("LAMBDA_API_KEY", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(CredentialsError) as c:
        compute_client("lambda", "us-east-1")  # Lambda launches through its own API now: its key is asked for
    assert "LAMBDA_API_KEY" in str(c.value.hint) and "lambda_keys" in str(c.value.hint)
    with pytest.raises(NotSupportedError) as e:
        compute_client("gcp", "us-central1")
    assert "--via skypilot" in str(e.value.hint) and "--export dstack" in str(e.value.hint)
