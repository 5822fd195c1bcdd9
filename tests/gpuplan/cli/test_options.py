"""Each option is declared once: the workload flags in gpuplan.cli.options, shared by plan, fit
and estimate, and no other flag declared word for word in two places."""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer
import typer.main
from typer.testing import CliRunner

import gpuplan.cli
from gpuplan.cli.app import command_app, module_commands
from gpuplan.cli.options import MEMORY, MODEL_AND_TRAINING, RUN, SHAPE, WorkloadFlags, takes_workload

CLI = Path(gpuplan.cli.__file__).parent

# The workload flags that not all three commands take, and which take them. Giving a command
# one more changes its --help: do it on purpose, in its takes_workload groups and here.
ONLY_SOME = {
    **dict.fromkeys(("--tokens", "--stack", "--tp", "--pp", "--cp", "--mfu", "--overhead", "--images", "--epochs",
                     "--global-batch"), {"plan", "estimate"}),
    **dict.fromkeys(("--layers", "--hidden", "--heads", "--kv-heads", "--vocab", "--precision", "--flash"),
                    {"fit", "estimate"}),
    **dict.fromkeys(("--overhead-gb", "--infer", "--weight-bits", "--context"), {"fit"}),
}
# Flags with a workload flag's name that are options of their own: plan's and tco's
# --precision also take `mixed`, the speed class of GPU-hours work.
OWN = {("plan.py", "--precision"), ("tco.py", "--precision")}


@dataclass(frozen=True)
class Declaration:
    file: str
    line: int
    flags: tuple[str, ...]
    help: str | None


def _is_typer_option(call: ast.Call) -> bool:
    f = call.func
    return (isinstance(f, ast.Attribute) and f.attr == "Option" and isinstance(f.value, ast.Name)
            and f.value.id == "typer")


def _declarations() -> Iterator[Declaration]:
    """Every typer.Option(...) in the CLI, and every call of a helper that passes its flag on to one (tco's _opt)."""
    for path in sorted(CLI.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        helpers = {
            fn.name for fn in ast.walk(tree) if isinstance(fn, ast.FunctionDef)
            and any(isinstance(c, ast.Call) and _is_typer_option(c) and c.args and isinstance(c.args[0], ast.Name)
                    for c in ast.walk(fn))
        }
        for call in ast.walk(tree):
            if not isinstance(call, ast.Call):
                continue
            if not (_is_typer_option(call) or (isinstance(call.func, ast.Name) and call.func.id in helpers)):
                continue
            texts = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            flags = tuple(flag for t in texts if t.startswith("-") for flag in t.split("/"))
            helps = [k.value.value for k in call.keywords if k.arg == "help" and isinstance(k.value, ast.Constant)]
            helps += [t for t in texts if not t.startswith("-")]  # a helper's help is positional
            if flags:
                yield Declaration(path.name, call.lineno, flags, helps[0] if helps else None)


def _workload_flags() -> set[str]:
    """The flags declared in WorkloadFlags, read from the source as the declarations are."""
    return {flag for d in _declarations() if d.file == "options.py" and _in_workload_flags(d.line) for flag in d.flags}


def _in_workload_flags(line: int) -> bool:
    tree = ast.parse((CLI / "options.py").read_text(encoding="utf-8"))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "WorkloadFlags")
    return cls.lineno <= line <= (cls.end_lineno or cls.lineno)


def test_the_declarations_are_found() -> None:
    # Guards the parse below: a finder that found nothing would pass every check.
    found = {flag for d in _declarations() for flag in d.flags}
    assert {"--seq-len", "--no-flash", "--gpu-hours", "--usage", "-y", "--json"} <= found
    assert len(_workload_flags()) == len(WorkloadFlags.__annotations__) + 1  # --flash/--no-flash is two


def test_each_workload_flag_is_declared_once() -> None:
    workload = _workload_flags()
    where: dict[str, list[str]] = {}
    for d in _declarations():
        for flag in set(d.flags) & workload:
            if (d.file, flag) not in OWN:
                where.setdefault(flag, []).append(f"{d.file}:{d.line}")
    twice = {flag: places for flag, places in where.items() if len(places) > 1}
    assert not twice, f"declare a workload flag once, in WorkloadFlags (gpuplan/cli/options.py): {twice}"
    assert set(where) == workload


def test_no_option_is_declared_twice_word_for_word() -> None:
    # Two commands that mean the same by a flag share one alias, so their help cannot drift apart.
    seen = Counter((d.flags, d.help) for d in _declarations())
    assert not [key for key, n in seen.items() if n > 1]


def _workload_params(command: Any, workload: set[str]) -> dict[str, dict[str, Any]]:
    # typer ships its own copy of click: its options are no click.Option, so go by their kind.
    return {p.opts[0]: {k: getattr(p, k) for k in _WHAT_A_USER_SEES} | {"type": p.type_descriptor.annotation}
            for p in command.params if p.param_type_name == "option" and p.opts[0] in workload}


_WHAT_A_USER_SEES = ("name", "opts", "secondary_opts", "help", "default", "required", "multiple", "nargs", "is_flag",
                     "metavar", "hidden", "show_default")


def test_plan_fit_and_estimate_take_the_shared_workload_flags_alike() -> None:
    every = command_app()

    @every.command()
    @takes_workload(MODEL_AND_TRAINING, RUN, SHAPE, MEMORY)
    def probe(*, workload: WorkloadFlags) -> None: ...

    reference = _workload_params(typer.main.get_command(every), _workload_flags())
    assert set(reference) | {"--no-flash"} == _workload_flags()
    commands = {**module_commands("gpuplan.cli.plan"), **module_commands("gpuplan.cli.workload")}
    taken = {}
    for name in ("plan", "fit", "estimate"):
        params = _workload_params(commands[name], set(reference))
        if name == "plan":  # its own --precision (OWN)
            assert "mixed" in params.pop("--precision")["help"]
        for flag, info in params.items():
            assert info == reference[flag], f"{name} {flag}"
        taken[name] = set(params)
    shared = taken["plan"] & taken["fit"] & taken["estimate"]
    assert shared == set(reference) - set(ONLY_SOME)
    assert len(shared) >= 14  # the model, its training, the LoRA and mixture-of-experts flags
    for flag, names in ONLY_SOME.items():
        assert {n for n in taken if flag in taken[n]} == names, flag


def test_a_command_gets_the_flags_it_takes_as_one_value() -> None:
    app = command_app()
    got: list[WorkloadFlags] = []

    @app.command()
    @takes_workload(MODEL_AND_TRAINING, MEMORY)
    def probe(name: str = "x", *, workload: WorkloadFlags, last: int = 0) -> None:
        got.append(workload)

    result = CliRunner().invoke(app, ["--model", "llama-2-7b", "--infer", "--last", "3"])
    assert result.exit_code == 0, result.output
    (flags,) = got
    assert flags["model"] == "llama-2-7b" and flags["infer"] is True and flags["seq_len"] is None
    assert set(flags) == MODEL_AND_TRAINING | MEMORY  # a flag the command does not take is absent
    names = [p.name for p in typer.main.get_command(app).params]
    assert names[0] == "name" and names[-1] == "last"  # the flags stand where `workload` stood
    assert names[1:-1] == [n for n in WorkloadFlags.__annotations__ if n in MODEL_AND_TRAINING | MEMORY]


def test_takes_workload_refuses_what_it_cannot_place() -> None:
    with pytest.raises(TypeError, match="not workload flags: nope"):
        takes_workload(frozenset({"nope"}))
    with pytest.raises(TypeError, match="needs a `workload: WorkloadFlags` parameter"):
        takes_workload(RUN)(lambda tokens=None: None)

    def own_tokens(*, workload: WorkloadFlags, tokens: float | None = None) -> None: ...

    with pytest.raises(TypeError, match="declares workload flags of its own: tokens"):
        takes_workload(RUN)(own_tokens)
