"""Where gpuplan keeps its files, and the settings every command shares.

Precedence, highest first: command-line flags > ``GPUPLAN_*`` environment variables >
the TOML config file > built-in defaults. Files live in platformdirs' per-user
directories, or all under ``$GPUPLAN_HOME`` when it is set (tests and CI use that).
Secrets never pass through here: cloud credentials stay with each SDK's own chain.
"""

from __future__ import annotations

import os
import tomllib
from decimal import Decimal
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from pricing.billing import HOURS_PER_MONTH
from pricing.errors import InputError, first_error
from pricing.money import Currency, Fx, FxRate, parse_fx, shipped_fx_rates

APP = "gpuplan"
ENV_PREFIX = "GPUPLAN_"
DEFAULT_REF_GPU = "V100-SXM2-32GB"  # the seed's card: Tencent GN10Xp's V100 NVLink 32 GB


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


def config_file() -> Path:
    return config_dir() / "config.toml"


class Settings(BaseModel):
    """Shared defaults; each field can come from a flag, ``GPUPLAN_<NAME>`` or the config file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    currency: Currency = Currency.USD
    fx: tuple[FxRate, ...] = ()
    hours_per_month: Decimal = Field(default=HOURS_PER_MONTH, gt=0)
    spot_overhead: Decimal = Field(default=Decimal("0.10"), ge=0)
    ref_gpu: str = DEFAULT_REF_GPU

    @field_validator("fx", mode="before")
    @classmethod
    def _fx(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = [v for v in value.split(",") if v.strip()]
        if isinstance(value, list | tuple):
            return tuple(parse_fx(v) if isinstance(v, str) else v for v in value)
        return value

    @field_validator("currency", mode="before")
    @classmethod
    def _currency(cls, value: Any) -> Any:
        return Currency.parse(value) if isinstance(value, str) else value

    def fx_table(self) -> Fx:
        """User rates first, so they override the shipped ones for the same pair."""
        return Fx(list(self.fx) + list(shipped_fx_rates()))


def _from_env() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in Settings.model_fields:
        value = os.environ.get(ENV_PREFIX + name.upper())
        if value is not None and value != "":
            out[name] = value
    return out


def _from_file(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"cannot read config file {path}: {exc}", "fix or delete it") from None
    unknown = set(data) - set(Settings.model_fields)
    if unknown:
        raise InputError(
            f"config file {path} has unknown keys: {', '.join(sorted(unknown))}",
            f"known keys: {', '.join(Settings.model_fields)}",
        )
    return data


def load_settings(**flags: Any) -> Settings:
    """Merge defaults < config file < environment < flags (flags given as None are unset)."""
    merged: dict[str, Any] = {}
    merged.update(_from_file(config_file()))
    merged.update(_from_env())
    merged.update({k: v for k, v in flags.items() if v is not None})
    try:
        return Settings(**merged)
    except ValidationError as exc:
        where, msg = first_error(exc)
        raise InputError(f"bad setting {where or 'settings'}: {msg}",
                         "check flags, GPUPLAN_* variables and the config file") from None
