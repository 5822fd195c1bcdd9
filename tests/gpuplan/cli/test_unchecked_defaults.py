"""Values a command builds without pydantic's check are the values the check would give.

A default `plan` takes its settings, extras and exchange rates as given and its constraints
from flags it parsed itself, so no validator is built at every start; these tests hold those
values equal, field by field and type by type, to what validation makes of them.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from gpuplan.cli.extras_opts import extras_from
from gpuplan.cli.options import build_constraints
from gpuplan.settings import load_settings
from pricing.bill import Extras
from planner.plan.model import Constraints
from planner.settings import Settings
from pricing.catalog import Catalog
from pricing.money import FxRate, shipped_fx_rates


def _same_as_validated(value: BaseModel) -> None:
    validated = type(value).model_validate(dict(value))
    assert validated == value
    for name in type(value).model_fields:
        assert type(getattr(validated, name)) is type(getattr(value, name)), name


def test_default_settings_are_what_validation_gives() -> None:
    s = load_settings()
    _same_as_validated(s)
    assert s == Settings()


def test_default_extras_are_what_validation_gives() -> None:
    e = extras_from(None, None, None, None, None, None)
    _same_as_validated(e)
    assert e == Extras()


def test_every_shipped_exchange_rate_passes_the_check() -> None:
    for rate in shipped_fx_rates():
        _same_as_validated(rate)


FLAGS: list[dict[str, Any]] = [
    {},
    {"deadline": "3d", "budget": "5000 CNY", "min_vram": 24.0, "max_gpus": 8.0},
    {"provider": ["aws,tencent"], "billing": ["spot", "HOURLY"], "region": ["us-east-1"], "gpu": ["A100"]},
]


@pytest.mark.parametrize("flags", FLAGS, ids=["none", "numbers", "lists"])
def test_constraints_from_flags_are_what_validation_gives(flags: dict[str, Any]) -> None:
    given = {k: None for k in ("deadline", "budget", "min_vram", "provider", "billing", "region", "gpu", "max_gpus")}
    s = load_settings()
    c = build_constraints(**{**given, **flags}, settings=s, catalog=Catalog.shipped())
    _same_as_validated(c)
    assert c.model_fields_set <= set(Constraints.model_fields)


def test_a_value_that_needs_the_check_still_gets_it() -> None:
    from pricing.errors import InputError

    with pytest.raises(InputError, match="--disk-gb"):
        extras_from("-5", None, None, None, None, None)
    with pytest.raises(InputError, match="hours_per_month"):
        load_settings(hours_per_month=0)
    assert FxRate.model_validate({"base": "USD", "quote": "CNY", "rate": "7.1", "source": "mine"}).rate > 0
