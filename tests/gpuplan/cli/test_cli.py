"""The gpuplan CLI as a user meets it: the README command, formats, errors, settings."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import pytest

Run = Callable[..., tuple[int, str, str]]


def test_readme_command_prints_the_ranked_table(gpuplan: Run) -> None:
    code, out, err = gpuplan("plan", "--gpu-hours", "200")
    assert code == 0, err
    assert "Ways to get 200 GPU-hours" in out
    assert "Cheapest per billing mode" in out
    assert "Why:" in out and "wins" in out


def test_plan_json_contract(gpuplan: Run) -> None:
    code, out, _ = gpuplan("plan", "--gpu-hours", "200", "--json", "--spot-estimates")
    assert code == 0
    data = json.loads(out)
    assert data["currency"] == "USD"
    for key in ("ref_gpu", "fx", "hours_per_month", "catalog_as_of", "spot_overhead"):
        assert key in data["assumptions"]
    costs = [float(o["cost"]) for o in data["options"]]
    assert costs == sorted(costs)
    for o in data["options"]:
        assert {"provider", "offer", "region", "gpu", "gpu_count", "billing", "wall_hours", "gpu_hours", "cost",
                "native_cost", "notes"} <= o.keys()
        assert o["provider"] in {"tencent", "aws", "lambda", "gcp", "azure", "alibaba", "local"}
        assert o["billing"] in {"hourly", "monthly", "spot", "reserved_1y", "reserved_3y", "buy"}
        assert isinstance(o["cost"], str) and set(o["native_cost"]) == {"amount", "currency"}
    seen = {(o["provider"], o["billing"]) for o in data["options"]}
    for pair in [("tencent", "hourly"), ("tencent", "monthly"), ("tencent", "spot"), ("aws", "hourly"),
                 ("aws", "spot"), ("local", "buy")]:
        assert pair in seen
    gn = {o["billing"]: o for o in data["options"] if o["offer"] == "GN10Xp.20XLARGE320"}
    assert gn["hourly"]["native_cost"]["currency"] == "CNY"
    assert gn["hourly"]["line_items"][0]["unit_price"] == {"amount": "95.84", "currency": "CNY"}
    # the whole bill: the instance month, 5 Mbps of bandwidth (the default) by tier: 2 x 20 + 3 x 25 CNY,
    # and the default 256 GB premium cloud disk at 0.35 CNY per GB-month
    assert gn["monthly"]["native_cost"] == {"amount": f"{46000 + 115 + Decimal('0.35') * 256:.2f}", "currency": "CNY"}
    assert data["cheapest"] == data["options"][0]


def test_plan_in_cny_keeps_cny_prices_unconverted(gpuplan: Run) -> None:
    code, out, _ = gpuplan("plan", "--gpu-hours", "200", "--currency", "cny", "--json", "--provider", "tencent",
                           "--billing", "monthly", "--gpu", "v100")
    assert code == 0
    data = json.loads(out)
    assert data["currency"] == "CNY"
    gn = next(o for o in data["options"] if o["offer"] == "GN10Xp.20XLARGE320")
    assert gn["instance_cost"] == "46000.00"
    # + 5 Mbps by tier (115 CNY) and the 256 GB premium disk (89.60 CNY) for the 1 month
    assert gn["cost"] == gn["total"] == f"{46000 + 115 + Decimal('0.35') * 256:.2f}"


@pytest.mark.parametrize("fmt", ["csv", "markdown"])
def test_plan_other_formats(gpuplan: Run, fmt: str) -> None:
    code, out, _ = gpuplan("plan", "--gpu-hours", "50", "-o", fmt, "--provider", "aws")
    assert code == 0
    if fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(out)))
        assert rows and rows[0]["provider"] == "aws"
    else:
        assert out.splitlines()[2].startswith("| #")
    assert "\x1b[" not in out


def test_explain_lists_exclusions(gpuplan: Run) -> None:
    code, out, _ = gpuplan("plan", "--gpu-hours", "200", "--deadline", "2d", "--explain")
    assert code == 0
    assert "Excluded" in out and "deadline" in out
    # rows whose source names no region (unpriced Tencent types) show none, not a region called "unknown"
    assert "no public price in the catalog" in out and not re.search(r"│ *unknown *│", out)


@pytest.mark.parametrize(("args", "needle"), [
    (["plan", "--gpu-hours", "-5"], "positive"),
    (["plan", "--gpu-hours", "nan"], "finite"),
    (["plan", "--gpu-hours", "abc"], "not a number"),
    (["plan"], "--gpu-hours"),
    (["plan", "--gpu-hours", "10", "--gpu", "rtx 4080"], "RTX-4090"),
    (["plan", "--gpu-hours", "10", "--provider", "oracle"], "unknown provider"),
    (["plan", "--gpu-hours", "10", "--billing", "weekly"], "billing"),
    (["plan", "--gpu-hours", "10", "--deadline", "soon"], "duration"),
    (["plan", "--gpu-hours", "100000", "--deadline", "1m"], "deadline"),  # too much even for 64 nodes
    (["plan", "--gpu-hours", "10", "--currency", "XYZ"], "currency"),
    (["plan", "--gpu-hours", "10", "--fx", "USD/CNY=zero"], "exchange rate"),
    (["plan", "--gpu-hours", "10", "-o", "yaml"], "output format"),
    (["plan", "--gpu-hours", "10", "--ref-gpu", "V1000"], "unknown GPU"),
    (["offers", "--provider", "vultr"], "unknown provider"),
    (["plan", "--gpu-hours", "10", "--spot-price", "lowest"], "'typical' or 'cheapest'"),
])
def test_bad_input_is_one_clear_line_and_a_nonzero_exit(gpuplan: Run, args: list[str], needle: str) -> None:
    code, out, err = gpuplan(*args)
    assert code != 0
    assert needle in err
    assert "Traceback" not in err + out
    assert err.strip().startswith("error:")


def test_usage_errors_exit_2_and_runtime_errors_exit_1(gpuplan: Run) -> None:
    assert gpuplan("plan", "--gpu-hours", "-1")[0] == 2
    assert gpuplan("plan", "--gpu-hours", "100000", "--deadline", "1m")[0] == 1


def test_gpus_table_and_json(gpuplan: Run) -> None:
    code, out, _ = gpuplan("gpus")
    assert code == 0 and "V100-SXM2-32GB" in out and "RTX-2060" in out
    code, out, _ = gpuplan("gpus", "--json")
    data = json.loads(out)
    assert all(g["source"] and g["as_of"] for g in data["gpus"])


def test_offers_show_prices_per_gpu_hour_and_per_gb_hour(gpuplan: Run) -> None:
    code, out, _ = gpuplan("offers", "--json", "--provider", "tencent", "--currency", "CNY")
    assert code == 0
    data = json.loads(out)
    gn = next(o for o in data["offers"] if o["offer"] == "GN10Xp.20XLARGE320")
    assert gn["hourly"] == "95.84"
    assert float(gn["per_gpu_hour"]) == pytest.approx(95.84 / 8)
    assert float(gn["per_gb_vram_hour"]) == pytest.approx(95.84 / 256)
    pnv4 = next(o for o in data["offers"] if o["offer"] == "PNV4.7XLARGE116")
    assert pnv4["hourly"] is None  # missing stays missing, never 0


def test_offers_table_filters(gpuplan: Run) -> None:
    code, out, _ = gpuplan("offers", "--gpu", "a100", "--region", "us-east-1")
    assert code == 0 and "p4d.24xlarge" in out and "GT4" not in out


def test_offers_table_shows_the_cheapest_rows_it_is_limited_to_and_says_how_to_see_all(gpuplan: Run) -> None:
    every = json.loads(gpuplan("offers", "--json", "--provider", "aws")[1])["offers"]
    code, out, _ = gpuplan("offers", "--provider", "aws", "--limit", "3", "--wide")
    assert code == 0 and f"{len(every) - 3:,} more offer(s): --limit 0 shows all" in out
    rows = [line for line in out.splitlines() if line.startswith("│")]
    assert len(rows) == 3
    assert all(o["offer"] in row and o["region"] in row for o, row in zip(every[:3], rows, strict=True))
    code, out, _ = gpuplan("offers", "--provider", "aws", "--limit", "0", "--wide")
    assert "more offer" not in out and len([line for line in out.splitlines() if line.startswith("│")]) == len(every)
    # the default shows every offer of the shipped catalog
    assert "more offer" not in gpuplan("offers")[1]
    code, _, err = gpuplan("offers", "--limit", "-1")
    assert code == 2 and "--limit" in err


def test_settings_precedence_flag_over_env_over_file(gpuplan: Run, monkeypatch: pytest.MonkeyPatch,
                                                      clean_environ: Path) -> None:
    home = clean_environ / "gpuplan-home"
    (home / "config").mkdir(parents=True)
    (home / "config" / "config.toml").write_text('currency = "CNY"\nhours_per_month = 720\n')
    data = json.loads(gpuplan("plan", "--gpu-hours", "10", "--json", "--provider", "aws")[1])
    assert data["currency"] == "CNY" and data["assumptions"]["hours_per_month"] == "720"
    monkeypatch.setenv("GPUPLAN_CURRENCY", "USD")
    data = json.loads(gpuplan("plan", "--gpu-hours", "10", "--json", "--provider", "aws")[1])
    assert data["currency"] == "USD"
    data = json.loads(gpuplan("plan", "--gpu-hours", "10", "--json", "--provider", "aws", "--currency", "CNY")[1])
    assert data["currency"] == "CNY"


def test_a_broken_config_file_is_reported_not_raised(gpuplan: Run, clean_environ: Path) -> None:
    home = clean_environ / "gpuplan-home"
    (home / "config").mkdir(parents=True)
    (home / "config" / "config.toml").write_text("colour = 'red'\n")
    code, _, err = gpuplan("plan", "--gpu-hours", "10")
    assert code == 2 and "unknown keys" in err


def test_config_show_lists_paths_under_gpuplan_home(gpuplan: Run, clean_environ: Path) -> None:
    code, out, _ = gpuplan("config", "show", "--json")
    data = json.loads(out)
    assert data["config_file"].startswith(str(clean_environ / "gpuplan-home"))
    assert data["settings"]["currency"] == "USD"
    code, out, _ = gpuplan("config", "show")  # for a person: lines, not the JSON (was the same JSON)
    assert code == 0 and not out.lstrip().startswith("{")
    assert f"config_file: {data['config_file']}" in out.splitlines() and "  currency: USD" in out.splitlines()


def test_an_aws_sdk_error_no_adapter_mapped_is_still_one_provider_error_line(
    gpuplan: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    from botocore.parsers import ResponseParserError

    import gpuplan.cli as cli

    def broken() -> None:
        raise ResponseParserError("Unable to parse response, invalid XML received:\nb'<html><title>502 Bad Gateway"
                                  "</title><body><h1>502</h1></body></html>'")

    monkeypatch.setattr(cli, "_run", broken)
    code, out, err = gpuplan("offers")
    assert code == 6 and out == "" and err.count("\n") == 1, err
    assert err.startswith("error: AWS") and "502 Bad Gateway" in err and "<" not in err and "internal error" not in err


def test_a_budget_equal_to_the_shown_cost_is_within_budget(gpuplan: Run) -> None:
    code, out, err = gpuplan("plan", "--gpu-hours", "200", "--json")
    assert code == 0, err
    best = json.loads(out)["options"][0]
    # the cost as the user reads it, given back as the budget: that option is affordable
    code, out, err = gpuplan("plan", "--gpu-hours", "200", "--json", "--budget", best["cost"])
    assert code == 0, err
    first = json.loads(out)["options"][0]
    assert (first["offer"], first["billing"], first["cost"]) == (best["offer"], best["billing"], best["cost"])
    # one cent less is over it
    under = f"{Decimal(best['cost']) - Decimal('0.01')}"
    _, out, _ = gpuplan("plan", "--gpu-hours", "200", "--json", "--budget", under)
    assert all(Decimal(o["cost"]) <= Decimal(under) for o in json.loads(out or '{"options": []}')["options"])


@pytest.mark.parametrize("rates", [("USD/CNY=7.1", "USD/CNY=7.3"), ("USD/CNY=7.1", "CNY/USD=0.14")])
def test_a_currency_pair_given_twice_is_refused_not_silently_the_first(gpuplan: Run, rates: tuple[str, str]) -> None:
    code, _, err = gpuplan("plan", "--gpu-hours", "200", "--fx", rates[0], "--fx", rates[1])
    assert code == 2 and "CNY/USD" in err and "more than once" in err, err


def test_an_explicit_limit_is_honoured_by_json_and_csv_and_all_is_the_default(gpuplan: Run) -> None:
    everything = json.loads(gpuplan("plan", "--gpu-hours", "200", "--json")[1])
    assert len(everything["options"]) == everything["options_total"] > 25  # the table's default does not cut JSON
    top = json.loads(gpuplan("plan", "--gpu-hours", "200", "--json", "--limit", "5")[1])
    assert top["options"] == everything["options"][:5] and top["options_total"] == everything["options_total"]
    assert top["cheapest"] == everything["cheapest"]
    csv_rows = gpuplan("plan", "--gpu-hours", "200", "-o", "csv", "--limit", "3")[1].strip().splitlines()
    assert len(csv_rows) == 1 + 3
    assert len(gpuplan("plan", "--gpu-hours", "200", "-o", "csv")[1].strip().splitlines()) > 25


def test_the_plan_says_how_many_estimated_spot_prices_it_left_out(gpuplan: Run) -> None:
    code, out, _ = gpuplan("plan", "--gpu-hours", "200")
    held = sum(1 for e in json.loads(gpuplan("plan", "--gpu-hours", "200", "--json")[1])["excluded"]
               if e["rule"] == "estimate")
    assert code == 0 and held > 0
    assert f"({held} for an estimated spot price: --spot-estimates ranks them)" in " ".join(out.split())
