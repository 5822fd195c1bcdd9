"""Logging in to launched machines the same way on every cloud: the SSH public key, and the group that lets SSH in.

The key pair is imported once per cloud account and region under a name made from the key's
fingerprint (``gpuplan_`` + 16 hex digits of its SHA-256: Tencent takes names of at most 25
letters, digits and underscores), so a later launch finds it by name and reuses it. Only a
public key is ever read: a private key given by mistake is refused, never sent anywhere.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import shlex
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from pricing.errors import InputError

# OpenSSH public key types a cloud's ImportKeyPair takes (Tencent and EC2 both take these three families).
KEY_TYPES = ("ssh-ed25519", "ssh-rsa", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521")
MAX_KEY_BYTES = 16 * 1024  # an 8192-bit RSA public key is about 1.4 KB
# Both clouds' default images (Tencent's public Ubuntu, AWS's Deep Learning AMI on Ubuntu) log in as ubuntu.
LOGIN_USER = "ubuntu"


def ssh_command(address: str, identity: Path | None = None, remote: Sequence[str] = (), *,
                batch: bool = False) -> list[str]:
    """The ssh line to a launched machine: ``gpuplan ssh`` and ``logs`` run it, a launch hands out ranks with it.

    ``batch``: for a program, not a person: no prompt (a missing key fails), a new host key accepted, a
    changed one refused, 10 s to connect (a person gets 15 s). ssh hands ``remote`` to a shell, so each word is quoted.
    """
    # a person waits at most 15 s for a machine that does not answer (a closed port, a wrong address), not ssh's
    # default of the system's TCP timeout (over 2 minutes on Linux)
    options = (["-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=accept-new", "-o", "ConnectTimeout=10"] if batch
               else ["-o", "ConnectTimeout=15"])
    return ["ssh", *options, *(["-i", str(identity)] if identity is not None else []),
            f"{LOGIN_USER}@{address}", *([shlex.join(remote)] if remote else [])]


# The security group every cloud adapter makes once (per region or VPC) and every gpuplan launch there joins,
# so the ssh line it prints can connect: what it lets in, said the same way by each.
SSH_GROUP = "gpuplan-ssh"


def ssh_group(sources: tuple[str, ...] = ()) -> str:
    """The group's name: one per set of SSH sources (``--ssh-from``), found again by that name."""
    if not sources:
        return SSH_GROUP
    return f"{SSH_GROUP}-{hashlib.sha256(','.join(sorted(sources)).encode()).hexdigest()[:10]}"


def ssh_group_rules(sources: tuple[str, ...] = ()) -> str:
    # what the group admits, nothing more: whether logins take a key or a password is the launch's (--ssh-key)
    return f"SSH (22) in from {', '.join(sources) or 'anywhere'}; all ports between its machines"


def parse_ssh_from(text: str) -> tuple[str, ...]:
    """``--ssh-from``: comma-separated addresses or CIDR blocks, normalized (an address is its /32 or /128)."""
    import ipaddress

    out: list[str] = []
    for part in (p.strip() for p in text.split(",")):
        try:
            net = ipaddress.ip_network(part, strict=False)
        except ValueError:
            raise InputError(f"--ssh-from {part!r} is not an IP address or CIDR block",
                             "e.g. --ssh-from 203.0.113.7 or 203.0.113.0/24 (your address: curl https://checkip.amazonaws.com)"
                             ) from None
        if net.prefixlen == 0:
            raise InputError(f"--ssh-from {part} is everywhere, which is the default", "leave --ssh-from out")
        if str(net) not in out:
            out.append(str(net))
    return tuple(sorted(out))


class SshKey(BaseModel):
    """A public key as a launch sends it: the OpenSSH line, its fingerprint, the key pair name and where it came \
from."""

    model_config = ConfigDict(frozen=True)

    public_key: str  # "ssh-ed25519 AAAA..." (type and key; the comment dropped: it may name a user or host)
    fingerprint: str  # "SHA256:..." as ssh-keygen -l prints it
    name: str
    path: str


def read_public_key(path: Path) -> SshKey:
    """The public key in ``path``, checked; InputError saying what is wrong otherwise."""
    try:
        raw = path.read_bytes()[: MAX_KEY_BYTES + 1]
    except FileNotFoundError:
        raise InputError(f"--ssh-key {path}: no such file", "give an OpenSSH public key, e.g. ~/.ssh/id_ed25519.pub"
                         " (ssh-keygen -t ed25519 makes one)") from None
    except OSError as exc:
        raise InputError(f"--ssh-key {path}: cannot read it ({exc.strerror or exc})") from None
    text = raw.decode("utf-8", errors="replace")
    if "PRIVATE KEY" in text:
        raise InputError(f"--ssh-key {path} is a private key: it never leaves this machine",
                         f"give the public half, {path}.pub")
    if len(raw) > MAX_KEY_BYTES:
        raise InputError(f"--ssh-key {path} is not an SSH public key (over {MAX_KEY_BYTES} bytes)")
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]
    parts = lines[0].split() if len(lines) == 1 else []
    if len(parts) < 2 or parts[0] not in KEY_TYPES:
        raise InputError(f"--ssh-key {path} is not one OpenSSH public key line",
                         f"expected '<type> <base64> [comment]' with type one of {', '.join(KEY_TYPES)}")
    kind, body = parts[0], parts[1]
    try:
        blob = base64.b64decode(body, validate=True)
    except (binascii.Error, ValueError):
        raise InputError(f"--ssh-key {path}: the key is not base64") from None
    # the blob starts with the key type as a length-prefixed string: a key of one type pasted under another is wrong
    if blob[4:4 + len(kind)] != kind.encode():
        raise InputError(f"--ssh-key {path}: the key does not match its type {kind}")
    digest = hashlib.sha256(blob).digest()
    fingerprint = "SHA256:" + base64.b64encode(digest).decode().rstrip("=")
    return SshKey(public_key=f"{kind} {body}", fingerprint=fingerprint, name="gpuplan_" + digest.hex()[:16],
                  path=str(path))


def default_key_path(home: Path) -> Path | None:
    """The user's usual public key, as ssh-keygen names it: ed25519 first, then RSA; None without either."""
    for name in ("id_ed25519.pub", "id_rsa.pub"):
        candidate = home / ".ssh" / name
        if candidate.is_file():
            return candidate
    return None


def private_half(public: str | Path) -> Path | None:
    """The private key ssh-keygen writes beside a public one (id_ed25519 for id_ed25519.pub); None for a public key
    not named ``*.pub``, whose private half has no name to guess."""
    path = Path(public)
    return path.with_suffix("") if path.suffix == ".pub" else None
