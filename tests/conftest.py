"""Shared fixtures: a clean environment, an isolated GPUPLAN_HOME and no network.

Every test runs with the cloud credential variables replaced by obvious fakes, so a
developer's real keys can never reach a test, and with any socket connection outside
the loopback range refused.
"""

from __future__ import annotations

import gc
import os
import socket
import sys
from collections.abc import Callable, Iterator
from typing import Any
from pathlib import Path

import pytest
from hypothesis import settings

# CI shares 2 cores with nothing guaranteed: judge properties, not per-example timing.
settings.register_profile("gpuplan", deadline=None)
settings.load_profile("gpuplan")

_LOOPBACK = ("127.", "localhost", "::1")


@pytest.fixture(autouse=True)
def clean_environ(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    for name in list(os.environ):
        if name.startswith(("AWS_", "TENCENTCLOUD_", "GPUPLAN_")) or name.upper() in ("HTTP_PROXY", "HTTPS_PROXY"):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("GPUPLAN_HOME", str(tmp_path / "gpuplan-home"))
    # the user's own ~/.ssh (a default --ssh-key), ~/.aws and ~/.tencentcloud must not reach a test
    monkeypatch.setenv("HOME", str(tmp_path / "user-home"))
    monkeypatch.delenv("COLUMNS", raising=False)
    yield tmp_path


@pytest.fixture(autouse=True)
def unfreeze_gc() -> Iterator[None]:
    # A CLI command freezes what it built (pricing.catalog.paused_gc): it is about to exit. Run in-process
    # here, hand those objects back to the collector so the test session stays clean.
    yield
    gc.unfreeze()


@pytest.fixture(autouse=True)
def forget_derived_folder() -> Iterator[None]:
    # A CLI command names the folder derived figures are kept in (its GPUPLAN_HOME); a test is one command.
    yield
    if (derived := sys.modules.get("pricing.derived")) is not None:
        derived.keep_in(None)


@pytest.fixture(autouse=True)
def stop_sandboxed_machines() -> Iterator[None]:
    # What a sandboxed boot left running (tests.fakes.machine) ends with the test that started it.
    yield
    if (machine := sys.modules.get("tests.fakes.machine")) is not None:
        machine.stop_all()


@pytest.fixture(autouse=True)
def forget_unreachable() -> Iterator[None]:
    # A CLI command remembers endpoints that did not answer for the rest of its process; a test is one command.
    from providers.session import UNREACHABLE

    UNREACHABLE.clear()
    yield
    UNREACHABLE.clear()


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    real_connect = socket.socket.connect

    def guarded(self: socket.socket, address: object) -> object:
        host = address[0] if isinstance(address, tuple) else str(address)
        if self.family != socket.AF_UNIX and not str(host).startswith(_LOOPBACK):
            raise RuntimeError(f"test tried to reach {address}: tests stay offline")
        return real_connect(self, address)  # type: ignore[arg-type]

    monkeypatch.setattr(socket.socket, "connect", guarded)


CliResult = tuple[int, str, str]


@pytest.fixture
def gpuplan(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Callable[..., CliResult]:
    """Run the real console entry point in-process: (exit code, stdout, stderr)."""
    from gpuplan import cli

    def run(*args: str) -> CliResult:
        monkeypatch.setattr(sys, "argv", ["gpuplan", *args])
        code = 0
        try:
            cli.main()
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.fixture(scope="session")
def postgres() -> Iterator[Any]:
    """A throwaway PostgreSQL server for the session (tests.fakes.postgres); skipped where none is installed."""
    from tests.fakes.postgres import bin_dir, postgres_server

    if bin_dir() is None:
        pytest.skip("PostgreSQL is not installed here (apt-get install postgresql): the shared-ledger tests need it")
    with postgres_server() as server:
        yield server


@pytest.fixture
def pg_url(postgres: Any, request: pytest.FixtureRequest) -> str:
    """A new, empty database on the session's server, for one test."""
    import re

    name = "t_" + re.sub(r"[^a-z0-9]", "_", request.node.name.lower())[:40] + "_" + os.urandom(3).hex()
    return str(postgres.new_database(name))
