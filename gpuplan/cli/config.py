"""``gpuplan config show``: effective settings and where gpuplan keeps its files."""

# No `from __future__ import annotations`: typer evaluates option annotations at run time.

import typer

from gpuplan.cli.app import command_app
from gpuplan.cli.options import JsonOpt, emit

app = command_app()  # the root loads this module when one of its commands runs (gpuplan.cli.app)

config_app = typer.Typer(help="Show where gpuplan keeps its settings and what they are.", no_args_is_help=True)
app.add_typer(config_app, name="config")


@config_app.command("show")
def config_show(as_json: JsonOpt = False) -> None:
    """The effective settings after flags, environment and config file."""
    from gpuplan.render.table import dump_json
    from gpuplan.paths import cache_dir, data_dir
    from pricing.text import without_url_credentials
    from gpuplan.settings import (
        STALE_FX_DAYS, config_candidates, config_file, ignored_config_files, load_settings, stale_fx_rates,
    )

    s = load_settings()
    used = config_file()
    payload = {"config_file": str(used), "config_file_exists": used.is_file(),
               # Where gpuplan looked, first found wins: a file elsewhere is never read.
               "config_searched": [str(c) for c in config_candidates()],
               "config_ignored": [str(c) for c in ignored_config_files()],
               "cache_dir": str(cache_dir()), "data_dir": str(data_dir()),
               # a ledger URL may hold a password: shown without it
               "settings": {k: without_url_credentials(v) if k == "ledger_url" else v
                            for k, v in s.model_dump().items() if k != "fx"},
               "fx": [r.label() for r in s.fx_table().used()],
               "fx_stale": [f"{r.base}/{r.quote} of {r.as_of} is older than {STALE_FX_DAYS} days"
                            for r in stale_fx_rates(s.fx_table().used())]}
    if as_json:
        emit(dump_json(payload))
        return
    emit(_text(payload))


def _text(payload: dict) -> str:  # type: ignore[type-arg]
    """``config show`` for a person: one "name: value" line each, lists one item a line (--json is the contract)."""
    lines: list[str] = []
    for key, value in payload.items():
        if isinstance(value, dict):
            lines += [f"{key}:", *(f"  {k}: {'-' if v in (None, '', ()) else v}" for k, v in value.items())]
        elif isinstance(value, list):
            lines += [f"{key}:" + ("" if value else " -"), *(f"  {v}" for v in value)]
        else:
            lines.append(f"{key}: {'yes' if value is True else 'no' if value is False else value}")
    return "\n".join(lines)
