"""The house, checked on the source: one-way layers, no import circle, no stray SDK, public names listed.

Layers, lowest first: pricing -> providers -> planner -> launch -> gpuplan (the program) ->
benchmarks. A module imports only from its own layer and those below, anywhere in the
file (a lazy import inside a function counts as much as one at the top), with no
exemption. Between modules there is no circle, counting every import: a circle makes
lazy imports fragile and means two modules are one subject split in the wrong place.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("pricing", "providers", "planner", "launch", "gpuplan", "benchmarks")
LIBRARIES = LAYERS[:-1]  # what gets installed; benchmarks stay in the repository
SDKS = ("boto3", "botocore", "tencentcloud", "moto", "gpuhunt")


def modules() -> dict[str, Path]:
    out = {}
    for pkg in LAYERS:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out[name] = path
    return out


def imports(path: Path) -> Iterator[tuple[str, int]]:
    """Every module ``path`` imports, wherever in the file, with its line: ``a.b`` for ``from a import b`` too."""
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from ((a.name, node.lineno) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolved against the importing module's package
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, *([base] if base else [])])
            yield base, node.lineno
            yield from ((f"{base}.{a.name}", node.lineno) for a in node.names)


def import_graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports (a package's own submodules left out: that is how it lists them)."""
    mods = modules()
    graph: dict[str, set[str]] = {}
    for m, path in mods.items():
        deps = {i for i, _ in imports(path) if i in mods and i != m}
        graph[m] = {d for d in deps if not d.startswith(m + ".")}
    return graph


def find_circle(graph: Mapping[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph`` as [a, b, ..., a], or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for d in sorted(graph.get(m, ())):
            if state.get(d) == 1:
                return stack[stack.index(d):] + [d]
            if d not in state and (found := visit(d)) is not None:
                return found
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state and (found := visit(m)) is not None:
            return found
    return None


def test_the_circle_finder_finds_a_circle_and_passes_a_line() -> None:
    assert find_circle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_circle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_no_import_circle_anywhere() -> None:
    circle = find_circle(import_graph())
    assert circle is None, "import circle: " + " -> ".join(circle or [])


def test_layers_point_one_way_with_no_exemption() -> None:
    wrong = []
    for m, path in modules().items():
        rank = LAYERS.index(m.split(".")[0])
        for i, line in imports(path):
            top = i.split(".")[0]
            if top in LAYERS and LAYERS.index(top) > rank:
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {i}")
    assert not wrong, "a lower layer imports a higher one:\n" + "\n".join(sorted(set(wrong)))


def test_cloud_sdks_only_inside_their_provider() -> None:
    for m, path in modules().items():
        for i, line in imports(path):
            if i.split(".")[0] in SDKS:
                adapters = ("providers.tencent", "providers.aws", "providers.market")
                assert m.startswith(adapters), f"{m}:{line} imports {i}"


def test_no_catalog_singleton_below_the_program() -> None:
    for m, path in modules().items():
        if m.startswith(("gpuplan", "benchmarks")) or m.startswith("pricing.catalog"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in ("shipped", "default_catalog"):
                raise AssertionError(f"{m} reads the shipped catalog directly (line {node.lineno}); pass a Catalog")


def test_only_the_program_reads_the_environment_or_the_user_folders() -> None:
    """Library code takes settings and folders from its caller; the clouds' own variables are the SDK adapters'."""
    for m, path in modules().items():
        if m.startswith(("gpuplan", "benchmarks", "providers.aws", "providers.tencent", "providers.lambda_cloud",
                         "providers.alibaba")):
            continue
        if m == "launch.boot.end_tencent":  # runs on the launched machine, configured by its boot script's env
            continue
        text = path.read_text(encoding="utf-8")
        for needle in ("os.environ", "os.getenv", "platformdirs", "load_settings", "gpuplan.paths"):
            assert needle not in text, f"{m} uses {needle}: take it from the caller"


PACKAGES = sorted(m for m, p in modules().items() if p.name == "__init__.py" and m.split(".")[0] in LIBRARIES)


@pytest.mark.parametrize("package", PACKAGES)
def test_every_package_lists_its_public_names(package: str) -> None:
    """``__all__`` says what a package offers; every name in it exists."""
    mod = importlib.import_module(package)
    names = getattr(mod, "__all__", None)
    assert isinstance(names, list | tuple), f"{package} has no __all__"
    missing = [n for n in names if not hasattr(mod, n) and importlib.util.find_spec(f"{package}.{n}") is None]
    assert not missing, f"{package}.__all__ names what it does not have: {missing}"


def test_examples_import_only_the_installed_package() -> None:
    """An example is what a user can copy: it works from ``pip install gpuplan``, without this repository's tests."""
    for path in sorted((ROOT / "examples").glob("*.py")):
        for i, line in imports(path):
            assert i.split(".")[0] not in ("tests", "benchmarks"), f"{path.name}:{line} imports {i}"
        assert "sys.path" not in path.read_text(encoding="utf-8"), f"{path.name} changes sys.path"


MAX_LINES = 600  # a module past this is two subjects: split it by concern (a new module, not a longer one)


def test_every_source_module_is_at_most_600_lines() -> None:
    long = {f"{path.relative_to(ROOT)}: {n}" for m, path in modules().items()
            if m.split(".")[0] in LIBRARIES and (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines:\n" + "\n".join(sorted(long))


def test_model_packages_are_free_of_the_command_line() -> None:
    """pricing, providers, planner and launch are a library: no typer, click or rich (the program renders)."""
    for m, path in modules().items():
        if m.split(".")[0] in ("pricing", "providers", "planner", "launch"):
            for i, line in imports(path):
                assert i.split(".")[0] not in ("typer", "click", "rich"), f"{m}:{line} imports {i}"


FRAMEWORKS = ("typer", "click", "rich", "pydantic", "pydantic_core")


def test_no_private_names_of_the_frameworks_and_nothing_that_loads_code_from_data() -> None:
    """A framework's private module or class (typer._coercion, _TyperParameter) changes in a patch release, and every
    command runs through it; pickle and marshal run whatever a file says, and files in the user's folders are data."""
    for m, path in modules().items():
        for i, line in imports(path):
            top, *rest = i.split(".")
            assert top not in ("pickle", "marshal", "shelve", "dill"), f"{m}:{line} imports {i}"
            if top in FRAMEWORKS:
                assert not any(p.startswith("_") and not p.startswith("__") for p in rest), f"{m}:{line} imports {i}"
