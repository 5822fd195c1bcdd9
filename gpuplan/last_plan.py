"""The last plan of each kind, kept for ``gpuplan launch --from-plan``: written by ``plan``, read by ``launch``.

A training plan and a serve plan (``plan --serve``) are kept apart, each with the command that made it and
when, so a launch says which plan it starts and refuses one it should not start silently: the newest plan
being a serve plan, or a plan over a day old, unless the user names the file (``--plan FILE``).
"""

from __future__ import annotations

import dataclasses
from functools import cache
from pathlib import Path
from typing import Any

from pricing.errors import InputError, first_error

__all__ = ["last_plan_path", "read_winner", "remember", "remember_serve", "serve_plan_path"]

FILE = "last-plan.json"
SERVE_FILE = "last-serve-plan.json"
MAX_AGE_HOURS = 24  # an older plan's prices and stock may have moved: launched only when named (--plan FILE)


def last_plan_path() -> Path:
    from gpuplan.paths import data_dir

    return data_dir() / FILE


def serve_plan_path() -> Path:
    from gpuplan.paths import data_dir

    return data_dir() / SERVE_FILE


def _saved(kind: str) -> dict[str, str]:
    """What names a kept plan to the user: its kind, the command that made it and when (UTC)."""
    import shlex
    import sys
    from datetime import UTC, datetime

    return {"kind": kind, "command": shlex.join(["gpuplan", *sys.argv[1:]]),
            "saved_at": datetime.now(UTC).isoformat()}  # to the microsecond: two plans a second apart are ordered


def remember_serve(p: Any) -> None:
    """Keep a serve plan's best fleet (``plan --serve``) apart from the training plan, so `launch --from-plan`
    after it says so instead of starting the older training plan silently."""
    from gpuplan.render.table import dump_json

    payload = {**p.as_json(1), "saved": _saved("serve")}
    _write(serve_plan_path(), dump_json(payload, exact=True, indent=False))


def _write(path: Path, text: str) -> None:
    from pricing.files import write_private

    try:
        write_private(path, text)
    except OSError as exc:
        try:
            path.unlink(missing_ok=True)
            gone = "the previous saved plan was removed"
        except OSError:
            gone = f"the previous saved plan at {path} could not be removed: do not use --from-plan"
        from gpuplan.console import stderr

        stderr().print(f"warning: this plan was not kept for `launch --from-plan` ({exc.strerror or exc}); {gone}",
                       highlight=False, markup=False)


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
    payload = {**plan_payload(kept), "saved": _saved("training")}
    _write(last_plan_path(), dump_json(payload, exact=True, indent=False))  # a file: compact


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


def _age(hours: float) -> str:
    if hours * 60 < 1:
        return "under a minute"
    if hours < 1:
        return f"{round(hours * 60)} min"
    return f"{hours:.1f} h" if hours < 48 else f"{hours / 24:.1f} days"


def _saved_meta(file: Path, plan: Any) -> tuple[str, str, float]:
    """(kind, how to name it, age in hours) of a plan file: its recorded command, else the file and its time."""
    from datetime import UTC, datetime

    saved = plan.get("saved") if isinstance(plan, dict) else None
    kind = "serve" if isinstance(plan, dict) and "workload" in plan and "cheapest" not in plan else "training"
    at = None
    if isinstance(saved, dict):
        kind = str(saved.get("kind") or kind)
        try:
            at = datetime.fromisoformat(str(saved.get("saved_at")))
        except ValueError:
            at = None
    if at is None or at.tzinfo is None:
        at = datetime.fromtimestamp(file.stat().st_mtime, UTC)
    hours = (datetime.now(UTC) - at).total_seconds() / 3600
    command = saved.get("command") if isinstance(saved, dict) else None
    named = f"`{command}`" if isinstance(command, str) and command else f"the plan in {file}"
    return kind, f"{named} ({_age(hours)} ago)", hours


def _peek(file: Path) -> tuple[str, str, float] | None:
    """The kind, name and age of a kept plan, or None where there is none (or it cannot be read)."""
    import json

    try:
        return _saved_meta(file, json.loads(_read_bounded(file)))
    except (OSError, ValueError):
        return None


def read_winner(path: Path | None) -> dict[str, Any]:
    """The winner of a saved plan (the last `gpuplan plan`, or a `plan --json` file), with ``plan_named``: the
    command that made it and its age, for the launch to say.

    Without ``path``, the newest kept plan must be a training plan made within a day; a plan named by ``path``
    is launched at any age."""
    import json

    from pydantic import ValidationError

    file = path or last_plan_path()
    if path is None:
        _check_kept(file)
    try:
        plan = json.loads(_read_bounded(file))
        kind, named, _ = _saved_meta(file, plan)
        if kind != "training":
            raise InputError(f"{named} is a {kind} plan: `launch --from-plan` starts a training plan's winner",
                             "give --plan with a `gpuplan plan --json` file of a training plan")
        winner = dict(plan["cheapest"])
        _winner_model().model_validate(winner)
        # what the plan priced besides the instance: launch --from-plan creates the same disk
        winner["priced_extras"] = plan.get("assumptions", {}).get("extras") or {}
        winner["plan_named"] = named
    except FileNotFoundError:
        raise InputError(f"no plan at {file}", "run `gpuplan plan ...` first, or give --plan FILE") from None
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


def _check_kept(file: Path) -> None:
    """Refuse to launch the kept training plan silently when the newest plan is a serve plan, or it is over a day
    old: both say which plan they mean, and how to launch it anyway."""
    training, serve = _peek(file), _peek(serve_plan_path())
    if training is None:
        return  # read_winner says there is no plan
    _, named, hours = training
    anyway = f"plan again, or give --plan {file} to launch it anyway"
    if serve is not None and serve[2] < hours:
        raise InputError(f"your last plan, {serve[1]}, is a serve plan: `launch --from-plan` starts a training "
                         f"plan's winner, and the last one is {named}",
                         "`plan --serve ... --export skypilot|dstack` hands a service over; for the training plan, "
                         + anyway)
    if hours > MAX_AGE_HOURS:
        raise InputError(f"the last plan, {named}, is over {MAX_AGE_HOURS} h old: its prices and stock may have "
                         "moved", anyway)
