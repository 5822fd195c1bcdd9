"""Typer's check of an option's value, built only for the options a command line gives.

typer (0.2x) checks and converts each option's value with a pydantic adapter that it builds
when the command runs, for every option of the command, given or not. ``plan`` has 63
options and a command line gives a few, so a cold ``plan --gpu-hours 200`` built 66 adapters
and used three (~4 ms of ~280; 23 million instructions). typer's own coercion returns a
missing value (None) as it is, or as ``()`` for a repeatable option, without asking the
adapter; here the adapter is built the first time a value needs it. The values, the errors
and their messages are typer's.

This leans on typer internals (``_TyperParameter._runtime_param``, ``RuntimeParam``); a
typer without them is left as it is, only slower.
"""

from __future__ import annotations

from typing import Any

try:
    from typer._coercion import RuntimeParam, build_runtime_param
    from typer.core import _TyperParameter
except ImportError:  # a typer that checks values another way: nothing to defer
    RuntimeParam = None  # type: ignore[assignment,misc]

__all__ = ["build_on_demand", "deferring"]


def deferring() -> bool:
    """Whether the installed typer's value checks can be deferred (else commands run as typer builds them)."""
    return RuntimeParam is not None and hasattr(_TyperParameter, "get_runtime_param")


if deferring():

    class _OnDemand(RuntimeParam):  # type: ignore[misc,valid-type]
        """Stands in for an option's coercion until a value needs it, then builds typer's own and hands over.

        :meth:`RuntimeParam.coerce` answers a missing value without calling :meth:`_coerce_value`.
        """

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            built = build_runtime_param(param.type_descriptor)
            param._runtime_param = built  # later values (and a second parse) use typer's own directly
            return built._coerce_value(value, param=param, ctx=ctx)


def build_on_demand(command: Any) -> None:
    """Defer the value checks of ``command``'s options (and of a group's subcommands) to their first value."""
    if not deferring():
        return
    for param in command.params:
        if isinstance(param, _TyperParameter) and param._runtime_param is None:
            d = param.type_descriptor
            param._runtime_param = _OnDemand(parameter_info=d.parameter_info, annotation=d.annotation)
    for sub in getattr(command, "commands", {}).values():
        build_on_demand(sub)
