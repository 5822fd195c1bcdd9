"""Building pydantic models by the thousand without validation (offers; going away)."""

from __future__ import annotations

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
