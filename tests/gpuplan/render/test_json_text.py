"""JSON as scripts read it from a pipe: compact, exact, whatever the value."""

from __future__ import annotations

import json
from datetime import date
from decimal import Decimal

from pricing.billing import BillingMode
from gpuplan.render.table import compact_json, dump_json


def test_numbers_past_64_bits_are_written_out_exactly() -> None:
    flops = 6 * 7_000_000_000 * 2_000_000_000_000  # 8.4e22: past what orjson writes, so the json module does
    assert json.loads(compact_json({"flops": flops, "n": 1})) == {"flops": flops, "n": 1}


def test_values_the_contract_writes_as_text() -> None:
    value = {BillingMode.SPOT: [Decimal("0.125"), date(2026, 12, 4), BillingMode.HOURLY, ("a", 1)], 2: None}
    assert json.loads(compact_json(value)) == {"spot": ["0.125", "2026-12-04", "hourly", ["a", 1]], "2": None}


def test_piped_json_is_compact_and_says_which_gpuplan_wrote_it() -> None:
    text = dump_json({"a": [1, 2], "b": "ü"})  # pytest's stdout is not a terminal
    assert text.startswith('{"gpuplan_version":') and '"a":[1,2],"b":"ü"}' in text


def test_an_excluded_option_is_written_with_every_field_of_an_exclusion_in_order() -> None:
    import dataclasses

    from planner.plan.model import Exclusion, ExclusionRule
    from gpuplan.render.plan import exclusion_json

    e = Exclusion(provider="aws", offer="p4d.24xlarge", region="us-east-1", zone="use1-az2", billing=BillingMode.SPOT,
                  rule=ExclusionRule.BUDGET, reason="costs 900.00 USD, over the budget 500.00 USD")
    written = json.loads(compact_json(exclusion_json(e)))
    assert list(written) == [f.name for f in dataclasses.fields(Exclusion)]  # a new field is not left out
    assert written == json.loads(compact_json(dataclasses.asdict(e)))
