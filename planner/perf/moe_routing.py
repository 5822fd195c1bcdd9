"""Routing limits of mixtures of experts (``planner/data/moe_routing.csv``) that bound the all-to-all across nodes.

DeepSeek-V3's router picks a token's experts from at most 4 of its 8 expert groups; trained with one group per
node, a token's hidden state crosses the network to at most 4 nodes, whatever the expert-parallel width; and its
DualPipe schedule overlaps the all-to-all with compute, where a plain schedule waits for it.
"""

from __future__ import annotations

from functools import lru_cache

from pricing.datafiles import data_rows


@lru_cache(maxsize=1)
def _limits() -> dict[str, int]:
    return {r["model"]: int(r["max_nodes_per_token"]) for r in data_rows("moe_routing.csv", "planner.data")
            if r["max_nodes_per_token"].strip()}


def max_nodes_per_token(model: str) -> int | None:
    """The most nodes one token's experts may sit on for ``model`` (a preset name), or None where it routes freely."""
    return _limits().get(model)


@lru_cache(maxsize=1)
def _overlapped() -> frozenset[str]:
    return frozenset(r["model"] for r in data_rows("moe_routing.csv", "planner.data") if r["a2a_overlap"] == "yes")


def a2a_overlapped(model: str) -> bool:
    """Whether ``model``'s published training overlaps the all-to-all with compute (DeepSeek-V3's DualPipe)."""
    return model in _overlapped()
