"""A long answer written on two cores: the second half worked out by a forked copy of the process.

A JSON or CSV plan over a 50k-row catalog costs ~40k options in full, one by one, and that
work, not the writing, is most of its time. Each option depends only on the plan, which a
forked child has as it was, so the child costs and writes the second half to a scratch file
while this process writes the first half; then the child's half is copied out after it. The
answer is the same text, in the same order, as one process would write.

One process does it all where there is one CPU, no ``os.fork`` (Windows), another thread running,
too few items to repay a fork, or the child fails (this process then works out the second half itself, so a
fault shows as it would without the child).
"""

from __future__ import annotations

import os
import signal
import sys
import tempfile
from collections.abc import Callable, Iterator

# Below this many items a fork (~10 ms here) and a scratch file cost more than the half they save.
MIN_ITEMS = 4000
_CHUNK = 1 << 20
# This process takes a little less than half: it also writes its half to stdout and copies the child's after it.
# With equal halves of a 50k-row plan the child finished first, in a median 0.9x this process's time over six
# runs (0.62-1.02x); 0.48 evens them. (Before the frozen heap, the child's copied pages made it the slower one.)
PARENT_SHARE = 0.48


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _threads() -> int:
    # A fork copies only the calling thread: a lock another thread held (an import, a log handler) would stay
    # held in the child for good. The CLI runs one thread; a library caller with more writes in one process.
    import threading

    return threading.active_count()


def in_halves(count: int, text: Callable[[int, int], Iterator[str]]) -> Iterator[str]:
    """``text(0, count)``, with the last ~52% (``text(mid, count)``) worked out by a forked child where that pays.

    ``text(start, stop)`` gives the text of items ``start`` to ``stop - 1`` and must depend on nothing
    but them (the child's half is written before this process reads on).
    """
    if count < MIN_ITEMS or not hasattr(os, "fork") or _cores() < 2 or _threads() > 1:
        yield from text(0, count)
        return
    mid = int(count * PARENT_SHARE)
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8", prefix="gpuplan-") as spill:
        sys.stdout.flush()  # what is buffered is written once, by this process
        sys.stderr.flush()
        try:
            pid = os.fork()
        except OSError:
            yield from text(0, count)
            return
        if pid == 0:  # the child: its half into the scratch file, then out without running exit handlers
            code = 1
            try:
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                spill.writelines(text(mid, count))
                spill.flush()
                code = 0
            finally:
                os._exit(code)
        try:
            yield from text(0, mid)
            _, status = os.waitpid(pid, 0)
            pid = 0
            if status == 0:
                spill.seek(0)
                yield from iter(lambda: spill.read(_CHUNK), "")
            else:
                yield from text(mid, count)
        finally:
            if pid:  # interrupted, or the reader stopped: the child's half is not wanted
                try:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                except OSError:
                    pass
