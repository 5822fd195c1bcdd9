"""Damaged or hostile files the program reads (config, saved plan): one line and exit 2, never an internal error."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult

Run = Callable[..., CliResult]


def _config_path() -> Path:
    return Path(os.environ["GPUPLAN_HOME"]) / "config" / "config.toml"


def test_a_config_file_that_is_not_utf8_is_named_with_what_to_do(gpuplan: Run) -> None:
    cfg = _config_path()
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_bytes(b'currency = "\xff\xfe"\n')
    code, _, err = gpuplan("plan", "--gpu-hours", "1")
    assert code == 2, err
    assert "internal error" not in err and str(cfg) in err and "UTF-8" in err


def test_a_config_path_that_is_a_directory_is_named(gpuplan: Run) -> None:
    cfg = _config_path()
    cfg.mkdir(parents=True)
    code, _, err = gpuplan("plan", "--gpu-hours", "1")
    assert code == 2 and str(cfg) in err and "internal error" not in err


def test_plan_file_from_dev_zero_is_refused_without_reading_it_all(gpuplan: Run) -> None:
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero here")
    code, _, err = gpuplan("launch", "--from-plan", "--plan-file", "/dev/zero", "--dry-run")
    assert code == 2, err
    assert "not a gpuplan plan" in err and "MB" in err


def test_an_oversized_plan_file_is_refused(gpuplan: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuplan import last_plan

    monkeypatch.setattr(last_plan, "MAX_PLAN_BYTES", 1024)
    big = tmp_path / "big.json"
    big.write_text(json.dumps({"cheapest": {"provider": "aws", "offer": "p3.2xlarge", "billing": "hourly"},
                               "pad": "x" * 2048}))
    code, _, err = gpuplan("launch", "--from-plan", "--plan-file", str(big), "--dry-run")
    assert code == 2 and "not a gpuplan plan" in err


@pytest.mark.parametrize("winner,field", [
    ({"provider": "aws", "offer": "p3.2xlarge", "billing": "hourly", "nodes": "x"}, "nodes"),
    ({"provider": "aws", "offer": "p3.2xlarge", "billing": "hourly", "nodes": 0}, "nodes"),
    ({"provider": 7, "offer": "p3.2xlarge", "billing": "hourly"}, "provider"),
    ({"provider": "aws", "offer": None, "billing": "hourly"}, "offer"),
    ({"provider": "aws", "offer": "p3.2xlarge", "billing": ["hourly"]}, "billing"),
])
def test_wrong_types_in_a_saved_plan_name_the_field(gpuplan: Run, tmp_path: Path, winner: dict[str, object],
                                                     field: str) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"cheapest": winner}))
    code, _, err = gpuplan("launch", "--from-plan", "--plan-file", str(plan), "--dry-run")
    assert code == 2, err
    assert f"cheapest.{field}" in err and "internal error" not in err
