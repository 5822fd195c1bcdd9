"""What a cold command loads: help answers before any price, catalog or setting is built.

Pydantic's model machinery and gpuplan's price models cost a cold start more than the rest
of `--help`; the command modules keep their heavy imports inside the commands (README,
Performance). A command's own help still loads pydantic: typer builds it from its
parameter adapters.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

OURS = ("pricing.money", "pricing.catalog", "planner.settings", "planner.limits")


@pytest.mark.parametrize("argv, heavy", [
    (["--help"], ("pydantic.main", *OURS)),
    (["plan", "--help"], OURS),
    (["tco", "--help"], OURS),
])
def test_help_builds_no_price_catalog_or_setting(argv: list[str], heavy: tuple[str, ...]) -> None:
    code = f"""
import sys
from planner.cli import main
sys.argv = ["gpuplan", *{argv!r}]
try:
    main()
except SystemExit as exc:
    assert exc.code in (0, None), exc.code
loaded = sorted(m for m in {heavy!r} if m in sys.modules)
assert not loaded, loaded
"""
    subprocess.run([sys.executable, "-c", code], check=True, stdout=subprocess.DEVNULL)
