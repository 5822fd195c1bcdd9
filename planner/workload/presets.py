"""Named models (``data/models.csv``): each one's architecture, with its source and as-of date."""

from __future__ import annotations

import difflib
from datetime import date
from enum import StrEnum
from functools import lru_cache

from pydantic import BaseModel, ConfigDict

from pricing.datafiles import data_rows
from pricing.errors import UnknownNameError


class ModelKind(StrEnum):
    TRANSFORMER = "transformer"
    IMAGE = "image"


class ModelPreset(BaseModel):
    """One named model with its architecture and where the numbers come from."""

    model_config = ConfigDict(frozen=True)

    name: str
    kind: ModelKind
    family: str
    params: int
    layers: int | None = None
    hidden: int | None = None
    heads: int | None = None
    kv_heads: int | None = None
    vocab: int | None = None
    ffn_hidden: int | None = None
    gated_mlp: bool = False  # SwiGLU-style gate/up/down MLP (three matrices) instead of two
    active_params: int | None = None  # mixture of experts: parameters used per token
    experts: int | None = None  # routed experts per MoE layer
    experts_per_token: int | None = None
    max_seq_len: int | None = None
    gmacs: float | None = None  # forward multiply-accumulates per image, in billions (image models)
    benchmark_model: str = ""  # the model's name in data/benchmarks.csv, where Lambda measured it
    source: str
    as_of: date
    notes: str = ""


def _opt_int(text: str) -> int | None:
    return int(text) if text.strip() else None


@lru_cache(maxsize=1)
def presets() -> dict[str, ModelPreset]:
    out: dict[str, ModelPreset] = {}
    for r in data_rows("models.csv", "planner.data"):
        out[r["name"]] = ModelPreset(
            name=r["name"],
            kind=ModelKind(r["kind"]),
            family=r["family"],
            params=int(r["params"]),
            layers=_opt_int(r["layers"]),
            hidden=_opt_int(r["hidden"]),
            heads=_opt_int(r["heads"]),
            kv_heads=_opt_int(r["kv_heads"]),
            vocab=_opt_int(r["vocab"]),
            ffn_hidden=_opt_int(r["ffn_hidden"]),
            gated_mlp=r["mlp"] == "swiglu",
            active_params=_opt_int(r["active_params"]),
            experts=_opt_int(r["experts"]),
            experts_per_token=_opt_int(r["experts_per_token"]),
            max_seq_len=_opt_int(r["max_seq_len"]),
            gmacs=float(r["gmacs"]) if r["gmacs"].strip() else None,
            benchmark_model=r["benchmark_model"],
            source=r["source"],
            as_of=date.fromisoformat(r["as_of"]),
            notes=r["notes"],
        )
    return out


def _fold(name: str) -> str:
    return name.strip().lower().replace("_", "-").replace(" ", "-").replace(".", "-")


def preset(name: str) -> ModelPreset:
    """A preset by name, forgiving case and punctuation ('Llama 2 7B' finds llama-2-7b)."""
    table = presets()
    folded = {_fold(k): k for k in table}
    folded.update({_fold(k).replace("-", ""): k for k in table})
    key = folded.get(_fold(name)) or folded.get(_fold(name).replace("-", ""))
    if key is None:
        close = difflib.get_close_matches(_fold(name), list(table), n=4, cutoff=0.5)
        raise UnknownNameError("model", name, close, "gpuplan fit --list-models")
    return table[key]
