"""gpuhunt's items mapped right: on-demand, reservations and spot kept apart, AWS spot per zone, PCIe vs SXM,
and every GPU name mapped or named as skipped.

The fixture rows are gpuhunt catalog CSV rows (its v2 columns, ``_internal/storage.py``), read by gpuhunt's own
``item_from_row`` in the unit tests and served from a fake bucket on 127.0.0.1 in the end-to-end ones. Prices
are the issue's figures (GCP Cloud Billing catalog: a3-highgpu-8g 88.49 USD/h in us-central1, DWS calendar mode
52.0, a3-highgpu-1g 6.5 through DWS only) or made up where only their order matters."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable, Iterator
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.gpuhunt_bucket import serve, write_bucket

pytest.importorskip("gpuhunt")

Run = Callable[..., tuple[int, str, str]]
ON_DEMAND = {"is_dws_calendar_mode": False}
DWS = {"is_dws_calendar_mode": True}


def _gcp(name: str, zone: str, price: float, gpus: int, cpu: int, mem: float, *, spot: bool = False,
         data: dict[str, bool] | None = None, flags: list[str] | None = None) -> dict[str, Any]:
    return {"instance_name": name, "location": zone, "price": price, "cpu": cpu, "memory": mem, "gpu_count": gpus,
            "gpu_name": "H100", "gpu_memory": 80.0, "spot": spot, "provider_data": data or ON_DEMAND,
            "flags": flags or []}


GCP = [
    _gcp("a3-highgpu-8g", "us-central1-a", 88.49, 8, 208, 1872.0),
    _gcp("a3-highgpu-8g", "us-central1-a", 52.0, 8, 208, 1872.0, data=DWS, flags=["gcp-dws-calendar-mode"]),
    _gcp("a3-highgpu-8g", "us-central1-a", 30.0, 8, 208, 1872.0, spot=True),
    # gpuhunt drops on-demand items of a3-highgpu-1g/2g/4g (GCP sells them only through DWS or as spot)
    _gcp("a3-highgpu-1g", "us-central1-a", 6.5, 1, 26, 234.0, data=DWS, flags=["gcp-dws-calendar-mode"]),
    _gcp("a3-highgpu-1g", "us-central1-a", 3.8, 1, 26, 234.0, spot=True),
    {"instance_name": "v5litepod-1", "location": "us-central1-a", "price": 1.2, "cpu": 24, "memory": 48,
     "gpu_count": 1, "gpu_name": "v5litepod-1", "gpu_memory": 16, "spot": False, "gpu_vendor": "google"},
]


def _lambda(name: str, gpu: str, memory: float, price: float, gpus: int = 1) -> dict[str, Any]:
    return {"instance_name": name, "location": "us-east-1", "price": price, "cpu": 26 * gpus, "memory": 240.0 * gpus,
            "gpu_count": gpus, "gpu_name": gpu, "gpu_memory": memory, "spot": False}


LAMBDA = [
    _lambda("gpu_1x_h100_pcie", "H100", 80, 2.49),
    _lambda("gpu_8x_h100_sxm5", "H100", 80, 23.92, 8),
    _lambda("gpu_1x_a6000", "RTXA6000", 48, 0.8),
    _lambda("gpu_1x_rtx6000", "QuadroRTX6000", 24, 0.5),
    _lambda("gpu_1x_a100", "A100", 40, 1.29),
    _lambda("gpu_1x_gh200", "GH200", 96, 1.49),
]
# gpuhunt's AWS spot price is the cheapest zone's: p4d's us-east-1 zones are 2.4655 (use1-az1), 7.8799, 8.1203
# and 8.1915 in the shipped rows, so the typical (median) zone is 8.1203.
AWS = [
    {"instance_name": "p4d.24xlarge", "location": "us-east-1", "price": 21.957642, "cpu": 96, "memory": 1152.0,
     "gpu_count": 8, "gpu_name": "A100", "gpu_memory": 40.0, "spot": False},
    {"instance_name": "p4d.24xlarge", "location": "us-east-1", "price": 2.4655, "cpu": 96, "memory": 1152.0,
     "gpu_count": 8, "gpu_name": "A100", "gpu_memory": 40.0, "spot": True},
]


def _items(provider: str, rows: list[dict[str, Any]], tmp_path: Path) -> list[Any]:
    """The rows as gpuhunt reads them from its catalog file."""
    from gpuhunt._internal import storage

    write_bucket(tmp_path, {provider: rows})
    with zipfile.ZipFile(tmp_path / provider / "20261201" / "catalog.zip") as z, z.open(f"{provider}.csv") as f:
        return list(storage.load(io.TextIOWrapper(f, "utf-8"), provider=provider))


def _rows(provider: str, rows: list[dict[str, Any]], tmp_path: Path) -> Any:
    from pricing.catalog import Catalog
    from providers.market.gpuhunt_source import rows_from_items

    shipped = Catalog.shipped()
    return rows_from_items(_items(provider, rows, tmp_path), shipped, source="gpuhunt test", read=date(2026, 12, 1),
                           current=shipped.instances)


def test_a_dws_reservation_is_never_the_hourly_price(tmp_path: Path) -> None:
    market = _rows("gcp", GCP, tmp_path)
    rows = {r.instance_type: r for r in market.rows[("gcp", "us-central1")]}
    a3 = rows["a3-highgpu-8g"]
    assert (a3.hourly, a3.spot, a3.zone) == (Decimal("88.49"), Decimal("30.0"), "us-central1-a")
    one = rows["a3-highgpu-1g"]
    assert one.hourly is None and one.spot == Decimal("3.8")  # DWS-only: spot, never hourly
    (why, n), = market.left_out["gcp"].items()
    assert n == 2 and "DWS calendar-mode reservation" in why and "never taken as the hourly price" in why
    assert market.unknown_gpus == {"gcp": {"v5litepod-1 16 GB"}}


def test_lambda_gpus_keep_their_form_factor_and_names(tmp_path: Path) -> None:
    market = _rows("lambdalabs", LAMBDA, tmp_path)
    gpus = {r.instance_type: r.gpu for r in market.rows[("lambda", "us-east-1")]}
    assert gpus == {"gpu_1x_h100_pcie": "H100-PCIE-80GB", "gpu_8x_h100_sxm5": "H100-SXM5-80GB",
                    "gpu_1x_a6000": "RTX-A6000", "gpu_1x_rtx6000": "QUADRO-RTX-6000",
                    "gpu_1x_a100": "A100-PCIE-40GB"}  # the shipped Lambda row: gpu_1x_a100 is the PCIe card
    assert market.unknown_gpus == {"lambda": {"GH200 96 GB"}}


def test_aws_spot_stays_per_zone(tmp_path: Path) -> None:
    market = _rows("aws", AWS, tmp_path)
    rows = market.rows[("aws", "us-east-1")]
    spots = {r.zone: r.spot for r in rows}
    assert spots == {"use1-az1": Decimal("2.4655"), "use1-az2": Decimal("8.1915"), "use1-az4": Decimal("8.1203"),
                     "use1-az6": Decimal("7.8799")}
    assert {r.hourly for r in rows} == {Decimal("21.957642")}
    assert all("skypilot" in r.source for r in rows)  # where each zone's spot price came from


def test_unknown_flags_are_left_out_by_name(tmp_path: Path) -> None:
    cluster = {**LAMBDA[1], "flags": ["runpod-cluster"], "price": 1.0}
    market = _rows("lambdalabs", [LAMBDA[1], cluster], tmp_path)
    (row,) = market.rows[("lambda", "us-east-1")]
    assert row.hourly == Decimal("23.92")
    assert market.left_out == {"lambda": {"flag runpod-cluster (not an offer gpuplan knows how to price)": 1}}


# ---------------------------------------------------------------- end to end, through the CLI


@pytest.fixture
def bucket(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    write_bucket(tmp_path / "bucket", {"gcp": GCP, "lambdalabs": LAMBDA, "aws": AWS})
    with serve(tmp_path / "bucket") as url:
        monkeypatch.setenv("GPUHUNT_CATALOG_URL", url)
        yield url


def _offers(gpuplan: Run, *args: str) -> dict[str, dict[str, Any]]:
    code, out, err = gpuplan("offers", *args, "--json")
    assert code == 0, err
    return {o["offer"]: o for o in json.loads(out)["offers"]}


def test_a_refresh_keeps_list_prices_form_factors_and_typical_spot(gpuplan: Run, bucket: str) -> None:
    code, out, err = gpuplan("catalog", "refresh", "--source", "gpuhunt", "--provider", "gcp,lambda,aws", "--json")
    assert code == 0, err
    said = json.loads(out)
    assert said["unknown_gpus"] == {"gcp": ["v5litepod-1 16 GB"], "lambda": ["GH200 96 GB"]}
    assert any("DWS" in why for why in said["left_out"]["gcp"])
    gcp = _offers(gpuplan, "--provider", "gcp", "--region", "us-central1")
    assert gcp["a3-highgpu-8g"]["hourly"] == "88.49"
    assert gcp["a3-highgpu-1g"]["hourly"] is None
    lam = _offers(gpuplan, "--provider", "lambda", "--region", "us-east-1")
    assert lam["gpu_1x_h100_pcie"]["gpu"] == "H100-PCIE-80GB"
    assert lam["gpu_1x_a6000"]["gpu"] == "RTX-A6000" and lam["gpu_1x_a6000"]["hourly"] == "0.8"
    aws = _offers(gpuplan, "--provider", "aws", "--region", "us-east-1", "--gpu", "a100")
    assert aws["p4d.24xlarge"]["spot"] == "8.1203"  # the median zone, not gpuhunt's cheapest 2.4655
    code, _, err = gpuplan("catalog", "refresh", "--source", "gpuhunt", "--provider", "gcp")
    assert code == 0 and "2 item(s) GCP DWS calendar-mode reservation" in " ".join(err.split())


@pytest.mark.parametrize(("flags", "data"), [
    (["gcp-dws-calendar-mode"], {}),  # gpuhunt 0.1.34's flag
    ([], {"is_dws_calendar_mode": True}),  # and its provider data
    # gpuhunt 0.1.34 lists neither DWS flex-start nor AWS capacity blocks; a later one that marks them so
    # must not turn them hourly either
    (["gcp-dws-flex-start"], {}),
    ([], {"is_capacity_block": True}),
])
def test_reserved_capacity_is_never_hourly(tmp_path: Path, flags: list[str], data: dict[str, bool]) -> None:
    item = {**AWS[0], "flags": flags, "provider_data": data}
    market = _rows("aws", [item], tmp_path)
    assert not market.rows and sum(market.left_out["aws"].values()) == 1
