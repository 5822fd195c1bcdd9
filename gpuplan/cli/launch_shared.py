"""What the launch commands share: the ledger's clients, whose launches are yours, and how they speak.

``gpuplan.cli.launch`` (launch, quote) and ``gpuplan.cli.machines`` (ls, down, ssh, logs) both use these.
"""

# No `from __future__ import annotations`: typer evaluates option annotations at run time.

import math
import os
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import ROUND_HALF_EVEN
from typing import Annotated, Any

import typer

from pricing.errors import InputError

# Flags two commands share (launch and down; down and down --untracked), declared once so their help
# and meaning cannot drift apart.
YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")]

# The launch summaries have always shown money half-even (Python's own formatting); kept so output stays.
HALF_EVEN = ROUND_HALF_EVEN

def env_seconds(name: str = "GPUPLAN_POLL_SECONDS", default: str = "5") -> float:
    """Seconds from the environment: read before any call that can spend money, so a bad value starts nothing."""
    # Tests and slow APIs set these; 5 s between describes keeps well inside every provider's rate limit.
    text = os.environ.get(name, default)
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not 0 <= seconds <= 3600:  # also refuses nan
        raise InputError(f"{name}={text!r} is not a number of seconds from 0 to 3600",
                         f"unset it for the default {default} s")
    return seconds
def clients() -> Any:
    from providers.registry import compute_client

    cache: dict[tuple[str, str], Any] = {}

    def client_for(provider: str, region: str) -> Any:
        if (provider, region) not in cache:
            cache[(provider, region)] = compute_client(provider, region)
        return cache[(provider, region)]

    return client_for


def mine() -> set[str]:
    """Whose launches are "yours": your OS user's, and those recorded before launches had owners."""
    return {os_user(), ""}


def os_user() -> str:
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a bare container)
        return str(os.getuid()) if hasattr(os, "getuid") else ""


def say(text: str) -> None:
    from gpuplan.console import stderr
    from pricing.text import printable

    stderr().print(printable(text), highlight=False, markup=False)  # names from outside may carry escapes


def say_unrecorded(ledger: Any) -> None:
    """After `ls` or `down` on a ledger that could not be written: what was not recorded, and why that is safe."""
    if ledger.unrecorded:
        say(f"warning: {ledger.read_only}; {len(ledger.unrecorded)} change(s) not recorded (the machines' cloud "
             "tags still find them: run `gpuplan ls` once the ledger can be written)")
    elif ledger.read_only:
        say(f"warning: {ledger.read_only}; read as it is, nothing recorded")


@contextmanager
def waiting(text: str) -> Iterator[None]:
    """A wait of seconds to minutes, said: a spinner on a terminal, else the line once (a log or cron mail)."""
    from gpuplan.console import stderr

    console = stderr()
    if not console.is_terminal:
        say(text)
        yield
        return
    with console.status(text, spinner="dots"):
        yield
