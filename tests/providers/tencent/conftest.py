"""Fixtures for the Tencent adapter: a fake CVM endpoint the real SDK talks to, and the env pointing at it.

``fake_cvm`` is a started :class:`providers.testing.fake_cvm.FakeCvm`; ``tencent_env`` sets the SDK's
credential variables to the fake's test key and ``GPUPLAN_TENCENT_ENDPOINT`` to the fake, so
code under test builds its clients exactly as in production. ``sleeps`` records the backoff
waits instead of sleeping.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pricing.catalog import Catalog
from providers.testing.fake_cvm import TEST_SECRET_ID, TEST_SECRET_KEY, FakeCvm, fake_cvm_server

HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # tencentcloud-sdk-python-common calls datetime.utcfromtimestamp() to sign every request; from
    # Python 3.12 that warns, and the project turns warnings into errors. The SDK is not ours to fix.
    sdk_warning = pytest.mark.filterwarnings("ignore:datetime.datetime.utcfromtimestamp:DeprecationWarning")
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(sdk_warning)


@pytest.fixture(autouse=True)
def no_developer_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # A developer's ~/.tencentcloud/credentials must never be read, nor the CVM metadata service asked.
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GPUPLAN_TENCENT_INSTANCE_ROLE", "0")


@pytest.fixture
def fake_cvm() -> Iterator[FakeCvm]:
    with fake_cvm_server() as fake:
        yield fake


@pytest.fixture
def tencent_env(fake_cvm: FakeCvm, monkeypatch: pytest.MonkeyPatch) -> FakeCvm:
    monkeypatch.setenv("TENCENTCLOUD_SECRET_ID", TEST_SECRET_ID)
    monkeypatch.setenv("TENCENTCLOUD_SECRET_KEY", TEST_SECRET_KEY)
    monkeypatch.setenv("GPUPLAN_TENCENT_ENDPOINT", fake_cvm.endpoint)
    return fake_cvm


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def catalog() -> Catalog:
    return Catalog.shipped()
