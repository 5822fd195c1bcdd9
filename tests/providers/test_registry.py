"""One record per cloud: what a user is told when a capability or its SDK is missing, and what loads when."""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from pricing.errors import NotSupportedError
from pricing.money import Currency
from providers import registry
from providers.registry import CLOUDS, Cloud, engine_runs

ROOT = Path(__file__).resolve().parents[2]


def test_each_cloud_is_one_frozen_record_naming_its_extra_and_currency() -> None:
    assert set(CLOUDS) == {"aws", "tencent", "lambda", "gcp", "azure", "alibaba"}
    assert CLOUDS["aws"].extra == "gpuplan[aws]" and CLOUDS["aws"].currency is Currency.USD
    assert CLOUDS["tencent"].extra == "gpuplan[tencent]" and CLOUDS["tencent"].currency is Currency.CNY
    with pytest.raises(dataclasses.FrozenInstanceError):
        CLOUDS["aws"].extra = "other"  # type: ignore[misc]


@pytest.mark.parametrize("cloud", sorted(CLOUDS))
def test_every_named_capability_exists(cloud: str) -> None:
    record = CLOUDS[cloud]
    for field in ("price_fetcher", "price_inquiry", "compute_client", "credentials"):
        target = getattr(record, field)
        if target is not None:
            module, attr = target.split(":")
            assert hasattr(importlib.import_module(module), attr), target


def test_a_new_cloud_is_one_record_and_its_missing_sdk_names_its_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(CLOUDS, "acme", Cloud("acme", Currency.USD, "gpuplan[acme]", "acme_sdk_not_installed",
                                              compute_client="providers.acme.compute:AcmeCompute"))
    with pytest.raises(NotSupportedError) as err:
        registry.compute_client("acme", "acme-east-1")
    assert err.value.message == "launching for acme needs its SDK, which is not installed (acme_sdk_not_installed)"
    assert err.value.hint == "pip install 'gpuplan[acme]'"


def test_a_capability_a_cloud_lacks_lists_the_clouds_that_have_it() -> None:
    with pytest.raises(NotSupportedError) as err:
        registry.price_inquiry("aws")
    assert err.value.message == "aws has no exact price inquiry in gpuplan"
    assert err.value.hint == "providers with exact price inquiry: alibaba, tencent"
    with pytest.raises(NotSupportedError, match="local has no launching in gpuplan"):
        registry.compute_client("local", "here")


def test_a_missing_sdk_is_found_before_the_capability_module_is_imported(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "botocore" else real(name, *a))
    monkeypatch.delitem(sys.modules, "providers.aws.prices", raising=False)
    with pytest.raises(NotSupportedError, match=r"gpuplan\[aws\]"):
        registry.price_fetcher("aws")
    assert "providers.aws.prices" not in sys.modules


def test_naming_the_clouds_imports_no_sdk_and_no_capability() -> None:
    code = ("import sys, providers.registry as r; assert r.CLOUDS['aws'].compute_client; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('boto3', 'botocore', 'tencentcloud') "
            "or m.startswith(('providers.aws.', 'providers.tencent.'))]; assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_the_records_currency_is_what_the_clouds_adapter_prices_in() -> None:
    from providers.tencent.prices import TencentPriceFetcher

    assert TencentPriceFetcher().currency is CLOUDS["tencent"].currency


def test_the_engines_that_run_a_cloud_come_from_its_record() -> None:
    # `plan --export` writes a task only where the engine can launch the offer: SkyPilot and
    # dstack run AWS, neither knows Tencent Cloud, and buying cards is no cloud at all.
    assert engine_runs("skypilot", "aws") and engine_runs("dstack", "aws")
    assert not engine_runs("skypilot", "tencent") and not engine_runs("dstack", "tencent")
    assert not engine_runs("skypilot", "local")
