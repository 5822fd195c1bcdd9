"""A long JSON or CSV answer written on two cores reads exactly as one process writes it."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gpuplan.render import halves
from gpuplan.render.halves import in_halves

Run = Callable[..., tuple[int, str, str]]

two_cores = pytest.mark.skipif(not hasattr(os, "fork") or halves._cores() < 2, reason="needs os.fork and two cores")


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of 10 items, forked from 2: a few hundred slow items show how the work is shared."""
    monkeypatch.setattr(halves, "BLOCK", 10)
    monkeypatch.setattr(halves, "MIN_ITEMS", 2)


@pytest.fixture(autouse=True)
def one_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    # Earlier tests of the session may leave a server thread running; the texts forked here take no lock.
    monkeypatch.setattr(halves, "_threads", lambda: 1)


def _numbers(start: int, stop: int) -> Iterator[str]:
    return (f"{i}\n" for i in range(start, stop))


def _timed(parent: int, parent_s: float, child_s: float) -> Callable[[int, int], Iterator[str]]:
    """Items that take ``parent_s`` each in this process and ``child_s`` in the child, saying who wrote them."""

    def text(start: int, stop: int) -> Iterator[str]:
        mine = os.getpid() == parent
        for i in range(start, stop):
            time.sleep(parent_s if mine else child_s)
            yield f"{i} {mine}\n"

    return text


def _who_wrote(lines: list[str], n: int) -> int:
    """How many items this process wrote, after checking each item is there once, in order, its own first."""
    assert [int(line.split()[0]) for line in lines] == list(range(n))
    mine = [line.split()[1] == "True" for line in lines]
    split = mine.index(False) if False in mine else n
    assert all(mine[:split]) and not any(mine[split:])  # one run each, this process's first
    return split


@two_cores
@pytest.mark.usefixtures("small_blocks")
def test_the_end_of_a_long_answer_is_written_by_another_process_in_its_place() -> None:
    n = 401
    split = _who_wrote("".join(in_halves(n, _timed(os.getpid(), 0.001, 0.001))).splitlines(), n)
    assert 0.2 * n < split < 0.8 * n


@two_cores
@pytest.mark.usefixtures("small_blocks")
def test_where_the_two_meet_follows_their_speed() -> None:
    # A fixed split left one process waiting for the other; the faster one now takes more blocks.
    n = 400
    slow_child = _who_wrote("".join(in_halves(n, _timed(os.getpid(), 0.0005, 0.003))).splitlines(), n)
    slow_parent = _who_wrote("".join(in_halves(n, _timed(os.getpid(), 0.003, 0.0005))).splitlines(), n)
    assert slow_child > 0.6 * n and slow_parent < 0.4 * n


@two_cores
def test_a_child_that_fails_leaves_its_half_to_this_process() -> None:
    parent = os.getpid()

    def text(start: int, stop: int) -> Iterator[str]:
        if os.getpid() != parent:
            raise RuntimeError("the child's half fails")
        return _numbers(start, stop)

    n = halves.MIN_ITEMS + 10
    assert "".join(in_halves(n, text)) == "".join(_numbers(0, n))


@two_cores
@pytest.mark.usefixtures("small_blocks")
def test_a_child_that_fails_after_some_blocks_leaves_them_all_to_this_process() -> None:
    parent, n = os.getpid(), 300

    def text(start: int, stop: int) -> Iterator[str]:
        if os.getpid() != parent and start < n - 30:  # the child writes the last three blocks, then fails
            raise RuntimeError("the child fails")
        time.sleep(0.001 * (stop - start))
        return _numbers(start, stop)

    assert "".join(in_halves(n, text)) == "".join(_numbers(0, n))


def test_a_short_answer_is_not_forked(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_fork() -> int:
        raise AssertionError("forked for a short answer")

    monkeypatch.setattr(os, "fork", no_fork, raising=False)
    n = halves.MIN_ITEMS - 1
    assert "".join(in_halves(n, _numbers)) == "".join(_numbers(0, n))


def test_with_another_thread_running_one_process_writes_it_all(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    def no_fork() -> int:
        raise AssertionError("forked with another thread running")

    monkeypatch.setattr(halves, "_threads", threading.active_count)
    monkeypatch.setattr(os, "fork", no_fork, raising=False)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        n = halves.MIN_ITEMS * 2
        assert "".join(in_halves(n, _numbers)) == "".join(_numbers(0, n))
    finally:
        stop.set()
        other.join()


@two_cores
def test_a_reader_that_stops_early_leaves_no_child(monkeypatch: pytest.MonkeyPatch) -> None:
    forked: list[int] = []
    real_fork = os.fork

    def fork() -> int:
        pid = real_fork()
        if pid:
            forked.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", fork)
    pieces = in_halves(halves.MIN_ITEMS * 50, _numbers)
    assert next(pieces) == "0\n"
    pieces.close()
    assert len(forked) == 1
    with pytest.raises(ChildProcessError):  # reaped: no zombie, nothing left running
        os.waitpid(forked[0], os.WNOHANG)


@two_cores
@pytest.mark.parametrize("fmt", [("--json",), ("-o", "csv")])
def test_a_plan_reads_the_same_written_on_two_cores(gpuplan: Run, monkeypatch: pytest.MonkeyPatch,
                                                    fmt: tuple[str, ...]) -> None:
    monkeypatch.setattr(halves, "MIN_ITEMS", 10**9)
    code, one, err = gpuplan("plan", "--gpu-hours", "200", *fmt)
    assert code == 0, err
    monkeypatch.setattr(halves, "MIN_ITEMS", 2)
    code, two, err = gpuplan("plan", "--gpu-hours", "200", *fmt)
    assert code == 0, err
    assert two == one and len(one) > 100_000


@pytest.mark.parametrize("how", ["switched off", "not linux"])
def test_one_process_writes_it_all_when_switched_off_or_off_linux(monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    def no_fork() -> int:
        raise AssertionError("forked")

    monkeypatch.setattr(os, "fork", no_fork, raising=False)
    monkeypatch.setattr(halves, "MIN_ITEMS", 2)
    if how == "switched off":
        monkeypatch.setenv("GPUPLAN_NO_FORK", "1")
    else:
        monkeypatch.setattr(halves.sys, "platform", "darwin")  # fork without exec is unsafe there
    assert "".join(in_halves(500, _numbers)) == "".join(_numbers(0, 500))


# The child gets Python's own Ctrl-C handler, as in a terminal: run from a background job without job control
# (`(pytest &)`), SIGINT arrives ignored, Python keeps it ignored, and so (rightly) does halves, so the SIGINT case
# would wait out its 30 s. Found on a new user's run of the README's test command started that way.
_TERMINATED = """
import os, signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)
from gpuplan.render import halves
halves.BLOCK, halves.MIN_ITEMS = 10, 2
parent, mark = os.getpid(), sys.argv[1]
def text(start, stop):
    if os.getpid() != parent and not os.path.exists(mark):
        open(mark, "w").write(str(os.getpid()))  # (a test's side effect: which pid the child has)
    for i in range(start, stop):
        time.sleep(0.05)
        yield f"{i}\\n"
for line in halves.in_halves(2000, text):
    sys.stdout.write(line)
"""


@two_cores
@pytest.mark.skipif(not halves._may_fork(), reason="the forked writer runs on Linux only")
@pytest.mark.parametrize("signum", [15, 2])  # SIGTERM, SIGINT sent to this process alone
def test_a_signal_to_this_process_ends_and_reaps_the_child(tmp_path: Path, signum: int) -> None:
    import subprocess
    import sys

    mark = tmp_path / "child-pid"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    proc = subprocess.Popen([sys.executable, "-c", _TERMINATED, str(mark)], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not (mark.exists() and mark.read_text()) and time.monotonic() < deadline:
        time.sleep(0.02)
    child = int(mark.read_text())
    started = _start_time(child)
    proc.send_signal(signum)
    assert proc.wait(timeout=30) != 0
    # ended and reaped by this process, not left to run on (nor a zombie): no process of that pid, or another
    # process that reuses it on a busy machine (started at another time)
    assert started is not None and _start_time(child) != started


def _start_time(pid: int) -> str | None:
    """When process ``pid`` started (field 22 of /proc/PID/stat), or None when there is none."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except OSError:
        return None
