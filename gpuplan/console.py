"""The two rich consoles: data to stdout, messages to stderr."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

_no_color = False
_wide = False


def set_no_color(value: bool) -> None:
    global _no_color
    _no_color = value
    stdout.cache_clear()
    stderr.cache_clear()


def _width(stream: str = "stdout") -> int | None:
    """Terminals report their width; pipes and files get a wide page, not rich's 80 columns."""
    import os
    import sys

    if os.environ.get("COLUMNS") or getattr(sys, stream).isatty():
        return None
    return 200


# Data is printed as given: no ':name:' emoji codes in an offer name or region become emoji
# (rich's emoji table would also cost every table command a few ms to load).
@lru_cache(maxsize=1)
def stdout() -> Console:
    from rich.console import Console

    return Console(no_color=_no_color or None, soft_wrap=False, width=_width(), emoji=False)


@lru_cache(maxsize=1)
def stderr() -> Console:
    from rich.console import Console

    return Console(stderr=True, no_color=_no_color or None, width=_width("stderr"))


def set_wide(value: bool) -> None:
    """``--wide``: every table column at full width, however narrow the terminal."""
    global _wide
    _wide = value


def wide() -> bool:
    return _wide


def stdout_at(width: int) -> Console:
    """A console like :func:`stdout` but ``width`` cells wide, for a table wider than the terminal."""
    from rich.console import Console

    base = stdout()
    return Console(no_color=_no_color or None, soft_wrap=False, width=width, force_terminal=base.is_terminal,
                   color_system=base.color_system, emoji=False)  # type: ignore[arg-type]
