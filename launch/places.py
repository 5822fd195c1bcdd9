"""Where to look for machines gpuplan tagged: every provider and region it has launched in, kept beside the ledger.

``ls --reconcile`` and ``down --untracked`` are the way back when the ledger is gone or damaged
(moved aside, a new laptop). They used to look only where the ledger's live launches were, which
is nowhere at all in exactly that case. So each launch also adds its place to a small JSON file
next to the ledger (not in it: it must survive the ledger), and the regions the environment names
(``AWS_REGION``, ``AWS_DEFAULT_REGION``, ``TENCENTCLOUD_REGION``) are searched too.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from pricing.files import write_private

Place = tuple[str, str]  # (provider, region)

# The environment variables that name a provider's region in the user's own cloud configuration.
REGION_ENV = {"aws": ("AWS_REGION", "AWS_DEFAULT_REGION"), "tencent": ("TENCENTCLOUD_REGION",)}
MAX_PLACES = 500  # a file grown past this is not gpuplan's: read none of it rather than query without end


def remembered(path: Path) -> set[Place]:
    """The places in ``path``; none when it is absent or unreadable (it is a help, never a reason to fail)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    if not isinstance(data, list) or len(data) > MAX_PLACES:
        return set()
    return {(p, r) for p, r in (x for x in data if isinstance(x, list) and len(x) == 2)
            if isinstance(p, str) and isinstance(r, str) and _plain(p) and _plain(r)}


def remember(path: Path, provider: str, region: str) -> None:
    """Add a place; a file that cannot be written is left as it is (the ledger holds the launch either way)."""
    have = remembered(path)
    if (provider, region) in have or not (_plain(provider) and _plain(region)):
        return
    try:
        write_private(path, json.dumps(sorted([*have, (provider, region)])) + "\n")
    except OSError:
        pass


def from_environment(env: Mapping[str, str]) -> set[Place]:
    """The regions the user's cloud configuration names (the caller passes its environment)."""
    return {(p, env[v].strip()) for p, names in REGION_ENV.items() for v in names
            if _plain(env.get(v, "").strip())}


def search_places(ledger_places: Iterable[Place], path: Path | None, env: Mapping[str, str]) -> set[Place]:
    """Every place to search: the ledger's (ended launches too), those remembered, the environment's."""
    return {*ledger_places, *(remembered(path) if path is not None else ()), *from_environment(env)}


def _plain(text: str) -> bool:
    """A provider or region name: short, letters, digits and dashes (nothing a hand-edited file could smuggle)."""
    return 0 < len(text) <= 64 and all(c.isascii() and (c.isalnum() or c in "-_") for c in text)
