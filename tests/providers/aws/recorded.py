"""Recorded AWS response pages (see data/README.md) and the fixed clock the price tests read them at."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data"
NOW = datetime(2026, 12, 2, 14, 5, tzinfo=UTC)


def _datetimes(value: Any) -> Any:
    # botocore parses timestamps into datetimes; the recorded JSON keeps them as text.
    if isinstance(value, dict):
        return {k: (datetime.fromisoformat(v) if k == "Timestamp" else _datetimes(v))
                for k, v in value.items()}
    if isinstance(value, list):
        return [_datetimes(v) for v in value]
    return value


def recorded(name: str) -> dict[str, Any]:
    data: dict[str, Any] = _datetimes(json.loads((DATA / name).read_text(encoding="utf-8")))
    return data
