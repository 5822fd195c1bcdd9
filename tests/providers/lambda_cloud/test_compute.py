"""Lambda's API client and compute client against the strict fake: errors in gpuplan's words, bounded retries,
idempotent launches and terminations."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pricing.errors import CapacityError, CredentialsError, InputError, ProviderError
from providers.capabilities import TAG_ID, InstanceState, LaunchRequest
from providers.lambda_cloud.api import LambdaApi
from providers.lambda_cloud.compute import LambdaCompute
from providers.testing.fake_lambda import TEST_API_KEY, FakeLambda, fake_lambda_server

KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcH"


@pytest.fixture
def fake() -> Iterator[FakeLambda]:
    with fake_lambda_server() as f:
        yield f


def api(fake: FakeLambda, key: str = TEST_API_KEY) -> LambdaApi:
    return LambdaApi(key, base=fake.endpoint, sleep=lambda _: None)


def request(**kw: object) -> LaunchRequest:
    base = {"region": "us-east-1", "zones": ("us-east-1",), "instance_type": "gpu_1x_a10", "client_token": "t",
            "name": "gpuplan-gp-00000000aa", "ssh_public_key": KEY, "ssh_key_name": "gpuplan_0011223344556677"}
    return LaunchRequest(**{**base, **kw})  # type: ignore[arg-type]


def test_a_wrong_key_is_a_credentials_error_that_never_shows_the_key(fake: FakeLambda) -> None:
    with pytest.raises(CredentialsError) as err:
        api(fake, "secret_wrong-key-abcdef0123").get("/instances")
    assert err.value.exit_code == 3 and "secret_wrong-key" not in str(err.value)


def test_rate_limits_and_server_faults_on_a_read_are_retried(fake: FakeLambda) -> None:
    fake.faults["/instances"] = [429, 503]
    assert api(fake).get("/instances") == []
    assert fake.calls.count(("GET", "/instances")) == 3


def test_a_launch_whose_answer_is_lost_is_not_sent_again(fake: FakeLambda) -> None:
    fake.faults["/instance-operations/launch"] = [502]
    client = LambdaCompute("us-east-1", api=api(fake))
    with pytest.raises(ProviderError):
        client.run(request())
    assert fake.calls.count(("POST", "/instance-operations/launch")) == 1


def test_an_unreachable_endpoint_ends_in_bounded_tries() -> None:
    dead = LambdaApi(TEST_API_KEY, base="http://127.0.0.1:9/api/v1", sleep=lambda _: None)
    with pytest.raises(ProviderError, match="connection refused"):
        dead.get("/instances")
    with pytest.raises(ProviderError, match="may or may not"):
        dead.post("/instance-operations/launch", {})


def test_the_fake_is_strict_about_bodies_and_keys(fake: FakeLambda) -> None:
    with pytest.raises(InputError, match="unknown field"):
        api(fake).post("/instance-operations/launch", {"region_name": "us-east-1", "instance_type_name": "gpu_1x_a10",
                                                       "ssh_key_names": ["k"], "tags": []})
    with pytest.raises(ProviderError, match="does not exist"):
        api(fake).post("/instance-operations/launch", {"region_name": "us-east-1", "instance_type_name": "gpu_1x_a10",
                                                       "ssh_key_names": ["never-registered"]})


def test_several_machines_one_name_a_retry_starts_none_and_terminate_is_idempotent(fake: FakeLambda) -> None:
    client = LambdaCompute("us-east-1", api=api(fake))
    first = client.run(request(count=2))
    assert len(first.instance_ids) == 2 and first.zone == "us-east-1"
    again = client.run(request(count=2))  # a retried launch: found by its name, nothing new
    assert set(again.instance_ids) == set(first.instance_ids) and len(fake.instances) == 2
    assert {i.tags[TAG_ID] for i in client.list_by_tag(TAG_ID, "gp-00000000aa")} == {"gp-00000000aa"}
    client.terminate([first.instance_ids[0]])
    client.terminate(list(first.instance_ids))  # the first is already ending: only the second is asked
    assert {i.state for i in client.describe(list(first.instance_ids))} == {InstanceState.TERMINATED}
    assert client.describe(["never-existed"])[0].state is InstanceState.TERMINATED


def test_a_pinned_sold_out_region_names_where_there_is_capacity(fake: FakeLambda) -> None:
    client = LambdaCompute("us-east-1", api=api(fake))
    with pytest.raises(CapacityError) as err:
        client.run(request(zone="us-south-1", zones=()))
    assert "us-south-1" in err.value.message and "us-east-1, us-west-1" in str(err.value.hint)
    fake.capacity["gpu_1x_a10"] = []
    with pytest.raises(CapacityError, match="sold out") as err:
        client.run(request())
    assert "no region has capacity" in str(err.value.hint)
    assert fake.instances == {}


def test_without_a_key_lambda_cannot_launch(fake: FakeLambda) -> None:
    with pytest.raises(InputError, match="exactly one SSH key"):
        LambdaCompute("us-east-1", api=api(fake)).run(request(ssh_public_key=None, ssh_key_name=None))


def test_an_endpoint_given_as_a_host_gets_lambdas_api_path(monkeypatch: pytest.MonkeyPatch) -> None:
    from providers.lambda_cloud.api import endpoint

    monkeypatch.setenv("GPUPLAN_LAMBDA_ENDPOINT", "http://127.0.0.1:8080/")
    assert endpoint() == "http://127.0.0.1:8080/api/v1"
    monkeypatch.setenv("GPUPLAN_LAMBDA_ENDPOINT", "http://127.0.0.1:8080/api/v1")
    assert endpoint() == "http://127.0.0.1:8080/api/v1"
    monkeypatch.delenv("GPUPLAN_LAMBDA_ENDPOINT")
    assert endpoint() == "https://cloud.lambda.ai/api/v1"
