"""``gpuplan tco`` end to end: table, JSON contract, Markdown, HTML, chart, scenarios, errors."""

from __future__ import annotations

import json
import math
import re
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from decimal import Decimal
from html.parser import HTMLParser
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pricing.catalog import Catalog, Interconnect
from gpuplan.cli import app
from planner.perf.speed import SpeedPrecision, WorkloadClass, relative_speed
from planner.perf.scaling import efficiency

EXAMPLE = ["tco", "--usage", "300", "--months", "36", "--buy", "4x RTX-4090",
           "--vs", "GN10Xp.20XLARGE320", "--vs", "p3.16xlarge"]
EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
runner = CliRunner()


def invoke(*args: str) -> str:
    result = runner.invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


def test_the_issue_example_prints_table_and_verdict() -> None:
    out = invoke(*EXAMPLE)
    assert "Buy vs rent over 36 months" in out
    assert "Verdict:" in out and re.search(r"p3\.16xlarge hourly in month \d+", out)
    assert "quantity x unit price = cost" in out


def test_json_contract(tmp_path: Path) -> None:
    data = json.loads(invoke(*EXAMPLE, "--json"))
    assert data["currency"] == "USD"
    assert {"usage", "hours_per_month", "fx", "defaults", "catalog_as_of"} <= set(data["assumptions"])
    kinds = {"buy", "hourly", "monthly", "spot", "reserved_1y", "reserved_3y"}
    for o in data["options"]:
        assert {"name", "kind", "monthly_cost", "cumulative_cost", "total_cost"} <= set(o)
        assert o["kind"] in kinds
        assert len(o["monthly_cost"]) == len(o["cumulative_cost"]) == 36
        assert all(isinstance(v, str) for v in o["monthly_cost"] + o["cumulative_cost"] + [o["total_cost"]])
        assert o["total_cost"] == o["cumulative_cost"][-1]
        for item in o["line_items"]:
            assert Decimal(item["cost"]) == (Decimal(item["quantity"]) * Decimal(item["unit_price"])).quantize(
                Decimal("0.01"))
    assert {"buy", "vs", "month"} <= set(data["breakeven"][0])
    months = {b["vs"]: b["month"] for b in data["breakeven"]}
    formula = {b["vs"]: b["months_formula"] for b in data["breakeven"]}
    assert months["p3.16xlarge hourly"] == math.ceil(float(formula["p3.16xlarge hourly"]))
    assert months["p3.16xlarge spot"] is None
    assert data["monthly_vs_hourly_hours"] == {"GN10Xp.20XLARGE320": "479.97", "p3.16xlarge": None}
    assert any(d["assumption"] for d in data["assumptions"]["defaults"])


def test_an_estimated_spot_price_is_compared_only_when_asked_for() -> None:
    names = [o["name"] for o in json.loads(invoke(*EXAMPLE, "--json"))["options"]]
    assert "GN10Xp.20XLARGE320 spot" not in names and "p3.16xlarge spot" in names  # AWS spot is a listed price
    out = invoke(*EXAMPLE)
    assert "Not compared: GN10Xp.20XLARGE320 spot" in out and "--spot-estimates" in out
    data = json.loads(invoke(*EXAMPLE, "--spot-estimates", "--json"))
    (guess,) = [o for o in data["options"] if o["name"] == "GN10Xp.20XLARGE320 spot"]
    assert guess["estimate"] is True


class _Refs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.refs: list[str] = []
        self.tags: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.refs += [v or "" for k, v in attrs if k in ("src", "href", "xlink:href", "action")]


def test_html_is_self_contained_with_a_chart(tmp_path: Path) -> None:
    page, md = tmp_path / "r.html", tmp_path / "r.md"
    invoke(*EXAMPLE, "--html", str(page), "--markdown", str(md))
    text = page.read_text(encoding="utf-8")
    p = _Refs()
    p.feed(text)
    p.close()
    assert {"svg", "polyline", "table", "style"} <= p.tags
    assert not [r for r in p.refs if r.startswith(("http:", "https:", "//"))]
    assert "@import" not in text and "url(" not in text and "<script" not in text
    assert "@media print" in text and "Verdict:" in text
    markdown = md.read_text(encoding="utf-8")
    assert "**Verdict:**" in markdown and "| option |" in markdown and "[ASSUMPTION]" in markdown


@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_chart_files_are_valid(tmp_path: Path, suffix: str) -> None:
    pytest.importorskip("matplotlib")
    chart = tmp_path / f"c{suffix}"
    invoke(*EXAMPLE, "--chart", str(chart))
    data = chart.read_bytes()
    if suffix == ".png":
        assert data.startswith(b"\x89PNG\r\n\x1a\n")
    else:
        assert ET.fromstring(data).tag == "{http://www.w3.org/2000/svg}svg"


def test_chart_without_matplotlib_says_how_to_install(
    gpuplan: Callable[..., tuple[int, str, str]], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    code, _, err = gpuplan(*EXAMPLE, "--chart", str(tmp_path / "c.png"))
    err = " ".join(err.split())
    assert code == 2 and "pip install 'gpuplan[chart]'" in err and "Traceback" not in err


@pytest.mark.parametrize(("buy", "name"), [("8x 4090", "buy 8x RTX-4090"), ("2x 3090", "buy 2x RTX-3090"),
                                         ("8 x RTX 4090", "buy 8x RTX-4090"), ("8x RTX-4090", "buy 8x RTX-4090")])
def test_buy_takes_the_aliases_gpus_lists(buy: str, name: str) -> None:
    header = invoke("tco", "--usage", "300", "--months", "12", "--buy", buy, "-o", "csv").splitlines()[0]
    assert header == f"month,{name}"


def test_buy_of_an_unknown_gpu_names_the_closest(gpuplan: Callable[..., tuple[int, str, str]]) -> None:
    code, out, err = gpuplan("tco", "--usage", "300", "--buy", "8x 409O")
    err = " ".join(err.split())
    assert code == 2 and out == "" and "unknown GPU '409O'; did you mean RTX-4090" in err


def test_readme_example_without_matplotlib_writes_nothing(
    gpuplan: Callable[..., tuple[int, str, str]], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The README's example on an install without the chart extra: it fails before costing
    # or writing anything (no half set of reports), in one line that says how to install it.
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    html_file, md_file, png = tmp_path / "report.html", tmp_path / "report.md", tmp_path / "tco.png"
    code, out, err = gpuplan(*EXAMPLE, "--html", str(html_file), "--markdown", str(md_file), "--chart", str(png))
    assert not html_file.exists() and not md_file.exists() and not png.exists()
    lines = err.splitlines()
    assert code == 2 and out == "" and "Traceback" not in err, err
    assert lines[0].startswith("error: --chart needs matplotlib") and "pip install 'gpuplan[chart]'" in lines[0]
    assert "nothing was written" in lines[0] and "wrote" not in err


@pytest.mark.parametrize("scenario", sorted(EXAMPLES.glob("tco-*.toml")), ids=lambda p: p.name)
def test_example_scenarios_run(scenario: Path) -> None:
    data = json.loads(invoke("tco", "--scenario", str(scenario), "--json"))
    assert data["options"] and data["verdict"]


def test_flags_override_the_scenario(tmp_path: Path) -> None:
    sc = tmp_path / "s.toml"
    sc.write_text('usage = 100\nmonths = 12\nbuy = "2x RTX-4090"\nvs = ["p3.16xlarge"]\npue = 1.2\n', encoding="utf-8")
    data = json.loads(invoke("tco", "--scenario", str(sc), "--months", "6", "--json"))
    assert data["months"] == 6 and data["usage_gpu_hours_per_month"] == "100"
    assert data["assumptions"]["buy 2x RTX-4090"]["pue"] == "1.2"


def test_hours_per_day_counts_the_machine() -> None:
    """8 h a day for 20 days keeps the first machine busy 160 of its 730 hours; the work is what
    its GPUs do in that time, at their speed and scaling."""
    data = json.loads(invoke("tco", "--hours-per-day", "8", "--days-per-month", "20", "--buy", "2x RTX-4090",
                             "--vs", "p3.16xlarge", "--json"))
    cat = Catalog.shipped()
    speed = relative_speed(cat, "RTX-4090", "V100-SXM2-32GB", WorkloadClass.TRANSFORMER, SpeedPrecision.MIXED).relative
    work = 8 * 20 * 2 * speed * efficiency(2, Interconnect.PCIE, WorkloadClass.TRANSFORMER)
    assert float(data["usage_gpu_hours_per_month"]) == pytest.approx(work, abs=0.01)
    buy = next(o for o in data["options"] if o["kind"] == "buy")
    assert any(n.startswith(f"utilization {160 / 730:.1%}") for n in buy["notes"])


def test_usage_is_work_on_the_reference_gpu_and_the_report_says_so() -> None:
    """--ref-gpu, --class and --precision say what the usage hours were measured on; each option's
    hours then scale by its speed: the same usage on an A100 reference is more work than on a V100."""
    v100 = json.loads(invoke(*EXAMPLE, "--json"))
    a100 = json.loads(invoke(*EXAMPLE, "--ref-gpu", "a100-80gb", "--class", "cnn", "--precision", "fp32", "--json"))
    assert "V100-SXM2-32GB" in v100["usage_unit"] and "A100-SXM4-80GB" in a100["usage_unit"]
    assert (a100["assumptions"]["workload_class"], a100["assumptions"]["precision"]) == ("cnn", "fp32")
    assert "relative speed" in v100["assumptions"]["usage_counts_work"]
    cat = Catalog.shipped()

    def speed(gpu: str, ref: str, cls: WorkloadClass, prec: SpeedPrecision) -> float:
        return relative_speed(cat, gpu, ref, cls, prec).relative

    for data, ref, cls, prec in ((v100, "V100-SXM2-32GB", WorkloadClass.TRANSFORMER, SpeedPrecision.MIXED),
                                 (a100, "A100-SXM4-80GB", WorkloadClass.CNN, SpeedPrecision.FP32)):
        hourly = next(o for o in data["options"] if o["name"] == "p3.16xlarge hourly")
        instance_hours = 300 / (speed("V100-SXM2-16GB", ref, cls, prec) * 8
                                * efficiency(8, Interconnect.NVLINK, cls))
        item = hourly["line_items"][0]  # the instance; its disk and address follow
        assert float(item["quantity"]) == pytest.approx(instance_hours, rel=1e-4)
        buy = next(o for o in data["options"] if o["kind"] == "buy")
        busy = 300 / (speed("RTX-4090", ref, cls, prec) * efficiency(4, Interconnect.PCIE, cls))
        assert any(n.startswith(f"utilization {busy / (4 * 730):.1%}") for n in buy["notes"])


def test_scenario_files_take_the_class_under_its_flag_name(tmp_path: Path) -> None:
    sc = tmp_path / "s.toml"
    sc.write_text('usage = 100\nmonths = 6\nbuy = "2x RTX-4090"\nclass = "cnn"\nref_gpu = "a100"\n', encoding="utf-8")
    data = json.loads(invoke("tco", "--scenario", str(sc), "--json"))
    assert data["assumptions"]["workload_class"] == "cnn" and data["assumptions"]["ref_gpu"] == "A100-SXM4-40GB"


def test_csv_is_the_cumulative_series() -> None:
    lines = invoke(*EXAMPLE, "-o", "csv").strip().splitlines()
    assert lines[0].startswith("month,buy 4x RTX-4090") and len(lines) == 37


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--buy", "four RTX"], "unknown GPU"),
        (["--buy", "0x RTX-4090"], "card count"),
        (["--vs", "p3.16xlarg"], "did you mean p3.16xlarge"),
        (["--usage", "-5"], "positive"),
        (["--months", "0"], "--months"),
        (["--usage", "abc"], "not a number"),
        (["--chart", "c.txt"], ".png or .svg"),
        (["--billing", "weekly"], "billing mode"),
        (["--resale", "2"], "--resale"),
        (["--usage", "nan"], "finite"),
        (["--usage", "0"], "positive"),
        (["--ref-gpu", "V1000"], "unknown GPU"),
        (["--class", "rnn"], "unknown --class"),
        (["--precision", "int4"], "unknown --precision"),
    ],
)
def test_bad_input_is_one_line_without_traceback(
    gpuplan: Callable[..., tuple[int, str, str]], args: list[str], needle: str
) -> None:
    base = {"--usage": "300", "--buy": "4x RTX-4090", "--vs": "p3.16xlarge", "--months": "12"}
    for flag, value in zip(args[::2], args[1::2], strict=True):
        base[flag] = value
    argv = ["tco", *[x for kv in base.items() for x in kv]]
    if "--chart" in args:
        argv += ["--chart", "c.txt"]
    code, out, err = gpuplan(*argv)
    err = " ".join(err.split())
    assert code == 2, err
    assert needle in err and "Traceback" not in err and out == ""


@pytest.mark.parametrize("hours", ["25", "0", "-1", "nan"])
def test_hours_per_day_out_of_range_is_one_line(gpuplan: Callable[..., tuple[int, str, str]], hours: str) -> None:
    code, out, err = gpuplan("tco", "--hours-per-day", hours, "--buy", "4x RTX-4090")
    assert code == 2 and "--hours-per-day" in " ".join(err.split()) and "Traceback" not in err and out == ""


def test_missing_scenario_file(gpuplan: Callable[..., tuple[int, str, str]], tmp_path: Path) -> None:
    code, _, err = gpuplan("tco", "--scenario", str(tmp_path / "nope.toml"))
    err = " ".join(err.split())
    assert code == 2 and "does not exist" in err
    bad = tmp_path / "bad.toml"
    bad.write_text("usage = 300\nbuys = ['1x RTX-4090']\n", encoding="utf-8")
    code, _, err = gpuplan("tco", "--scenario", str(bad))
    err = " ".join(err.split())
    assert code == 2 and "unknown keys: buys" in err


def test_nothing_to_compare(gpuplan: Callable[..., tuple[int, str, str]]) -> None:
    code, _, err = gpuplan("tco", "--usage", "300")
    assert code == 2 and "--buy" in err
