"""Every example in examples/ runs as shipped."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

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


README = EXAMPLES.parent / "README.md"


def _readme_commands() -> list[str]:
    """The `gpuplan` lines of the README's "What it does" block, continuation lines joined, comments dropped."""
    text = README.read_text(encoding="utf-8")
    block = text[text.index("## What it does"):]
    block = block[block.index("```sh") + len("```sh"):]
    block = block[:block.index("```")].replace("\\\n", " ")
    return [line.split("   #")[0].split("  #")[0].strip() for line in block.splitlines()
            if line.strip().startswith("gpuplan ")]


# What a run here cannot do as a user would: a file the README leaves to the user.
NEEDS_USER_FILE = {"mine.csv"}


@pytest.mark.parametrize("line", _readme_commands(), ids=lambda line: line[8:60])
def test_every_readme_example_runs(line: str, gpuplan: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each example of the README's first block runs as written (outputs land in a scratch folder; the
    examples/ files are the repository's), so a flag renamed or a claim gone stale fails here."""
    import shlex

    words = shlex.split(line)[1:]
    if NEEDS_USER_FILE & set(words):
        pytest.skip(f"needs the user's own {', '.join(NEEDS_USER_FILE & set(words))}")
    monkeypatch.chdir(tmp_path)
    words = [str(EXAMPLES.parent / w) if w.startswith("examples/") else w for w in words]
    code, out, err = gpuplan(*words)
    assert code == 0, f"{line}\n{err}"
    assert out.strip() or err.strip()


def test_the_readmes_cluster_example_names_the_plans_winner(gpuplan: Any) -> None:
    """The README says which cluster the 70B example picks; it must be what gpuplan picks."""
    import json
    import re

    (line,) = [c for c in _readme_commands() if "--explain" in c and "llama-2-70b" in c]
    claim = re.search(r"e\.g\. (\d+) x (\S+) (\w+)", README.read_text(encoding="utf-8").split(line, 1)[1])
    assert claim is not None
    code, out, err = gpuplan(*line.split()[1:], "--json")
    assert code == 0, err
    win = json.loads(out)["cheapest"]
    assert (str(win["nodes"]), win["offer"], win["billing"]) == claim.groups()
