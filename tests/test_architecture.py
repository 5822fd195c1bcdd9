"""The layering the project relies on, checked on the source: no cycles, no singletons, no stray SDKs.

pricing -> providers -> planner (and launch) is one way; a cycle would make the CLI's lazy
imports fragile, a catalog read below the CLI would ignore the user's --catalog and
refreshed prices, and an SDK import outside providers/<cloud>/ would slow every plan.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("pricing", "providers", "planner", "launch")
SDKS = ("boto3", "botocore", "tencentcloud", "moto")


def modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for path in (ROOT / pkg).rglob("*.py") if (ROOT / pkg).is_dir() else []:
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out[name] = path
    return out


def imports(path: Path, *, top_level_only: bool) -> Iterator[str]:
    """Modules imported by ``path``; with ``top_level_only``, only those run at import time."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    for node in nodes:
        if isinstance(node, ast.If) and top_level_only:
            continue  # `if TYPE_CHECKING:` blocks never run
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
            yield from (f"{node.module}.{a.name}" for a in node.names)


def test_no_import_cycle_at_import_time() -> None:
    mods = modules()
    graph = {m: {i for i in imports(p, top_level_only=True) if i in mods and i != m} for m, p in mods.items()}
    # a package's __init__ importing its own submodules is how packages register; not a cycle
    graph = {m: {i for i in deps if not i.startswith(m + ".")} for m, deps in graph.items()}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for d in graph[m]:
            if state.get(d) == 1:
                raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(d):] + [d]))
            if d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in graph:
        if m not in state:
            visit(m)


def test_layers_point_one_way() -> None:
    allowed = {"pricing": {"pricing"}, "providers": {"pricing", "providers"}}
    for m, path in modules().items():
        layer = m.split(".")[0]
        if layer not in allowed:
            continue
        for i in imports(path, top_level_only=False):
            top = i.split(".")[0]
            assert top not in PACKAGES or top in allowed[layer], f"{m} imports {i}"


def test_planner_never_imports_a_cloud_sdk_or_the_launcher() -> None:
    for m, path in modules().items():
        for i in imports(path, top_level_only=False):
            top = i.split(".")[0]
            if top in SDKS:
                assert m.startswith(("providers.tencent", "providers.aws")), f"{m} imports {i}"
            if m.startswith("planner") and not m.startswith("planner.cli"):
                assert top != "launch", f"{m} imports {i}: the planner never launches"


def test_no_catalog_singleton_below_the_cli() -> None:
    for m, path in modules().items():
        if m.startswith("planner.cli") or m == "pricing.catalog":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in ("shipped", "default_catalog"):
                raise AssertionError(f"{m} reads the shipped catalog directly (line {node.lineno}); pass a Catalog")
