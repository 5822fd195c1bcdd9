"""A long answer written on two cores: a forked copy of the process works from the end while this one works from the start.

A JSON or CSV plan over a 50k-row catalog costs ~40k options in full, one by one, and that
work, not the writing, is most of its time. Each option depends only on the plan, which a
forked child has as it was. The items are cut into blocks of ``BLOCK``: this process takes
blocks from the front and writes them, the child takes blocks from the back into a scratch
file, each claiming its next block under a lock, until they meet. Then the child's blocks are
copied out after this process's, in order. The answer is the same text, in the same order, as
one process would write.

Where they meet follows how fast each one goes: a fixed split left one of them waiting. (The
child is slower per item, as each page of the plan it touches is copied on first write, and
this process also writes its part and copies the child's; the best fixed share moved from 44%
to 52% between rounds, and on a noisy machine one waited up to a quarter of a second.)

One process does it all where there is one CPU, no ``os.fork`` (Windows), another thread running,
too few items to repay a fork, or the child fails (this process then works out the child's blocks
itself, so a fault shows as it would without the child).
"""

from __future__ import annotations

import os
import signal
import struct
import sys
import tempfile
from collections.abc import Callable, Iterator

# Below this many items a fork (~10 ms here) and a scratch file cost more than the half they save.
MIN_ITEMS = 4000
# Items per block: a claim is two lock calls (~5 us); a block of a JSON plan's options is ~6 ms of work,
# the most either process can be left waiting at the end.
BLOCK = 128
_ENCODING = "utf-8"
_ERRORS = "surrogatepass"  # any str the text holds comes back the same
_PAIR = struct.Struct("qq")


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


class _Blocks:
    """The blocks left, shared by the two processes: [front, back) in a shared page, changed under a lock.

    After the front pair, one (offset, length) pair per block says where the child wrote it in the scratch file.
    """

    def __init__(self, blocks: int, lock_fd: int) -> None:
        import mmap

        self.lock_fd = lock_fd
        self.shared = mmap.mmap(-1, _PAIR.size * (blocks + 1))  # anonymous and shared with a forked child
        _PAIR.pack_into(self.shared, 0, 0, blocks)

    def _take(self, front: bool) -> int | None:
        import fcntl

        # A POSIX record lock on the scratch file's first byte: held by one process at a time (a lock is
        # the process's own, so the child's does not count as the parent's), and placed at a fixed offset,
        # whatever the file position the two processes share after the fork.
        fcntl.lockf(self.lock_fd, fcntl.LOCK_EX, 1, 0, os.SEEK_SET)
        try:
            first, end = _PAIR.unpack_from(self.shared, 0)
            if first >= end:
                return None
            taken = first if front else end - 1
            _PAIR.pack_into(self.shared, 0, first + front, end - (not front))
            return taken
        finally:
            fcntl.lockf(self.lock_fd, fcntl.LOCK_UN, 1, 0, os.SEEK_SET)

    def from_front(self) -> int | None:
        return self._take(True)

    def from_back(self) -> int | None:
        return self._take(False)

    def front(self) -> int:
        """The first block this process did not take: every block from here on is the child's."""
        return _PAIR.unpack_from(self.shared, 0)[0]

    def written(self, block: int, offset: int, length: int) -> None:
        _PAIR.pack_into(self.shared, _PAIR.size * (block + 1), offset, length)

    def where(self, block: int) -> tuple[int, int]:
        return _PAIR.unpack_from(self.shared, _PAIR.size * (block + 1))


def in_halves(count: int, text: Callable[[int, int], Iterator[str]]) -> Iterator[str]:
    """``text(0, count)``, worked out on two cores where that pays: this process from the front, a forked child
    from the back, meeting where their speeds put them.

    ``text(start, stop)`` gives the text of items ``start`` to ``stop - 1`` and must depend on nothing
    but them (the child's blocks are written before this process reads on).
    """
    if count < MIN_ITEMS or not hasattr(os, "fork") or _cores() < 2 or _threads() > 1:
        yield from text(0, count)
        return
    blocks = -(-count // BLOCK)

    def items(block: int) -> Iterator[str]:
        return text(block * BLOCK, min(count, (block + 1) * BLOCK))

    with tempfile.TemporaryFile(prefix="gpuplan-") as spill:
        shared = _Blocks(blocks, spill.fileno())
        sys.stdout.flush()  # what is buffered is written once, by this process
        sys.stderr.flush()
        try:
            pid = os.fork()
        except OSError:
            yield from text(0, count)
            return
        if pid == 0:  # the child: blocks from the back into the scratch file, then out without running exit handlers
            code = 1
            try:
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                offset = 0
                while (block := shared.from_back()) is not None:
                    data = "".join(items(block)).encode(_ENCODING, _ERRORS)
                    spill.write(data)
                    shared.written(block, offset, len(data))
                    offset += len(data)
                spill.flush()
                code = 0
            finally:
                os._exit(code)
        try:
            while (block := shared.from_front()) is not None:
                yield from items(block)
            _, status = os.waitpid(pid, 0)
            pid = 0
            first = shared.front()
            if status == 0:
                fd = spill.fileno()
                for block in range(first, blocks):
                    offset, length = shared.where(block)
                    yield os.pread(fd, length, offset).decode(_ENCODING, _ERRORS)
            else:
                yield from text(first * BLOCK, count)
        finally:
            if pid:  # interrupted, or the reader stopped: the child's part is not wanted
                try:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                except OSError:
                    pass
            shared.shared.close()
