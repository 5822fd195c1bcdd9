"""The two rich consoles: data to stdout, messages to stderr."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

_no_color = False


def set_no_color(value: bool) -> None:
    global _no_color
    _no_color = value
    stdout.cache_clear()
    stderr.cache_clear()


@lru_cache(maxsize=1)
def stdout() -> Console:
    from rich.console import Console

    return Console(no_color=_no_color or None, soft_wrap=False)


@lru_cache(maxsize=1)
def stderr() -> Console:
    from rich.console import Console

    return Console(stderr=True, no_color=_no_color or None)
