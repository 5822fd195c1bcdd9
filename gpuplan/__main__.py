"""``python -m gpuplan`` runs the gpuplan CLI."""

from gpuplan.entry import main

main()
