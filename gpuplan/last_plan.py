"""The last plan, kept for ``gpuplan launch --from-plan``: written by ``plan``, read by ``launch``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pricing.errors import InputError

__all__ = ["last_plan_path", "read_winner", "remember"]

FILE = "last-plan.json"


def last_plan_path() -> Path:
    from gpuplan.paths import data_dir

    return data_dir() / FILE


def remember(p: Any) -> None:
    """Keep the plan (atomically, 0600); a plan that cannot be kept is still shown, and said.

    A failed save removes the previous plan: `launch --from-plan` must never start an older plan
    than the one just shown.

    Only the winner of each billing mode is kept (``cheapest`` first, as in ``plan --json``):
    launching needs no more, and writing every option of a 50k-offer plan cost seconds.
    """
    from gpuplan.render.plan import plan_payload
    from gpuplan.render.table import dump_json

    winners = list(p.cheapest_by_billing().values())
    kept = p.model_copy(update={"options": winners, "excluded": []})
    from pricing.files import write_private

    path = last_plan_path()
    try:
        write_private(path, dump_json(plan_payload(kept)))
    except OSError as exc:
        try:
            path.unlink(missing_ok=True)
            gone = "the previous saved plan was removed"
        except OSError:
            gone = f"the previous saved plan at {path} could not be removed: do not use --from-plan"
        from gpuplan.console import stderr

        stderr().print(f"warning: this plan was not kept for `launch --from-plan` ({exc.strerror or exc}); {gone}",
                       highlight=False, markup=False)


def read_winner(path: Path | None) -> dict[str, Any]:
    """The winner of a saved plan (the last `gpuplan plan`, or a `plan --json` file)."""
    file = path or last_plan_path()
    try:
        plan = json.loads(file.read_text(encoding="utf-8"))
        winner = dict(plan["cheapest"])
        # what the plan priced besides the instance: launch --from-plan creates the same disk
        winner["priced_extras"] = plan.get("assumptions", {}).get("extras") or {}
    except FileNotFoundError:
        raise InputError(f"no plan at {file}", "run `gpuplan plan ...` first, or give --plan-file FILE") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InputError(f"{file} is not a gpuplan plan ({type(exc).__name__})",
                         "give the output of `gpuplan plan --json`") from None
    if winner.get("provider") == "local":
        raise InputError("the plan's winner is buying cards: there is nothing to launch",
                         "plan with --billing hourly,monthly,spot to launch a cloud option")
    return winner
