"""gpuplan's own files, private to the user whatever the umask.

The saved plan decides what ``launch --from-plan`` starts and the price cache what ``--max-cost``
checks: another local user must not be able to read or rewrite them.
"""

from __future__ import annotations

import os
from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600


def private_dir(path: Path) -> Path:
    """Make ``path`` and every missing parent, each created 0700 (existing folders are left as they are)."""
    missing = []
    p = path
    while not p.exists():
        missing.append(p)
        if p.parent == p:
            break
        p = p.parent
    for d in reversed(missing):
        try:
            d.mkdir(mode=DIR_MODE)
        except FileExistsError:
            continue  # another gpuplan made it meanwhile
        os.chmod(d, DIR_MODE)  # mkdir's mode is masked by the umask: set it as meant
    return path


def write_private(path: Path, data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8, or bytes) to ``path`` atomically (a reader never sees half a file), mode 0600."""
    private_dir(path.parent)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0), FILE_MODE)
    try:
        # os.open's mode is masked by the umask: set it as meant (os.fchmod is missing on Windows before 3.13,
        # where a file's mode is only read-only or not, and the user's profile folder keeps it theirs)
        if hasattr(os, "fchmod"):
            os.fchmod(fd, FILE_MODE)
        else:
            os.chmod(tmp, FILE_MODE)
        with os.fdopen(fd, "wb") if isinstance(data, bytes) else os.fdopen(fd, "w", encoding="utf-8") as f:
            fd = -1
            f.write(data)  # type: ignore[arg-type]  # bytes to the binary file, text to the text one
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if fd != -1:
            os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
