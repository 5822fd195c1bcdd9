"""The settings every command shares, read from flags, the environment and the config file; where files live.

Precedence, highest first: command-line flags > ``GPUPLAN_*`` environment variables >
the TOML config file > built-in defaults. Files live in platformdirs' per-user
directories, or all under ``$GPUPLAN_HOME`` when it is set (tests and CI use that).
Secrets never pass through here: cloud credentials stay with each SDK's own chain.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from pricing.errors import InputError, first_error
from pricing.money import FxRate, age_text, shipped_fx_rates
from gpuplan.paths import catalog_cache_dir, config_dir, fx_cache_file, home
from planner.limits import check, check_fields
from planner.settings import Settings

if TYPE_CHECKING:
    from pricing.catalog import Catalog

ENV_PREFIX = "GPUPLAN_"
__all__ = ["STALE_FX_DAYS", "config_candidates", "config_file", "ignored_config_files", "load_catalog", "load_settings",
           "run_warnings", "stale_fx_rates"]


def config_candidates() -> list[Path]:
    """Where a config file is looked for, first found wins.

    ``$GPUPLAN_HOME/config/config.toml`` is the documented place; ``$GPUPLAN_HOME/config.toml``
    is where people put it first, so it is read too rather than silently ignored.
    """
    out = [config_dir() / "config.toml"]
    if (h := home()) is not None:
        out.append(h / "config.toml")
    return out


def config_file() -> Path:
    """The config file in effect: the first candidate that exists, else the documented place."""
    candidates = config_candidates()
    return next((c for c in candidates if c.is_file()), candidates[0])


def ignored_config_files() -> list[Path]:
    """Candidates that exist but lose to an earlier one (said on stderr, never silently)."""
    found = [c for c in config_candidates() if c.is_file()]
    return found[1:]


INTERNAL = frozenset({"fx_refreshed"})  # Settings fields the program sets, never a variable or the config file


def _from_env() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in Settings.model_fields.keys() - INTERNAL:
        value = os.environ.get(ENV_PREFIX + name.upper())
        if value is not None and value != "":
            out[name] = value
    return out


def _from_file(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    import tomllib

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"cannot read config file {path}: {exc}", "fix or delete it (it must be UTF-8 TOML)") from None
    known = [k for k in Settings.model_fields if k not in INTERNAL]
    unknown = set(data) - set(known)
    if unknown:
        raise InputError(
            f"config file {path} has unknown keys: {', '.join(sorted(unknown))}",
            f"known keys: {', '.join(known)}",
        )
    return data


def load_settings(**flags: Any) -> Settings:
    """Merge defaults < config file < environment < flags (flags given as None are unset)."""
    merged: dict[str, Any] = {}
    merged.update(_from_file(config_file()))
    merged.update(_from_env())
    merged.update({k: v for k, v in flags.items() if v is not None})
    try:
        # nothing given: the defaults, which need no check (and no validator built at every start)
        settings = Settings(**merged) if merged else Settings.model_construct()
    except ValidationError as exc:
        where, msg = first_error(exc)
        raise InputError(f"bad setting {where or 'settings'}: {msg}",
                         "check flags, GPUPLAN_* variables and the config file") from None
    check_fields(settings)
    for rate in settings.fx:
        check("fx_rate", rate.rate, f"exchange rate 1 {rate.base} = {rate.rate} {rate.quote}")
    if refreshed := refreshed_fx_rates():
        settings = settings.model_copy(update={"fx_refreshed": refreshed})
    return settings


def refreshed_fx_rates() -> tuple[FxRate, ...]:
    """The rates `gpuplan catalog refresh --fx` last read, or none (never read: the shipped rates apply)."""
    path = fx_cache_file()
    if not path.is_file():  # the usual case: one stat
        return ()
    from pricing.money import read_fx_csv

    try:
        return read_fx_csv(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, KeyError, ArithmeticError):
        raise InputError(f"cannot read the refreshed exchange rates in {path}",
                         "run `gpuplan catalog refresh --fx` again, or delete the file to use the shipped rates",
                         ) from None


def load_catalog(settings: Settings, extra_files: tuple[Path, ...] = ()) -> Catalog:
    """The catalog every command plans over: shipped < refreshed cache < user files (config, then flags)."""
    from pricing.catalog import Catalog

    catalog = Catalog.load(cache=catalog_cache_dir(), user_files=(*settings.catalog, *extra_files))
    return catalog.with_discounts(settings.discounts())


STALE_FX_DAYS = 90  # older than a quarter, a rate has moved enough to change rankings near a tie


def stale_fx_rates(rates: Iterable[FxRate], today: date | None = None) -> list[FxRate]:
    """Shipped (dated) rates older than :data:`STALE_FX_DAYS`; the user's own rates are never stale."""
    return sorted((r for r in rates if (age := r.age_days(today)) is not None and age > STALE_FX_DAYS),
                  key=lambda r: (r.base, r.quote))


def run_warnings(used_fx: set[FxRate], today: date | None = None) -> list[str]:
    """What a finished command should tell the user on stderr: old exchange rates, ignored config files."""
    out = []
    for r in stale_fx_rates(used_fx, today):
        which = "shipped" if any(s.source in r.source for s in shipped_fx_rates()) else "refreshed"
        out.append(f"converted at the {which} rate 1 {r.base} = {r.shown()} {r.quote} of {r.as_of}, "
                   f"{age_text(r.age_days(today) or 0)} old; read ECB's current rates with `gpuplan catalog refresh "
                   f"--fx`, or give one with --fx {r.base}/{r.quote}=RATE (or GPUPLAN_FX, or fx in the config file)")
    for path in ignored_config_files():
        out.append(f"config file {path} is ignored: {config_file()} is read instead (keep one)")
    return out
