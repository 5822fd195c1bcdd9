"""Sessions, bounded retries, credentials and the ClientError -> gpuplan error map."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from botocore.exceptions import ClientError

from pricing.errors import CapacityError, CredentialsError, InputError, ProviderError
from providers.aws.compute import AwsCompute
from providers.aws.session import make_client, map_client_error, quota_for


def _error(code: str, message: str = "msg", operation: str = "RunInstances") -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": message}}, operation)


def test_importing_the_package_loads_no_sdk() -> None:
    code = ("import sys; import providers.aws, providers.aws.prices, providers.aws.compute; "
            "assert 'boto3' not in sys.modules and 'botocore' not in sys.modules, 'SDK imported'")
    root = Path(__file__).resolve().parents[3]
    subprocess.run([sys.executable, "-c", code], check=True, cwd=root, env={"PYTHONPATH": str(root)})


@pytest.mark.parametrize(("instance_type", "spot", "quota"), [
    ("p4d.24xlarge", False, '"Running On-Demand P instances" (L-417A185B)'),
    ("p5.48xlarge", True, '"All P Spot Instance Requests" (L-7212CCBC)'),
    ("g5.xlarge", False, '"Running On-Demand G and VT instances" (L-DB2E81BA)'),
    ("g6e.xlarge", True, '"All G and VT Spot Instance Requests" (L-3819A6DF)'),
    ("dl1.24xlarge", False, '"Running On-Demand DL instances"'),
    ("m5.large", False, '"Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances"'),
])
def test_quota_names(instance_type: str, spot: bool, quota: str) -> None:
    assert quota_for(instance_type, spot=spot) == quota


def test_vcpu_limit_names_the_quota_to_raise() -> None:
    err = map_client_error(_error("VcpuLimitExceeded", "You have requested more vCPU capacity than your current "
                                  "vCPU limit of 0 allows"), instance_type="p3.2xlarge", zone="us-east-1a")
    assert isinstance(err, CapacityError) and err.exit_code == 4
    assert "Running On-Demand P instances" in str(err) and "Service Quotas" in str(err)


def test_spot_count_limit_names_the_spot_quota_even_unasked() -> None:
    err = map_client_error(_error("MaxSpotInstanceCountExceeded"), instance_type="g5.xlarge")
    assert isinstance(err, CapacityError)
    assert "All G and VT Spot Instance Requests" in str(err)


def test_no_capacity_names_the_zone_and_the_alternatives() -> None:
    err = map_client_error(_error("InsufficientInstanceCapacity", "We currently do not have sufficient capacity"),
                           zone="us-east-1a", instance_type="p4d.24xlarge", other_zones=("us-east-1b", "us-east-1c"))
    assert isinstance(err, CapacityError)
    assert "us-east-1a" in err.message and "us-east-1b, us-east-1c" in str(err.hint)


def test_permission_refusal_names_the_iam_action_and_drops_the_encoded_blob() -> None:
    err = map_client_error(_error("UnauthorizedOperation", "You are not authorized to perform this operation. "
                                  "Encoded authorization failure message: AAAABBBBCCCC"))
    assert isinstance(err, CredentialsError) and err.exit_code == 3
    assert "ec2:RunInstances" in str(err) and "AAAABBBB" not in str(err)
    pricing = map_client_error(_error("AccessDeniedException", operation="GetProducts"), service="pricing")
    assert "pricing:GetProducts" in str(pricing)


def test_bad_keys_and_bad_images() -> None:
    assert isinstance(map_client_error(_error("AuthFailure")), CredentialsError)
    err = map_client_error(_error("InvalidAMIID.NotFound", "The image id '[ami-1]' does not exist"))
    assert isinstance(err, InputError) and "--image" in str(err)


def test_anything_else_is_a_provider_error_with_code_and_message() -> None:
    err = map_client_error(_error("InvalidParameterCombination", "Network interfaces and an instance-level "
                                  "subnet ID may not be specified"), zone="us-east-1b")
    assert isinstance(err, ProviderError) and err.exit_code == 6
    assert "InvalidParameterCombination" in str(err) and "Network interfaces" in str(err)


def test_missing_credentials_say_which_variables(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")  # no instance-role lookup either
    with pytest.raises(CredentialsError) as info:
        AwsCompute("us-east-1").describe(["i-0123456789abcdef0"])
    text = str(info.value)
    assert info.value.exit_code == 3
    assert "AWS_ACCESS_KEY_ID" in text and "AWS_SECRET_ACCESS_KEY" in text and "AWS_PROFILE=NAME" in text


def test_unknown_profile_is_a_credentials_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none-credentials"))
    with pytest.raises(CredentialsError, match="no-such-profile"):
        AwsCompute("us-east-1", profile="no-such-profile").describe(["i-0123456789abcdef0"])


def test_aws_endpoint_url_is_honoured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:5999")
    assert make_client("ec2", region="us-east-1").meta.endpoint_url == "http://127.0.0.1:5999"
    assert make_client("pricing", region="us-east-1").meta.endpoint_url == "http://127.0.0.1:5999"


def test_throttling_is_retried_a_bounded_number_of_times(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("botocore.endpoint.time.sleep", lambda seconds: None)
    client = make_client("ec2", region="us-east-1", session=boto3.Session(), max_attempts=3)
    calls: list[int] = []
    body = (b'<?xml version="1.0" encoding="UTF-8"?><Response><Errors><Error><Code>RequestLimitExceeded</Code>'
            b'<Message>Request limit exceeded.</Message></Error></Errors><RequestID>r</RequestID></Response>')

    def throttled(request: Any, **_: Any) -> AWSResponse:
        calls.append(1)
        raw = type("Raw", (), {"stream": lambda self, **kw: iter([body])})()
        return AWSResponse(request.url, 503, {}, raw)

    client.meta.events.register("before-send.ec2.DescribeInstances", throttled)
    compute = AwsCompute("us-east-1", ec2_client=client)
    with pytest.raises(ProviderError, match="throttled") as info:
        compute.describe(["i-0123456789abcdef0"])
    assert len(calls) == 4  # the first call and botocore's max_attempts=3 retries, then it stops
    assert "wait" in str(info.value.hint)


def test_the_secret_key_never_reaches_an_error_or_the_sdk_log(monkeypatch: pytest.MonkeyPatch,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    from moto import mock_aws

    secret, token = "gpuplan-FAKE-secret-access-key-for-tests", "gpuplan-FAKE-session-token-for-tests"
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "gpuplan-FAKE-access-key-id")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)
    monkeypatch.setenv("AWS_SESSION_TOKEN", token)
    make_client("ec2", region="us-east-1")  # the key is remembered once a client is made with it
    err = map_client_error(_error("SignatureDoesNotMatch", f"signature for {secret} does not match"))
    assert isinstance(err, CredentialsError) and secret not in str(err) and "***" in str(err)
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="botocore")  # another library (the export engines) may have quieted it
    with mock_aws():  # moto swaps in its own key but keeps the session token
        AwsCompute("us-east-1").describe(["i-0123456789abcdef0"])
    # botocore's debug log ran (it prints the signed request with the token header): the filter scrubbed it.
    assert "x-amz-security-token" in caplog.text
    assert token not in caplog.text and secret not in caplog.text


ERROR_PAGE = (b"<!doctype html>\n<html lang=en>\n<title>500 Internal Server Error</title>\n"
              b"<h1>Internal Server Error</h1>\n"
              b"<p>The server encountered an internal error and was unable to complete your request.</p>\n")


def _answering(client: Any, event: str, status: int, body: bytes) -> Any:
    def answer(request: Any, **_: Any) -> AWSResponse:
        raw = type("Raw", (), {"stream": lambda self, **kw: iter([body])})()
        return AWSResponse(request.url, status, {"Content-Type": "text/html"}, raw)

    client.meta.events.register(f"before-send.{event}", answer)
    return client


def _one_plain_line(err: ProviderError) -> None:
    assert err.exit_code == 6 and err.hint is None
    assert "\n" not in err.message and "<" not in err.message and len(err.message) < 400


def test_an_html_page_instead_of_xml_is_one_line_naming_the_call_and_region(monkeypatch: pytest.MonkeyPatch) -> None:
    # EC2 speaks XML: botocore cannot parse the page and raises ResponseParserError, not a ClientError.
    monkeypatch.setattr("botocore.endpoint.time.sleep", lambda seconds: None)
    client = _answering(make_client("ec2", region="eu-west-1", session=boto3.Session(), max_attempts=0),
                        "ec2.DescribeInstances", 500, ERROR_PAGE)
    with pytest.raises(ProviderError) as info:
        AwsCompute("eu-west-1", ec2_client=client).describe(["i-0123456789abcdef0"])
    _one_plain_line(info.value)
    assert "DescribeInstances" in info.value.message and "eu-west-1" in info.value.message
    assert "500 Internal Server Error" in info.value.message


def test_an_html_page_instead_of_json_is_one_line_naming_the_call_and_region(monkeypatch: pytest.MonkeyPatch) -> None:
    # The Price List API speaks JSON: botocore makes a ClientError whose message is the whole page.
    from providers.aws.session import aws_errors

    monkeypatch.setattr("botocore.endpoint.time.sleep", lambda seconds: None)
    client = _answering(make_client("pricing", region="us-east-1", session=boto3.Session(), max_attempts=0),
                        "pricing.GetProducts", 500, ERROR_PAGE)
    with pytest.raises(ProviderError) as info, aws_errors(service="pricing"):
        client.get_products(ServiceCode="AmazonEC2")
    _one_plain_line(info.value)
    assert "GetProducts" in info.value.message and "us-east-1" in info.value.message


@pytest.mark.parametrize("make", [
    lambda: __import__("botocore.exceptions").exceptions.ParamValidationError(report="Invalid type for parameter"),
    lambda: __import__("botocore.exceptions").exceptions.ReadTimeoutError(endpoint_url="http://x"),
    lambda: __import__("botocore.parsers").parsers.ResponseParserError("Unable to parse response:\nb'<html>x</html>'"),
    lambda: __import__("boto3.exceptions").exceptions.ResourceNotExistsError("ec2", "Thing", True),
    lambda: ClientError({"Error": {"Code": "NotImplemented", "Message": "<p>moto:\n not   yet</p>" + "x" * 900}},
                        "DescribePlacementGroups"),
])
def test_every_sdk_error_is_a_one_line_provider_error(make: Any) -> None:
    from providers.aws.session import aws_errors

    with pytest.raises(ProviderError) as info, aws_errors(region="ap-south-1"):
        raise make()
    _one_plain_line(info.value)
    assert "ap-south-1" in info.value.message


def test_plain_keeps_a_title_or_the_text_never_the_markup() -> None:
    from providers.aws.session import plain

    assert plain(ERROR_PAGE.decode()) == "500 Internal Server Error"
    assert plain("<html><body><p>Bad &amp; gateway</p>\n</body></html>") == "Bad & gateway"
    assert plain("Value (a) for\nparameter   x is invalid") == "Value (a) for parameter x is invalid"
    assert len(plain("y" * 5000)) == 200


def test_sdk_error_maps_only_the_sdk_s_exceptions() -> None:
    from botocore.exceptions import ParamValidationError

    from providers.aws.session import sdk_error

    err = sdk_error(ParamValidationError(report="Invalid type for parameter InstanceIds"))
    assert isinstance(err, ProviderError) and "InstanceIds" in err.message
    assert isinstance(sdk_error(_error("AuthFailure")), CredentialsError)
    assert sdk_error(ValueError("a bug")) is None
