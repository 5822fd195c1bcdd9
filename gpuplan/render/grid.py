"""A boxed table written line by line when every cell fits its column: what rich's ``Table`` prints, faster.

rich's Table renders each cell as a renderable of its own (measure, wrap, justify, pad, crop): about
0.5 ms per row of a plan's eleven columns, most of the time a cold ``plan`` spends drawing. When every
cell is one printable line no wider than its column (the layout makes each column as wide as its
longest cell unless the terminal is too narrow), there is nothing to wrap, and the same characters
and styles can be written directly. A table with a cell that must wrap stays with rich's Table
(``fits`` says which). The title and caption are rendered by rich as its Table renders them, so
markup, wrapping and styles there are rich's own; tests compare the two byte for byte.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, NamedTuple

from rich.cells import cell_len

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions
    from rich.segment import Segment


def fits(headers: Sequence[str], rows: Sequence[Sequence[str]], widths: Sequence[int]) -> bool:
    """Every header and cell one printable line (no tab, newline or control character) within its width,
    and no header that rich would read as markup."""
    for col, w in enumerate(widths):
        h = headers[col]
        if not h.isprintable() or cell_len(h) > w or "[" in h:  # rich reads markup in a header
            return False
        for row in rows:
            c = row[col]
            if not c.isprintable() or cell_len(c) > w:
                return False
    return True


def _justified(text: str, width: int, justify: str) -> str:
    if justify != "left":
        text = text.rstrip()  # as rich's Lines.justify does before it centres or right-aligns
    pad = width - cell_len(text)
    if justify == "right":
        return " " * pad + text
    if justify == "center":
        left = pad // 2
        return " " * left + text + " " * (pad - left)
    return text + " " * pad


class Grid(NamedTuple):
    """A rich renderable: rich's default boxed table (heavy head, one space of padding, bold header) of
    cells that :func:`fits` accepted, with ``widths`` the content width of each column."""

    headers: Sequence[str]
    justify: Sequence[str]
    widths: Sequence[int]
    rows: Sequence[Sequence[str]]
    title: str | None = None
    caption: str | None = None
    caption_justify: str = "left"

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Segment]:
        from rich import box
        from rich.segment import Segment

        padded = [w + 2 for w in self.widths]
        table_width = sum(padded) + len(padded) + 1
        annotation = options.update(width=table_width, highlight=False, height=None)

        def render_annotation(text: str, style: str, justify: str) -> Iterator[Segment]:
            # as rich's Table.__rich_console__ renders its title and caption
            rendered = console.render_str(text, style=style, highlight=False)
            return console.render(rendered, options=annotation.update(justify=justify))  # type: ignore[arg-type]

        if self.title:
            yield from render_annotation(self.title, "table.title", "center")
        b = box.HEAVY_HEAD.substitute(options, safe=console.safe_box)
        border = console.get_style("")
        new_line = Segment.line()
        yield Segment(b.get_top(padded), border)
        yield new_line
        # The header: each cell padded and justified in the header style, as three segments like rich's.
        header_style = console.get_style("table.header")
        pad = Segment(" ", header_style)
        yield Segment(b.head_left, border)
        for col, (h, w) in enumerate(zip(self.headers, self.widths, strict=True)):
            if col:
                yield Segment(b.head_vertical, border)
            yield pad
            yield Segment(_justified(h, w, self.justify[col]), header_style)
            yield pad
        yield Segment(b.head_right, border)
        yield new_line
        yield Segment(b.get_row(padded, "head", edge=True), border)
        yield new_line
        # Body cells carry no style, so a row is one segment of plain text.
        last = len(self.rows) - 1
        mid = f" {b.mid_vertical} "
        foot = f" {b.foot_vertical} "
        for i, row in enumerate(self.rows):
            left, divider, right = (b.foot_left, foot, b.foot_right) if i == last else (b.mid_left, mid, b.mid_right)
            cells = divider.join(_justified(c, w, self.justify[col])
                                 for col, (c, w) in enumerate(zip(row, self.widths, strict=True)))
            yield Segment(f"{left} {cells} {right}", border)
            yield new_line
        yield Segment(b.get_bottom(padded), border)
        yield new_line
        if self.caption:
            yield from render_annotation(self.caption, "table.caption", self.caption_justify)
