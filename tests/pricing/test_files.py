"""gpuplan's own files are written whole and private on every platform, whatever the umask."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from pricing.files import write_private


@pytest.mark.parametrize("has_fchmod", [True, False])
def test_a_private_file_is_0600_in_0700_folders_with_or_without_fchmod(tmp_path: Path, has_fchmod: bool,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    if not has_fchmod:
        monkeypatch.delattr(os, "fchmod", raising=False)  # Windows before Python 3.13
    path = tmp_path / "a" / "b" / "plan.json"
    old = os.umask(0)
    try:
        write_private(path, "{}")
        write_private(path, b"{ }")  # written again: replaced whole
    finally:
        os.umask(old)
    assert path.read_bytes() == b"{ }"
    if os.name == "posix":
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert {stat.S_IMODE(p.stat().st_mode) for p in (path.parent, path.parent.parent)} == {0o700}
    assert [p.name for p in path.parent.iterdir()] == ["plan.json"]  # no scratch file left behind
