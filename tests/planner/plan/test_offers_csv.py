"""`offers -o csv`: the rows written without looking at any offer are the ones the offer filter lets through."""

from __future__ import annotations

from pricing.catalog import Catalog
from pricing.catalog.parse import instances_csv
from planner.plan.model import Constraints
from planner.plan.offers import catalog_rows
from planner.settings import Settings


def test_the_unfiltered_rows_are_the_filtered_rows_when_the_filter_passes_everything() -> None:
    cat, s = Catalog.shipped(), Settings()
    fast = instances_csv(catalog_rows(cat, Constraints(), s))
    slow = instances_csv(catalog_rows(cat, Constraints(max_gpus=1e9), s))  # a filter that reads every offer
    assert fast == slow and fast.count("\n") > 300


def test_a_provider_filter_alone_still_selects_rows() -> None:
    cat, s = Catalog.shipped(), Settings()
    text = instances_csv(catalog_rows(cat, Constraints(providers=frozenset({"lambda"})), s))
    rows = text.splitlines()[1:]
    assert len(rows) == 18 and all(r.startswith("lambda,") for r in rows)
