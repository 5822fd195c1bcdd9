"""The CVM client through the real SDK against the fake: credentials, retries, error mapping, secrets."""

from __future__ import annotations

import logging
import socket
import subprocess
import sys
import time
import traceback
from pathlib import Path

import pytest

from pricing.errors import CapacityError, CredentialsError, GpuplanError, InputError, ProviderError
from providers.session import RetryPolicy
from providers.tencent.client import (
    ApiFailure,
    CvmApi,
    TencentCapacityError,
    load_credential,
    parse_endpoint,
)
from providers.testing.fake_cvm import TEST_SECRET_ID, TEST_SECRET_KEY, FakeCvm

REPO = Path(__file__).resolve().parents[3]
QUOTE = {"Placement": {"Zone": "ap-guangzhou-3"}, "InstanceType": "GN10Xp.2XLARGE40", "ImageId": "img-ubu22new"}


def api(sleeps: list[float], **kw: object) -> CvmApi:
    return CvmApi("ap-guangzhou", sleep=sleeps.append, rng=lambda: 1.0, **kw)  # type: ignore[arg-type]


def all_text(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc)) + repr(exc) + str(exc)


# --- credentials ------------------------------------------------------------------------------


def test_missing_credentials_name_the_variables() -> None:
    with pytest.raises(CredentialsError) as info:
        CvmApi("ap-guangzhou")
    assert "TENCENTCLOUD_SECRET_ID" in str(info.value) and "TENCENTCLOUD_SECRET_KEY" in str(info.value)
    assert info.value.exit_code == 3
    assert "\n" not in str(info.value)


def test_half_set_credentials_say_which_variable_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TENCENTCLOUD_SECRET_ID", TEST_SECRET_ID)
    with pytest.raises(CredentialsError, match="TENCENTCLOUD_SECRET_KEY is not set"):
        load_credential()


def test_profile_file_is_part_of_the_chain(fake_cvm: FakeCvm, tmp_path: Path, sleeps: list[float]) -> None:
    profile = tmp_path / "home" / ".tencentcloud" / "credentials"
    profile.parent.mkdir(parents=True)
    profile.write_text(f"[default]\nsecret_id = {TEST_SECRET_ID}\nsecret_key = {TEST_SECRET_KEY}\n")
    response = api(sleeps, endpoint=fake_cvm.endpoint).call("DescribeImages", {})
    assert response["RequestId"] and response["ImageSet"]


def test_instance_role_probe_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    from tencentcloud.common import credential as tc  # type: ignore[import-untyped]

    release = threading.Event()

    class Hanging:
        def get_credential(self) -> None:
            release.wait(5)  # a metadata service that never answers

    monkeypatch.setattr(tc, "CVMRoleCredential", Hanging)
    try:
        with pytest.raises(CredentialsError):
            load_credential(instance_role=True, role_timeout_s=0.05)
    finally:
        release.set()


def test_wrong_key_is_a_credentials_error_and_no_secret_leaks(
    fake_cvm: FakeCvm, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str], sleeps: list[float],
) -> None:
    wrong = "WRONGkeyWRONGkeyWRONGkey1234"
    monkeypatch.setenv("TENCENTCLOUD_SECRET_ID", TEST_SECRET_ID)
    monkeypatch.setenv("TENCENTCLOUD_SECRET_KEY", wrong)
    monkeypatch.setenv("GPUPLAN_TENCENT_ENDPOINT", fake_cvm.endpoint)
    caplog.set_level(logging.DEBUG)
    logging.getLogger("tencentcloud_sdk_common").setLevel(logging.DEBUG)
    try:
        client = api(sleeps)
        with pytest.raises(CredentialsError, match="rejected the API key") as info:
            client.call("DescribeImages", {})
    finally:
        logging.getLogger("tencentcloud_sdk_common").setLevel(logging.NOTSET)
    assert "AuthFailure.SignatureFailure" in str(info.value)
    assert fake_cvm.calls[-1].outcome == "AuthFailure.SignatureFailure"
    assert sleeps == []  # a rejected key is not retried
    out, err = capsys.readouterr()
    # The SDK's debug log did run (it prints the Authorization header): the filter must have scrubbed it.
    assert "Authorization" in caplog.text or "SendRequest" in caplog.text
    for secret in (wrong, TEST_SECRET_ID):
        assert secret not in all_text(info.value)
        assert secret not in caplog.text
        assert secret not in out + err
        assert secret not in repr(client)


def test_unknown_secret_id(fake_cvm: FakeCvm, sleeps: list[float]) -> None:
    from tencentcloud.common.credential import Credential  # type: ignore[import-untyped]

    client = api(sleeps, endpoint=fake_cvm.endpoint, credential=Credential("gpuplan-FAKE-unknown-secret-id", "x" * 32))
    with pytest.raises(CredentialsError, match="SecretIdNotFound"):
        client.call("DescribeImages", {})


def test_an_api_message_echoing_the_secret_id_is_scrubbed(tencent_env: FakeCvm, sleeps: list[float]) -> None:
    tencent_env.fail_next("InvalidParameterValue.Echo", f"bad request from {TEST_SECRET_ID}")
    with pytest.raises(InputError) as info:
        api(sleeps).call("DescribeImages", {})
    assert TEST_SECRET_ID not in all_text(info.value)
    assert "bad request from ***" in str(info.value)


# --- retries ----------------------------------------------------------------------------------


def test_throttling_is_retried_with_backoff_then_succeeds(tencent_env: FakeCvm, sleeps: list[float]) -> None:
    tencent_env.throttle(2)
    response = api(sleeps).call("DescribeImages", {})
    assert response["ImageSet"]
    assert [c.outcome for c in tencent_env.calls] == ["RequestLimitExceeded", "RequestLimitExceeded", "ok"]
    assert sleeps == [0.5, 1.0]  # base 0.5 s doubling; rng pinned to the top of the jitter range


def test_throttling_gives_up_after_the_bound(tencent_env: FakeCvm, sleeps: list[float]) -> None:
    tencent_env.throttle(50, code="RequestLimitExceeded.UinLimitExceeded")
    with pytest.raises(ProviderError, match=r"failed 5 times: rate limited \(RequestLimitExceeded.UinLimitExceeded\)"):
        api(sleeps).call("DescribeImages", {})
    assert len(tencent_env.calls) == 5
    assert len(sleeps) == 4 and sum(sleeps) <= RetryPolicy().budget_s


def test_total_sleep_is_capped(tencent_env: FakeCvm, sleeps: list[float]) -> None:
    tencent_env.throttle(50)
    policy = RetryPolicy(attempts=20, base_s=1.0, cap_s=4.0, budget_s=6.0)
    with pytest.raises(ProviderError):
        api(sleeps, retry=policy).call("DescribeImages", {})
    assert sum(sleeps) <= 6.0 and max(sleeps) <= 4.0
    assert len(tencent_env.calls) < 20


def test_5xx_is_retried_and_its_page_never_shown(tencent_env: FakeCvm, sleeps: list[float]) -> None:
    tencent_env.http_error(2, status=502)
    assert api(sleeps).call("DescribeImages", {})["ImageSet"]
    tencent_env.http_error(10, status=503)
    with pytest.raises(ProviderError, match="HTTP error") as info:
        api(sleeps).call("DescribeImages", {})
    assert "<html" not in str(info.value)


def test_connection_refused_is_retried_then_a_provider_error(monkeypatch: pytest.MonkeyPatch,
                                                            sleeps: list[float]) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("TENCENTCLOUD_SECRET_ID", TEST_SECRET_ID)
    monkeypatch.setenv("TENCENTCLOUD_SECRET_KEY", TEST_SECRET_KEY)
    with pytest.raises(ProviderError, match="network error") as info:
        api(sleeps, endpoint=f"http://127.0.0.1:{port}", timeout_s=1).call("DescribeImages", {})
    assert len(sleeps) == 4
    assert "failed 5 times" in str(info.value)
    # the cause in whole words, not requests' nested repr cut mid-word at 200 characters
    assert f"network error reaching 127.0.0.1:{port}: connection refused" in info.value.message
    assert "HTTPConnectionPool" not in info.value.message and "Errno" not in info.value.message


def test_an_endpoint_that_did_not_answer_is_not_asked_again_in_the_same_command(
        monkeypatch: pytest.MonkeyPatch, sleeps: list[float]) -> None:
    # `ls` and `down` make one call per launch: each would spend its own retries on a dead endpoint.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("TENCENTCLOUD_SECRET_ID", TEST_SECRET_ID)
    monkeypatch.setenv("TENCENTCLOUD_SECRET_KEY", TEST_SECRET_KEY)
    with pytest.raises(ProviderError):
        api(sleeps, endpoint=f"http://127.0.0.1:{port}", timeout_s=1).call("DescribeInstances", {})
    tried = len(sleeps)
    with pytest.raises(ProviderError) as info:  # a new client for another region, same endpoint
        CvmApi("ap-shanghai", sleep=sleeps.append, endpoint=f"http://127.0.0.1:{port}").call("DescribeInstances", {})
    assert len(sleeps) == tried  # no retry, no wait: failed at once
    assert "not tried" in info.value.message and "connection refused" in info.value.message


def test_a_5xx_page_is_an_answer_so_the_endpoint_is_asked_again(tencent_env: FakeCvm, sleeps: list[float]) -> None:
    tencent_env.http_error(5, status=503)  # every try of one call
    with pytest.raises(ProviderError, match="HTTP error"):
        api(sleeps).call("DescribeImages", {})
    assert api(sleeps).call("DescribeImages", {})["ImageSet"]  # the gateway recovered: no memo of it


def test_a_silent_endpoint_ends_the_call_at_the_deadline(tencent_env: FakeCvm, sleeps: list[float]) -> None:
    tencent_env.slow(5.0, 99)
    started = time.monotonic()
    with pytest.raises(ProviderError, match="no answer in time"):
        api(sleeps, timeout_s=0.2, retry=RetryPolicy(deadline_s=0.5)).call("DescribeImages", {})
    assert time.monotonic() - started < 2.0
    assert len(tencent_env.calls) < 5  # the deadline, not the attempt bound, ended it


def test_the_default_bounds_end_a_silent_call_within_about_a_minute() -> None:
    from providers.tencent import client

    policy = RetryPolicy()
    # the last try starts before the deadline and may wait its connect and read timeouts out
    assert policy.deadline_s + client.CONNECT_TIMEOUT_S + client.READ_TIMEOUT_S <= 90  # the SDK's default: 5 x 60 s


def test_a_cut_connection_is_retried(tencent_env: FakeCvm, sleeps: list[float]) -> None:
    tencent_env.cut_connection(1)
    assert api(sleeps).call("DescribeImages", {})["ImageSet"]
    assert [c.outcome for c in tencent_env.calls] == ["cut_connection", "ok"]


def test_a_slow_answer_times_out_and_is_retried(tencent_env: FakeCvm, sleeps: list[float]) -> None:
    tencent_env.slow(0.3, 1)
    assert api(sleeps, timeout_s=0.1).call("DescribeImages", {})["ImageSet"]
    assert len(tencent_env.calls) == 2 and len(sleeps) == 1


@pytest.mark.parametrize("content_type", ["application/json", "text/html"])
def test_non_json_is_a_provider_error_never_an_empty_success(tencent_env: FakeCvm, sleeps: list[float],
                                                              content_type: str) -> None:
    tencent_env.non_json(1, content_type=content_type)
    with pytest.raises(ProviderError, match="not the API's JSON"):
        api(sleeps).call("DescribeImages", {})
    assert len(tencent_env.calls) == 1


def test_a_cut_json_answer_is_a_provider_error(tencent_env: FakeCvm, sleeps: list[float]) -> None:
    tencent_env.cut_json(1)
    with pytest.raises(ProviderError):
        api(sleeps).call("DescribeImages", {})


def test_an_answer_without_request_id_or_with_a_loose_error_is_not_success(tencent_env: FakeCvm,
                                                                            sleeps: list[float]) -> None:
    client = api(sleeps)
    with pytest.raises(ProviderError, match="without a RequestId"):
        client._unwrap("DescribeImages", {}, {"Response": {"ImageSet": []}})
    with pytest.raises(ProviderError, match="without a Response"):
        client._unwrap("DescribeImages", {}, {"ImageSet": []})
    # An error under a content type the SDK does not parse ("application/json; charset=utf-8").
    with pytest.raises(CapacityError):
        client._unwrap("RunInstances", QUOTE, {"Response": {"Error": {"Code": "ResourcesSoldOut.AvailableZone",
                                                                       "Message": "x"}, "RequestId": "r-1"}})


# --- error mapping ----------------------------------------------------------------------------


@pytest.mark.parametrize(("code", "cls", "fragments"), [
    ("ResourcesSoldOut.SpecifiedInstanceType", CapacityError, ["GN10Xp.2XLARGE40 is sold out in ap-guangzhou-3"]),
    ("ResourceInsufficient.ZoneSoldOutForSpecifiedInstance", CapacityError, ["sold out in ap-guangzhou-3"]),
    ("LimitExceeded.SpotQuota", CapacityError, ["quota reached: SpotQuota"]),
    ("InvalidAccount.InsufficientBalance", ProviderError, ["balance is too low", "top up the account"]),
    ("InvalidParameterValue.InstanceTypeNotFound", InputError, ["the API says no", "InstanceTypeNotFound"]),
    ("InvalidParameter.Whatever", InputError, ["the API says no"]),
    ("AuthFailure.UnauthorizedOperation", CredentialsError, ["may not call cvm:InquiryPriceRunInstances"]),
    ("InternalError", ProviderError, ["InternalError: the API says no", "RequestId "]),
])
def test_error_codes_map_onto_gpuplan_errors(tencent_env: FakeCvm, sleeps: list[float], code: str,
                                             cls: type[GpuplanError], fragments: list[str]) -> None:
    tencent_env.fail_next(code, "the API says no")
    with pytest.raises(cls) as info:
        api(sleeps).call("InquiryPriceRunInstances", QUOTE)
    for fragment in fragments:
        assert fragment in str(info.value)
    assert isinstance(info.value, ApiFailure)
    assert info.value.code == code and info.value.request_id
    if isinstance(info.value, TencentCapacityError):
        assert info.value.zone == "ap-guangzhou-3"
        assert info.value.sold_out == code.startswith(("ResourcesSoldOut", "ResourceInsufficient"))


# --- endpoint and imports -----------------------------------------------------------------------


@pytest.mark.parametrize(("url", "want"), [
    ("http://127.0.0.1:8765", ("http", "127.0.0.1:8765")),
    ("https://cvm.ap-guangzhou.tencentcloudapi.com/", ("https", "cvm.ap-guangzhou.tencentcloudapi.com")),
    ("cvm.tencentcloudapi.com", ("https", "cvm.tencentcloudapi.com")),
    ("http://[::1]:9000", ("http", "[::1]:9000")),
])
def test_endpoint_urls(url: str, want: tuple[str, str]) -> None:
    assert parse_endpoint(url) == want


@pytest.mark.parametrize("url", ["ftp://host", "http://", "http://user:pw@host", "http://host:notaport"])
def test_bad_endpoint_urls_are_input_errors(url: str) -> None:
    with pytest.raises(InputError) as info:
        parse_endpoint(url)
    assert "pw" not in str(info.value)


def test_importing_the_adapter_loads_no_sdk() -> None:
    code = ("import sys, providers.tencent, providers.tencent.compute, providers.tencent.prices, "
            "providers.tencent.quote; bad = [m for m in sys.modules if m.startswith('tencentcloud')]; "
            "assert not bad, bad")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                          env={"PYTHONPATH": str(REPO), "PATH": ""})
    assert done.returncode == 0, done.stderr


def test_a_skewed_clock_is_named(sleeps: list[float], monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    from providers.testing.fake_cvm import fake_cvm_server

    with fake_cvm_server(clock=lambda: time.time() + 600) as fake:  # the server is 10 minutes ahead
        monkeypatch.setenv("TENCENTCLOUD_SECRET_ID", TEST_SECRET_ID)
        monkeypatch.setenv("TENCENTCLOUD_SECRET_KEY", TEST_SECRET_KEY)
        with pytest.raises(CredentialsError, match="SignatureExpire") as info:
            api(sleeps, endpoint=fake.endpoint).call("DescribeImages", {})
    assert "clock" in str(info.value)
