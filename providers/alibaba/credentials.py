"""Alibaba Cloud credentials, found in the order of Alibaba's own default chain, without reading a secret aloud.

The order is the one ``alibabacloud-credentials`` (the official SDKs' credential package) documents for
its default provider chain, so a user whose ``aliyun`` CLI or SDK scripts work is found the same way:

1. ``ALIBABA_CLOUD_ACCESS_KEY_ID`` + ``ALIBABA_CLOUD_ACCESS_KEY_SECRET`` (+ ``ALIBABA_CLOUD_SECURITY_TOKEN``
   for an STS token); one without the other is an error naming the missing one, not a silent fall-through;
2. an OIDC role (``ALIBABA_CLOUD_ROLE_ARN``, ``ALIBABA_CLOUD_OIDC_PROVIDER_ARN``,
   ``ALIBABA_CLOUD_OIDC_TOKEN_FILE``: RRSA in Kubernetes);
3. the Alibaba Cloud CLI's ``~/.aliyun/config.json``, profile ``ALIBABA_CLOUD_PROFILE`` or its current one
   (modes AK, StsToken, RamRoleArn, EcsRamRole);
4. the RAM role of the ECS instance this runs on, named by ``ALIBABA_CLOUD_ECS_METADATA``;
5. a credentials URI, ``ALIBABA_CLOUD_CREDENTIALS_URI``.

None found is a :class:`CredentialsError` (exit 3) naming the two variables. Found secrets are added
to the process's scrubber at once; :class:`Found` describes where they came from and never holds them
in its text.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from pricing.errors import CredentialsError
from providers.session import SECRETS

KEY_ID_ENV = "ALIBABA_CLOUD_ACCESS_KEY_ID"
SECRET_ENV = "ALIBABA_CLOUD_ACCESS_KEY_SECRET"
TOKEN_ENV = "ALIBABA_CLOUD_SECURITY_TOKEN"
OIDC_ENVS = ("ALIBABA_CLOUD_ROLE_ARN", "ALIBABA_CLOUD_OIDC_PROVIDER_ARN", "ALIBABA_CLOUD_OIDC_TOKEN_FILE")
PROFILE_ENV = "ALIBABA_CLOUD_PROFILE"
ECS_ROLE_ENV = "ALIBABA_CLOUD_ECS_METADATA"
URI_ENV = "ALIBABA_CLOUD_CREDENTIALS_URI"
CLI_CONFIG = Path(".aliyun") / "config.json"
# The CLI's profile modes whose keys sit in the file, and those the SDK resolves from them (a role to assume).
KEY_MODES = {"AK": ("access_key_id", "access_key_secret"),
             "StsToken": ("access_key_id", "access_key_secret", "sts_token"),
             "RamRoleArn": ("access_key_id", "access_key_secret"), "EcsRamRole": ()}


@dataclass(frozen=True)
class Found:
    """Where the credentials are (said with a launch), and the key pair where it is a plain one."""

    source: str  # e.g. "environment (ALIBABA_CLOUD_ACCESS_KEY_ID)", "~/.aliyun/config.json profile default (AK)"
    access_key_id: str | None = field(default=None, repr=False)
    access_key_secret: str | None = field(default=None, repr=False)
    security_token: str | None = field(default=None, repr=False)
    role: str | None = None  # a role the SDK assumes or reads (RamRoleArn, EcsRamRole, OIDC)


def _env(name: str) -> str:
    return os.environ.get(name, "").strip()


def find(home: Path | None = None) -> Found:
    """The first credentials of the chain; a CredentialsError naming the variables when there are none."""
    key_id, secret = _env(KEY_ID_ENV), _env(SECRET_ENV)
    if key_id or secret:
        if not (key_id and secret):
            missing = SECRET_ENV if key_id else KEY_ID_ENV
            raise CredentialsError(f"{missing} is not set, but {KEY_ID_ENV if key_id else SECRET_ENV} is",
                                   f"set both {KEY_ID_ENV} and {SECRET_ENV} (an AccessKey pair of a RAM user)")
        token = _env(TOKEN_ENV) or None
        SECRETS.remember(secret, token)
        return Found(f"environment ({KEY_ID_ENV})", key_id, secret, token)
    if all(_env(n) for n in OIDC_ENVS):
        return Found(f"OIDC role ({OIDC_ENVS[0]})", role=_env(OIDC_ENVS[0]))
    if (profile := _profile(home or Path.home())) is not None:
        return profile
    if role := _env(ECS_ROLE_ENV):
        return Found(f"this ECS instance's RAM role ({ECS_ROLE_ENV}={role})", role=role)
    if _env(URI_ENV):
        return Found(f"credentials URI ({URI_ENV})")
    raise CredentialsError(
        "no Alibaba Cloud credentials found",
        f"set {KEY_ID_ENV} and {SECRET_ENV} (an AccessKey pair of a RAM user that may use ECS), or run "
        "`aliyun configure` (it writes ~/.aliyun/config.json)")


def _profile(home: Path) -> Found | None:
    """The CLI config's chosen profile, where it holds usable credentials; a broken file is said, not skipped."""
    path = home / CLI_CONFIG
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    try:
        config = json.loads(text)
        profiles = {p["name"]: p for p in config.get("profiles") or [] if isinstance(p, dict) and p.get("name")}
    except (ValueError, AttributeError, KeyError, TypeError):
        raise CredentialsError(f"~/{CLI_CONFIG} is not the Alibaba Cloud CLI's JSON config",
                               f"run `aliyun configure` again, or set {KEY_ID_ENV} and {SECRET_ENV}") from None
    name = _env(PROFILE_ENV) or str(config.get("current") or "default")
    chosen = profiles.get(name)
    if chosen is None:
        if _env(PROFILE_ENV):
            raise CredentialsError(f"{PROFILE_ENV}={name}: no such profile in ~/{CLI_CONFIG}",
                                   f"its profiles: {', '.join(sorted(profiles)) or 'none'}")
        return None
    mode = str(chosen.get("mode") or "AK")
    needs = KEY_MODES.get(mode)
    if needs is None:
        raise CredentialsError(f"profile {name} of ~/{CLI_CONFIG} uses mode {mode}, which gpuplan does not read",
                               f"use an AK, StsToken, RamRoleArn or EcsRamRole profile, or set {KEY_ID_ENV} and "
                               f"{SECRET_ENV}")
    values = {k: str(chosen.get(k) or "").strip() for k in needs}
    if not all(values.values()):
        empty = ", ".join(k for k, v in values.items() if not v)
        raise CredentialsError(f"profile {name} of ~/{CLI_CONFIG} ({mode}) has no {empty}",
                               f"run `aliyun configure --profile {name}`")
    SECRETS.remember(values.get("access_key_secret"), values.get("sts_token"))
    role = str(chosen.get("ram_role_arn") or chosen.get("ram_role_name") or "") or None
    return Found(f"~/{CLI_CONFIG} profile {name} ({mode})", values.get("access_key_id"),
                 values.get("access_key_secret"), values.get("sts_token"), role)
