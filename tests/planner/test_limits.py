"""Every quantity has a documented range; inside it gpuplan answers, outside it says so (exit 2)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pricing.errors import InputError
from planner.limits import BOUNDS, bounded, check_fields, flag_of, plain
from planner.workload.spec import TrainingWorkload, TransformerArch

Run = Callable[..., tuple[int, str, str]]
DOC = Path(__file__).resolve().parents[2] / "docs" / "limits.md"


def _doc_rows() -> dict[str, tuple[str, str, str]]:
    rows = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        m = re.match(r"\| `([\w-]+)` \| `(\w+)` \| ([>≥]) ([\d,.]+) \| ([\d,.]+) \|", line)
        if m:
            flag, key, op, low, high = m.groups()
            rows[key] = (flag, f"{op} {low.replace(',', '')}", high.replace(",", ""))
    return rows


def test_docs_list_every_range_exactly_as_the_code_checks_it() -> None:
    doc = _doc_rows()
    assert set(doc) == set(BOUNDS)
    for key, b in BOUNDS.items():
        flag, low, high = doc[key]
        assert flag == flag_of(key), key
        assert low == f"{'≥' if b.low_inclusive else '>'} {plain(b.low)}", key
        assert Decimal(high) == b.high, key


def test_readme_points_to_the_ranges() -> None:
    readme = (DOC.parents[1] / "README.md").read_text(encoding="utf-8")
    assert "docs/limits.md" in readme


@given(st.sampled_from(sorted(BOUNDS)), st.data())
def test_bounded_accepts_the_range_and_refuses_outside(key: str, data: st.DataObject) -> None:
    b = BOUNDS[key]
    inside = data.draw(st.decimals(min_value=b.low, max_value=b.high, allow_nan=False, allow_infinity=False))
    if inside == b.low and not b.low_inclusive:
        inside = b.high
    assert bounded(str(inside), key) == inside
    above = b.high * data.draw(st.sampled_from([Decimal("1.001"), Decimal(10), Decimal("1e20")]))
    with pytest.raises(InputError, match=f"{re.escape(flag_of(key))} .* is out of range"):
        bounded(str(above), key)
    if not b.low_inclusive or b.low > 0:
        below = b.low if not b.low_inclusive else b.low - 1
        with pytest.raises(InputError, match="out of range"):
            bounded(str(below), key)


def test_bounded_echoes_plain_digits() -> None:
    assert str(bounded("2e2", "gpu_hours")) == "200"
    with pytest.raises(InputError, match=r"--gpu-hours 1e26 is out of range: it must be positive and at most "
                                         r"1,000,000,000 GPU-hours"):
        bounded("1e26", "gpu_hours")


def test_nested_workload_fields_are_checked() -> None:
    w = TrainingWorkload(arch=TransformerArch(params=1e15), tokens=1e9)
    with pytest.raises(InputError, match="--params"):
        check_fields(w)
    check_fields(TrainingWorkload(arch=TransformerArch(params=7e9), tokens=2e12))


@settings(max_examples=12, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(-3, 9), st.sampled_from(["1", "2.5", "9.99"]))
def test_any_gpu_hours_in_range_plan_with_plain_costs(gpuplan: Run, exponent: int, mantissa: str) -> None:
    hours = Decimal(mantissa).scaleb(exponent)
    hours = min(hours, BOUNDS["gpu_hours"].high)
    code, out, err = gpuplan("plan", "--gpu-hours", f"{mantissa}e{exponent}", "--json")
    if hours != Decimal(mantissa).scaleb(exponent):
        assert code == 2 and "out of range" in err
        return
    assert code == 0, err
    for o in json.loads(out)["options"]:
        assert re.fullmatch(r"\d{1,16}\.\d\d", o["cost"]), o["cost"]


@settings(max_examples=10, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(10, 400))
def test_any_gpu_hours_above_range_is_bad_input_not_a_crash(gpuplan: Run, exponent: int) -> None:
    code, out, err = gpuplan("plan", "--gpu-hours", f"1e{exponent}")
    assert code == 2 and out == "" and "out of range" in err and "internal error" not in err
