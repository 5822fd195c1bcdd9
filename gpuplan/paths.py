"""Where gpuplan keeps its files: config, the refreshed price cache, the launch ledger.

Only the program decides where files live; the catalog, the price fetchers and the
ledger take their folders from it. Everything goes under ``$GPUPLAN_HOME`` when it is
set (tests and CI), else platformdirs' per-user dirs.
"""

from __future__ import annotations

import os
from pathlib import Path

APP = "gpuplan"


def home() -> Path | None:
    value = os.environ.get("GPUPLAN_HOME")
    return Path(value).expanduser() if value else None


def config_dir() -> Path:
    if (h := home()) is not None:
        return h / "config"
    from platformdirs import user_config_path

    return user_config_path(APP)


def cache_dir() -> Path:
    if (h := home()) is not None:
        return h / "cache"
    from platformdirs import user_cache_path

    return user_cache_path(APP)


def data_dir() -> Path:
    if (h := home()) is not None:
        return h / "data"
    from platformdirs import user_data_path

    return user_data_path(APP)


def derived_dir() -> Path:
    """What is worked out from shipped data and code and kept between runs: derived figures, compiled class code."""
    return cache_dir() / "derived"


def catalog_cache_dir() -> Path:
    """Refreshed offers: one CSV per provider and region, ``<provider>/<region>.csv``."""
    return cache_dir() / "catalog"


def fx_cache_file() -> Path:
    """ECB's reference rates as `gpuplan catalog refresh --fx` last read them (fx.csv's columns)."""
    return cache_dir() / "fx.csv"


def ledger_file() -> Path:
    """The launch ledger (an SQLite file of every machine gpuplan started)."""
    return data_dir() / "ledger.sqlite3"
