"""Workload files are read strictly: a misspelt key or a wrong type is refused by name, never silently ignored."""

from __future__ import annotations

from pathlib import Path

import pytest

from pricing.errors import InputError
from planner.workload.inputs import load_workload

BASE = '[workload]\nkind = "train"\nmodel = "llama-2-7b"\ntokens = 2e10\n'


def _load(tmp_path: Path, text: str) -> object:
    f = tmp_path / "w.toml"
    f.write_text(text, encoding="utf-8")
    return load_workload(f)


@pytest.mark.parametrize("line, bad, closest", [
    ("seqlen = 4096", "seqlen", "seq_len"),
    ('precison = "fp32"', "precison", "precision"),
    ("micro_bacth = 4", "micro_bacth", "micro_batch"),
])
def test_a_misspelt_key_is_refused_naming_the_closest_known_key(tmp_path: Path, line: str, bad: str,
                                                                closest: str) -> None:
    with pytest.raises(InputError) as caught:
        _load(tmp_path, BASE + line + "\n")
    assert repr(bad) in caught.value.message and f"did you mean {closest!r}" in (caught.value.hint or "")


def test_a_key_of_another_kind_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="'images'"):
        _load(tmp_path, BASE + "images = 1e6\n")


@pytest.mark.parametrize("line, key", [
    ("tokens = true", "tokens"),  # used to read as 1 token
    ("seq_len = false", "seq_len"),
    ("micro_batch = true", "micro_batch"),
])
def test_a_boolean_where_a_number_belongs_is_refused(tmp_path: Path, line: str, key: str) -> None:
    text = BASE.replace("tokens = 2e10\n", "") + line + "\n"
    with pytest.raises(InputError, match=key):
        _load(tmp_path, text)


@pytest.mark.parametrize("line", ["model = 7", "model = [\"llama-2-7b\"]", "kind = 3"])
def test_a_name_that_is_not_text_is_refused(tmp_path: Path, line: str) -> None:
    text = BASE.replace('model = "llama-2-7b"\n', "").replace('kind = "train"\n', "") + line + "\n"
    if not line.startswith("model"):
        text += 'model = "llama-2-7b"\n'
    with pytest.raises(InputError):
        _load(tmp_path, text)


def test_every_shipped_example_still_reads(tmp_path: Path) -> None:
    examples = Path(__file__).resolve().parents[3] / "examples"
    names = [p for p in sorted(examples.glob("*.toml"))
             if not p.name.startswith("tco") and not p.name.endswith("-service.toml")]
    assert names
    for p in names:
        load_workload(p)
    from planner.serve.inputs import serve_workload_from_options

    services = sorted(examples.glob("*-service.toml"))
    assert services
    for p in services:
        assert serve_workload_from_options(str(p)).rate is not None
