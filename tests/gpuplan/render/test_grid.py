"""The fast table: the same bytes as rich's Table for every table whose cells fit, on a pipe and on a terminal."""

from __future__ import annotations

import io

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from gpuplan.render.grid import Grid, fits

# Printable text as offers, regions and prices come: ASCII, accented and wide (CJK) letters, brackets
# (which must not be read as markup in a cell), and empty cells.
CELL = st.text(alphabet=st.sampled_from(list("abcXYZ019 .,-_%+x()[]/:") + ["é", "华", "北", "ü"]), max_size=14)
# Headers are gpuplan's own words; titles and captions go through rich's markup as before (no '[', so
# no markup error either way).
HEADER = st.text(alphabet=st.sampled_from(list("abcXYZ019 .-#%")), max_size=10)
NOTE = st.text(alphabet=st.sampled_from(list("abc XYZ 01.,:()-")), max_size=60)


def consoles(width: int) -> list[Console]:
    return [
        Console(file=io.StringIO(), width=width, soft_wrap=False, emoji=False),  # a pipe: no escape codes
        Console(file=io.StringIO(), width=width, soft_wrap=False, emoji=False, force_terminal=True,
                color_system="truecolor"),
        Console(file=io.StringIO(), width=width, soft_wrap=False, emoji=False, force_terminal=True,
                color_system="standard", no_color=True),
        Console(file=io.StringIO(), width=width, soft_wrap=False, emoji=False, safe_box=True, legacy_windows=False,
                force_terminal=False),
    ]


def rich_table(headers: list[str], justify: list[str], widths: list[int], rows: list[list[str]],
               title: str | None, caption: str | None) -> Table:
    table = Table(title=title, caption=caption, caption_justify="left")
    for h, j, w in zip(headers, justify, widths, strict=True):
        table.add_column(h, justify=j, width=w, overflow="fold")  # type: ignore[arg-type]
    for row in rows:
        table.add_row(*(Text(c) for c in row))
    return table


def printed(console: Console, renderable: object) -> str:
    console.print(renderable)
    out = console.file.getvalue()  # type: ignore[attr-defined]
    console.file = io.StringIO()
    return out


@st.composite
def tables(draw: st.DrawFn) -> tuple[list[str], list[str], list[int], list[list[str]], str | None, str | None]:
    n = draw(st.integers(1, 6))
    headers = draw(st.lists(HEADER, min_size=n, max_size=n))
    rows = draw(st.lists(st.lists(CELL, min_size=n, max_size=n), max_size=6))
    justify = draw(st.lists(st.sampled_from(["left", "right", "center"]), min_size=n, max_size=n))
    slack = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    widths = [max([1, cell_len(headers[i]), *(cell_len(r[i]) for r in rows)]) + slack[i] for i in range(n)]
    title = draw(st.one_of(st.none(), NOTE))
    caption = draw(st.one_of(st.none(), NOTE))
    return headers, justify, widths, rows, title or None, caption or None


@settings(max_examples=150, deadline=None)
@given(tables())
def test_a_fitting_table_prints_as_rich_prints_it(t: tuple) -> None:
    headers, justify, widths, rows, title, caption = t
    assert fits(headers, rows, widths)
    width = sum(widths) + 3 * len(widths) + 1
    for console in consoles(width):
        expected = printed(console, rich_table(headers, justify, widths, rows, title, caption))
        assert printed(console, Grid(headers, justify, widths, rows, title=title, caption=caption)) == expected


def test_a_cell_wider_than_its_column_or_on_two_lines_does_not_fit() -> None:
    assert fits(["offer"], [["p4d.24xlarge"]], [12])
    assert not fits(["offer"], [["p4d.24xlarge"]], [11])  # it would wrap: rich's Table draws it
    assert not fits(["offer"], [["p4d\n24xlarge"]], [12])
    assert not fits(["offer"], [["p4d\t24"]], [12])  # a tab is expanded by rich
    assert not fits(["offer"], [["华北"]], [3])  # two wide characters take four cells
    assert not fits(["a long header"], [["x"]], [5])
    assert not fits(["[b]offer"], [["x"]], [8])  # rich reads markup in a header: its Table draws it


def test_markup_in_a_cell_is_printed_as_given() -> None:
    console = consoles(40)[0]
    out = printed(console, Grid(["offer"], ["left"], [12], [["[bold]x[/]"]]))
    assert "[bold]x[/]" in out
