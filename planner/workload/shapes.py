"""A standard decoder shape from a parameter count alone.

``gpuplan fit --params 1.5e9`` needs layers and hidden size for activation memory. The
rule (docs/memory.md), from sourced families rather than a guess:

1. **layers**: interpolated on a log-log scale between the sizes of the GPT-3 family
   (Brown et al. 2020, arXiv 2005.14165, Table 2.1; ``data/decoder_shapes.csv``). Below the
   smallest and above the largest size, layers grow as params^(1/3), which keeps that end's
   aspect ratio (hidden / layers) when hidden grows as sqrt(params / layers).
2. **hidden**: solved from params = 12 * layers * hidden^2 + vocab * hidden: 12*L*h^2 is the
   non-embedding count of a GPT block with a 4h MLP (Kaplan et al. 2020, arXiv 2001.08361,
   section 2.1), vocab*h the token embedding. The vocabulary is GPT-2/GPT-3's 50,257 tokens
   unless given.
3. **heads**: head size 128 from 1.3B parameters up, 64 below (Table 2.1's sizes); hidden is
   rounded to a multiple of it.
4. **MLP**: 4 x hidden, not gated (GPT-3).

A mixture of experts is shaped from its active parameters: each token passes through
attention and a few experts, which is what the activations follow.
"""

from __future__ import annotations

import math
from functools import lru_cache

from pydantic import BaseModel, ConfigDict

from pricing.datafiles import data_rows

GPT_VOCAB = 50257  # GPT-2/GPT-3 BPE vocabulary (the gpt2 preset's config, data/models.csv)
SMALL_HEAD_DIM_BELOW = 1.3e9  # Table 2.1: d_head 64 for 125M/350M, 96 at 760M, 128 from 1.3B (2.7B: 80)

RULE = ("layers interpolated (log-log) between GPT-3 sizes (Brown et al. 2020, Table 2.1); hidden from "
        "params = 12*layers*hidden^2 + vocab*hidden (Kaplan et al. 2020); head size 128 (64 under 1.3B); MLP 4*hidden")


class FamilySize(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    params: float
    layers: int


@lru_cache(maxsize=1)
def family() -> tuple[FamilySize, ...]:
    rows = [FamilySize(name=r["name"], params=float(r["params"]), layers=int(r["layers"]))
            for r in data_rows("decoder_shapes.csv", "planner.data")]
    return tuple(sorted(rows, key=lambda f: f.params))


class Shape(BaseModel):
    """The filled-in shape and which of its fields the rule supplied."""

    model_config = ConfigDict(frozen=True)

    layers: int
    hidden: int
    heads: int
    vocab: int
    ffn_hidden: int
    inferred: tuple[str, ...]


def layers_for(params: float) -> float:
    """Layers of a standard decoder with ``params`` parameters (unrounded)."""
    sizes = family()
    lo, hi = sizes[0], sizes[-1]
    if params <= lo.params:
        return lo.layers * (params / lo.params) ** (1 / 3)
    if params >= hi.params:
        return hi.layers * (params / hi.params) ** (1 / 3)
    for a, b in zip(sizes, sizes[1:]):
        if a.params <= params <= b.params:
            t = math.log(params / a.params) / math.log(b.params / a.params)
            return math.exp(math.log(a.layers) + t * math.log(b.layers / a.layers))
    raise AssertionError("unreachable: the sizes cover the range")


def hidden_for(params: float, layers: int, vocab: int) -> float:
    """The positive root of 12*L*h^2 + V*h = params."""
    a, b = 12.0 * layers, float(vocab)
    return (-b + math.sqrt(b * b + 4 * a * params)) / (2 * a)


def layers_given_hidden(params: float, hidden: int, vocab: int) -> int:
    return max(1, round((params - vocab * hidden) / (12.0 * hidden * hidden)))


def infer_shape(params: float, *, layers: int | None = None, hidden: int | None = None,
                heads: int | None = None, vocab: int | None = None) -> Shape:
    """Fill in whatever of layers, hidden, heads and vocab is missing for ``params`` parameters."""
    inferred: list[str] = []
    if vocab is None:
        vocab = GPT_VOCAB
        inferred.append("vocab")
    if hidden is None:
        if layers is None:
            layers = max(1, round(layers_for(params)))
            inferred.append("layers")
        raw = hidden_for(params, layers, vocab)
        step = heads or (64 if params < SMALL_HEAD_DIM_BELOW else 128)
        # hidden must split evenly into heads: a multiple of the head size (or of the given head count)
        hidden = max(step, step * round(raw / step))
        inferred.append("hidden")
    elif layers is None:
        layers = layers_given_hidden(params, hidden, vocab)
        inferred.append("layers")
    if heads is None:
        head_dim = 64 if params < SMALL_HEAD_DIM_BELOW else 128
        heads = max(1, hidden // head_dim) if hidden % head_dim == 0 else _divisor_near(hidden, hidden / head_dim)
        inferred.append("heads")
    return Shape(layers=layers, hidden=hidden, heads=heads, vocab=vocab, ffn_hidden=4 * hidden,
                 inferred=tuple(inferred))


def _divisor_near(n: int, target: float) -> int:
    """The divisor of ``n`` closest to ``target`` (a head count for a hidden size the user gave)."""
    divisors = [d for d in range(1, int(math.isqrt(n)) + 1) if n % d == 0]
    divisors += [n // d for d in divisors]
    return min(divisors, key=lambda d: (abs(d - target), d))
