"""The compiled methods of dataclasses, kept between runs of the program.

Python's dataclasses write the source of each class's generated methods (``__init__``,
``__repr__``, ``__eq__``, ``__hash__``, a frozen class's ``__setattr__``) and compile it when the
class is created, at every start. A cold ``gpuplan plan`` creates 71 dataclasses, 14 of them
gpuplan's and the rest typer's, pydantic's and rich's; compiling their methods is ~80% of creating
them (a 12-field frozen class: 0.85 ms, 0.17 ms with the compiled code at hand), ~25 ms of the
command. Python keeps a module's compiled code in ``__pycache__``; this keeps these methods'
compiled code the same way, in the program's cache folder, keyed by their source text and the
interpreter. The methods are the ones dataclasses builds, from the same source: only compiling
a source compiled before is skipped. gpuplan's own :func:`pricing.frozen.quick_init`, which writes
the ``__init__`` of the values a plan builds by the thousand, is covered the same way.

Only the program turns it on (:mod:`gpuplan.entry`), before typer, pydantic or rich is imported;
a library caller of gpuplan never gets it. A damaged, foreign or unreadable file is ignored (and
rewritten), and a folder that cannot be written keeps nothing: it is a cache. Like the derived
figures kept beside it (:mod:`pricing.derived`), the file is trusted as the user's own.
"""

from __future__ import annotations

import __future__
import builtins
import dataclasses
import functools
import importlib
import marshal
import operator
import sys
from pathlib import Path
from types import CodeType
from typing import Any

__all__ = ["FILE", "WRITERS", "keep_dataclass_code"]

# The modules that write and compile the code of classes as they are created; each one's own ``exec`` is replaced.
WRITERS = ("dataclasses", "pricing.frozen")

FILE = f"dataclass-code.{sys.implementation.cache_tag}.marshal"
# Enough for every dataclass the program creates many times over; past it, sources are compiled and not kept
# (a caller that makes classes on the fly cannot grow the file without end).
MAX_KEPT = 4096

# Compiled code depends on the interpreter's build and its -O level, nothing else of the process.
_KEY = [sys.version, sys.flags.optimize]
# The builtin compiles a source with the ``__future__`` features of the code that calls it.
_FUTURE = functools.reduce(operator.or_, (getattr(__future__, f).compiler_flag for f in __future__.all_feature_names))


class _Kept:
    """The compiled sources of this process: read from the file, and whether a new one was compiled."""

    codes: dict[tuple[int, str], CodeType] = {}  # by (the caller's __future__ flags, source text)
    changed = False


def _exec(source: Any, globals: Any = None, locals: Any = None, /) -> None:
    """The builtin ``exec``, with a source text compiled as the builtin would (``<string>``, with the caller's
    ``__future__`` features) only when it was not compiled before."""
    caller = sys._getframe(1)
    if type(source) is str:
        key = (caller.f_code.co_flags & _FUTURE, source)
        code = _Kept.codes.get(key)
        if code is None:
            code = compile(source, "<string>", "exec", flags=key[0], dont_inherit=True)
            if len(_Kept.codes) < MAX_KEPT:
                _Kept.codes[key] = code
                _Kept.changed = True
        source = code
    if globals is None:  # the builtin runs in its caller's namespaces: so does this (dataclasses always names them)
        globals, locals = caller.f_globals, caller.f_locals if locals is None else locals
    builtins.exec(source, globals, locals)


def _read(path: Path) -> dict[tuple[int, str], CodeType]:
    try:
        kept = marshal.loads(path.read_bytes())
        key, codes = kept
        if key != _KEY or type(codes) is not dict:
            return {}
        if all(type(k) is tuple and len(k) == 2 and type(k[0]) is int and type(k[1]) is str and type(c) is CodeType
               for k, c in codes.items()):
            return codes
    except Exception:  # noqa: BLE001 - a damaged, truncated or foreign file is a miss, never an error
        pass
    return {}


def _write(path: Path) -> None:
    if not _Kept.changed:
        return
    from pricing.files import write_private

    try:
        write_private(path, marshal.dumps([_KEY, _Kept.codes]))  # whole or not at all, and the user's own
        _Kept.changed = False
    except (OSError, ValueError):  # a read-only or full cache folder: compiled again next time
        pass


def keep_dataclass_code(folder: Path) -> None:
    """From now on, the :data:`WRITERS` compile a class's source only the first time it is seen in ``folder``'s
    file; what this process compiled anew is written there when it exits."""
    if vars(dataclasses).get("exec") is _exec:
        return
    import atexit

    path = folder / FILE
    _Kept.codes = _read(path)
    for name in WRITERS:
        importlib.import_module(name).exec = _exec  # type: ignore[attr-defined]  # found before the builtin there
    atexit.register(_write, path)
