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
