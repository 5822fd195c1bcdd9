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
