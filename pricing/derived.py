"""Figures derived from the shipped data files, kept between runs of the program.

Some figures change only when gpuplan or its data files change, yet cost every cold command
to work out again: the relative speed of each GPU is a least-squares fit over ~2,000 rows of
measured throughput (reading and fitting them was ~9 ms of a 280 ms cold `plan`). Such a figure
is kept, pickled, in the folder the program names (:func:`keep_in`; only the program decides
where files live), keyed by gpuplan's version and the size and modification time of every
file it is derived from, the code that derives it included. A library caller that names no
folder, an unreadable or damaged file, or a folder that cannot be written: the figure is
worked out as before, and nothing is said (it is a cache).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

# Where figures are kept, asked of the program when a figure is first wanted (a command that derives
# nothing, `--help`, does not pay for finding the user's cache folder).
_folder: Callable[[], Path] | None = None
_version = ""


def keep_in(folder: Callable[[], Path] | None, version: str = "") -> None:
    """Keep derived figures in the folder ``folder()`` names from now on, under the program's ``version``
    (None: work them out every time)."""
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


def derived(name: str, sources: Sequence[Path], compute: Callable[[], Any]) -> Any:
    """``compute()``, kept as ``name`` and used again while ``sources`` and the version are unchanged.

    Any picklable value (fitted speeds, the parsed shipped catalog), pickled in a file only this user's gpuplan
    writes and reads (the cache folder is the user's own).
    """
    if _folder is None or (key := _key(sources)) is None:
        return compute()
    import pickle

    path = _folder() / f"{name}.pickle"
    try:
        kept_key, kept_value = pickle.loads(path.read_bytes())
        if kept_key == key:
            return kept_value
    except Exception:  # noqa: BLE001 - any damaged, old or foreign file is a miss, never an error
        pass
    value = compute()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(pickle.dumps([key, value], protocol=pickle.HIGHEST_PROTOCOL))
        os.replace(tmp, path)  # whole or not at all: a reader never sees half a file
    except (OSError, TypeError, ValueError, AttributeError, pickle.PicklingError):
        pass  # cannot be written (read-only cache) or kept (not picklable): it is worked out next time too
    return value
