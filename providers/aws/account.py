"""Which AWS account a client speaks for: what a launch records, so only that account's listing can end it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit


def account_name(ec2: Callable[[], Any], sts: Callable[[], Any]) -> str | None:
    """``endpoint/account-id``: every key of one account is that account (STS GetCallerIdentity needs no permission);
    the endpoint is "amazonaws.com" for AWS's own, else the host (a private endpoint, a moto server). None when
    STS does not answer (the caller says it cannot tell, and ends nothing on that listing's word)."""
    try:
        url = str(ec2().meta.endpoint_url)
        host = urlsplit(url).netloc or url
        where = "amazonaws.com" if host.endswith((".amazonaws.com", ".amazonaws.com.cn")) else host
        return f"{where}/{sts().get_caller_identity()['Account']}"
    except Exception:  # noqa: BLE001 - no answer is "cannot tell", which ls and down say
        return None
