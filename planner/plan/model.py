"""The plan's values: constraints, costed options, exclusions and the plan that ranks them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict

from pricing.billing import BillingMode
from pricing.frozen import quick_init
from pricing.line_items import LineItem
from pricing.money import Currency, Money
from pricing.bill import ExtraItem

DEFAULT_MAX_NODES = 64


class Constraints(BaseModel):
    # The validator checks the keyword arguments of the Python API (planner.plan.make.plan); the CLI parses and
    # types every flag itself and builds the value without it (~1 ms of every cold start).
    model_config = ConfigDict(frozen=True, defer_build=True)

    deadline_hours: Decimal | None = None
    budget: Money | None = None
    min_vram_gb: float | None = None
    providers: frozenset[str] | None = None
    billing: frozenset[BillingMode] | None = None
    regions: tuple[str, ...] | None = None
    gpus: frozenset[str] | None = None
    max_gpus: float | None = None  # across all nodes of an option
    nodes: int | None = None  # pin the node count; None searches 1 .. max_nodes
    max_nodes: int = DEFAULT_MAX_NODES
    # Rank spot prices gpuplan estimated (a fraction of pay-as-you-go) where no source lists a spot price:
    # off by default, as nothing says such a type is sold as spot at all (--spot-estimates).
    spot_estimates: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class OptionRange:
    """Low and high ends of an option's calibrated range (its expected values are the option's own)."""

    wall_hours: tuple[Decimal, Decimal]
    gpu_hours: tuple[Decimal, Decimal]
    cost: tuple[Money, Money]


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True, init=False)  # quick_init writes __init__
class Option:
    """One way to do the job, costed.

    A plain value: the plan builds it from values it already checked, and a JSON plan over a 50k-offer
    catalog builds ~40k of them. What leaves the program is its JSON contract (gpuplan.render.plan).
    """

    provider: str
    offer: str
    region: str
    gpu: str
    gpu_count: float
    billing: BillingMode
    wall_hours: Decimal
    gpu_hours: Decimal
    cost: Money
    native_cost: Money
    line_items: tuple[LineItem, ...]
    notes: tuple[str, ...]
    estimate: bool = False
    zone: str | None = None  # the zone whose price this is (live data), for launch --from-plan
    live: bool = False  # priced from refreshed (live) data rather than the shipped snapshot
    range: OptionRange | None = None  # model workloads: calibrated low/high (ranking stays on the expected values)
    nodes: int = 1  # identical nodes of the offer working as one cluster
    scaling: dict[str, Any] | None = None  # model workloads: the chosen layout's per-micro-batch scaling
    # The rest of the bill (disks, addresses, traffic, set-up): in ``cost`` and ``native_cost``, which are the
    # whole bill; ``instance_cost`` is the instance alone. ``not_priced`` names items the data has no rate for.
    extras: tuple[ExtraItem, ...] = ()
    not_priced: tuple[str, ...] = ()
    instance_cost: Money | None = None

    @property
    def extras_cost(self) -> Money:
        """The extras in the display currency: the whole bill less the instance."""
        return self.cost - (self.instance_cost or self.cost)

    @property
    def gpus_total(self) -> float:
        return self.gpu_count * self.nodes


class ExclusionRule(StrEnum):
    """Which constraint or fact excluded an option: the key that summaries group by."""

    GPU = "gpu"
    MIN_VRAM = "min_vram"
    MAX_GPUS = "max_gpus"
    REGION = "region"
    NO_PRICE = "no_price"
    WORKLOAD = "workload"
    DEADLINE = "deadline"
    BUDGET = "budget"
    SOLD_OUT = "sold_out"
    ESTIMATE = "estimate"
    UNPRICED = "unpriced"  # a line of the bill (disk, egress, storage) has no sourced rate: never ranked cheaper


RULE_TEXT = {
    ExclusionRule.GPU: "not a selected GPU", ExclusionRule.MIN_VRAM: "below --min-vram",
    ExclusionRule.MAX_GPUS: "above --max-gpus", ExclusionRule.REGION: "outside --region",
    ExclusionRule.NO_PRICE: "without a public price", ExclusionRule.WORKLOAD: "where the workload does not fit",
    ExclusionRule.DEADLINE: "past the deadline", ExclusionRule.BUDGET: "over the budget",
    ExclusionRule.SOLD_OUT: "sold out in every zone",
    ExclusionRule.ESTIMATE: "with an estimated spot price (--spot-estimates ranks them)",
    ExclusionRule.UNPRICED: "with a bill item no source prices",
}


def unpriced_reason(items: tuple[str, ...]) -> str:
    """Why an option whose bill has items no source prices is not ranked."""
    return ("not priced (no sourced rate): " + "; ".join(items) + ": ranked it would count them as free; "
            "drop the flag that asks for them, or give --disk-type a priced type")


ESTIMATED_SPOT = ("spot price is gpuplan's estimate (a fraction of pay-as-you-go), and no source lists one for this "
                  "type or says it is sold as spot: --spot-estimates ranks it, labelled")


@dataclass(frozen=True, slots=True, kw_only=True)
class Exclusion:
    """An option a constraint or fact dropped, and why."""

    provider: str
    offer: str
    region: str
    zone: str | None = None  # where the data names one: the zone of the excluded price, or the offer's only zone
    billing: BillingMode | None = None
    rule: ExclusionRule
    reason: str


@dataclass(frozen=True, kw_only=True)
class Plan:
    """The ranked options; :func:`make_plan` gives them as a :class:`RankedOptions`, each costed in full when read.

    A plain value made by :func:`make_plan`; what leaves the program is its JSON contract
    (gpuplan.render.plan), written field by field.
    """

    currency: Currency
    assumptions: dict[str, Any]
    options: Sequence[Option]
    excluded: Sequence[Exclusion]
    explanation: str

    @property
    def cheapest(self) -> Option:
        return self.options[0]

    def cheapest_by_billing(self) -> dict[BillingMode, Option]:
        return {mode: o for mode, (_, o) in self.ranked_by_billing().items()}

    def ranked_by_billing(self) -> dict[BillingMode, tuple[int, Option]]:
        """Each billing mode's cheapest option with its 0-based rank, cheapest mode first."""
        if (first_by_billing := getattr(self.options, "first_by_billing", None)) is not None:
            return first_by_billing()  # a RankedOptions knows without building every option
        out: dict[BillingMode, tuple[int, Option]] = {}
        for rank, o in enumerate(self.options):
            out.setdefault(o.billing, (rank, o))
        return out
