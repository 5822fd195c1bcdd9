"""The ECS compute client against the strict fake ECS, through the official SDK: what each billing mode asks ECS for,
the cloud-side TTL's bounds, retries that start nothing twice, and ends that are idempotent."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from pricing.billing import BillingMode
from pricing.errors import CapacityError, InputError
from providers.alibaba.compute import AlibabaCompute
from providers.capabilities import InstanceState, LaunchRequest
from providers.testing.fake_ecs import (
    TEST_KEY_ID,
    TEST_KEY_SECRET,
    FakeEcs,
    fake_ecs_server,
)

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # the SDK's datetime.utcnow


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeEcs]:
    with fake_ecs_server() as f:
        monkeypatch.setenv("ALIBABA_CLOUD_ACCESS_KEY_ID", TEST_KEY_ID)
        monkeypatch.setenv("ALIBABA_CLOUD_ACCESS_KEY_SECRET", TEST_KEY_SECRET)
        monkeypatch.setenv("GPUPLAN_ALIBABA_ENDPOINT", f.endpoint)
        yield f


def request(**kw: object) -> LaunchRequest:
    base: dict[str, object] = {"region": "cn-shanghai", "instance_type": "ecs.gn7i-c8g1.2xlarge",
                               "client_token": "gp-test-1", "tags": {"gpuplan:id": "gp-test-1"}}
    return LaunchRequest(**{**base, **kw})  # type: ignore[arg-type]


def test_spot_pays_the_market_price_or_bids_at_most_the_limit(fake: FakeEcs) -> None:
    AlibabaCompute("cn-shanghai").run(request(billing=BillingMode.SPOT))
    AlibabaCompute("cn-shanghai", spot_max_price=Decimal("3.5")).run(request(billing=BillingMode.SPOT,
                                                                             client_token="gp-test-2"))
    first, second = (c.params for c in fake.calls_of("RunInstances"))
    assert first["SpotStrategy"] == "SpotAsPriceGo" and "SpotPriceLimit" not in first
    assert (second["SpotStrategy"], second["SpotPriceLimit"]) == ("SpotWithPriceLimit", "3.5")


def test_monthly_is_a_subscription_without_a_release_time(fake: FakeEcs) -> None:
    out = AlibabaCompute("cn-shanghai").run(request(billing=BillingMode.MONTHLY, months=3,
                                                    expires_at=datetime.now(UTC) + timedelta(days=2)))
    [run] = fake.calls_of("RunInstances")
    assert (run.params["InstanceChargeType"], run.params["Period"], run.params["PeriodUnit"]) == ("PrePaid", "3",
                                                                                                   "Month")
    assert "AutoReleaseTime" not in run.params and out.cloud_ends_at is None
    assert any("not renewed" in n for n in out.notes) and run.params["AutoRenew"] == "false"


def test_a_ttl_under_30_minutes_is_released_at_the_clouds_earliest_and_said(fake: FakeEcs) -> None:
    out = AlibabaCompute("cn-shanghai").run(request(expires_at=datetime.now(UTC) + timedelta(minutes=5)))
    assert out.cloud_ends_at is not None and out.cloud_ends_at - datetime.now(UTC) > timedelta(minutes=30)
    assert any("at least 30 minutes ahead" in n for n in out.notes)
    assert fake.live()  # ECS accepted the release time


def test_a_retried_launch_starts_nothing_new_and_ending_twice_is_no_error(fake: FakeEcs) -> None:
    client = AlibabaCompute("cn-shanghai")
    first = client.run(request(count=2))
    again = client.run(request(count=2))
    assert again.instance_ids == first.instance_ids and len(fake.live()) == 2
    assert "already exist" in again.notes[0]
    assert {i.state for i in client.describe(list(first.instance_ids))} <= {InstanceState.PENDING,
                                                                            InstanceState.RUNNING}
    client.terminate(list(first.instance_ids))
    client.terminate(list(first.instance_ids))
    assert fake.live() == [] and len(fake.calls_of("DeleteInstances")) == 1
    assert [i.state for i in client.describe(list(first.instance_ids))] == [InstanceState.TERMINATED] * 2


def test_a_pinned_zone_out_of_stock_names_the_zones_to_try(monkeypatch: pytest.MonkeyPatch) -> None:
    with fake_ecs_server(no_stock=("cn-shanghai-l",)) as fake:
        monkeypatch.setenv("ALIBABA_CLOUD_ACCESS_KEY_ID", TEST_KEY_ID)
        monkeypatch.setenv("ALIBABA_CLOUD_ACCESS_KEY_SECRET", TEST_KEY_SECRET)
        monkeypatch.setenv("GPUPLAN_ALIBABA_ENDPOINT", fake.endpoint)
        with pytest.raises(CapacityError) as err:
            AlibabaCompute("cn-shanghai").run(request(zone="cn-shanghai-l"))
        assert "cn-shanghai-l" in err.value.message and "cn-shanghai-m" in (err.value.hint or "")
        assert fake.live() == [] and not fake.calls_of("RunInstances")
    with fake_ecs_server(hidden_no_stock=("cn-shanghai-l",)) as fake:  # the stock query said yes, the launch no
        monkeypatch.setenv("GPUPLAN_ALIBABA_ENDPOINT", fake.endpoint)
        with pytest.raises(CapacityError) as err:
            AlibabaCompute("cn-shanghai").run(request(zone="cn-shanghai-l"))
        assert "OperationDenied.NoStock" in err.value.message and fake.live() == []


def test_a_zone_of_another_region_is_refused_before_any_call(fake: FakeEcs) -> None:
    with pytest.raises(InputError):
        AlibabaCompute("cn-shanghai").run(request(zone="cn-beijing-a"))
    assert fake.calls == []


def test_the_endpoint_may_be_a_bare_host(fake: FakeEcs, monkeypatch: pytest.MonkeyPatch) -> None:
    # a host alone means HTTPS to it: the fake speaks plain HTTP, so the call fails there, naming the endpoint
    from pricing.errors import ProviderError

    host = fake.endpoint.removeprefix("http://")
    monkeypatch.setenv("GPUPLAN_ALIBABA_ENDPOINT", host)
    with pytest.raises(ProviderError) as err:
        AlibabaCompute("cn-shanghai").list_by_tag("gpuplan:id")
    assert f"GPUPLAN_ALIBABA_ENDPOINT={host}" in err.value.message


def test_every_machine_gets_the_ubuntu_login_before_the_users_boot_script(fake: FakeEcs) -> None:
    import base64

    AlibabaCompute("cn-shanghai").run(request())
    AlibabaCompute("cn-shanghai").run(request(client_token="gp-test-2", user_data="#!/bin/bash\necho job\n"))
    plain, job = (base64.b64decode(c.params["UserData"]).decode() for c in fake.calls_of("RunInstances"))
    assert plain.startswith("#!/bin/sh\n") and "useradd -m -s /bin/bash ubuntu" in plain
    assert job.startswith("#!/bin/bash\n") and job.endswith("echo job\n")
    assert job.index("authorized_keys") < job.index("echo job")  # the login exists before the job runs as it
