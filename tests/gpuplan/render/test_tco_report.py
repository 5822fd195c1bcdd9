"""The TCO report as a reader sees it: a chart whose deciding curves are distinguishable,
one colour per option in HTML and PNG/SVG, round ticks, and one cost per GPU-hour per
option in every table; break-even utilization over the chosen horizon."""

from __future__ import annotations

import itertools
import math
import re
from decimal import Decimal
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pricing.catalog import Catalog
from planner.settings import Settings
from planner.tco.compare import Owned, Scenario, TcoResult, build_tco, buy_option
from planner.tco.lines import PER_HOUR_PLACES
from pricing.money import money_text
from gpuplan.render.tco_chart import chart_model, nice_log_range, nice_month_ticks, option_colors, spread, write_chart
from gpuplan.render.tco import html_page, markdown, sections
from tests.planner.tco.test_compare import offer, owned_hw, rent

EXAMPLE = Scenario(usage=Decimal(300), months=36, buy=["4x RTX-4090"], vs=["GN10Xp.20XLARGE320", "p3.16xlarge"])


def result(sc: Scenario = EXAMPLE) -> TcoResult:
    s = Settings()
    return build_tco(sc, currency=s.currency, fx=s.fx_table(), hours_per_month=s.hours_per_month,
                     spot_overhead=s.spot_overhead, catalog=Catalog.shipped())


# ---------------------------------------------------------------- break-even over the horizon


@settings(max_examples=150)
@given(owned_hw(), st.decimals(min_value=Decimal("0.05"), max_value=Decimal(1), places=3),
       st.decimals(min_value=Decimal("0.05"), max_value=40, places=2), st.integers(1, 120))
def test_breakeven_utilization_agrees_with_the_horizons_break_even_month(
    o: Owned, u: Decimal, rate: Decimal, months: int,
) -> None:
    """Buying pays off within the horizon exactly when the usage is above the break-even utilization.

    With the life (not the horizon) in the formula this fails whenever the horizon is shorter
    than the life: the 5-year amortization makes buying look cheaper than the horizon's cash.
    """
    usage = u * o.n * o.hours_per_month
    buy = buy_option(o, usage, months)
    hourly = rent(offer(hourly=str(rate), monthly=None), usage, months)
    assume(o.capex_net > 0)
    assume(abs(buy.total_cost - hourly.total_cost) > hourly.total_cost * Decimal("1e-6"))  # not a tie
    be = o.breakeven_utilization(hourly.monthly_cost[0] / usage, months)
    pays_off = buy.total_cost <= hourly.total_cost
    assert pays_off == (be is not None and u >= be)


@given(owned_hw(), st.decimals(min_value=Decimal("0.05"), max_value=Decimal(1), places=3), st.integers(1, 120))
def test_owned_cost_per_unit_over_the_horizon_is_the_horizons_total(o: Owned, u: Decimal, months: int) -> None:
    usage = u * o.work_per_gpu_hour * o.n * o.hours_per_month
    buy = buy_option(o, usage, months)
    per_unit = o.cost_per_work_hour(u, months)
    assert per_unit is not None and buy.cost_per_ref_gpu_hour is not None
    assert abs(per_unit - buy.cost_per_ref_gpu_hour) <= buy.cost_per_ref_gpu_hour * Decimal("1e-20")


def test_breakeven_utilization_of_the_issue_example_uses_36_months_not_5_years() -> None:
    r = result()
    assert [o.name for o in r.options if o.kind == "buy"] == ["buy 4x RTX-4090"]
    work = Decimal(r.assumptions["buy 4x RTX-4090"]["work_per_gpu_hour"])  # reference GPU-hours per GPU-hour
    u = r.usage_gpu_hours / (work * 4 * 730)
    for b in r.breakeven:
        rental = next(o for o in r.options if o.name == b.vs)
        if rental.kind == "hourly":  # linear rentals: the two answers must agree
            assert (b.month is not None) == (b.utilization is not None and u >= b.utilization), b


# ---------------------------------------------------------------- one cost per GPU-hour


def test_each_options_cost_per_gpu_hour_reads_the_same_everywhere() -> None:
    r = result()
    secs = sections(r)
    summary = {row["option"].rstrip("*"): row["per_gpu_h"] for row in secs[0].rows}
    (curve,) = [s for s in secs if s.title.startswith("buy 4x RTX-4090: cost per")]
    here = [h for k, h, _ in curve.columns if "this usage" in h]
    assert len(here) == 1
    key = next(k for k, h, _ in curve.columns if "this usage" in h)
    assert curve.rows[0][key] == summary["buy 4x RTX-4090"]
    best = min(r.options, key=lambda o: o.total_cost)
    assert f"({summary[best.name]} USD per {r.unit.ref_gpu} GPU-hour of work" in r.verdict
    for o in r.options:
        assert summary[o.name] == money_text(o.cost_per_ref_gpu_hour or Decimal(0), places=PER_HOUR_PLACES)


# ---------------------------------------------------------------- the chart


class _Svg(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[dict[str, str]] = []
        self.texts: list[tuple[dict[str, str], str]] = []
        self._text: dict[str, str] | None = None
        self.order: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        self.order.append(tag if tag != "h2" else "h2")
        if tag == "polyline" and a.get("stroke-width") != "0.8":
            self.lines.append(a)
        if tag == "text":
            self._text = a

    def handle_data(self, data: str) -> None:
        if self._text is not None:
            self.texts.append((self._text, data))
            self._text = None


def test_html_and_matplotlib_draw_each_option_in_the_same_colour(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    r = result()
    colors = option_colors(r)
    assert len(set(colors.values())) == len(r.options)
    page = _Svg()
    page.feed(html_page(r))
    labelled = {text.split(":")[0].rstrip("*"): a["fill"] for a, text in page.texts if a.get("fill", "#") != "#"
                and ":" in text}
    assert labelled == colors  # every line's label is in its line's colour
    assert {a["stroke"] for a in page.lines} == set(colors.values())
    svg = tmp_path / "c.svg"
    write_chart(r, svg)
    strokes = set(re.findall(r"stroke: (#[0-9a-f]{6})", svg.read_text(encoding="utf-8")))
    assert set(colors.values()) <= strokes


def test_the_cost_axis_is_logarithmic_with_round_ticks() -> None:
    m = chart_model(result())
    assert m.y_low <= min(min(s.values) for s in m.series) and m.y_high >= max(max(s.values) for s in m.series)
    monthly = next(s for s in m.series if s.name.endswith("monthly"))
    spot = next(s for s in m.series if s.name.endswith("spot"))
    buy = next(s for s in m.series if s.name.startswith("buy"))
    # The 228k monthly line no longer squashes the rest: spot, the cheapest, ends well off the floor.
    assert m.frac(monthly.values[-1]) > 0.9 and m.frac(spot.values[-1]) > 0.3
    # on a log axis the gap between two lines is the log of their ratio over the axis' decades
    decades = math.log10(m.y_high / m.y_low)
    gap = math.log10(buy.values[-1] / spot.values[-1]) / decades
    assert abs((m.frac(buy.values[-1]) - m.frac(spot.values[-1])) - gap) < 1e-9 and gap > 0.1


@given(st.floats(min_value=0.01, max_value=1e12), st.floats(min_value=1.0001, max_value=1e6))
def test_log_ticks_are_round_and_cover_the_data(lo: float, ratio: float) -> None:
    hi = lo * ratio
    low, high, ticks = nice_log_range(lo, hi)
    assert low <= lo * (1 + 1e-12) and high >= hi * (1 - 1e-12)
    assert 2 <= len(ticks) <= 9 and ticks[0] == low and ticks[-1] == high
    for t in ticks:
        mantissa = t / 10 ** math.floor(math.log10(t) + 1e-9)
        assert any(abs(mantissa - m) < 1e-6 for m in (1, 2, 3, 5)), t


@given(st.integers(1, 120))
def test_month_ticks_are_round(months: int) -> None:
    ticks = nice_month_ticks(months)
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 1
    assert ticks[0] == 0 and step in (1, 2, 3, 6, 12, 24) and len(ticks) <= 13 and ticks[-1] <= months


@given(st.lists(st.floats(min_value=0, max_value=1), min_size=1, max_size=12))
def test_line_labels_never_overlap(wanted: list[float]) -> None:
    gap = 0.055
    got = spread(wanted, gap)
    order = sorted(range(len(wanted)), key=lambda i: wanted[i])
    placed = [got[i] for i in order]
    assert all(b - a >= gap - 1e-9 for a, b in itertools.pairwise(placed))  # same order, apart
    if len(wanted) * gap <= 1:
        assert all(-1e-9 <= p <= 1 + 1e-9 for p in placed)


def test_lines_that_coincide_alternate_their_colours() -> None:
    m = chart_model(result(EXAMPLE.model_copy(update={"spot_estimates": True})))
    spots = [s for s in m.series if s.name.endswith("spot")]
    assert len(spots) == 2 and spots[0].dash == spots[1].dash and spots[0].dash_offset != spots[1].dash_offset
    labels = dict(zip((s.name for s in m.series), m.label_at, strict=True))
    assert abs(labels[spots[0].name] - labels[spots[1].name]) >= 0.05  # their end labels stand apart


# ---------------------------------------------------------------- the page


def test_the_printed_page_opens_with_the_answer_and_keeps_gpu_names_whole() -> None:
    text = html_page(result())
    body = text[text.index("<body>"):]
    assert body.index("<table") < body.index("<svg")  # summary table, then the chart: no half-empty page 1
    assert "white-space:nowrap" in text and "@page" in text
    for cell in re.findall(r'<td class="([^"]*)">8x V100-SXM2-32GB</td>', body):
        assert "w" not in cell.split()  # the GPU column never wraps at its hyphens


def test_a_narrow_screen_scrolls_each_wide_table_in_its_own_box_not_the_page() -> None:
    body = html_page(result())
    body = body[body.index("<body>"):]
    tables = body.count("<table")
    assert tables and body.count('<div class="scroll"><table') == tables  # every table, at 760 px too
    assert re.search(r"\.scroll\{overflow-x:auto", html_page(result()))


def test_estimated_note_only_when_an_option_is_estimated() -> None:
    aws_only = markdown(result(Scenario(usage=Decimal(300), months=12, vs=["p3.16xlarge"])))
    assert "estimated" not in aws_only.lower() and "*" not in aws_only.replace("**", "")
    with_tencent_spot = markdown(result(EXAMPLE.model_copy(update={"spot_estimates": True})))
    assert "Options marked * have an estimated price." in with_tencent_spot
    assert not [line for line in with_tencent_spot.splitlines() if line.startswith("* ")]
