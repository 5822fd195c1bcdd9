"""The cumulative-cost chart of a TCO, drawn the same way as inline SVG and with matplotlib.

One :class:`ChartModel` decides everything a reader compares (colour and line style per
option, the axis range and its round ticks, where each line's label sits), so the HTML
report's chart and the ``--chart`` PNG/SVG show the same option in the same colour.

The cost axis is logarithmic: a monthly subscription at 228,000 next to spot at 3,900
would squash the curves that decide the question into the bottom of a linear axis,
while on a log axis every option keeps its own height and a crossing (a break-even)
stays exactly where it is. Each line is labelled at its end, labels pushed apart so two
options of nearly the same cost stay readable.
"""

from __future__ import annotations

import html
import math
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from pricing.billing import BillingMode
from pricing.errors import InputError
from planner.tco.compare import TcoOption, TcoResult

# Matplotlib's tab10, so a chart and a matplotlib notebook of the same data agree too.
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf")
# On-off lengths in line widths, per kind of option; buying is the thick solid line.
DASHES: dict[BillingMode, tuple[float, ...]] = {
    BillingMode.BUY: (),
    BillingMode.HOURLY: (),
    BillingMode.SPOT: (4, 2),
    BillingMode.MONTHLY: (6, 2, 1, 2),
    BillingMode.RESERVED_1Y: (1, 1.5),
    BillingMode.RESERVED_3Y: (1, 1.5),
}
STYLE_NOTE = ("Line style: thick = buy, solid = hourly, dashed = spot, dash-dot = monthly, dotted = reserved; "
              "* = estimated price. Circles: the month buying overtakes a rental.")
LABEL_GAP = 0.055  # least distance between two line labels, as a fraction of the plot height


class Series(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    label: str
    color: str
    dash: tuple[float, ...]
    dash_offset: float = 0  # in line widths: options of one kind that coincide show both colours in turn
    width: float
    values: tuple[float, ...]  # cumulative cost at the end of month 1, 2, ...


class Mark(BaseModel):
    model_config = ConfigDict(frozen=True)

    month: int
    value: float
    text: str
    title: str


class ChartModel(BaseModel):
    """What both renderers draw: log-scale cost over months, ticks, labels, break-even marks."""

    model_config = ConfigDict(frozen=True)

    title: str
    y_label: str
    months: int
    series: tuple[Series, ...]
    y_low: float
    y_high: float
    y_ticks: tuple[float, ...]
    x_ticks: tuple[int, ...]
    label_at: tuple[float, ...]  # per series: height of its end label, 0 = bottom of the plot, 1 = top
    marks: tuple[Mark, ...]

    def frac(self, v: float) -> float:
        """Height of ``v`` on the log axis, 0 at ``y_low``, 1 at ``y_high`` (clipped)."""
        lo, hi = math.log10(self.y_low), math.log10(self.y_high)
        return min(1.0, max(0.0, (math.log10(max(v, self.y_low)) - lo) / (hi - lo)))


def option_colors(r: TcoResult) -> dict[str, str]:
    """One colour per option, by its place in the result: the HTML tables and every chart use it."""
    return {o.name: PALETTE[i % len(PALETTE)] for i, o in enumerate(r.options)}


def _label(o: TcoOption) -> str:
    return o.name + ("*" if o.estimate else "")


def nice_log_range(lo: float, hi: float) -> tuple[float, float, tuple[float, ...]]:
    """A log axis from a round value at or below ``lo`` to one at or above ``hi``, with 1-2-5 ticks
    (1-2-3-5 on a short range, decades only on a long one): 100, 200, 500, 1,000, ..."""
    lo, hi = max(lo, 1e-9), max(hi, lo * 1.0001)
    for mantissas in ((1, 2, 3, 5), (1, 2, 5), (1, 3), (1,)):
        values = [m * 10.0**e for e in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 2)
                  for m in mantissas]
        values.sort()
        low = max(v for v in values if v <= lo * (1 + 1e-12))
        high = min(v for v in values if v >= hi * (1 - 1e-12))
        ticks = tuple(v for v in values if low <= v <= high)
        if len(ticks) <= 9:
            return low, high, ticks
    return low, high, ticks


def nice_month_ticks(months: int) -> tuple[int, ...]:
    step = next(s for s in (1, 2, 3, 6, 12, 24, 60) if months / s <= 12)
    return tuple(range(0, months + 1, step))


def spread(wanted: list[float], gap: float) -> list[float]:
    """Positions in [0, 1] as close to ``wanted`` as the least ``gap`` between any two allows."""
    order = sorted(range(len(wanted)), key=lambda i: wanted[i])
    pos = [wanted[i] for i in order]
    for k in range(1, len(pos)):
        pos[k] = max(pos[k], pos[k - 1] + gap)
    if pos and pos[-1] > 1:
        pos[-1] = 1.0
        for k in range(len(pos) - 2, -1, -1):
            pos[k] = min(pos[k], pos[k + 1] - gap)
    out = [0.0] * len(wanted)
    for k, i in enumerate(order):
        out[i] = pos[k]
    return out


def chart_model(r: TcoResult) -> ChartModel:
    colors = option_colors(r)
    kinds = [o.kind for o in r.options]
    series = tuple(
        Series(name=o.name, label=_label(o), color=colors[o.name], dash=DASHES.get(o.kind, ()),
               # Two spot offers a few percent apart draw one line; shifting the second one's dashes
               # by a share of the pattern lets each colour show between the other's dashes.
               dash_offset=sum(DASHES.get(o.kind, ())) * kinds[:i].count(o.kind) / kinds.count(o.kind),
               width=3.0 if o.kind is BillingMode.BUY else 1.8,
               values=tuple(float(v) for v in o.cumulative_cost))
        for i, o in enumerate(r.options)
    )
    positive = [v for s in series for v in s.values if v > 0] or [1.0]
    y_low, y_high, y_ticks = nice_log_range(min(positive), max(positive))
    by_name = {o.name: o for o in r.options}
    marks = tuple(
        Mark(month=b.month, value=float(by_name[b.buy].cumulative_cost[b.month - 1]), text=f"m{b.month}",
             title=f"{b.buy} overtakes {b.vs} in month {b.month}")
        for b in r.breakeven if b.month is not None
    )
    model = ChartModel(title=f"Buy vs rent at {r.usage_gpu_hours:g} {r.unit.ref_gpu} GPU-hours of work a month",
                       y_label=f"cumulative cost ({r.currency}, log scale)", months=r.months, series=series,
                       y_low=y_low, y_high=y_high, y_ticks=y_ticks, x_ticks=nice_month_ticks(r.months),
                       label_at=(), marks=marks)
    ends = [model.frac(s.values[-1]) for s in series]
    return model.model_copy(update={"label_at": tuple(spread(ends, LABEL_GAP))})


def tick_text(v: float) -> str:
    return f"{v:,.0f}" if v >= 1 else f"{v:g}"


def end_label(s: Series) -> str:
    return f"{s.label}: {s.values[-1]:,.0f}"


# ---------------------------------------------------------------- SVG (the HTML report)


def svg_chart(r: TcoResult, width: int = 900, height: int = 440) -> str:
    """The chart as inline SVG (no URLs, no script)."""
    m = chart_model(r)
    left, right, top, bottom = 70, 290, 16, 46
    pw, ph = width - left - right, height - top - bottom

    def x(month: float) -> float:
        return left + month / max(m.months, 1) * pw

    def y(frac: float) -> float:
        return top + ph - frac * ph

    # No xmlns: inline SVG in HTML5 needs none, and the page then holds no URL at all but cited sources.
    out = [(f'<svg viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
            f'aria-label="{html.escape(m.title)}: cumulative cost per option" font-family="sans-serif">'
            '<rect width="100%" height="100%" fill="white"/>')]
    for t in m.y_ticks:
        ty = y(m.frac(t))
        out.append(f'<line x1="{left}" y1="{ty:.1f}" x2="{left + pw}" y2="{ty:.1f}" stroke="#e3e3e3"/>'
                   f'<text x="{left - 6}" y="{ty + 4:.1f}" font-size="11" text-anchor="end">{tick_text(t)}</text>')
    for t in m.x_ticks:
        out.append(f'<line x1="{x(t):.1f}" y1="{top + ph}" x2="{x(t):.1f}" y2="{top + ph + 4}" stroke="#333"/>'
                   f'<text x="{x(t):.1f}" y="{top + ph + 17}" font-size="11" text-anchor="middle">{t}</text>')
    out.append(f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" stroke="#333"/>'
               f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + ph}" stroke="#333"/>'
               f'<text x="{left + pw / 2}" y="{height - 8}" font-size="12" text-anchor="middle">month</text>'
               f'<text x="14" y="{top + ph / 2}" font-size="12" text-anchor="middle" '
               f'transform="rotate(-90 14 {top + ph / 2})">{html.escape(m.y_label)}</text>')
    for s, at in zip(m.series, m.label_at, strict=True):
        pts = " ".join(f"{x(k + 1):.1f},{y(m.frac(v)):.1f}" for k, v in enumerate(s.values))
        dash = (f' stroke-dasharray="{" ".join(f"{d * s.width:g}" for d in s.dash)}" '
                f'stroke-dashoffset="{s.dash_offset * s.width:g}"' if s.dash else "")
        out.append(f'<polyline fill="none" stroke="{s.color}" stroke-width="{s.width:g}"{dash} points="{pts}">'
                   f'<title>{html.escape(end_label(s))}</title></polyline>')
        if m.months == 1:
            out.append(f'<circle cx="{x(1):.1f}" cy="{y(m.frac(s.values[0])):.1f}" r="3" fill="{s.color}"/>')
        ex, ey, ly = x(m.months), y(m.frac(s.values[-1])), y(at)
        out.append(f'<polyline fill="none" stroke="{s.color}" stroke-width="0.8" '
                   f'points="{ex + 2:.1f},{ey:.1f} {ex + 10:.1f},{ly:.1f} {ex + 14:.1f},{ly:.1f}"/>'
                   f'<text x="{ex + 17:.1f}" y="{ly + 4:.1f}" font-size="11" fill="{s.color}">'
                   f'{html.escape(end_label(s))}</text>')
    for k in m.marks:
        cx, cy = x(k.month), y(m.frac(k.value))
        out.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="5" fill="none" stroke="black" stroke-width="2">'
                   f'<title>{html.escape(k.title)}</title></circle>'
                   f'<text x="{cx + 7:.1f}" y="{cy - 7:.1f}" font-size="10">{k.text}</text>')
    out.append("</svg>")
    return "".join(out)


# ---------------------------------------------------------------- matplotlib (--chart FILE.png|.svg)


def chart_format(path: Path) -> str:
    """png or svg, from the file name; anything else is an input error."""
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in ("png", "svg"):
        raise InputError(f"cannot write a chart as {path.name!r}", "end the file name in .png or .svg")
    return fmt


def require_matplotlib() -> None:
    """Load matplotlib for ``--chart``, or fail with the input error that says how to install it.

    ``gpuplan tco`` calls this before costing or writing anything, so an install without the
    ``chart`` extra gets one clear error and no half set of reports (HTML and Markdown
    written, the PNG and the table not).
    """
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display: render straight to a file
        import matplotlib.pyplot  # noqa: F401
        import matplotlib.ticker  # noqa: F401
    except ImportError:
        raise InputError("--chart needs matplotlib, which is not installed: pip install 'gpuplan[chart]' "
                         "(nothing was written)",
                         "or drop --chart: the --html report draws the same chart without it") from None


def write_chart(r: TcoResult, path: Path) -> None:
    """The same chart as the HTML report's, as a PNG or SVG file."""
    fmt = chart_format(path)
    require_matplotlib()
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    m = chart_model(r)
    fig, ax = plt.subplots(figsize=(10, 5.5), dpi=100)
    try:
        fig.subplots_adjust(left=0.09, right=0.66, top=0.92, bottom=0.11)
        ax.set_yscale("log")
        ax.set_ylim(m.y_low, m.y_high)
        ax.set_xlim(0, m.months)
        for s, at in zip(m.series, m.label_at, strict=True):
            months = list(range(1, m.months + 1))
            line, = ax.plot(months, list(s.values), color=s.color, linewidth=s.width,
                            marker="o" if m.months == 1 else None)
            if s.dash:
                line.set_linestyle((s.dash_offset, s.dash))  # matplotlib scales both by the line width
            ax.annotate(end_label(s), xy=(m.months, s.values[-1]), xycoords="data",
                        xytext=(1.03, at), textcoords="axes fraction", va="center", fontsize=8.5, color=s.color,
                        arrowprops={"arrowstyle": "-", "color": s.color, "linewidth": 0.8, "shrinkA": 0,
                                    "shrinkB": 2})
        for k in m.marks:
            ax.plot([k.month], [k.value], "o", markersize=8, markerfacecolor="none", markeredgecolor="black")
            ax.annotate(k.text, (k.month, k.value), textcoords="offset points", xytext=(6, 6), fontsize=8)
        ax.yaxis.set_major_locator(matplotlib.ticker.FixedLocator(list(m.y_ticks)))
        ax.yaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _pos: tick_text(v)))
        ax.xaxis.set_major_locator(matplotlib.ticker.FixedLocator(list(m.x_ticks)))
        ax.set_xlabel("month")
        ax.set_ylabel(m.y_label)
        ax.set_title(m.title)
        ax.grid(True, axis="y", color="#e3e3e3")
        fig.text(0.09, 0.015, STYLE_NOTE, fontsize=7, color="#555")
        # Fixed metadata keeps the file reproducible (no creation date).
        meta = {"Date": None} if fmt == "svg" else {"Software": "gpuplan"}
        fig.savefig(path, format=fmt, metadata=meta)
    finally:
        plt.close(fig)
