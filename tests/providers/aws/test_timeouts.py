"""An AWS endpoint that accepts and never answers ends the command in bounded time, as one provider error."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from pricing.errors import ProviderError


@pytest.fixture
def silent_endpoint() -> Iterator[str]:
    """A TCP server on 127.0.0.1 that accepts connections and never sends a byte."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    t.join()
    for c in held:
        c.close()
    server.close()


def test_a_silent_endpoint_is_a_provider_error_after_the_read_timeout(silent_endpoint: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from providers.aws import session

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_ENDPOINT_URL", silent_endpoint)
    monkeypatch.setattr(session, "READ_TIMEOUT_S", 0.5)
    client = session.make_client("ec2", region="us-east-1", max_attempts=1)
    started = time.monotonic()
    with pytest.raises(ProviderError) as caught, session.aws_errors():
        client.describe_instances()
    elapsed = time.monotonic() - started
    assert elapsed < 10  # two tries of 0.5 s and a back-off, not botocore's 6 x 60 s
    assert "timeout" in caught.value.message.lower() and "Traceback" not in caught.value.message


def test_the_default_bounds_end_a_silent_call_within_two_minutes() -> None:
    from providers.aws import session

    cfg = session.botocore_config()
    tries = 1 + session.DEFAULT_MAX_ATTEMPTS
    assert tries * (cfg.connect_timeout + cfg.read_timeout) <= 180  # botocore's own defaults allow 6 x 120 s


def test_a_silent_endpoint_is_not_asked_again_in_the_same_command(silent_endpoint: str,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # `ls` and `down` describe each launch: each would wait out its own timeouts and retries.
    from providers.aws import session

    monkeypatch.setenv("AWS_ENDPOINT_URL", silent_endpoint)
    monkeypatch.setattr(session, "READ_TIMEOUT_S", 0.3)
    with pytest.raises(ProviderError), session.aws_errors():
        session.make_client("ec2", region="us-east-1", max_attempts=0).describe_instances()
    other = session.make_client("ec2", region="eu-west-1", max_attempts=0)
    started = time.monotonic()
    with pytest.raises(ProviderError) as caught, session.aws_errors():
        other.describe_instances()
    assert time.monotonic() - started < 0.3  # refused before it was sent
    assert "not tried" in caught.value.message and "DescribeInstances" in caught.value.message
    assert "127.0.0.1" in caught.value.message
