"""The part of a data file's note that a user reads.

The shipped CSVs keep their research trail in the ``notes`` column ("VERIFIED text: '...'",
"RECALLED", "Blog, weak source"): how a figure was checked, for whoever maintains the data.
That trail stays in the files; what gpuplan prints is only what comes before it (a price's
"low end of quoted range 22000-25000", a tracker's "condition not stated").
"""

from __future__ import annotations

import re

# Where a note's research trail starts: a verification marker, a judgement of the source, or bookkeeping
# of how a date was chosen. Everything from the first one on is for maintainers.
_TRAIL = re.compile(r"\b(?:VERIFIED|RECALLED|NOT VERIFIED|UNVERIFIED)\b|\bweak source\b|\bBlog,|\bas_of\s*=",
                    re.IGNORECASE)


# What gpuplan itself appends to a row's note after the data file's text (pricing.catalog.layers): kept.
_ADDED = re.compile(r"(?:^|;\s*)(enterprise discount [^;]*)")


def public_note(note: str) -> str:
    """``note`` up to its research trail, without trailing separators, and what gpuplan appended after it (an
    enterprise discount); empty when it is all trail."""
    m = _TRAIL.search(note)
    if m is None:
        return note.strip().rstrip(";,.-: ").strip()
    head = note[:m.start()].strip().rstrip(";,.-: ").strip()
    added = [a.group(1).strip() for a in _ADDED.finditer(note, m.start())]
    return "; ".join(x for x in (head, *added) if x)


# A source's own verification marker ("NVIDIA spec page (recalled)"): how it was read, for the data's maintainers.
_MARK = re.compile(r"\s*\((?:recalled|verified|not verified)\)", re.IGNORECASE)


def public_source(source: str) -> str:
    """``source`` without the data file's marks of how it was checked."""
    return _MARK.sub("", source)
