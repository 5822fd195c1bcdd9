"""Frozen values built by quick_init's __init__ are the values dataclasses' own __init__ builds."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import pytest

from pricing.frozen import quick_init


def _twins() -> tuple[type, type]:
    def body() -> dict[str, object]:
        return {"__annotations__": {"name": "str", "count": "int", "tags": "dict[str, int]", "note": "str"},
                "count": 1, "tags": field(default_factory=dict), "note": ""}

    plain = dataclass(frozen=True, slots=True, kw_only=True)(type("Plain", (), body()))
    quick = quick_init(dataclass(frozen=True, slots=True, kw_only=True, init=False)(type("Quick", (), body())))
    return plain, quick


def test_a_quick_value_has_the_fields_defaults_and_factories_of_the_dataclass() -> None:
    plain, quick = _twins()
    for kwargs in ({"name": "a"}, {"name": "b", "count": 3, "tags": {"x": 1}, "note": "n"}):
        assert dataclasses.astuple(quick(**kwargs)) == dataclasses.astuple(plain(**kwargs))
    one, two = quick(name="a"), quick(name="a")
    assert one == two and one != quick(name="a", count=2)
    assert one.tags == {} and one.tags is not two.tags  # a factory is called for each value


def test_a_quick_value_stays_frozen_and_refuses_what_the_dataclass_refuses() -> None:
    _, quick = _twins()
    value = quick(name="a")
    with pytest.raises(dataclasses.FrozenInstanceError):
        value.name = "b"
    with pytest.raises(TypeError):
        quick()  # the required field
    with pytest.raises(TypeError):
        quick(name="a", colour="red")
    with pytest.raises(TypeError):
        quick("a")  # keywords only, as declared


def test_only_frozen_slotted_dataclasses_are_given_one() -> None:
    @dataclass(slots=True, kw_only=True)
    class Loose:
        name: str

    with pytest.raises(TypeError, match="frozen"):
        quick_init(Loose)
