"""Figures derived from the shipped data files, kept between runs of the program.

Some figures change only when gpuplan or its data files change, yet cost every cold command
to work out again: the relative speed of each GPU is a least-squares fit over ~2,000 rows of
measured throughput (reading and fitting them was ~9 ms of a 280 ms cold `plan`). Such a figure
is kept in the folder the program names (:func:`keep_in`; only the program decides where files
live), keyed by gpuplan's version and the size and modification time of every file it is derived
from, the code that derives it included.

A kept file is data, never code: JSON (:mod:`pricing.keptjson`, which builds only the classes the
caller names) behind a CRC-32 of its bytes, which finds a damaged file (a flipped bit, a torn write);
a hand-made one is kept out by owner and mode, which no checksum could do. It is written 0600 in a
0700 folder whatever the umask (:mod:`pricing.files`), and read only when it and its folder belong to
this user and no one else can write them. A library caller that names no folder, a damaged, foreign or
loosely permitted file, or a folder that cannot be written: the figure is worked out as before (and
written again where it can be), and nothing is said (it is a cache).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

# Where figures are kept, asked of the program when a figure is first wanted (a command that derives
# nothing, `--help`, does not pay for finding the user's cache folder).
_folder: Callable[[], Path] | None = None
_version = ""
# The first line of a kept file: what it is, the format's version and the CRC-32 of the rest (in C: ~0.2 ms
# for the shipped catalog's 170 kB, where SHA-256 took ~1.5 ms of a cold command).
_MAGIC = b"gpuplan-derived 1 "
# Files of earlier gpuplans that ran code when read (pickle, marshal): removed when a figure is written.
_STALE = ("*.pickle", "dataclass-code.*.marshal")


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


def _private(st: os.stat_result) -> bool:
    """Whether a file or folder is this user's and no one else can write it. On POSIX only: Windows reports
    every writable file as 0666 and no owner, and the user's profile folder's access list keeps it theirs."""
    if not hasattr(os, "geteuid"):
        return True
    return st.st_uid == os.geteuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _crc(payload: bytes) -> bytes:
    import zlib

    return b"%08x" % zlib.crc32(payload)


def _read(path: Path) -> bytes | None:
    """The kept payload at ``path`` when it is whole (checksum) and private, else None."""
    if not _private(os.stat(path.parent)):
        return None
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or not _private(st):
            return None
        with os.fdopen(fd, "rb") as f:
            fd = -1
            data = f.read()
    finally:
        if fd != -1:
            os.close(fd)
    head, _, payload = data.partition(b"\n")
    if head != _MAGIC + _crc(payload):
        return None
    return payload


def _write(path: Path, payload: bytes) -> None:
    from pricing.files import write_private

    write_private(path, _MAGIC + _crc(payload) + b"\n" + payload)
    if _private(st := os.stat(path.parent)) and stat.S_IMODE(st.st_mode) != 0o700:
        os.chmod(path.parent, 0o700)  # a folder an older gpuplan made under a loose umask: the user's own now
    for pattern in _STALE:
        for old in path.parent.glob(pattern):
            old.unlink(missing_ok=True)


def _without_gc(build: Callable[..., Any], *args: Any) -> Any:
    """``build(*args)`` with the collector paused: it makes thousands of rows and frees none (as parsing does)."""
    import gc

    was = gc.isenabled()
    gc.disable()
    try:
        return build(*args)
    finally:
        if was:
            gc.enable()


def derived(name: str, sources: Sequence[Path], compute: Callable[[], Any], types: Iterable[type] = ()) -> Any:
    """``compute()``, kept as ``name`` and used again while ``sources`` and the version are unchanged.

    The value is made of plain values (numbers, strings, Decimal, date, lists, tuples, dicts) and of the
    classes in ``types`` (named tuples, pydantic models, enums); only those are built when it is read back.
    """
    if _folder is None or (key := _key(sources)) is None:
        return compute()
    import orjson

    from pricing.keptjson import decode, encode

    path = _folder() / f"{name}.json"
    types = tuple(types)
    try:
        if (payload := _read(path)) is not None:
            kept_key, kept_value = orjson.loads(payload)
            if kept_key == key:
                return _without_gc(decode, kept_value, types)
    except Exception:  # noqa: BLE001 - a missing, damaged, old or foreign file is a miss, never an error
        pass
    value = compute()
    try:
        _write(path, orjson.dumps([key, encode(value)]))
    except Exception:  # noqa: BLE001 - a read-only or full folder, a value JSON cannot hold: worked out next time too
        pass
    return value
