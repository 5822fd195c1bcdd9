"""Every example in examples/ runs as shipped."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


@pytest.mark.parametrize("script", sorted(EXAMPLES.glob("*.py")), ids=lambda p: p.name)
def test_python_examples_run(script: Path) -> None:
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=_env(), timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()


@pytest.mark.parametrize("script", sorted(EXAMPLES.glob("*.sh")), ids=lambda p: p.name)
def test_shell_examples_run(script: Path) -> None:
    done = subprocess.run(["bash", str(script)], capture_output=True, text=True, env=_env(), timeout=300,
                          cwd=EXAMPLES)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr


def test_every_package_is_installed() -> None:
    """setuptools installs only the packages pyproject names or matches: a package left out
    (gpuplan.cli, the entry point's home) breaks `pip install . && gpuplan` though every test
    here, run from the source tree, passes."""
    import fnmatch
    import tomllib

    root = Path(__file__).resolve().parents[1]
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    tops = ("pricing", "providers", "planner")
    found = {".".join(p.parent.relative_to(root).parts) for top in tops for p in (root / top).rglob("__init__.py")}
    if "packages" in config and isinstance(config["packages"], list):
        missing = found - set(config["packages"])
    else:
        patterns = config["packages"]["find"]["include"]
        missing = {p for p in found if not any(fnmatch.fnmatch(p, pat) for pat in patterns)}
    assert not missing, sorted(missing)
