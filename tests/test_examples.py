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
