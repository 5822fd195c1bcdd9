"""The Python API does what `gpuplan plan` does.

Run: python examples/plan_api.py
"""

from __future__ import annotations

from decimal import Decimal

import gpuplan
from pricing.billing import BillingMode


def main() -> None:
    plan = gpuplan.plan(
        gpu_hours=200,
        ref_gpu="v100",
        deadline_hours=Decimal(72),
        providers=frozenset({"tencent", "aws"}),
        billing=frozenset({BillingMode.HOURLY, BillingMode.MONTHLY}),
    )
    best = plan.cheapest
    print(f"cheapest: {best.provider} {best.offer} {best.billing} {best.cost} in {best.wall_hours:.1f} h")
    for mode, option in plan.cheapest_by_billing().items():
        print(f"  best {mode}: {option.offer} at {option.cost} ({option.native_cost})")
    print(plan.explanation)


if __name__ == "__main__":
    main()
