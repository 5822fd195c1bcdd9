"""``python -m gpuplan`` runs the gpuplan CLI."""

from gpuplan.cli import main

main()
