"""``gpuplan budget`` and ``gpuplan spend``: a team's monthly budgets and what its launches cost, from the ledger."""

# No `from __future__ import annotations`: typer evaluates option annotations at run time.

from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from pricing.errors import InputError
from gpuplan.cli.app import command_app
from gpuplan.cli.options import CurrencyOpt, FxOpt, JsonOpt, OutputOpt, emit, settings_from

app = command_app()  # the root loads this module when one of its commands runs (gpuplan.cli.app)

budget_app = typer.Typer(help="Monthly budgets that launches are held to, per project or per owner.",
                         no_args_is_help=True)
app.add_typer(budget_app, name="budget")

ProjectOpt = Annotated[Optional[str], typer.Option("--project", help="The project's budget (launch --project).")]
OwnerOpt = Annotated[Optional[str], typer.Option("--owner", help="One person's budget (launch --owner; the OS user).")]


def _scope(project: Optional[str], owner: Optional[str]) -> tuple[str, str]:
    if (project is None) == (owner is None):
        raise InputError("say whose budget: --project NAME or --owner NAME (one of them)")
    scope, name = ("project", project) if project is not None else ("owner", owner)
    assert name is not None
    if not name.strip():
        raise InputError(f"--{scope} is empty", f"give --{scope} a name")
    return scope, name.strip()


@budget_app.command("set")
def budget_set(
    monthly: Annotated[str, typer.Option(
        "--monthly", help="The cap for a calendar month (UTC), e.g. 5000 or '5000 USD'.")],
    project: ProjectOpt = None,
    owner: OwnerOpt = None,
) -> None:
    """Set (or change) a monthly budget: `launch` refuses (exit 7) a launch that would pass it."""
    from gpuplan.ledger import open_ledger
    from planner.units import parse_money

    scope, name = _scope(project, owner)
    cap = parse_money(monthly, settings_from().currency, "--monthly")
    from launch.budget_money import fixed_fx

    with open_ledger() as ledger:
        ledger.set_budget(scope, name, cap)
        fixed_fx(ledger)  # the rates it is held at are fixed now, whatever later launchers' GPUPLAN_FX says
    print(f"budget: {scope} {name!r} may spend {cap} a month (spent, running to TTL, and each new launch)")


@budget_app.command("rm")
def budget_rm(project: ProjectOpt = None, owner: OwnerOpt = None) -> None:
    """Remove a budget."""
    from gpuplan.ledger import open_ledger

    scope, name = _scope(project, owner)
    with open_ledger() as ledger:
        gone = ledger.remove_budget(scope, name)
    if not gone:
        raise InputError(f"no budget for {scope} {name!r}", "`gpuplan budget ls` lists them")
    print(f"budget for {scope} {name!r} removed")


@budget_app.command("ls")
def budget_ls(as_json: JsonOpt = False) -> None:
    """Every budget, with what is spent or committed against it this month."""
    from gpuplan.ledger import open_ledger
    from gpuplan.render.table import Column, OutputFormat, dump_json, render_rows
    from launch.ledger import now
    from launch.spend import Scope, committed_parts
    from pricing.money import money_json, money_text

    from launch.budget_money import fixed_fx

    at = now()
    with open_ledger() as ledger:
        fx = fixed_fx(ledger)  # as launches are held to the budget: at the ledger's rates
        rows = [(scope, name, cap, *committed_parts(ledger, Scope(scope), name, at=at, fx=fx, currency=cap.currency))
                for scope, name, cap in ledger.budgets()]
    if as_json:
        emit(dump_json({"month": f"{at:%Y-%m}", "budgets": [
            {"scope": s, "name": n, "monthly": {"amount": money_json(c.amount), "currency": c.currency},
             "committed": {"amount": money_json(b + e), "currency": c.currency},
             "billed": {"amount": money_json(b), "currency": c.currency},
             "estimated": {"amount": money_json(e), "currency": c.currency},
             "left": {"amount": money_json(c.amount - b - e), "currency": c.currency}} for s, n, c, b, e in rows]}))
        return
    if not rows:
        print("no budgets: gpuplan budget set --project P --monthly '5000 USD'")
        return
    table = [{"scope": s, "name": n, "monthly": str(c), "committed": money_text(b + e, c.currency),
              "billed": money_text(b, c.currency), "estimated": money_text(e, c.currency),
              "left": money_text(c.amount - b - e, c.currency)} for s, n, c, b, e in rows]
    cols = [Column(key=k, header=h, justify=j, priority=0) for k, h, j in (
        ("scope", "scope", "left"), ("name", "name", "left"), ("monthly", "monthly budget", "right"),
        ("committed", "spent + running to TTL", "right"), ("billed", "of which billed", "right"),
        ("estimated", "of which estimated", "right"), ("left", "left", "right"))]
    emit(render_rows(table, cols, OutputFormat.TABLE, title=f"Budgets, {at:%Y-%m}",
                     caption="billed: the clouds' bills kept by `gpuplan spend --billed`, to their last complete day; "
                             "estimated: the ledger's figures after it, and running launches to their TTL"))


@app.command()
def spend(
    month: Annotated[Optional[str], typer.Option("--month", help="The month, YYYY-MM. [default: this month]")] = None,
    by: Annotated[str, typer.Option("--by", help="project, owner, provider or instance-type.")] = "project",
    currency: CurrencyOpt = None,
    fx: FxOpt = None,
    output: OutputOpt = None,
    html_file: Annotated[Optional[Path], typer.Option(
        "--html", help="Also write a page with a bar chart, in the style of the TCO report.", metavar="FILE")] = None,
    billed: Annotated[bool, typer.Option(
        "--billed", help="Each launch's bill from its cloud's billing API beside the ledger's estimate.")] = False,
    refresh: Annotated[bool, typer.Option(
        "--refresh", help="With --billed: ask the clouds again even if their bill was read today.")] = False,
    activate_tag: Annotated[bool, typer.Option(
        "--activate-tag", help="Activate the tag gpuplan:id for AWS cost allocation "
        "(needed once for --billed).")] = False,
    as_json: JsonOpt = False,
) -> None:
    """What the ledger's launches cost in a month (to now), by project, owner, provider or instance type."""
    from gpuplan.ledger import open_ledger
    from gpuplan.render.table import Column, OutputFormat, dump_json, pick_format, render_rows
    from launch.ledger import now
    from launch.spend import month_of, spend as spend_of
    from pricing.money import money_json

    if activate_tag:
        from providers.registry import bill_reader

        reader = bill_reader("aws")
        assert reader is not None  # the AWS record names its bill reader
        print(reader.activate_tag())
        return
    if refresh and not billed:
        raise InputError("--refresh goes with --billed")
    s = settings_from(currency=currency, fx=fx)
    at = now().replace(microsecond=0)  # the moment the report says it is "to", exactly
    window = month_of(month, at)
    if billed:
        from gpuplan.cli.billed import spend_billed

        spend_billed(window, at, s.fx_table(), refresh=refresh, fmt=pick_format(output, as_json), html_file=html_file,
                     by=by.strip().lower())
        return
    fmt = pick_format(output, as_json)
    with open_ledger(read_only_ok=True) as ledger:
        rows = spend_of(ledger, month=window, by=by.strip().lower(), fx=s.fx_table(), currency=s.currency, at=at)
    total = sum((r.cost.amount for r in rows), start=Decimal(0))
    label = f"{window[0]:%Y-%m}"
    if html_file is not None:
        from gpuplan.cli.options import write_file
        from gpuplan.console import stderr
        from gpuplan.render.spend import html_page

        write_file(html_file, html_page(rows, month=label, by=by, currency=s.currency, total=total, at=at))
        stderr().print(f"wrote {html_file}", highlight=False)
    if fmt is OutputFormat.JSON:
        emit(dump_json({"month": label, "by": by, "currency": s.currency, "to": at.isoformat(timespec="seconds"),
                        "rows": [{by: r.key, "launches": r.launches, "cost": money_json(r.cost.amount)} for r in rows],
                        "total": money_json(total)}))
        return
    table: list[dict[str, Any]] = [{"key": r.key, "launches": r.launches, "cost": f"{r.cost.amount:,.2f}"}
                                   for r in rows]
    cols = [Column(key="key", header=by, priority=0), Column(key="launches", header="launches", justify="right"),
            Column(key="cost", header=f"cost ({s.currency})", justify="right", priority=0)]
    text = render_rows(table, cols, fmt, title=f"Spend in {label} to now, by {by}",
                       caption=f"total {total:,.2f} {s.currency}" if table else "no launches cost anything this month")
    if text is not None:
        emit(text)
