"""Text from outside (a cloud's API, an error it returned) made safe to print on a terminal."""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, and C1 controls (0x9b is a one-byte CSI): a hostile or
# intercepted endpoint could otherwise move the cursor, retitle the terminal or hide text in lines
# users copy.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` with every terminal control character removed."""
    return _CONTROL.sub("", text)


# user:password@ in a URL (AWS_ENDPOINT_URL=http://user:pass@proxy/ is echoed back in SDK errors); greedy to the last
# @ before the host, so an unencoded @ in the password is not left half shown
_URL_CREDENTIALS = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://)[^/\s\"'<>]+@")
# A secret as a query parameter (postgresql://db/x?user=u&password=p) or a libpq key=value (password=p sslmode=...)
_SECRET_PARAMS = re.compile(r"(?i)((?:^|[?&;\s])(?:password|passwd|pwd|sslpassword|secret|token|api[_-]?key)\s*=\s*)"
                            r"(?:'(?:[^'\\]|\\.)*'|[^&;\s\"'<>]+?(?=[&;\s\"'<>]|[:,.]\s|[:,.]?$))")


def without_url_credentials(text: str, *secrets: str) -> str:
    """``text`` with the credentials of any URL in it (user info, and query or key=value passwords) replaced by
    ``***``, and every one of ``secrets`` (a password a driver may quote alone, percent-decoded or not) too."""
    for secret in sorted({s for s in secrets if len(s) >= 3}, key=len, reverse=True):
        text = text.replace(secret, "***")
    return _SECRET_PARAMS.sub(r"\1***", _URL_CREDENTIALS.sub(r"\1***@", text))


def url_secrets(url: str) -> tuple[str, ...]:
    """The passwords in a URL (user info and query), as written and percent-decoded: what to scrub from a driver's
    messages about it."""
    from urllib.parse import parse_qsl, unquote, urlsplit

    try:
        parts = urlsplit(url)
        found = [parts.password or ""] if "@" in parts.netloc else []
        found += [v for k, v in parse_qsl(parts.query, keep_blank_values=True)
                  if k.lower() in ("password", "passwd", "pwd", "sslpassword")]
    except ValueError:
        found = []
    raw = re.findall(r"(?i)[?&](?:password|passwd|pwd|sslpassword)=([^&#]*)", url)
    userinfo = url.partition("://")[2].rpartition("@")[0].partition(":")[2] if "@" in url else ""
    return tuple({x for v in [*found, *raw, userinfo] if v for x in (v, unquote(v))})
