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
from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)
_new_object = object.__new__
_set = object.__setattr__


def unvalidated(model: type[M], values: dict[str, Any], fields_set: set[str] | frozenset[str]) -> M:
    """A ``model`` holding ``values`` (every field, of the right type, checked), as ``model_construct`` sets them.

    For rows read by the thousand: ``model_construct`` spends ~50 us re-deriving defaults
    and validation ~20 us, this ~1 us. ``values`` becomes the object's own ``__dict__``, and
    ``fields_set`` is shared by every object built (a set per object would be 2 kB).
    Callers' tests hold what they build equal to validated objects.
    """
    obj = _new_object(model)
    _set(obj, "__dict__", values)
    _set(obj, "__pydantic_fields_set__", fields_set)
    _set(obj, "__pydantic_extra__", None)
    _set(obj, "__pydantic_private__", None)
    return obj


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
