"""Which columns a terminal table shows, and how wide, so the important ones are never cut.

Rich shrinks every column evenly once wrapping is not enough, which cuts an offer's
name to "p4d.2…" and its cost to "495.…" at 80 columns. Here each column has a
priority: 0 columns (the offer, its cost) keep their full text on one line; the others
wrap at spaces down to their longest word, and when even that does not fit, the
least important (highest priority number, rightmost first) are dropped and named.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict
from rich.cells import cell_len

ESSENTIAL = 0  # full text on one line, never dropped
KEEP = -1  # never dropped, but wraps like any other column
LONG_WORD = 24  # a longer word (a URL in a note) is folded across lines rather than widen its column


class Layout(BaseModel):
    """The columns to show (indexes into the caller's list), their content widths, and the dropped ones."""

    model_config = ConfigDict(frozen=True)

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


def fit_columns(headers: Sequence[str], cells: Sequence[Sequence[str]], priorities: Sequence[int], width: int | None) -> Layout:
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
    if width is not None:
        while table_width([least[i] for i in shown]) > width:
            candidates = [i for i in shown if priorities[i] > ESSENTIAL]
            if not candidates:
                break
            # The highest priority number goes first; among equals, the rightmost.
            victim = max(candidates, key=lambda i: (priorities[i], i))
            shown.remove(victim)
            dropped.append(victim)
    widths = {i: natural[i] for i in shown}
    excess = table_width(list(widths.values())) - width if width is not None else 0
    while excess > 0:
        slack = [i for i in shown if widths[i] > least[i]]
        if not slack:
            break  # only essential columns left and still too wide: the table overflows, uncut
        widest = max(slack, key=lambda i: (widths[i] - least[i], i))
        widths[widest] -= 1
        excess -= 1
    content = tuple(widths[i] for i in shown)
    return Layout(shown=tuple(shown), widths=content, dropped=tuple(sorted(dropped)), total=table_width(content))
