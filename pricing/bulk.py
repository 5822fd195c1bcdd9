"""Building many long-lived objects at once: catalogs of 200k rows, plans of a million options.

CPython's cyclic garbage collector runs after every few hundred new container objects and,
as the heap grows, walks its older generations again and again: a 10k-offer plan spent
half its time there, a 200k-row catalog a third of its parse. What these phases build holds
no reference cycles, so they run with the collector paused. A command that is about to
end also freezes what it built (``gc.freeze``): left out of later collections and of the
one at exit, instead of being walked once more. Objects still free by reference counting.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc(*, freeze: bool = False) -> Iterator[None]:
    """Pause the cyclic garbage collector for the block (nesting is fine).

    ``freeze=True`` then moves every object that exists into the permanent generation:
    for a command that ends soon after, so neither a later collection nor the one at
    exit walks a million options again. A library call leaves it False: freezing would
    also keep any pending cyclic garbage of the caller for good.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if freeze:
                gc.freeze()
            gc.enable()
