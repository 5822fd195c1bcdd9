"""Reading the SSH public key a launch logs in with: checked, named by its fingerprint, never a private key."""

from __future__ import annotations

import base64
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from pricing.errors import InputError
from providers.ssh_keys import default_key_path, read_public_key


def _string(b: bytes) -> bytes:
    return struct.pack(">I", len(b)) + b


def ed25519_line(seed: int = 7, comment: str = "me@laptop") -> str:
    blob = _string(b"ssh-ed25519") + _string(bytes([seed]) * 32)
    return f"ssh-ed25519 {base64.b64encode(blob).decode()} {comment}\n"


def test_a_public_key_is_read_without_its_comment_and_named_by_its_fingerprint(tmp_path: Path) -> None:
    path = tmp_path / "id_ed25519.pub"
    path.write_text(ed25519_line())
    key = read_public_key(path)
    assert key.public_key == ed25519_line().split(" me@")[0]  # the comment (a user and host name) stays here
    assert key.name.startswith("gpuplan_") and len(key.name) == 24  # Tencent: at most 25 letters, digits, _
    assert key.fingerprint.startswith("SHA256:")
    other = tmp_path / "other.pub"
    other.write_text(ed25519_line(seed=8))
    assert read_public_key(other).name != key.name  # another key, another key pair


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="needs OpenSSH's ssh-keygen")
def test_the_fingerprint_is_the_one_ssh_keygen_prints(tmp_path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "k")], check=True)
    shown = subprocess.run(["ssh-keygen", "-l", "-f", str(tmp_path / "k.pub")], check=True, capture_output=True,
                           text=True).stdout.split()[1]
    assert read_public_key(tmp_path / "k.pub").fingerprint == shown
    with pytest.raises(InputError, match="is a private key") as caught:
        read_public_key(tmp_path / "k")
    assert str(tmp_path / "k.pub") in (caught.value.hint or "")


@pytest.mark.parametrize(("text", "why"), [
    ("", "not one OpenSSH public key line"),
    ("hello world\n", "not one OpenSSH public key line"),
    (ed25519_line() + ed25519_line(8), "not one OpenSSH public key line"),
    ("ssh-ed25519 !!!notbase64!!!\n", "not base64"),
    (ed25519_line().replace("ssh-ed25519 ", "ssh-rsa ", 1), "does not match its type"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjE=\n-----END OPENSSH PRIVATE KEY-----\n", "private key"),
])
def test_anything_but_one_public_key_is_refused_saying_why(tmp_path: Path, text: str, why: str) -> None:
    path = tmp_path / "key.pub"
    path.write_text(text)
    with pytest.raises(InputError, match=why):
        read_public_key(path)


def test_a_missing_file_says_how_to_make_a_key(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file") as caught:
        read_public_key(tmp_path / "nope.pub")
    assert "ssh-keygen" in (caught.value.hint or "")


def test_the_default_key_is_ed25519_then_rsa(tmp_path: Path) -> None:
    assert default_key_path(tmp_path) is None
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "id_rsa.pub").write_text("x")
    assert default_key_path(tmp_path) == tmp_path / ".ssh" / "id_rsa.pub"
    (tmp_path / ".ssh" / "id_ed25519.pub").write_text("x")
    assert default_key_path(tmp_path) == tmp_path / ".ssh" / "id_ed25519.pub"


@pytest.mark.parametrize(("text", "want"), [
    ("203.0.113.7", ("203.0.113.7/32",)),
    ("203.0.113.9/24, 2001:db8::1", ("2001:db8::1/128", "203.0.113.0/24")),
    ("10.0.0.0/8,10.0.0.0/8", ("10.0.0.0/8",)),
])
def test_ssh_from_takes_addresses_and_blocks(text: str, want: tuple[str, ...]) -> None:
    from providers.ssh_keys import parse_ssh_from

    assert parse_ssh_from(text) == want


@pytest.mark.parametrize(("text", "said"), [("me", "not an IP address"), ("0.0.0.0/0", "which is the default"),
                                            ("203.0.113.7/33", "not an IP address"), ("", "not an IP address")])
def test_ssh_from_refuses_what_is_not_a_source(text: str, said: str) -> None:
    from providers.ssh_keys import parse_ssh_from

    with pytest.raises(InputError, match=said):
        parse_ssh_from(text)


def test_each_set_of_sources_has_its_own_group_name() -> None:
    from providers.ssh_keys import ssh_group

    a, b = ssh_group(("203.0.113.7/32",)), ssh_group(("198.51.100.0/24",))
    assert ssh_group() == "gpuplan-ssh" and a != b and a.startswith("gpuplan-ssh-") and len(a) <= 60
    assert ssh_group(("b/1", "a/2")) == ssh_group(("a/2", "b/1"))
