"""The fake ECS is as strict as Alibaba about signatures: a request signed with the V3 algorithm is accepted, and a
changed parameter, a replayed nonce, a stale date or an unsigned x-acs header is refused. (The signing helper is the
fake's own; every other Alibaba test has the official SDK sign, which checks the helper against the SDK.)"""

from __future__ import annotations

import hashlib
import json
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from urllib.parse import urlencode

import pytest

from providers.testing.fake_ecs import (
    TEST_KEY_ID,
    TEST_KEY_SECRET,
    FakeEcs,
    fake_ecs_server,
    signature,
)


@pytest.fixture
def fake() -> Iterator[FakeEcs]:
    with fake_ecs_server() as f:
        yield f


def send(fake: FakeEcs, query: dict[str, str], *, sign_query: dict[str, str] | None = None,
         nonce: str | None = None, date: datetime | None = None,
         signed: tuple[str, ...] = ("host", "x-acs-action", "x-acs-content-sha256", "x-acs-date",
                                    "x-acs-signature-nonce", "x-acs-version")) -> tuple[int, dict[str, str]]:
    host = fake.endpoint.removeprefix("http://")
    headers = {"host": host, "x-acs-action": "DescribeInstances", "x-acs-version": "2014-05-26",
               "x-acs-date": (date or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ"),
               "x-acs-signature-nonce": nonce or uuid.uuid4().hex,
               "x-acs-content-sha256": hashlib.sha256(b"").hexdigest()}
    sig = signature(TEST_KEY_SECRET, "POST", "/", sorted((sign_query or query).items()), headers, list(signed),
                    headers["x-acs-content-sha256"])
    headers["Authorization"] = f"ACS3-HMAC-SHA256 Credential={TEST_KEY_ID},SignedHeaders={';'.join(signed)}," \
                               f"Signature={sig}"
    req = urllib.request.Request(f"{fake.endpoint}/?{urlencode(query)}", data=b"", method="POST", headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_a_hand_signed_request_is_accepted_and_any_tampering_refused(fake: FakeEcs) -> None:
    query = {"RegionId": "cn-shanghai", "Tag.1.Key": "gpuplan:id", "Tag.1.Value": "a b~c"}
    status, body = send(fake, query, nonce="n-1")
    assert status == 200 and body["TotalCount"] == 0
    # the same signature over other parameters
    status, body = send(fake, {**query, "Tag.1.Value": "other"}, sign_query=query)
    assert (status, body["Code"]) == (400, "SignatureDoesNotMatch")
    status, body = send(fake, query, nonce="n-1")  # a replay
    assert body["Code"] == "SignatureNonceUsed"
    status, body = send(fake, query, date=datetime.now(UTC) - timedelta(minutes=20))
    assert body["Code"] == "InvalidTimeStamp.Expired"
    status, body = send(fake, query, signed=("host", "x-acs-action", "x-acs-date"))  # x-acs-version etc. unsigned
    assert body["Code"] == "IncompleteSignature"
    assert fake.calls_of("DescribeInstances") and len(fake.calls) == 1  # only the first got through
