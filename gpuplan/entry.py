"""The program's entry point (``gpuplan`` and ``python -m gpuplan``): what must happen before the CLI is imported."""

from __future__ import annotations


def main() -> None:
    """Keep dataclasses' compiled methods between runs (:mod:`gpuplan.codecache`), then run the CLI.

    It comes first because typer, pydantic and rich create their dataclasses as they are imported.
    """
    from gpuplan.codecache import keep_dataclass_code
    from gpuplan.paths import derived_dir

    keep_dataclass_code(derived_dir())
    from gpuplan.cli import main as cli

    cli()
