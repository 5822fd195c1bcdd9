"""A serving workload from the flags users type (``--serve llama-3-70b --rate 20 --ttft 1s``)."""

from __future__ import annotations

import math
import re
from decimal import Decimal
import tomllib
from pathlib import Path
from typing import Any

from pricing.errors import InputError
from planner.limits import check, flag_of
from planner.serve.roofline import KvFormat, WeightFormat
from planner.serve.engines import DEFAULT as DEFAULT_ENGINE, Engine
from planner.serve.spec import DEFAULT_OUTPUT_TOKENS, DEFAULT_PROMPT_TOKENS, Percentile, ServeWorkload
from planner.units import parse_enum
from planner.workload.inputs import arch_for

_SECONDS = {"": 1.0, "s": 1.0, "ms": 1e-3, "us": 1e-6}
_RATE = {"": 1.0, "/s": 1.0, "/min": 1 / 60, "/h": 1 / 3600, "/d": 1 / 86400}


def parse_seconds(text: str, key: str) -> float:
    """Seconds in ``1s``, ``800ms``, ``0.5`` (seconds), inside ``BOUNDS[key]``."""
    flag = flag_of(key)
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?\d+)?)\s*([a-z]*)\s*", text.lower())
    if not m or m.group(2) not in _SECONDS:
        raise InputError(f"cannot read {flag} {text!r}", "write it like 1s, 800ms or 0.5")
    return _within(float(m.group(1)) * _SECONDS[m.group(2)], key, f"{flag} {text.strip()}")


def _within(value: float, key: str, what: str) -> float:
    if not math.isfinite(value):
        raise InputError(f"{what} is not a finite number")
    check(key, Decimal(repr(value)), what)
    return value


def parse_rate(text: str, output_tokens: int = 1) -> float:
    """Requests per second from ``20``, ``20/s``, ``1200/min``, ``50000/d``, or output tokens as ``6000tok/s``
    (divided by the answer length)."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?\d+)?)\s*(tok(?:ens)?)?\s*(/\s*[a-z]+)?\s*", text.lower())
    unit = (m.group(3) or "").replace(" ", "") if m else ""
    if not m or unit not in _RATE or (m.group(2) and not unit):
        raise InputError(f"cannot read --rate {text!r}",
                         "write requests per second like 20, 1200/min or 50000/d, or output tokens like 6000tok/s")
    value = float(m.group(1)) * _RATE[unit] / (output_tokens if m.group(2) else 1)
    return _within(value, "rate", f"--rate {text.strip()}")


def _tokens(value: int | None, key: str, default: int) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{flag_of(key)} must be a whole number of tokens, got {value!r}")
    check(key, Decimal(value), f"{flag_of(key)} {value}")
    return value


SERVICE_KEYS = ("model", "params", "layers", "hidden", "heads", "kv_heads", "vocab", "precision", "kv_precision",
                "prompt_tokens", "output_tokens", "rate", "ttft", "tpot", "percentile", "hours_per_day", "peak_ratio",
                "max_batch", "active_params", "experts", "experts_per_token", "max_load", "engine")


def load_service(path: Path) -> dict[str, Any]:
    """The keys of a service TOML file (``examples/llama3-70b-service.toml``), under ``[service]`` or at the top."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"cannot read service file {str(path)!r}: {exc}") from None
    data = {k.replace("-", "_"): v for k, v in dict(raw.get("service", raw)).items()}
    if unknown := sorted(set(data) - set(SERVICE_KEYS)):
        raise InputError(f"service file {str(path)!r} has unknown keys: {', '.join(unknown)}",
                         f"known keys: {', '.join(SERVICE_KEYS)}")
    if "model" not in data and "params" not in data:
        raise InputError(f"service file {str(path)!r} names no model", "add model = \"llama-3-8b\" or params = 7e9")
    for key in ("rate", "ttft", "tpot"):
        if key in data:
            data[key] = str(data[key])
    return data


def serve_workload_from_options(
    serve: str, *, params: float | None = None, layers: int | None = None, hidden: int | None = None,
    heads: int | None = None, kv_heads: int | None = None, vocab: int | None = None, precision: str | None = None,
    kv_precision: str | None = None, prompt_tokens: int | None = None, output_tokens: int | None = None,
    rate: str | None = None, ttft: str | None = None, tpot: str | None = None, percentile: str | None = None,
    hours_per_day: float | None = None, peak_ratio: float | None = None, max_batch: int | None = None,
    active_params: float | str | None = None, experts: int | str | None = None,
    experts_per_token: int | str | None = None, max_load: float | None = None, engine: str | None = None,
) -> ServeWorkload:
    """The workload, every flag checked here so that bad input is an InputError, never a traceback.

    ``serve`` is a preset name, ``custom`` (with ``params``), or a service TOML file whose keys the flags override."""
    if serve.strip().lower().endswith(".toml"):
        flags = locals()  # the parameters are the service file's keys (SERVICE_KEYS but "model")
        given = {k: flags[k] for k in SERVICE_KEYS if k != "model"}
        data = load_service(Path(serve))
        data.update({k: v for k, v in given.items() if v is not None})
        model = str(data.pop("model", "custom"))
        try:
            return serve_workload_from_options(model, **data)
        except TypeError as exc:  # a TOML value of the wrong type for a count
            raise InputError(f"bad value in service file {serve!r}: {exc}") from None
    custom = serve.strip().lower() in ("custom", "")
    if custom and params is None:
        raise InputError("--serve custom needs --params", "e.g. --serve custom --params 13e9, or name a preset")
    from planner.workload.inputs import count, whole

    # a mixture of experts: every expert's weights are read, FLOPs go by the active parameters (serve.estimate)
    arch = arch_for(None if custom else serve, params, layers=layers,
                    hidden=hidden, heads=heads, kv_heads=kv_heads, vocab=vocab,
                    active_params=count(active_params, "--active-params"), experts=whole(experts, "--experts", 2),
                    experts_per_token=whole(experts_per_token, "--experts-per-token"))
    weights = parse_enum(WeightFormat, precision, "--precision") or WeightFormat.BF16
    kv = parse_enum(KvFormat, kv_precision, "--kv-precision") or KvFormat.FP16
    # a number not given keeps the workload's default
    optional = {k: v for k, v in (("hours_per_day", hours_per_day), ("peak_ratio", peak_ratio),
                                  ("max_batch", max_batch), ("max_load", max_load)) if v is not None}
    for key, value in optional.items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise InputError(f"{flag_of(key)} must be a number, got {value!r}")
        _within(float(value), key, f"{flag_of(key)} {value:g}")
    prompt = _tokens(prompt_tokens, "prompt_tokens", DEFAULT_PROMPT_TOKENS)
    output = _tokens(output_tokens, "output_tokens", DEFAULT_OUTPUT_TOKENS)
    return ServeWorkload(
        arch=arch, weights=weights, kv=kv, prompt_tokens=prompt, output_tokens=output,
        rate=parse_rate(rate, output) if rate is not None else None,
        ttft_s=parse_seconds(ttft, "ttft") if ttft is not None else None,
        tpot_s=parse_seconds(tpot, "tpot") if tpot is not None else None,
        percentile=parse_enum(Percentile, percentile, "--percentile") or Percentile.P50,
        engine=parse_enum(Engine, engine, "--engine") or DEFAULT_ENGINE,
        **optional,
    )
