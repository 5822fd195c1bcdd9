"""The typer application, its root options, and the command modules it loads on demand."""

# No `from __future__ import annotations`: typer evaluates option annotations at run time.

import importlib
from collections.abc import Iterator, MutableMapping
from typing import Annotated, Any

import typer
import typer.main
from typer.core import TyperGroup

# Every command and the module that defines it, in the order of `gpuplan --help` (commands,
# then command groups, as typer lists them). Only the module of the command that runs is
# imported and built: building all of them cost every cold command ~10 ms.
COMMANDS = {
    "plan": "gpuplan.cli.plan",
    "fit": "gpuplan.cli.workload",
    "estimate": "gpuplan.cli.workload",
    "tco": "gpuplan.cli.tco",
    "gpus": "gpuplan.cli.catalog",
    "offers": "gpuplan.cli.catalog",
    "launch": "gpuplan.cli.launch",
    "quote": "gpuplan.cli.launch",
    "ls": "gpuplan.cli.machines",
    "down": "gpuplan.cli.machines",
    "ssh": "gpuplan.cli.machines",
    "logs": "gpuplan.cli.machines",
    "spend": "gpuplan.cli.team",
    "catalog": "gpuplan.cli.catalog",
    "config": "gpuplan.cli.config",
    "budget": "gpuplan.cli.team",
}


def command_app() -> typer.Typer:
    """The typer a command module registers its commands on, with the root's settings."""
    return typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


def module_commands(module: str) -> dict[str, Any]:
    """The click commands (and groups) one command module defines, by name."""
    built = typer.main.get_command(importlib.import_module(module).app)
    if isinstance(built, TyperGroup):
        return dict(built.commands)
    assert built.name is not None  # typer names a command after its function
    return {built.name: built}


class _Commands(MutableMapping[str, Any]):
    """Every command's name from :data:`COMMANDS`; a command is built when it is first looked up."""

    def __init__(self) -> None:
        self._built: dict[str, Any] = {}
        self._loaded: set[str] = set()

    def __getitem__(self, name: str) -> Any:
        module = COMMANDS.get(name)
        if name not in self._built and module is not None and module not in self._loaded:
            self._loaded.add(module)
            self._built.update(module_commands(module))
        return self._built[name]

    def __iter__(self) -> Iterator[str]:
        return iter(COMMANDS)

    def __len__(self) -> int:
        return len(COMMANDS)

    def __setitem__(self, name: str, command: Any) -> None:
        raise TypeError("gpuplan's commands are listed in gpuplan.cli.app.COMMANDS")

    def __delitem__(self, name: str) -> None:
        raise TypeError("gpuplan's commands are listed in gpuplan.cli.app.COMMANDS")


class LazyGroup(TyperGroup):
    """The root group: lists every command, imports and builds only those looked up.

    Help, usage errors and "did you mean" all read ``self.commands``, so they see every
    command as before; `gpuplan --help` loads them all to show their help lines.
    """

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        if self.commands:  # it would never be listed: commands live in the modules of COMMANDS
            raise TypeError(f"{', '.join(self.commands)}: register commands in a module listed in COMMANDS")
        self.commands = _Commands()


app = typer.Typer(
    cls=LazyGroup,
    name="gpuplan",
    help="The cheapest, safest way to get GPU work done: plan, compare and cost GPUs across clouds and buying.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


class State:
    """Root flags the entry point needs after the command ran (tracebacks behind --debug)."""

    debug = False


def _version(value: bool) -> None:
    if value:
        from gpuplan import __version__

        print(f"gpuplan {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show full tracebacks on errors.")] = False,
    no_color: Annotated[bool, typer.Option("--no-color", help="Plain output without colour.")] = False,
) -> None:
    State.debug = debug
    if no_color:
        from gpuplan.console import set_no_color

        set_no_color(True)
