"""The typer application every command module attaches to, and the root options."""

# No `from __future__ import annotations`: typer evaluates option annotations at run time.

from typing import Annotated

import typer

app = typer.Typer(
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
        from planner import __version__

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
        from planner.console import set_no_color

        set_no_color(True)
