"""The ``gpuplan`` command line: one module per command group, each parsing flags,
calling one service function and rendering its result.

Every command prints data to stdout and messages to stderr, takes ``-o
table|json|csv|markdown`` (``--json`` for short), and maps gpuplan's errors to one
line and an exit code (see :mod:`pricing.errors`); ``--debug`` shows tracebacks.
Heavy modules are imported inside the commands so ``--help`` and ``plan`` stay quick, and
only the module of the command that runs is imported at all (:mod:`gpuplan.cli.app`).
"""

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from pricing.errors import GpuplanError
from gpuplan.cli.app import State, app

if TYPE_CHECKING:
    from pricing.money import FxRate

__all__ = ["app", "main"]


def main() -> None:
    """Console entry point: run the app, turning gpuplan errors into one line and an exit code.

    After a successful command, warnings it earned (an old exchange rate it converted
    with, a config file that was ignored) go to stderr, below the data.
    """
    from gpuplan import __version__
    from gpuplan.paths import derived_dir
    from pricing.derived import keep_in
    from pricing.fx_use import record_fx_use

    keep_in(derived_dir, __version__)  # figures worked out from shipped data, kept between runs
    try:
        with record_fx_use() as used_fx, _no_pydantic_plugins():
            code = _run()
            if code in (0, None):
                _warn(used_fx)
    except GpuplanError as exc:
        if State.debug:
            raise
        _report(exc)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as exc:  # a bug: say so in one line, keep the traceback behind --debug
        if State.debug:
            raise
        # A cloud SDK's failure outside its adapter's mapping is still the provider's failure.
        from providers.registry import unmapped_sdk_error

        if (mapped := unmapped_sdk_error(exc)) is not None:
            _report(mapped)
        sys.stderr.write(f"internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback)\n")
        sys.exit(1)
    sys.exit(code)


def _report(exc: GpuplanError) -> None:
    """Print a gpuplan error as one line (and its hint) and exit with its code."""
    from rich.markup import escape

    from gpuplan.console import stderr

    # Messages quote user input and package names like gpuplan[chart]: never markup.
    stderr().print(f"[bold red]error:[/bold red] {escape(exc.message)}", highlight=False)
    if exc.hint:
        stderr().print(f"hint: {escape(exc.hint)}", highlight=False)
    sys.exit(exc.exit_code)


@contextmanager
def _no_pydantic_plugins() -> Iterator[None]:
    """Skip pydantic's plugin discovery for the run, unless the user set PYDANTIC_DISABLE_PLUGINS.

    The first model pydantic builds looks for plugins in the entry points of every installed
    distribution, ~10 ms of each cold command; gpuplan ships none (typer skips the lookup for
    its own adapters the same way). A user who wants plugins inside gpuplan sets the
    variable, e.g. to an empty value, and it is left alone.
    """
    if "PYDANTIC_DISABLE_PLUGINS" in os.environ:
        yield
        return
    os.environ["PYDANTIC_DISABLE_PLUGINS"] = "__all__"
    try:
        yield
    finally:
        os.environ.pop("PYDANTIC_DISABLE_PLUGINS", None)


def _run() -> int | str | None:
    """The app's exit code (click ends even a successful run with SystemExit)."""
    try:
        app()
    except SystemExit as exc:
        return exc.code
    return 0


def _warn(used_fx: "set[FxRate]") -> None:
    if not used_fx and "gpuplan.settings" not in sys.modules:
        return  # no money converted, no settings read (--help, --version): nothing to warn about
    from gpuplan.settings import run_warnings

    for line in run_warnings(used_fx):
        sys.stderr.write(f"warning: {line}\n")
