"""The one exception tree of gpuplan.

Every error a user can cause or meet derives from :class:`GpuplanError`, carries a
message that says what to do next, and an exit code the CLI returns unchanged:

- 1 ``GpuplanError``            runtime failure (no option left, provider fault)
- 2 ``InputError``              bad input: unknown name, malformed value, bad config
- 3 ``CredentialsError``        no cloud credentials found
- 4 ``CapacityError``           capacity or quota unavailable at the provider
- 5 ``PriceMissingError``       a price the request needs is not in the catalog
- 6 ``ProviderError``           the provider's API refused or failed the request
- 7 ``BudgetError``             a launch would cost more than ``--max-cost``
- 8 ``StateError``              gpuplan's own files (the ledger) are damaged or cannot be written
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pricing.text import printable, without_url_credentials


class GpuplanError(Exception):
    """Root of every error gpuplan raises on purpose."""

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None) -> None:
        # Messages quote what clouds answered: no control character of theirs reaches a terminal, and
        # no password in a URL they echo reaches the screen or the ledger.
        message = without_url_credentials(printable(message))
        hint = None if hint is None else without_url_credentials(printable(hint))
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


def first_error(exc: Any) -> tuple[str, str]:
    """(field path, message) of a pydantic ValidationError's first error, for one-line reports."""
    e = exc.errors()[0]
    return ".".join(str(p) for p in e["loc"]), e["msg"]


class InputError(GpuplanError):
    """The user gave a value gpuplan cannot use."""

    exit_code = 2


class UnknownNameError(InputError):
    """A GPU, provider, instance or model name that is not in the catalog."""

    def __init__(self, kind: str, name: str, suggestions: Sequence[str], listing: str) -> None:
        self.kind = kind
        self.name = name
        self.suggestions = list(suggestions)
        close = f"; did you mean {', '.join(self.suggestions)}?" if self.suggestions else ""
        super().__init__(f"unknown {kind} {name!r}{close}", f"`{listing}` lists them all")


class NoOptionError(GpuplanError):
    """The constraints exclude every offer."""


class PriceMissingError(GpuplanError):
    """A price the request needs is missing from the shipped catalog."""

    exit_code = 5


class CredentialsError(GpuplanError):
    """No usable cloud credentials were found."""

    exit_code = 3


class CapacityError(GpuplanError):
    """The provider has no capacity or quota for the request."""

    exit_code = 4


class ProviderError(GpuplanError):
    """A cloud API refused or failed a request (after any bounded retries)."""

    exit_code = 6


class NotSupportedError(GpuplanError):
    """The provider has no such capability (no live prices, no launching)."""

    exit_code = 2


class BudgetError(GpuplanError):
    """A launch's projected cost exceeds the cap the user set."""

    exit_code = 7


class StateError(GpuplanError):
    """A file gpuplan keeps (the ledger) is damaged or cannot be opened; the message says how to recover."""

    exit_code = 8
