"""Whose word ends a launch: only a listing through the account that made it.

A cloud reports an instance id it does not know as gone (Tencent forgets terminated machines;
AWS answers "not found"). Asked through another account or endpoint, every machine of a launch
is unknown there, so that answer is no evidence at all: taken as one, a single `ls` with a
teammate's narrower key (or a test endpoint) marked running machines ended for good, and
nothing looked for them again. Each launch records the account it was made through
(:meth:`providers.capabilities.ComputeClient.account`); a listing through any other changes
nothing in the ledger and says so.
"""

from __future__ import annotations

from launch.ledger import LaunchRecord
from pricing.text import printable
from providers.capabilities import ComputeClient


def account_of(client: ComputeClient) -> str:
    """The account ``client`` speaks for, or "" when it cannot tell (a fault here must not stop `ls` or `down`)."""
    try:
        return printable(str(client.account() or ""))
    except Exception:  # noqa: BLE001 - unknown is an answer: the launch is then not ended on this listing's word
        return ""


def foreign(r: LaunchRecord, client: ComputeClient) -> str | None:
    """Why this listing cannot speak for launch ``r`` (another account, or one that cannot be told), or None.

    A launch recorded before accounts were (``account`` "") is judged as it always was: its machines
    are read through the credentials in effect.
    """
    if not r.account:
        return None
    here = account_of(client)
    if here == r.account:
        return None
    seen = f"this listing goes through {here}" if here else "the account of this listing cannot be told"
    return (f"launched through {r.account}, but {seen}: its machines are not visible here, so nothing was changed "
            f"(use the credentials and endpoint it was launched with to see or end it)")
