"""``gpuplan config show``: effective settings and where gpuplan keeps its files."""

# No `from __future__ import annotations`: typer evaluates option annotations at run time.

import typer

from planner.cli.app import app
from planner.cli.options import JsonOpt, emit

config_app = typer.Typer(help="Show where gpuplan keeps its settings and what they are.", no_args_is_help=True)
app.add_typer(config_app, name="config")


@config_app.command("show")
def config_show(as_json: JsonOpt = False) -> None:
    """The effective settings after flags, environment and config file."""
    from planner.report import dump_json
    from planner.settings import cache_dir, config_file, data_dir, load_settings

    s = load_settings()
    payload = {"config_file": str(config_file()), "cache_dir": str(cache_dir()), "data_dir": str(data_dir()),
               "settings": {k: v for k, v in s.model_dump().items() if k != "fx"},
               "fx": [r.label() for r in s.fx_table().used()]}
    emit(dump_json(payload))
