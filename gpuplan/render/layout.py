"""Which columns a terminal table shows, and how wide, so the important ones are never cut.

Rich shrinks every column evenly once wrapping is not enough, which cuts an offer's
name to "p4d.2…" and its cost to "495.…" at 80 columns. Here each column has a
priority: 0 columns (the offer, its cost) keep their full text on one line. When the
table is too wide, the least important columns shown (highest priority number) fold at
spaces down to their longest word; when that is not enough, the least important one is
dropped and named (rightmost first among equals), and so on: a more important column is
never wrapped while a less important one is still on screen. A KEEP column (an
exclusion's reason) folds but is never dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from rich.cells import cell_len

ESSENTIAL = 0  # full text on one line, never dropped
KEEP = -1  # never dropped, but wraps like any other column
LONG_WORD = 24  # a longer word (a URL in a note) is folded across lines rather than widen its column


class Layout(NamedTuple):
    """The columns to show (indexes into the caller's list), their content widths, and the dropped ones."""

    shown: tuple[int, ...]
    widths: tuple[int, ...]
    dropped: tuple[int, ...]
    total: int  # the table's width in cells, borders included


def table_width(content_widths: Sequence[int]) -> int:
    """A boxed rich table: one cell of padding either side of each column, a border between and around."""
    return sum(content_widths) + 3 * len(content_widths) + 1


def _longest_word(text: str) -> int:
    return max((cell_len(w) for w in text.split()), default=0)


def _longest_line(text: str) -> int:
    return max((cell_len(line) for line in text.splitlines()), default=0)


def fit_columns(headers: Sequence[str], cells: Sequence[Sequence[str]], priorities: Sequence[int],
                width: int | None) -> Layout:
    """Lay out columns for ``width`` cells (None: as wide as the content wants, i.e. ``--wide``)."""
    n = len(headers)
    natural = [max([_longest_line(headers[i]), *(_longest_line(row[i]) for row in cells)]) for i in range(n)]
    least = []
    for i in range(n):
        words = max([_longest_word(headers[i]), *(min(_longest_word(row[i]), LONG_WORD) for row in cells)])
        full = max(_longest_line(row[i]) for row in cells) if cells else 0
        least.append(max(words, full) if priorities[i] == ESSENTIAL else words)
    shown = list(range(n))
    dropped: list[int] = []
    widths = {i: natural[i] for i in shown}
    while width is not None and table_width(list(widths.values())) > width:
        excess = table_width(list(widths.values())) - width
        droppable = [i for i in shown if priorities[i] > ESSENTIAL]
        # Only the least important columns shown (and KEEP ones, which never go) may fold: a
        # more important column is not wrapped while a less important one is still on screen.
        tier = max((priorities[i] for i in droppable), default=None)
        foldable = [i for i in shown if priorities[i] == KEEP or (tier is not None and priorities[i] == tier)]
        if tier is None or sum(natural[i] - least[i] for i in foldable) >= excess:
            _shrink(widths, least, foldable, excess)
            break  # fits, or only essential columns are left: the table overflows, uncut
        # The highest priority number goes first; among equals, the rightmost.
        victim = max(droppable, key=lambda i: (priorities[i], i))
        shown.remove(victim)
        dropped.append(victim)
        del widths[victim]
    content = tuple(widths[i] for i in shown)
    return Layout(shown=tuple(shown), widths=content, dropped=tuple(sorted(dropped)), total=table_width(content))


def _shrink(widths: dict[int, int], least: list[int], foldable: list[int], excess: int) -> None:
    """Take ``excess`` cells from ``foldable`` columns, widest slack first, never below their least width."""
    while excess > 0:
        slack = [i for i in foldable if widths[i] > least[i]]
        if not slack:
            return
        widest = max(slack, key=lambda i: (widths[i] - least[i], i))
        widths[widest] -= 1
        excess -= 1
