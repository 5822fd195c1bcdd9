"""Derived values as plain JSON: what :mod:`pricing.derived` writes, a format that can only ever describe data.

Reading one back can build nothing but the classes the caller names (``types``): named tuples, pydantic
models (restored from the values and the set fields they were written with, as a pickle restores them),
enums, and the plain values Decimal, date, tuple, list and dict. Anything else in the file, or an unknown
class name, is :class:`ValueError`: the caller treats it as a miss.

A list of one named tuple (the shipped catalog's ~800 instance rows) is written column by column, each
column converted by its kind in one ``map``: reading the rows back costs about what unpickling them did.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from datetime import date
from decimal import Decimal
from enum import Enum
from typing import Any

__all__ = ["decode", "encode"]

_PLAIN = (str, int, bool, type(None))
_RAW = {str, int, bool, float, type(None)}  # what a "raw" column may hold, as JSON gives it


def _is_named_tuple(cls: type) -> bool:
    return issubclass(cls, tuple) and hasattr(cls, "_fields")


def _is_model(cls: type) -> bool:
    return hasattr(cls, "model_construct") and hasattr(cls, "model_fields")


# A column's kind: how every non-None value in it is written and read back.
def _column_kind(values: list[Any]) -> str:
    kinds = {type(v) for v in values if v is not None}
    if not kinds or kinds <= {str} or kinds <= {int} or kinds <= {bool}:
        return "raw"
    if len(kinds) == 1:
        (cls,) = kinds
        if cls is Decimal:
            return "decimal"
        if cls is date:
            return "date"
        if issubclass(cls, Enum):
            return f"enum:{cls.__name__}"
        if cls is tuple and all(type(x) is str for v in values if v is not None for x in v):
            return "strs"
        if cls is float and all(math.isfinite(v) for v in values if v is not None):
            return "raw"
    if kinds <= {int, float} and all(math.isfinite(v) for v in values if v is not None):
        return "raw"  # JSON keeps 1 and 1.0 apart
    return "any"


def encode(value: Any) -> Any:
    """``value`` as JSON values (lists, dicts with string keys, strings, numbers, None), tagged where JSON has no
    type of its own."""
    t = type(value)
    if t in _PLAIN:
        return value
    if t is float:
        return value if math.isfinite(value) else {"$float": repr(value)}
    if t is Decimal:
        return {"$dec": str(value)}
    if t is date:
        return {"$date": value.isoformat()}
    if isinstance(value, Enum):
        return {"$enum": [t.__name__, value.value]}
    if t is list and value and _is_named_tuple(type(value[0])) and all(type(v) is type(value[0]) for v in value):
        return _encode_rows(value)
    if t is list:
        return [encode(v) for v in value]
    if t is tuple:
        return {"$tuple": [encode(v) for v in value]}
    if t is dict:
        return {"$dict": [[encode(k), encode(v)] for k, v in value.items()]}
    if _is_named_tuple(t):
        return {"$row": [t.__name__, [encode(v) for v in value]]}
    if _is_model(t):
        if value.__pydantic_extra__ or value.__pydantic_private__:
            raise TypeError(f"cannot keep a {t.__name__} with extra or private values")
        fields = {name: encode(getattr(value, name)) for name in t.model_fields}
        return {"$model": [t.__name__, fields, sorted(value.model_fields_set)]}
    raise TypeError(f"cannot keep a {t.__name__} as JSON")


def _encode_rows(rows: list[Any]) -> dict[str, Any]:
    """Column by column, each as its distinct values (written by kind) and an index per row: rows share many
    values (a cloud's source, a date, a region), and reading a column back is one ``map`` over the indices."""
    cls = type(rows[0])
    out = []
    for column in zip(*rows, strict=True):
        # Equal is not the same: Decimal 4950 and 4950.0, float 0.0 and -0.0, 1 and True print apart
        index: dict[Any, tuple[int, Any]] = {}
        at = [index.setdefault(v if type(v) is str else (type(v), repr(v)), (len(index), v))[0] for v in column]
        distinct = [v for _, v in index.values()]
        kind = _column_kind(distinct)
        if kind == "decimal":
            distinct = [None if v is None else str(v) for v in distinct]
        elif kind == "date":
            distinct = [None if v is None else v.isoformat() for v in distinct]
        elif kind.startswith("enum:"):
            distinct = [None if v is None else v.value for v in distinct]
        elif kind == "strs":
            distinct = [None if v is None else list(v) for v in distinct]
        elif kind == "any":
            distinct = [encode(v) for v in distinct]
        out.append([kind, distinct, at])
    return {"$rows": [cls.__name__, len(rows), out]}


def decode(data: Any, types: Iterable[type]) -> Any:
    """The value :func:`encode` wrote, built only from ``types`` and plain values; anything else is ValueError."""
    return _Decoder({cls.__name__: cls for cls in types}).value(data)


def _optional(convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda v: None if v is None else convert(v)


class _Decoder:
    def __init__(self, types: Mapping[str, type]) -> None:
        self.types = types

    def cls(self, name: Any, want: Callable[[type], bool]) -> Any:
        cls = self.types.get(name) if type(name) is str else None
        if cls is None or not want(cls):
            raise ValueError(f"a kept value names a class it may not build: {name!r}")
        return cls

    def value(self, data: Any) -> Any:
        t = type(data)
        if t in _PLAIN or t is float:
            return data
        if t is list:
            return [self.value(v) for v in data]
        if t is not dict or len(data) != 1:
            raise ValueError("not a kept value")
        ((tag, body),) = data.items()
        if tag == "$dec":
            return Decimal(body) if type(body) is str else _bad(tag)
        if tag == "$date":
            return date.fromisoformat(body)
        if tag == "$float":
            return float(body) if body in ("inf", "-inf", "nan") else _bad(tag)
        if tag == "$enum":
            name, raw = body
            return self.cls(name, lambda c: issubclass(c, Enum))(raw)
        if tag == "$tuple":
            return tuple(self.value(v) for v in body)
        if tag == "$dict":
            return {self.value(k): self.value(v) for k, v in body}
        if tag == "$row":
            name, values = body
            return self.cls(name, _is_named_tuple)._make(self.value(v) for v in values)
        if tag == "$model":
            name, fields, fields_set = body
            cls = self.cls(name, _is_model)
            if type(fields) is not dict or set(fields) != set(cls.model_fields) or not set(fields_set) <= set(fields):
                raise ValueError(f"a kept {name} has other fields than gpuplan's")
            # As a pickle restores a model (its public __setstate__): half the time of model_construct, and the
            # same value (no validation either way: these values were validated when they were worked out)
            model = cls.__new__(cls)
            model.__setstate__({"__dict__": {k: self.value(v) for k, v in fields.items()},
                                "__pydantic_fields_set__": set(fields_set), "__pydantic_extra__": None,
                                "__pydantic_private__": None})
            return model
        if tag == "$rows":
            return self.rows(*body)
        return _bad(tag)

    def rows(self, name: Any, count: Any, columns: Any) -> list[Any]:
        cls = self.cls(name, _is_named_tuple)
        if len(columns) != len(cls._fields):
            raise ValueError(f"kept {name} rows have other fields than gpuplan's")
        built = []
        for kind, distinct, at in columns:
            if type(distinct) is not list or type(at) is not list or len(at) != count:
                raise ValueError(f"a kept {name} column is damaged")
            if kind == "raw":
                if not set(map(type, distinct)) <= _RAW:
                    raise ValueError(f"a kept {name} column is damaged")
            elif kind == "decimal":
                distinct = list(map(_optional(Decimal), distinct))
            elif kind == "date":
                distinct = list(map(_optional(date.fromisoformat), distinct))
            elif kind.startswith("enum:"):
                distinct = list(map(_optional(self.cls(kind[5:], lambda c: issubclass(c, Enum))), distinct))
            elif kind == "strs":
                distinct = list(map(_optional(tuple), distinct))
            elif kind == "any":
                distinct = [self.value(v) for v in distinct]
            else:
                _bad(kind)
            built.append(list(map(distinct.__getitem__, at)))  # a bad index: IndexError or TypeError, a miss
        return list(map(cls._make, zip(*built, strict=True))) if built else []


def _bad(tag: Any) -> Any:
    raise ValueError(f"a kept value of an unknown kind: {tag!r}")
