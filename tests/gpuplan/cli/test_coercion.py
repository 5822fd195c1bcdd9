"""Option values are checked and converted as typer does, whether or not the check is built on demand."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Optional

import pytest
import typer
import typer.main

from gpuplan.cli import coercion
from gpuplan.cli.app import command_app, module_commands


class Color(str, Enum):
    red = "red"
    blue = "blue"


def _command(seen: dict[str, Any]) -> Any:
    app = command_app()

    @app.command()
    def run(
        count: Annotated[Optional[int], typer.Option("--count")] = None,
        ratio: Annotated[Optional[float], typer.Option("--ratio")] = None,
        name: Annotated[str, typer.Option("--name")] = "default",
        tags: Annotated[Optional[list[str]], typer.Option("--tag")] = None,
        export: Annotated[Optional[tuple[str, Path]], typer.Option("--export")] = None,
        color: Annotated[Optional[Color], typer.Option("--color")] = None,
        flag: Annotated[bool, typer.Option("--flag")] = False,
    ) -> None:
        seen.update(count=count, ratio=ratio, name=name, tags=tags, export=export, color=color, flag=flag)

    return typer.main.get_command(app)


def _invoke(command: Any, argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[Any, str]:
    """Exit code and output of one command line, as a user sees them."""
    try:
        command.main(argv, prog_name="run")
        code: Any = 0
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return code, out.out + out.err


ARGVS = [
    [],
    ["--count", "3", "--ratio", "0.5"],
    ["--tag", "a", "--tag", "b", "--name", "x"],
    ["--export", "skypilot", "task.yaml", "--color", "blue", "--flag"],
    ["--count", "three"],
    ["--ratio", "1/2"],
    ["--color", "green"],
    ["--export", "skypilot"],
]


@pytest.mark.parametrize("argv", ARGVS, ids=lambda a: " ".join(a) or "nothing")
def test_values_and_errors_are_typers_own(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    answers: list[tuple[Any, str, dict[str, Any]]] = []
    for defer in (False, True):
        seen: dict[str, Any] = {}
        command = _command(seen)
        if defer:
            coercion.build_on_demand(command)
        answers.append((*_invoke(command, argv, capsys), seen))
    assert answers[0] == answers[1]
    assert answers[0][0] == (2 if argv in ARGVS[4:] else 0), answers[0][1]


def test_a_second_run_of_the_same_command_checks_values_again(capsys: pytest.CaptureFixture[str]) -> None:
    seen: dict[str, Any] = {}
    command = _command(seen)
    coercion.build_on_demand(command)
    assert _invoke(command, ["--count", "3"], capsys)[0] == 0
    assert seen["count"] == 3
    code, output = _invoke(command, ["--count", "x"], capsys)
    assert code == 2 and "--count" in output


@pytest.mark.skipif(not coercion.deferring(), reason="this typer checks option values another way")
def test_plan_builds_checks_only_for_the_options_given(monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    built: list[str] = []
    real = coercion.build_runtime_param

    def counting(descriptor: Any) -> Any:
        built.append(repr(descriptor.annotation))
        return real(descriptor)

    monkeypatch.setattr(coercion, "build_runtime_param", counting)
    plan = module_commands("gpuplan.cli.plan")["plan"]
    # click checks the options given first, in order, and stops at the bad one: nothing is planned
    code, output = _invoke(plan, ["--gpu-hours", "200", "--limit", "5", "--nodes", "0", "--max-nodes", "x"], capsys)
    assert code == 2 and "--max-nodes" in output
    assert built == [repr(str), repr(int), repr(int), repr(int)]  # --gpu-hours, --limit, --nodes, --max-nodes
    assert len(plan.params) > 50
