"""Dataclasses built with kept compiled methods are the classes dataclasses builds, and the file is only a cache.

Every check runs in a fresh interpreter: keeping compiled methods is turned on for the rest of
a process, by the program's entry point only.
"""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuplan.codecache import FILE

# Dataclasses of every kind the generated methods differ by, and what a user of each can observe.
_CLASSES = r'''
import dataclasses, json, sys
from dataclasses import InitVar, dataclass, field
if sys.argv[2] == "keep":
    from gpuplan.codecache import keep_dataclass_code
    from pathlib import Path
    keep_dataclass_code(Path(sys.argv[1]))

@dataclass
class Plain:
    a: int
    b: str = "x"
    c: list = field(default_factory=list)

@dataclass(frozen=True, slots=True, kw_only=True)
class Frozen:
    a: int
    b: float = 1.5
    hidden: str = field(default="h", repr=False, compare=False)

@dataclass(order=True, unsafe_hash=True)
class Ordered:
    a: int
    b: int = 0

@dataclass
class Posted:
    a: int
    scale: InitVar[int] = 2
    def __post_init__(self, scale):
        self.a *= scale

@dataclass
class Child(Ordered):
    c: int = 9

out = {}
p = Plain(1); out["plain"] = [repr(p), p == Plain(1, "x", []), p == Plain(2), Plain(1).c is not Plain(1).c]
f = Frozen(a=1)
try:
    f.a = 2
    out["frozen_set"] = "allowed"
except dataclasses.FrozenInstanceError as e:
    out["frozen_set"] = str(e)
try:
    Frozen(1)
    out["kw_only"] = "allowed"
except TypeError as e:
    out["kw_only"] = str(e)
out["frozen"] = [repr(f), f == Frozen(a=1, hidden="other"), hash(f) == hash(Frozen(a=1)), hasattr(f, "__dict__"),
                 repr(dataclasses.replace(f, b=2.0)), dataclasses.asdict(f)]
out["ordered"] = [Ordered(1) < Ordered(2), sorted([Ordered(2, 1), Ordered(1, 5)]) == [Ordered(1, 5), Ordered(2, 1)],
                  hash(Ordered(1, 2)) == hash((1, 2))]
out["posted"] = [Posted(3).a, Posted(3, 3).a, repr(Posted(1))]
out["child"] = [repr(Child(1)), [x.name for x in dataclasses.fields(Child)]]
out["annotations"] = [repr(Plain.__init__.__annotations__), repr(Frozen.__init__.__annotations__)]
print(json.dumps(out, sort_keys=True))
'''


def _run(folder: Path, mode: str = "keep", *, code: str = _CLASSES) -> str:
    done = subprocess.run([sys.executable, "-c", code, str(folder), mode], check=True, capture_output=True, text=True)
    return done.stdout


def _kept(folder: Path) -> dict[str, object]:
    key, codes = marshal.loads((folder / FILE).read_bytes())
    return codes


def test_classes_behave_alike_with_and_without_kept_code(tmp_path: Path) -> None:
    builtin = _run(tmp_path, "builtin")
    first = _run(tmp_path)  # compiles and keeps
    assert (tmp_path / FILE).exists()
    second = _run(tmp_path)  # compiles nothing
    assert builtin == first == second
    assert json.loads(builtin)["frozen_set"] == "cannot assign to field 'a'"


def test_a_second_run_compiles_nothing_and_writes_nothing(tmp_path: Path) -> None:
    _run(tmp_path)
    file = tmp_path / FILE
    before = (file.stat().st_mtime_ns, len(_kept(tmp_path)))
    probe = _CLASSES + "\nfrom gpuplan.codecache import _Kept\nprint(_Kept.changed)\n"
    assert _run(tmp_path, code=probe).splitlines()[-1] == "False"
    assert (file.stat().st_mtime_ns, len(_kept(tmp_path))) == before
    assert before[1] >= 10  # the classes above: several methods each


@pytest.mark.parametrize("content", [b"", b"not marshal at all", marshal.dumps(["python 2.7", {}]),
                                     marshal.dumps({"def f(): pass": 1}), marshal.dumps([[sys.version, 0], {"src": "x"}])])
def test_a_damaged_or_foreign_file_is_ignored_and_rewritten(tmp_path: Path, content: bytes) -> None:
    (tmp_path / FILE).write_bytes(content)
    assert _run(tmp_path) == _run(tmp_path, "builtin")
    assert len(_kept(tmp_path)) >= 10


def test_a_folder_that_cannot_be_written_keeps_nothing(tmp_path: Path) -> None:
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("")
    assert _run(blocked / "cache") == _run(tmp_path, "builtin")
    assert not (blocked / "cache").exists()


def test_the_file_stops_growing_at_its_bound(tmp_path: Path) -> None:
    many = "import gpuplan.codecache as cc\ncc.MAX_KEPT = 3\n" + _CLASSES
    assert _run(tmp_path, code=many) == _run(tmp_path, "builtin")
    assert len(_kept(tmp_path)) == 3


def test_the_program_keeps_code_and_answers_the_same(tmp_path: Path) -> None:
    env = {**os.environ, "GPUPLAN_HOME": str(tmp_path / "home")}
    cmd = [sys.executable, "-m", "gpuplan", "plan", "--gpu-hours", "200", "--json"]
    first = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    file = tmp_path / "home" / "cache" / "derived" / FILE
    assert file.exists()
    mtime = file.stat().st_mtime_ns
    second = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    assert first == second and json.loads(first)["options"]
    assert file.stat().st_mtime_ns == mtime


def test_a_library_caller_is_left_alone() -> None:
    code = "import dataclasses, gpuplan.cli, planner.plan; assert 'exec' not in vars(dataclasses)"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_it_runs_code_where_the_builtin_would() -> None:
    from gpuplan.codecache import _exec

    namespace: dict[str, object] = {}
    _exec("x = 1", namespace)
    assert namespace["x"] == 1
    scope: dict[str, object] = {}
    _exec("y = __name__", {"__name__": "given"}, scope)
    assert scope == {"y": "given"}
    # no namespaces: the caller's, as the builtin's (a global statement reaches the caller's module)
    _exec("global seen_by_kept\nseen_by_kept = __name__")
    exec("global seen_by_builtin\nseen_by_builtin = __name__")
    assert globals().pop("seen_by_kept") == globals().pop("seen_by_builtin") == __name__


_QUICK = r'''
import json, sys
from pathlib import Path
if sys.argv[2] == "keep":
    from gpuplan.codecache import keep_dataclass_code
    keep_dataclass_code(Path(sys.argv[1]))
from planner.plan.model import Option
from pricing.line_items import LineItem
from pricing.money import Currency, Money
from decimal import Decimal
item = LineItem.priced("x", Decimal(2), "hours", Money(amount=Decimal("1.5"), currency=Currency.USD))
print(json.dumps([repr(item), repr(LineItem.__init__.__annotations__), repr(Option.__init__.__annotations__),
                  LineItem.__init__.__code__.co_flags]))
'''


def test_quick_init_code_is_kept_and_compiled_with_its_modules_future_features(tmp_path: Path) -> None:
    builtin = _run(tmp_path, "builtin", code=_QUICK)
    assert _run(tmp_path, code=_QUICK) == _run(tmp_path, code=_QUICK) == builtin
    assert "'return': 'None'" in builtin  # pricing.frozen has `from __future__ import annotations`, so the builtin did
    sources = [source for _, source in _kept(tmp_path)]
    assert any(s.startswith("def __init__(self, *, description") for s in sources)  # LineItem's, by quick_init
