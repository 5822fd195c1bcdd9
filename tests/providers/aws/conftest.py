"""Fixtures for the AWS adapter: a moto-backed EC2 client."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture
def moto_ec2() -> Iterator[Any]:
    import boto3
    from moto import mock_aws

    with mock_aws():
        yield boto3.client("ec2", region_name="us-east-1")
