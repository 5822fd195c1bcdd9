"""A long answer written on two cores: a forked copy of the process works from the end, this one from the start.

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

One process does it all off Linux (Windows has no fork; on macOS a fork without exec is unsafe once
system frameworks have started threads of their own), with ``GPUPLAN_NO_FORK`` set (to anything but
"" or "0"), where there is one CPU, another thread running (native ones included), too few items to
repay a fork, or when the child fails (this process then works out the child's blocks itself, so a
fault shows as it would without the child).

The rule for what the child runs (``text``): no side effects. It may only read the plan and return
text. Whatever else it did (write a file, the ledger, a log, a cache, take a lock, call a provider,
print) would happen twice or half, unseen by this process, and nothing it changes in memory comes back.
The child leaves through ``os._exit``: no exit handlers, no flushed buffers of this process's files.

A SIGTERM to this process while the child works ends the child too (and waits for it), as SIGINT
(Ctrl-C) does: no child is left running after the answer was abandoned.
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
    # A fork copies only the calling thread: a lock another thread held (an import, a log handler, a native
    # library's pool) would stay held in the child for good. The CLI runs one thread; a library caller with
    # more writes in one process. Linux lists every thread of the process, native ones too.
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        import threading

        return threading.active_count()


def _may_fork() -> bool:
    """Linux only (see the module's docstring), and not where the user turned it off."""
    off = os.environ.get("GPUPLAN_NO_FORK", "") not in ("", "0")
    return sys.platform.startswith("linux") and hasattr(os, "fork") and not off


class _Terminated(SystemExit):
    """SIGTERM, raised in this process after its child was ended and reaped."""


_child = 0  # the working child's pid, while there is one


def _end_child() -> None:
    global _child
    if _child:
        pid, _child = _child, 0
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except OSError:
            pass


def _on_signal(signum: int, frame: object) -> None:
    # In the handler itself, not in a `finally` of the generator: the signal may come while this process
    # is anywhere (writing out a block), and a suspended generator is closed only when it is collected.
    _end_child()
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise _Terminated(128 + signum)


def _catch_signals() -> dict[int, object]:
    """SIGTERM and SIGINT end the child first while it works; the handlers replaced (none where the caller set
    its own, or off the main thread, where none may be set)."""
    replaced: dict[int, object] = {}
    for signum, default in ((signal.SIGTERM, signal.SIG_DFL), (signal.SIGINT, signal.default_int_handler)):
        try:
            if signal.getsignal(signum) is default:
                replaced[signum] = signal.signal(signum, _on_signal)
        except ValueError:  # not the main thread
            break
    return replaced


def _restore(replaced: dict[int, object]) -> None:
    for signum, handler in replaced.items():
        signal.signal(signum, handler)  # type: ignore[arg-type]  # what _catch_signals replaced


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

    ``text(start, stop)`` gives the text of items ``start`` to ``stop - 1``, must depend on nothing but
    them (the child's blocks are written before this process reads on) and must have no side effects.
    """
    global _child
    if count < MIN_ITEMS or not _may_fork() or _cores() < 2 or _threads() > 1:
        yield from text(0, count)
        return
    blocks = -(-count // BLOCK)

    def items(block: int) -> Iterator[str]:
        return text(block * BLOCK, min(count, (block + 1) * BLOCK))

    with tempfile.TemporaryFile(prefix="gpuplan-") as spill:
        shared = _Blocks(blocks, spill.fileno())
        sys.stdout.flush()  # what is buffered is written once, by this process
        sys.stderr.flush()
        replaced = _catch_signals()
        try:
            pid = _child = os.fork()
        except OSError:
            _restore(replaced)
            yield from text(0, count)
            return
        if pid == 0:  # the child: blocks from the back into the scratch file, then out without running exit handlers
            code = 1
            try:
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
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
            pid = _child = 0
            first = shared.front()
            if status == 0:
                fd = spill.fileno()
                for block in range(first, blocks):
                    offset, length = shared.where(block)
                    yield os.pread(fd, length, offset).decode(_ENCODING, _ERRORS)
            else:
                yield from text(first * BLOCK, count)
        finally:
            _end_child()  # interrupted, or the reader stopped: the child's part is not wanted
            _restore(replaced)
            shared.shared.close()
