"""The pattern every cloud's session follows: code tables, bounded retries, secrets kept out of texts and logs."""

from __future__ import annotations

import logging

import pytest

from providers.session import (
    REDACTED,
    ErrorCodes,
    Failure,
    RetriesExhausted,
    RetryPolicy,
    SecretScrubber,
    Transient,
    network_cause,
    scrub,
    with_retries,
)

CODES = ErrorCodes.of(exact={Failure.PERMISSION: ["AuthFailure.UnauthorizedOperation"]},
                      prefixes={Failure.CREDENTIALS: ["AuthFailure"], Failure.THROTTLED: ["RequestLimitExceeded"]})


def test_an_exact_code_wins_over_its_family_prefix() -> None:
    assert CODES.kind_of("AuthFailure.UnauthorizedOperation") is Failure.PERMISSION
    assert CODES.kind_of("AuthFailure.SignatureFailure") is Failure.CREDENTIALS
    assert CODES.kind_of("RequestLimitExceeded.UinLimitExceeded") is Failure.THROTTLED
    assert CODES.kind_of("SomethingElse") is None and CODES.kind_of("") is None


def test_only_throttling_and_network_faults_are_worth_retrying() -> None:
    assert {f for f in Failure if f.transient} == {Failure.THROTTLED, Failure.NETWORK}


def _flaky(failures: int, calls: list[int]):  # type: ignore[no-untyped-def]
    def attempt() -> str:
        calls.append(1)
        if len(calls) <= failures:
            raise Transient(f"busy #{len(calls)}")
        return "done"
    return attempt


def test_transient_failures_are_retried_with_doubling_waits() -> None:
    calls: list[int] = []
    sleeps: list[float] = []
    heard: list[tuple[int, str, float]] = []
    out = with_retries(_flaky(2, calls), RetryPolicy(), sleep=sleeps.append, rng=lambda: 1.0,
                       on_retry=lambda n, why, wait: heard.append((n, why, wait)))
    assert out == "done" and len(calls) == 3
    assert sleeps == [0.5, 1.0]
    assert heard == [(1, "busy #1", 0.5), (2, "busy #2", 1.0)]


def test_retries_stop_at_the_attempt_bound_and_say_why() -> None:
    calls: list[int] = []
    sleeps: list[float] = []
    with pytest.raises(RetriesExhausted) as info:
        with_retries(_flaky(99, calls), RetryPolicy(attempts=3), sleep=sleeps.append, rng=lambda: 1.0)
    assert info.value.attempts == 3 and info.value.last == "busy #3"
    assert len(calls) == 3 and len(sleeps) == 2  # no wait after the last try


def test_the_wait_budget_ends_retries_before_the_attempt_bound() -> None:
    calls: list[int] = []
    sleeps: list[float] = []
    policy = RetryPolicy(attempts=20, base_s=1.0, cap_s=4.0, budget_s=6.0)
    with pytest.raises(RetriesExhausted):
        with_retries(_flaky(99, calls), policy, sleep=sleeps.append, rng=lambda: 1.0)
    assert sum(sleeps) <= 6.0 and max(sleeps) <= 4.0 and len(calls) < 20


def test_any_other_error_ends_at_once() -> None:
    sleeps: list[float] = []

    def refused() -> None:
        raise ValueError("bad parameter")

    with pytest.raises(ValueError, match="bad parameter"):
        with_retries(refused, RetryPolicy(), sleep=sleeps.append)
    assert sleeps == []


def test_scrub_leaves_short_strings_alone() -> None:
    assert scrub("key abc and SECRETVALUE", ["abc", "SECRETVALUE"]) == f"key abc and {REDACTED}"


def test_a_guarded_logger_never_emits_a_remembered_secret(caplog: pytest.LogCaptureFixture) -> None:
    secrets = SecretScrubber()
    secrets.remember("s3cr3t-VALUE-123", None, "")
    secrets.guard("gpuplan.test.sdk")
    secrets.guard("gpuplan.test.sdk")  # twice is once
    logger = logging.getLogger("gpuplan.test.sdk")
    assert logger.filters.count(secrets) == 1
    with caplog.at_level(logging.DEBUG, logger="gpuplan.test.sdk"):
        logger.debug("Authorization: %s", "s3cr3t-VALUE-123")
    assert "s3cr3t-VALUE-123" not in caplog.text and f"Authorization: {REDACTED}" in caplog.text
    assert secrets.scrub("key s3cr3t-VALUE-123") == f"key {REDACTED}"
    logger.removeFilter(secrets)


def test_the_deadline_ends_retries_of_slow_tries_before_the_attempt_bound() -> None:
    # Each try waits out a 20 s read timeout: five of them would hold one call for 100 s and more.
    now = [0.0]
    calls: list[int] = []

    def slow() -> str:
        calls.append(1)
        now[0] += 20.0
        raise Transient("network error: no answer in time")

    def sleep(s: float) -> None:
        now[0] += s

    with pytest.raises(RetriesExhausted):
        with_retries(slow, RetryPolicy(deadline_s=60.0), sleep=sleep, rng=lambda: 1.0, clock=lambda: now[0])
    assert len(calls) == 3 and now[0] <= 60.0 + 20.0  # no try starts after the deadline


def _refused_text() -> str:
    import socket

    import requests

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    try:
        requests.post(f"http://127.0.0.1:{port}/", timeout=2)
    except requests.RequestException as exc:
        return str(exc)
    raise AssertionError("nothing should listen on that port")


def test_a_refused_connection_is_named_in_whole_words() -> None:
    text = _refused_text()
    assert len(text) > 150  # requests' own text is a long nested repr, which a cut ended mid-word
    assert network_cause(text) == "connection refused (nothing listens there)"


@pytest.mark.parametrize(("text", "cause"), [
    ("HTTPConnectionPool(host='h', port=1): Read timed out. (read timeout=20)", "no answer in time (read timed out)"),
    ("HTTPSConnectionPool(host='h', port=443): Max retries exceeded (Caused by ConnectTimeoutError(...))",
     "could not connect in time"),
    ("Failed to resolve 'cvm.example.invalid' ([Errno -2] Name or service not known)", "host name not found"),
    ("('Connection aborted.', RemoteDisconnected('Remote end closed connection without response'))",
     "connection dropped mid-answer"),
])
def test_network_causes_in_plain_words(text: str, cause: str) -> None:
    assert network_cause(text) == cause


def test_an_unknown_cause_is_shortened_at_a_word_boundary() -> None:
    text = "strange failure " + " ".join(f"word{i}" for i in range(60))
    short = network_cause(text, limit=50)
    assert short.endswith(" ...") and len(short) <= 54
    assert all(w in text.split() for w in short.removesuffix(" ...").split())  # whole words only
