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


# user:password@ in a URL (AWS_ENDPOINT_URL=http://user:pass@proxy/ is echoed back in SDK errors)
_URL_CREDENTIALS = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://)[^/\s@\"'<>]+@")


def without_url_credentials(text: str) -> str:
    """``text`` with the credentials of any URL in it replaced by ``***``."""
    return _URL_CREDENTIALS.sub(r"\1***@", text)
