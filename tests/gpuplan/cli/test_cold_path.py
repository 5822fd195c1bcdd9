"""What a cold command loads: help answers before any price, catalog or setting is built,
and a command imports no other command's module.

Pydantic's model machinery and gpuplan's price models cost a cold start more than the rest
of `--help`; the command modules keep their heavy imports inside the commands (README,
Performance). A command's own help still loads pydantic: typer builds it from its
parameter adapters.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable

import pytest

OURS = ("pricing.money", "pricing.catalog", "gpuplan.settings", "planner.limits")


@pytest.mark.parametrize("argv, heavy", [
    (["--help"], ("pydantic.main", *OURS)),
    (["plan", "--help"], OURS),
    (["tco", "--help"], OURS),
])
def test_help_builds_no_price_catalog_or_setting(argv: list[str], heavy: tuple[str, ...]) -> None:
    code = f"""
import sys
from gpuplan.cli import main
sys.argv = ["gpuplan", *{argv!r}]
try:
    main()
except SystemExit as exc:
    assert exc.code in (0, None), exc.code
loaded = sorted(m for m in {heavy!r} if m in sys.modules)
assert not loaded, loaded
"""
    subprocess.run([sys.executable, "-c", code], check=True, stdout=subprocess.DEVNULL)


def _after_a_default_plan(check: str) -> None:
    """Run ``check`` in a fresh interpreter after ``plan --gpu-hours 200 --json`` ran there."""
    code = """
import sys
from gpuplan.cli import main
sys.argv = ["gpuplan", "plan", "--gpu-hours", "200", "--json"]
try:
    main()
except SystemExit as exc:
    assert exc.code in (0, None), exc.code
""" + check
    subprocess.run([sys.executable, "-c", code], check=True, stdout=subprocess.DEVNULL)


def test_a_command_imports_no_other_command_module() -> None:
    _after_a_default_plan("""
others = ("gpuplan.cli.workload", "gpuplan.cli.tco", "gpuplan.cli.catalog", "gpuplan.cli.launch", \
"gpuplan.cli.machines", "gpuplan.cli.config")
loaded = sorted(m for m in others if m in sys.modules)
assert not loaded, loaded
# GPU-hours need no workload model, TCO or launcher: those rooms stay unloaded
rooms = sorted(m for m in sys.modules if m.startswith(("planner.workload", "planner.tco", "launch")))
assert not rooms, rooms
""")


def test_a_default_plan_builds_no_validator_of_settings_extras_constraints_or_rates() -> None:
    """They build theirs on first validation; the values of a default plan need none (test_unchecked_defaults)."""
    _after_a_default_plan("""
from pricing.bill import Extras
from planner.plan.model import Constraints
from planner.settings import Discount, Settings
from pricing.money import FxRate
built = [m.__name__ for m in (Constraints, Discount, Extras, FxRate, Settings) if m.__pydantic_complete__]
assert not built, built
""")


def test_every_command_is_listed_with_the_module_that_defines_it() -> None:
    # The root imports a command's module only when the command runs; one missing from the
    # list would be absent from --help and refused as unknown.
    from gpuplan.cli.app import COMMANDS, module_commands

    for module in set(COMMANDS.values()):
        assert set(module_commands(module)) == {name for name, m in COMMANDS.items() if m == module}, module


def test_the_cli_hands_back_the_environment_it_was_given(gpuplan: Callable[..., tuple[int, str, str]],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # The entry point turns pydantic's plugin lookup off for its run only (gpuplan.cli.main).
    monkeypatch.delenv("PYDANTIC_DISABLE_PLUGINS", raising=False)
    assert gpuplan("plan", "--gpu-hours", "200", "--json")[0] == 0
    assert "PYDANTIC_DISABLE_PLUGINS" not in os.environ
    monkeypatch.setenv("PYDANTIC_DISABLE_PLUGINS", "")
    assert gpuplan("plan", "--gpu-hours", "200", "--json")[0] == 0
    assert os.environ["PYDANTIC_DISABLE_PLUGINS"] == ""
