"""``python -m planner`` runs the gpuplan CLI."""

from planner.cli import main

main()
