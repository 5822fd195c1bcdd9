"""A long JSON or CSV answer written on two cores reads exactly as one process writes it."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import pytest

from gpuplan.render import halves
from gpuplan.render.halves import in_halves

Run = Callable[..., tuple[int, str, str]]

two_cores = pytest.mark.skipif(not hasattr(os, "fork") or halves._cores() < 2, reason="needs os.fork and two cores")


@pytest.fixture(autouse=True)
def one_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    # Earlier tests of the session may leave a server thread running; the texts forked here take no lock.
    monkeypatch.setattr(halves, "_threads", lambda: 1)


def _numbers(start: int, stop: int) -> Iterator[str]:
    return (f"{i}\n" for i in range(start, stop))


@two_cores
def test_the_second_part_is_written_by_another_process_in_its_place() -> None:
    parent = os.getpid()

    def text(start: int, stop: int) -> Iterator[str]:
        return (f"{i} {os.getpid() == parent}\n" for i in range(start, stop))

    n = halves.MIN_ITEMS * 2 + 1
    lines = "".join(in_halves(n, text)).splitlines()
    assert [int(line.split()[0]) for line in lines] == list(range(n))
    mine = [line.split()[1] == "True" for line in lines]
    first_of_child = mine.index(False)
    assert all(mine[:first_of_child]) and not any(mine[first_of_child:])  # one block each, this process first
    assert 0.3 * n < first_of_child < 0.7 * n


@two_cores
def test_a_child_that_fails_leaves_its_half_to_this_process() -> None:
    parent = os.getpid()

    def text(start: int, stop: int) -> Iterator[str]:
        if os.getpid() != parent:
            raise RuntimeError("the child's half fails")
        return _numbers(start, stop)

    n = halves.MIN_ITEMS + 10
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
