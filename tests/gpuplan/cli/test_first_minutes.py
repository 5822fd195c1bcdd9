"""What a new user meets in the first five minutes, point by point, through the CLI."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from gpuplan import __version__

Run = Callable[..., tuple[int, str, str]]


def one_line_error(code: int, err: str, want_code: int = 2) -> str:
    assert code == want_code, err
    assert "Traceback" not in err and "internal error" not in err
    return " ".join(err.split())


# ---------------------------------------------------------------- 1. regions and empty filters


@pytest.mark.parametrize("region", ["us-est-1", "mars-north-1"])
def test_a_misspelt_region_is_refused_with_the_closest_known_ones(gpuplan: Run, region: str) -> None:
    code, out, err = gpuplan("plan", "--gpu-hours", "200", "--region", region)
    err = one_line_error(code, err)
    assert out == ""  # no plan of cards to buy passed off as the answer
    assert f"--region '{region}' matches no offer" in err
    closest = err.split("closest known:")[1]
    assert "us-east-1" in closest if region == "us-est-1" else "eu-north-1" in closest


def test_offers_refuse_an_unknown_region_too(gpuplan: Run) -> None:
    code, out, err = gpuplan("offers", "--region", "mars")
    err = one_line_error(code, err)
    assert out == "" and "matches no offer" in err and "closest known:" in err


def test_region_is_checked_against_the_selected_providers_only(gpuplan: Run) -> None:
    code, _, err = gpuplan("plan", "--gpu-hours", "200", "--provider", "aws", "--region", "ap-guangzhou")
    assert "matches no offer of aws" in one_line_error(code, err)
    code, _, err = gpuplan("plan", "--gpu-hours", "200", "--provider", "local", "--region", "us-east-1")
    assert "no cloud provider is selected" in one_line_error(code, err)


def test_region_and_zone_prefixes_that_exist_still_filter(gpuplan: Run) -> None:
    code, out, err = gpuplan("plan", "--gpu-hours", "200", "--region", "us-east", "--json")
    assert code == 0, err
    regions = {o["region"] for o in json.loads(out)["options"]}
    # "global": Lambda's rows, priced the same in every region, us-east-1 to -3 among them; GCP's us-east1 and -4
    assert regions <= {"us-east-1", "us-east1", "us-east4", "global", "local"} and "us-east-1" in regions
    code, out, err = gpuplan("offers", "--region", "ap-guangzhou-3", "--json")  # a zone of the Tencent rows
    assert code == 0, err
    assert {o["provider"] for o in json.loads(out)["offers"]} == {"tencent", "local"}


@pytest.mark.parametrize("flag", ["--gpu", "--region", "--provider", "--billing", "--deadline", "--budget"])
@pytest.mark.parametrize("value", ["", "  ", ","])
def test_empty_filter_values_are_refused_not_ignored(gpuplan: Run, flag: str, value: str) -> None:
    if value == "," and flag in ("--deadline", "--budget"):
        pytest.skip("single-valued options take no comma lists")
    code, out, err = gpuplan("plan", "--gpu-hours", "200", flag, value)
    err = one_line_error(code, err)
    assert out == "" and f"{flag} is empty" in err


@pytest.mark.parametrize("flag", ["--gpu", "--region", "--provider"])
def test_offers_refuse_empty_filters(gpuplan: Run, flag: str) -> None:
    code, _, err = gpuplan("offers", flag, "")
    assert f"{flag} is empty" in one_line_error(code, err)


def test_tco_refuses_empty_values(gpuplan: Run) -> None:
    base = ["tco", "--usage", "300", "--buy", "4x RTX-4090", "--vs", "p3.16xlarge"]
    for flag in ("--region", "--billing", "--vs", "--buy"):
        code, _, err = gpuplan(*base, flag, "")
        assert f"{flag} is empty" in one_line_error(code, err), flag


# ---------------------------------------------------------------- 2. GPU families


def _offers(gpuplan: Run, *args: str) -> list[dict[str, object]]:
    code, out, err = gpuplan("offers", "--json", *args)
    assert code == 0, err
    return json.loads(out)["offers"]  # type: ignore[no-any-return]


def test_a_family_name_selects_every_variant(gpuplan: Run) -> None:
    names = {o["offer"] for o in _offers(gpuplan, "--gpu", "v100", "--provider", "aws")}
    assert {"p3.2xlarge", "p3.8xlarge", "p3.16xlarge", "p3dn.24xlarge"} <= names
    gpus = {o["gpu"] for o in _offers(gpuplan, "--gpu", "a100")}
    assert {"A100-SXM4-40GB", "A100-SXM4-80GB"} <= gpus and all(g.startswith("A100") for g in gpus)
    gpus = {o["gpu"] for o in _offers(gpuplan, "--gpu", "h100")}
    assert gpus and all(g.startswith("H100") for g in gpus)


def test_a_full_name_selects_one_variant(gpuplan: Run) -> None:
    gpus = {o["gpu"] for o in _offers(gpuplan, "--gpu", "V100-SXM2-16GB")}
    assert gpus == {"V100-SXM2-16GB"}
    gpus = {o["gpu"] for o in _offers(gpuplan, "--gpu", "a100-80gb")}
    assert gpus == {"A100-SXM4-80GB"}


def test_plan_and_fit_filters_take_families(gpuplan: Run) -> None:
    code, out, _ = gpuplan("plan", "--gpu-hours", "50", "--gpu", "v100", "--provider", "aws", "--json")
    assert code == 0 and {o["gpu"] for o in json.loads(out)["options"]} == {"V100-SXM2-16GB", "V100-SXM2-32GB"}
    code, out, _ = gpuplan("fit", "--model", "llama-2-7b", "--gpu", "h100", "--json")
    assert code == 0 and {g["gpu"] for g in json.loads(out)["gpus"]} == {"H100-SXM5-80GB", "H100-PCIE-80GB"}


def test_single_gpu_inputs_resolve_a_family_to_its_alias(gpuplan: Run) -> None:
    code, out, _ = gpuplan("estimate", "--model", "resnet50", "--images", "1000000", "--gpu", "v100", "--json")
    assert code == 0 and json.loads(out)["gpu"] == "V100-SXM2-32GB"
    code, out, _ = gpuplan("plan", "--gpu-hours", "10", "--ref-gpu", "v100", "--json", "--provider", "aws")
    assert code == 0 and json.loads(out)["assumptions"]["ref_gpu"] == "V100-SXM2-32GB"


# ---------------------------------------------------------------- 3. --explain shows regions


def test_explain_names_the_region_of_each_exclusion(gpuplan: Run) -> None:
    args = ("plan", "--gpu-hours", "200", "--provider", "tencent", "--billing", "monthly")
    plan = json.loads(gpuplan(*args, "--json")[1])
    ranked = {(o["offer"], o["region"]) for o in plan["options"]}
    excluded = {(e["offer"], e["region"]) for e in plan["excluded"]}
    # The same instance can rank in one region and be excluded in another: only the region tells them apart.
    both = {name for name, _ in ranked} & {name for name, _ in excluded}
    assert both, "the issue's case: an offer both ranked and excluded"
    assert not ranked & excluded
    code, out, _ = gpuplan(*args, "--explain", "--wide")
    assert code == 0
    table = out[out.index("Excluded"):]
    assert "region (zone)" in table
    for name in both:
        excluded_regions = {r for n, r in excluded if n == name}
        rows = [line for line in table.splitlines() if f" {name} " in line]
        assert rows and all(any(r in line for r in excluded_regions) for line in rows)
    assert "ap-guangzhou (ap-guangzhou-3)" in table  # the zone, where the data names one


# ---------------------------------------------------------------- 4. bounds


@pytest.mark.parametrize(("args", "flag"), [
    (["plan", "--gpu-hours", "1e26"], "--gpu-hours 1e26"),
    (["plan", "--gpu-hours", "1e24", "--json"], "--gpu-hours 1e24"),
    (["plan", "--gpu-hours", "10", "--budget", "1e13"], "--budget"),
    (["plan", "--gpu-hours", "10", "--deadline", "100000d"], "--deadline"),
    (["plan", "--gpu-hours", "10", "--min-vram", "1e9"], "--min-vram"),
    (["plan", "--gpu-hours", "10", "--hours-per-month", "1000"], "--hours-per-month"),
    (["plan", "--gpu-hours", "10", "--spot-overhead", "50"], "--spot-overhead"),
    (["plan", "--gpu-hours", "10", "--fx", "USD/CNY=1e9"], "exchange rate"),
    (["plan", "--model", "llama-2-7b", "--tokens", "1e20"], "--tokens"),
    (["plan", "--params", "1e20", "--tokens", "1e9"], "--params"),
    (["estimate", "--gpu", "a100", "--params", "7e9", "--tokens", "1e9", "--gpus", "1e9"], "--gpus"),
    (["fit", "--model", "llama-2-7b", "--seq-len", "1000000000"], "--seq-len"),
    (["tco", "--usage", "1e12", "--vs", "p3.16xlarge"], "--usage"),
    (["tco", "--usage", "300", "--vs", "p3.16xlarge", "--months", "240"], "--months"),
    (["tco", "--usage", "300", "--buy", "RTX-4090", "--card-price", "1e30"], "--card-price"),
])
def test_out_of_range_quantities_are_refused_with_exit_2(gpuplan: Run, args: list[str], flag: str) -> None:
    code, out, err = gpuplan(*args)
    err = one_line_error(code, err)
    assert out == "" and flag in err and "out of range" in err and "docs/limits.md" in err


def test_a_workload_file_is_held_to_the_same_ranges(gpuplan: Run, tmp_path: Path) -> None:
    f = tmp_path / "w.toml"
    f.write_text('[workload]\nkind = "train"\nmodel = "llama-2-7b"\ntokens = 1e18\n', encoding="utf-8")
    code, _, err = gpuplan("plan", "--workload", str(f))
    assert "--tokens" in one_line_error(code, err)


def test_the_top_of_every_range_still_answers(gpuplan: Run) -> None:
    code, out, err = gpuplan("plan", "--gpu-hours", "1e9", "--json")
    assert code == 0, err
    for o in json.loads(out)["options"]:
        assert re.fullmatch(r"\d+\.\d\d", o["cost"]), o["cost"]
    code, _, err = gpuplan("plan", "--params", "1e14", "--tokens", "1e15")
    assert code == 1 and "no option satisfies" in err  # fits nowhere: an answer, not a crash


# ---------------------------------------------------------------- 5. fit --infer total


def test_fit_infer_total_is_at_the_max_batch_as_the_footer_says(gpuplan: Run) -> None:
    args = ("fit", "--model", "llama-2-13b", "--infer", "--weight-bits", "8", "--gpu", "rtx-4090", "--json")
    entry = json.loads(gpuplan(*args)[1])["gpus"][0]
    at_max = json.loads(gpuplan(*args, "--batch", str(entry["max_batch_size"]))[1])["gpus"][0]
    # 2, not 3: a fit keeps 8% of usable memory free (issue 41); 3 sequences would fill 96.7%
    assert entry["max_batch_size"] == 2 and entry["total_at_batch"] == 2
    assert entry["memory_gb"]["total"] == at_max["memory_gb"]["total"]
    one = json.loads(gpuplan(*args, "--batch", "1")[1])["gpus"][0]
    assert one["total_at_batch"] == 1 and one["memory_gb"]["total"] < entry["memory_gb"]["total"]
    code, out, _ = gpuplan(*args[:-1])
    assert code == 0
    row = next(line for line in out.splitlines() if "RTX-4090" in line)
    assert f"{entry['memory_gb']['total']:.2f}" in row and "total is at --batch if given, else at the max batch" in out


def test_fit_training_reports_the_batch_its_total_is_at(gpuplan: Run) -> None:
    data = json.loads(gpuplan("fit", "--model", "bert-base", "--gpu", "a100-80gb", "--json")[1])
    e = data["gpus"][0]
    assert e["fits"] and e["total_at_batch"] == e["max_batch_size"]


# ---------------------------------------------------------------- 7. tco --chart twice


def test_tco_writes_every_chart_it_is_given(gpuplan: Run, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    png, svg = tmp_path / "c.png", tmp_path / "c.svg"
    code, _, err = gpuplan("tco", "--usage", "300", "--buy", "4x RTX-4090", "--vs", "p3.16xlarge",
                           "--chart", str(png), "--chart", str(svg))
    assert code == 0, err
    assert png.read_bytes().startswith(b"\x89PNG") and b"<svg" in svg.read_bytes()
    assert f"wrote {png}" in err and f"wrote {svg}" in err


def test_a_bad_second_chart_name_fails_before_anything_is_written(gpuplan: Run, tmp_path: Path) -> None:
    png = tmp_path / "c.png"
    code, _, err = gpuplan("tco", "--usage", "300", "--vs", "p3.16xlarge", "--chart", str(png),
                           "--chart", str(tmp_path / "c.pdf"))
    assert ".png or .svg" in one_line_error(code, err) and not png.exists()


# ---------------------------------------------------------------- 8 and 12. JSON numbers and version

JSON_COMMANDS = [
    ["plan", "--gpu-hours", "2e2"],
    ["plan", "--model", "llama-2-7b", "--tokens", "2e10"],
    ["offers"],
    ["fit", "--model", "llama-2-7b"],
    ["fit", "--model", "llama-2-13b", "--infer"],
    ["estimate", "--params", "7e9", "--tokens", "2e12", "--gpu", "A100-80GB", "--gpus", "2048"],
    ["estimate", "--model", "resnet50", "--images", "1281167", "--epochs", "90", "--gpu", "V100-16GB", "--gpus", "8"],
    ["tco", "--usage", "3e2", "--buy", "4x RTX-4090", "--vs", "GN10Xp.20XLARGE320", "--vs", "p3.16xlarge"],
    ["gpus"],
    ["config", "show"],
    ["catalog", "show"],
    ["catalog", "clear"],
]
EXPONENT = re.compile(r"-?\d+(\.\d+)?[eE][-+]?\d+")


def _numbers(value: object, path: str = "") -> Iterator[tuple[str, object]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _numbers(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _numbers(v, f"{path}[{i}]")
    else:
        yield path, value


@pytest.mark.parametrize("args", JSON_COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_every_json_output_has_plain_numbers_and_the_version(gpuplan: Run, args: list[str]) -> None:
    code, out, err = gpuplan(*args, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert next(iter(data)) == "gpuplan_version" and data["gpuplan_version"] == __version__
    for path, v in _numbers(data):
        if isinstance(v, str) and re.fullmatch(r"-?[\d.]+([eE][-+]?\d+)?", v) and any(c.isdigit() for c in v):
            assert not EXPONENT.fullmatch(v), f"{path} = {v}"
            assert len(v.partition(".")[2]) <= 6, f"{path} = {v}: more than 6 places"
        elif isinstance(v, float):
            assert "e" not in json.dumps(v), f"{path} = {v}"
            assert not v.is_integer(), f"{path} = {v}: a whole number is written as one (gpu_count 8, not 8.0)"


def test_money_in_json_has_exactly_two_places(gpuplan: Run) -> None:
    plan = json.loads(gpuplan("plan", "--gpu-hours", "2e2", "--json")[1])
    assert plan["assumptions"]["gpu_hours_on_ref"] == "200"
    for o in plan["options"]:
        assert re.fullmatch(r"\d+\.\d\d", o["cost"]) and re.fullmatch(r"\d+\.\d\d", o["native_cost"]["amount"])
        for i in o["line_items"]:
            assert re.fullmatch(r"\d+\.\d\d", i["cost"]["amount"])
            assert Decimal(i["quantity"]) > 0
    tco = json.loads(gpuplan("tco", "--usage", "3e2", "--vs", "p3.16xlarge", "--json")[1])
    assert tco["usage_gpu_hours_per_month"] == "300"
    for o in tco["options"]:
        assert all(re.fullmatch(r"-?\d+\.\d\d", v) for v in [*o["monthly_cost"], o["total_cost"]])


def test_version_flag(gpuplan: Run) -> None:
    code, out, _ = gpuplan("--version")
    assert code == 0 and out.strip() == f"gpuplan {__version__}"


def test_pyproject_takes_its_version_from_the_package() -> None:
    import tomllib

    root = Path(__file__).resolve().parents[3]
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "gpuplan.__version__"}


def test_every_package_is_installed_not_only_the_listed_ones() -> None:
    """A fresh `pip install .` once lacked gpuplan.cli: the tests, run from the tree, never noticed."""
    import tomllib

    root = Path(__file__).resolve().parents[3]
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    include = project["tool"]["setuptools"]["packages"]["find"]["include"]
    # tests and benchmarks run from a checkout and are not installed
    tops = [d for d in root.iterdir() if (d / "__init__.py").is_file() and d.name not in ("tests", "benchmarks")]
    packages = {".".join(p.parent.relative_to(root).parts) for top in tops for p in top.rglob("__init__.py")}
    from fnmatch import fnmatch

    assert {"gpuplan.cli", "gpuplan.render", "planner.plan", "planner.tco"} <= packages
    assert all(any(fnmatch(p, pat) for pat in include) for p in packages), packages


# ---------------------------------------------------------------- 9. settings


def test_a_config_file_at_the_root_of_gpuplan_home_is_read(gpuplan: Run, clean_environ: Path) -> None:
    home = clean_environ / "gpuplan-home"
    home.mkdir(parents=True)
    (home / "config.toml").write_text('currency = "CNY"\n', encoding="utf-8")
    code, out, err = gpuplan("plan", "--gpu-hours", "10", "--provider", "aws", "--json")
    assert code == 0 and json.loads(out)["currency"] == "CNY", err
    shown = json.loads(gpuplan("config", "show", "--json")[1])
    assert shown["config_file"] == str(home / "config.toml") and shown["config_file_exists"]
    assert str(home / "config" / "config.toml") in shown["config_searched"]


def test_two_config_files_read_one_and_say_so(gpuplan: Run, clean_environ: Path) -> None:
    home = clean_environ / "gpuplan-home"
    (home / "config").mkdir(parents=True)
    (home / "config" / "config.toml").write_text('currency = "USD"\n', encoding="utf-8")
    (home / "config.toml").write_text('currency = "CNY"\n', encoding="utf-8")
    code, out, err = gpuplan("plan", "--gpu-hours", "10", "--provider", "aws", "--json")
    assert code == 0 and json.loads(out)["currency"] == "USD"
    assert f"{home / 'config.toml'} is ignored" in " ".join(err.split())


def test_config_show_says_where_it_looked_when_there_is_no_file(gpuplan: Run, clean_environ: Path) -> None:
    shown = json.loads(gpuplan("config", "show", "--json")[1])
    home = clean_environ / "gpuplan-home"
    assert not shown["config_file_exists"]
    assert shown["config_searched"] == [str(home / "config" / "config.toml"), str(home / "config.toml")]


@pytest.fixture
def fx_dated(monkeypatch: pytest.MonkeyPatch) -> Callable[[int], None]:
    """Pretend today is ``days`` after the shipped rate's date."""
    from pricing.money import shipped_fx_rates

    as_of = shipped_fx_rates()[0].as_of
    assert as_of is not None

    def at(days: int) -> None:
        import pricing.money

        class Today(date):
            @classmethod
            def today(cls) -> date:  # type: ignore[override]
                return as_of + timedelta(days=days)

        monkeypatch.setattr(pricing.money, "date", Today)

    return at


def test_an_old_shipped_rate_warns_on_stderr_with_its_age(gpuplan: Run, fx_dated: Callable[[int], None]) -> None:
    fx_dated(200)
    code, out, err = gpuplan("plan", "--gpu-hours", "10", "--json")
    assert code == 0
    err = " ".join(err.split())
    assert "warning: converted at the shipped rate 1 USD =" in err and "6 months old" in err and "--fx" in err
    assert "6 months old" in json.loads(out)["assumptions"]["fx"][0]  # the age travels with the rate


def test_a_fresh_rate_or_the_users_own_does_not_warn(gpuplan: Run, fx_dated: Callable[[int], None]) -> None:
    fx_dated(90)
    assert "warning" not in gpuplan("plan", "--gpu-hours", "10")[2]
    fx_dated(400)
    assert "warning" not in gpuplan("plan", "--gpu-hours", "10", "--fx", "USD/CNY=7.1")[2]
    assert "warning" not in gpuplan("plan", "--gpu-hours", "10", "--provider", "aws")[2]  # nothing converted


# ---------------------------------------------------------------- 10. messages


def test_billing_empty_is_bad_input(gpuplan: Run) -> None:
    code, _, err = gpuplan("plan", "--gpu-hours", "200", "--billing", "")
    err = one_line_error(code, err)
    assert "--billing is empty" in err and "a  price" not in err


@pytest.mark.parametrize(("budget", "needle"), [("abc", "--budget 'abc' is not a number"),
                                                 ("5000 XYZ", "unknown currency 'XYZ'"),
                                                 ("-5", "positive")])
def test_budget_messages_say_what_is_wrong(gpuplan: Run, budget: str, needle: str) -> None:
    code, _, err = gpuplan("plan", "--gpu-hours", "200", "--budget", budget)
    assert needle in one_line_error(code, err)


@pytest.mark.parametrize("budget", ["5000", "5000 CNY", "CNY 5000", "5000cny", "5,000"])
def test_budget_forms_that_read(gpuplan: Run, budget: str) -> None:
    assert gpuplan("plan", "--gpu-hours", "10", "--budget", budget, "--json")[0] == 0


def test_estimated_price_note_only_when_a_row_is_estimated(gpuplan: Run) -> None:
    code, out, _ = gpuplan("plan", "--gpu-hours", "200", "--provider", "aws")
    assert code == 0 and "*" not in out and "estimated" not in out
    code, out, _ = gpuplan("plan", "--gpu-hours", "200", "--provider", "tencent", "--billing", "spot",
                           "--spot-estimates")
    assert "spot*" in out and "Billing marked * is an estimated price." in out


def test_markdown_never_starts_a_line_with_a_bullet_star(gpuplan: Run) -> None:
    for args in (["plan", "--gpu-hours", "200"], ["tco", "--usage", "300", "--vs", "GN10Xp.20XLARGE320"],
                 ["offers"]):
        code, out, _ = gpuplan(*args, "-o", "markdown")
        assert code == 0
        assert not [line for line in out.splitlines() if line.startswith(("* ", "*estimated"))], args


def test_fastest_says_within_three_times_the_cost() -> None:
    from planner.plan.demand import RefGpuHours
    from planner.plan import Constraints, make_plan
    from gpuplan.settings import load_settings
    from tests.fixtures.catalogs import instance_csv, toy_catalog

    # A slow cheap spot machine, and an 8-GPU one about 8x faster at 2-3x its cost.
    cat = toy_catalog(instance_csv(
        "acme,a1.v100x1,a1,V100-SXM2-32GB,1,8,64,test-east-1,,,USD,5.00,,,,0.50,,,,,made-up test figure,2026-01-01,",
        "acme,f8.v100x8,f8,V100-SXM2-32GB,8,64,512,test-east-1,,,USD,10.00,,,,,,,,,made-up test figure,2026-01-01,",
    ))
    demand = RefGpuHours(gpu_hours=Decimal(100), ref_gpu="V100-SXM2-32GB", catalog=cat)
    p = make_plan(demand, Constraints(providers=frozenset({"acme"})), load_settings(), catalog=cat)
    assert (p.cheapest.offer, p.cheapest.billing) == ("a1.v100x1", "spot")
    assert "Fastest within 3× the cost: acme f8.v100x8 hourly" in p.explanation
    assert "Fastest:" not in p.explanation


def test_a_table_shows_its_cells_as_given_never_as_emoji(capsys: pytest.CaptureFixture[str]) -> None:
    # Offer names and regions come from user catalogs: ':b:' stays text, not rich's 🅱 emoji.
    from gpuplan.render.table import Column, OutputFormat, render_rows

    render_rows([{"offer": "x:b:y", "region": ":fire:"}], [Column(key="offer", header="offer"),
                                                          Column(key="region", header="region")],
                OutputFormat.TABLE, title="t:cloud:")
    out = capsys.readouterr().out
    assert "x:b:y" in out and ":fire:" in out and "t:cloud:" in out
