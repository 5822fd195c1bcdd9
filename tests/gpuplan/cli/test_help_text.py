"""Help text names only flags the command has: a hint to a flag that does not exist is a dead end."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.conftest import CliResult

Run = Callable[..., CliResult]

COMMANDS = [("plan",), ("offers",), ("gpus",), ("fit",), ("estimate",), ("tco",), ("quote",), ("ls",), ("down",),
            ("launch",), ("config", "show"), ("catalog", "show"), ("catalog", "refresh")]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_help_mentions_o_json_only_where_o_exists(gpuplan: Run, command: tuple[str, ...]) -> None:
    code, out, err = gpuplan(*command, "--help")
    assert code == 0, err
    if "-o json" in out:
        assert "--output" in out, f"`{' '.join(command)} --help` mentions -o json but has no -o"


@pytest.mark.parametrize("command", [("plan",), ("offers",), ("gpus",), ("ls",)], ids=" ".join)
def test_every_command_whose_table_can_say_wide_shows_all_takes_wide(gpuplan: Run, command: tuple[str, ...]) -> None:
    # a table narrower than its columns ends with "Not shown at this width: … (--wide shows all)."
    code, out, err = gpuplan(*command, "--help")
    assert code == 0 and "--wide" in out, err
