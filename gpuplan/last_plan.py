"""The last plan, kept for ``gpuplan launch --from-plan``: written by ``plan``, read by ``launch``."""

from __future__ import annotations

import dataclasses
from functools import cache
from pathlib import Path
from typing import Any

from pricing.errors import InputError, first_error

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
    kept = dataclasses.replace(p, options=winners, excluded=[])
    from pricing.files import write_private

    path = last_plan_path()
    try:
        write_private(path, dump_json(plan_payload(kept), exact=True, indent=False))  # a file: compact
    except OSError as exc:
        try:
            path.unlink(missing_ok=True)
            gone = "the previous saved plan was removed"
        except OSError:
            gone = f"the previous saved plan at {path} could not be removed: do not use --from-plan"
        from gpuplan.console import stderr

        stderr().print(f"warning: this plan was not kept for `launch --from-plan` ({exc.strerror or exc}); {gone}",
                       highlight=False, markup=False)


# A full `plan --json` of the shipped catalog is about 0.6 MB; far above that is not a plan (/dev/zero, a disk image).
MAX_PLAN_BYTES = 64 * 1024 * 1024


@cache
def _winner_model() -> Any:
    """The fields of a plan's winner that a launch acts on, with their types checked (the file may be hand-edited).

    Built when a plan is read (a launch), not on every `plan`, which only writes one.
    """
    from pydantic import BaseModel, ConfigDict, Field

    class _Winner(BaseModel):
        model_config = ConfigDict(extra="allow", strict=True)

        provider: str = Field(min_length=1)
        offer: str = Field(min_length=1)
        billing: str = Field(min_length=1)
        region: str | None = None
        zone: str | None = None
        nodes: int = Field(default=1, ge=1)

    return _Winner


def _read_bounded(file: Path) -> str:
    with open(file, "rb") as f:
        data = f.read(MAX_PLAN_BYTES + 1)
    if len(data) > MAX_PLAN_BYTES:
        raise ValueError(f"larger than {MAX_PLAN_BYTES // (1024 * 1024)} MB")
    return data.decode("utf-8")


def read_winner(path: Path | None) -> dict[str, Any]:
    """The winner of a saved plan (the last `gpuplan plan`, or a `plan --json` file)."""
    import json

    from pydantic import ValidationError

    file = path or last_plan_path()
    try:
        plan = json.loads(_read_bounded(file))
        winner = dict(plan["cheapest"])
        _winner_model().model_validate(winner)
        # what the plan priced besides the instance: launch --from-plan creates the same disk
        winner["priced_extras"] = plan.get("assumptions", {}).get("extras") or {}
    except FileNotFoundError:
        raise InputError(f"no plan at {file}", "run `gpuplan plan ...` first, or give --plan-file FILE") from None
    except ValidationError as exc:
        where, msg = first_error(exc)
        raise InputError(f"{file} is not a gpuplan plan: cheapest.{where}: {msg}",
                         "give the output of `gpuplan plan --json`, unedited") from None
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        why = f"{type(exc).__name__}: {exc}" if isinstance(exc, ValueError) and "MB" in str(exc) else type(exc).__name__
        raise InputError(f"{file} is not a gpuplan plan ({why})",
                         "give the output of `gpuplan plan --json`") from None
    if winner.get("provider") == "local":
        raise InputError("the plan's winner is buying cards: there is nothing to launch",
                         "plan with --billing hourly,monthly,spot to launch a cloud option")
    return winner
