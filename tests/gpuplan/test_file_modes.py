"""gpuplan's own files stay private to the user whatever the umask (issue 27, item 9)."""

from __future__ import annotations

import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pricing.catalog import Catalog, write_instances

Run = Callable[..., tuple[int, str, str]]


def mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


@pytest.fixture
def open_umask() -> Iterator[None]:
    import os

    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def test_the_saved_plan_and_its_folder_are_private_under_umask_000(gpuplan: Run, clean_environ: Path,
                                                                   open_umask: None) -> None:
    code, _, err = gpuplan("plan", "--gpu-hours", "200")
    assert code == 0, err
    data = clean_environ / "gpuplan-home" / "data"
    assert mode(data) == 0o700
    assert mode(data / "last-plan.json") == 0o600
    assert [p.name for p in data.iterdir()] == ["last-plan.json"]  # no temporary file left behind


def test_the_price_cache_is_private_under_umask_000(clean_environ: Path, open_umask: None) -> None:
    cache = clean_environ / "gpuplan-home" / "cache"
    path = cache / "catalog" / "aws" / "us-east-1.csv"
    write_instances(path, Catalog.shipped().instances[:3])
    assert mode(path) == 0o600
    assert [mode(d) for d in (cache, cache / "catalog", cache / "catalog" / "aws")] == [0o700] * 3


def test_the_ledger_folder_is_private_under_umask_000(clean_environ: Path, open_umask: None) -> None:
    from gpuplan.paths import ledger_file
    from launch.ledger import Ledger

    with Ledger(ledger_file()):
        pass
    assert mode(ledger_file().parent) == 0o700 and mode(ledger_file()) == 0o600


def test_a_plan_that_cannot_be_saved_removes_the_older_one_and_says_so(gpuplan: Run, clean_environ: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    code, _, _ = gpuplan("plan", "--gpu-hours", "200")
    saved = clean_environ / "gpuplan-home" / "data" / "last-plan.json"
    assert code == 0 and saved.exists()
    import pricing.files

    def full(path: Path, text: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pricing.files, "write_private", full)
    code, _, err = gpuplan("plan", "--gpu-hours", "100")
    assert code == 0 and "not kept" in err and "No space left" in err
    assert not saved.exists()  # `launch --from-plan` cannot start the older plan
    code, _, err = gpuplan("launch", "--from-plan", "--yes")
    assert code == 2 and "no plan" in err
