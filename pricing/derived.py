"""Figures derived from the shipped data files, kept between runs of the program.

Some figures change only when gpuplan or its data files change, yet cost every cold command
to work out again: the relative speed of each GPU is a least-squares fit over ~2,000 rows of
measured throughput (reading and fitting them was ~9 ms of a 280 ms cold `plan`). Such a figure
is kept as JSON in the folder the program names (:func:`keep_in`; only the program decides
where files live), keyed by gpuplan's version and the size and modification time of every
file it is derived from, the code that derives it included. A library caller that names no
folder, an unreadable or damaged file, or a folder that cannot be written: the figure is
worked out as before, and nothing is said (it is a cache).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

_folder: Path | None = None
_version = ""


def keep_in(folder: Path | None, version: str = "") -> None:
    """Keep derived figures in ``folder`` from now on, under the program's ``version`` (None: work them out
    every time)."""
    global _folder, _version
    _folder, _version = folder, version


def _key(sources: Sequence[Path]) -> list[Any] | None:
    key: list[Any] = [_version]
    for path in sources:
        try:
            st = os.stat(path)
        except OSError:
            return None  # not a plain file (a zipped install): never kept
        key.append([str(path), st.st_size, st.st_mtime_ns])
    return key


def derived(name: str, sources: Sequence[Path], compute: Callable[[], Any], *, whole_object: bool = False) -> Any:
    """``compute()``, kept as ``name`` and used again while ``sources`` and the version are unchanged.

    A JSON value by default; ``whole_object`` keeps any picklable object (the parsed shipped catalog), in a file
    only this user's gpuplan writes and reads (the cache folder is the user's own).
    """
    folder = _folder
    if folder is None or (key := _key(sources)) is None:
        return compute()
    path = folder / (f"{name}.pickle" if whole_object else f"{name}.json")
    try:
        if whole_object:
            import pickle

            with open(path, "rb") as f:
                kept_key, kept_value = pickle.load(f)
            if kept_key == key:
                return kept_value
        else:
            kept = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(kept, dict) and kept.get("key") == key and "value" in kept:
                return kept["value"]
    except Exception:  # noqa: BLE001 - any damaged, old or foreign file is a miss, never an error
        pass
    value = compute()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        if whole_object:
            import pickle

            tmp.write_bytes(pickle.dumps((key, value), protocol=pickle.HIGHEST_PROTOCOL))
        else:
            tmp.write_text(json.dumps({"key": key, "value": value}), encoding="utf-8")
        os.replace(tmp, path)  # whole or not at all: a reader never sees half a file
    except (OSError, TypeError, ValueError, AttributeError):
        pass  # cannot be written (read-only cache) or kept (not picklable): it is worked out next time too
    return value
