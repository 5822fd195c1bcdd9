"""The key a launch was given, kept in its ledger events, so `gpuplan ssh` and `logs` log in with it.

Only the public key's path is kept (never a key): `ssh -i` takes the private half ssh-keygen wrote beside it.
"""

from __future__ import annotations

from pathlib import Path

from launch.ledger import Ledger
from providers.ssh_keys import SshKey, private_half

EVENT = "login key: "  # the event's prefix; "none" when the launch was given no key
NONE = "none"


def record_login_key(ledger: Ledger, launch_id: str, key: SshKey | None) -> None:
    """Write which public key the launch's machines take (an absolute path: `ssh` may run from any folder)."""
    ledger.add_event(launch_id, EVENT + (str(Path(key.path).expanduser().absolute()) if key is not None else NONE))


def recorded_key(ledger: Ledger, launch_id: str) -> str | None:
    """The public key path the launch recorded, ``NONE`` for a launch given no key, None when nothing is recorded
    (a launch from before the ledger kept it)."""
    found = [e.removeprefix(EVENT) for e in ledger.events(launch_id) if e.startswith(EVENT)]
    return found[-1] if found else None


def identity_for(launch_id: str, recorded: str | None) -> tuple[Path | None, str | None]:
    """The private key ssh should offer for the launch, and a line to say when there is none to offer."""
    if recorded is None:
        return None, None
    if recorded == NONE:
        return None, (f"launch {launch_id} was given no SSH key (--no-ssh-key): ssh offers your default keys; "
                      "-i PATH picks one")
    private = private_half(recorded)
    if private is None or not private.is_file():
        where = f"{private} is not there" if private is not None else "its private half has no known name"
        return None, (f"launch {launch_id} was given the key {recorded}, but {where}: ssh offers your default keys; "
                      "-i PATH names the private key")
    return private, None
