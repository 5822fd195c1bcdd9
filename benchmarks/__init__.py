"""Speed and memory benchmarks of gpuplan: ``python benchmarks/run.py``.

Plain scripts, not part of the default test run; see :mod:`benchmarks.run` for what each
section measures and the targets it checks.
"""
