"""`catalog refresh --fx`: ECB's daily reference rates (eurofxref-daily.xml, served on 127.0.0.1 or from a file
URL) into the cache; plans prefer them to the shipped rates, and they warn only once over 90 days old."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from tests.fakes.gpuhunt_bucket import serve

Run = Callable[..., tuple[int, str, str]]
DAY = date(2031, 3, 14)  # the fixture's day: far from the shipped rates', so which were used is plain
# The feed's layout as ECB publishes it (namespaces, single-quoted attributes); the figures are made up.
ENVELOPE = ('<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" '
            'xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">')
FEED = f"""<?xml version="1.0" encoding="UTF-8"?>
{ENVELOPE}
\t<gesmes:subject>Reference rates</gesmes:subject>
\t<gesmes:Sender>
\t\t<gesmes:name>European Central Bank</gesmes:name>
\t</gesmes:Sender>
\t<Cube>
\t\t<Cube time='{DAY}'>
\t\t\t<Cube currency='USD' rate='1.2500'/>
\t\t\t<Cube currency='JPY' rate='150.00'/>
\t\t\t<Cube currency='GBP' rate='0.80000'/>
\t\t\t<Cube currency='CNY' rate='9.0000'/>
\t\t\t<Cube currency='HKD' rate='9.7500'/>
\t\t\t<Cube currency='SGD' rate='1.6000'/>
\t\t\t<Cube currency='ZAR' rate='21.0000'/>
\t\t</Cube>
\t</Cube>
</gesmes:Envelope>
"""


@pytest.fixture
def feed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """ECB's feed on 127.0.0.1 (GPUPLAN_ECB_URL); the file it serves, to change."""
    root = tmp_path / "ecb"
    root.mkdir()
    (root / "eurofxref-daily.xml").write_text(FEED, encoding="utf-8")
    with serve(root) as url:
        monkeypatch.setenv("GPUPLAN_ECB_URL", f"{url}/eurofxref-daily.xml")
        yield root / "eurofxref-daily.xml"


@pytest.fixture
def today(monkeypatch: pytest.MonkeyPatch) -> Callable[[date], None]:
    """Pretend today is the given day (the age of a rate is taken from pricing.money's ``date.today``)."""
    import pricing.money

    def at(day: date) -> None:
        class Today(date):
            @classmethod
            def today(cls) -> date:  # type: ignore[override]
                return day

        monkeypatch.setattr(pricing.money, "date", Today)

    return at


def _plan_fx(gpuplan: Run) -> tuple[list[str], str]:
    code, out, err = gpuplan("plan", "--gpu-hours", "10", "--json")
    assert code == 0, err
    return json.loads(out)["assumptions"]["fx"], err


def test_refreshed_rates_replace_the_shipped_ones(gpuplan: Run, feed: Path, today: Callable[[date], None]) -> None:
    today(DAY + timedelta(days=3))
    code, out, err = gpuplan("catalog", "refresh", "--fx", "--json")
    assert code == 0, err
    said = json.loads(out)
    assert len(said["fx"]) == 6 and "1 EUR = 1.2500 USD" in " ".join(said["fx"])  # ZAR is not one of gpuplan's
    fx, err = _plan_fx(gpuplan)
    # the default plan converts Tencent's CNY prices: 9 / 1.25 CNY per USD, crossed through the euro
    assert fx[0].startswith("1 USD = 7.2 CNY (cross via EUR") and f"as of {DAY}" in fx[0]
    assert "warning" not in err
    today(DAY + timedelta(days=91))
    _, err = _plan_fx(gpuplan)
    assert "warning: converted at the refreshed rate 1 USD = 7.2 CNY" in " ".join(err.split())


def test_the_users_rate_still_wins(gpuplan: Run, feed: Path) -> None:
    assert gpuplan("catalog", "refresh", "--fx")[0] == 0
    code, out, _ = gpuplan("plan", "--gpu-hours", "10", "--fx", "USD/CNY=7.0", "--json")
    assert code == 0 and json.loads(out)["assumptions"]["fx"][0].startswith("1 USD = 7.0 CNY (given by the user")


def test_a_file_url_reads_too(gpuplan: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "eurofxref-daily.xml"
    path.write_text(FEED.replace("rate='9.0000'", "rate='8.7500'"), encoding="utf-8")
    monkeypatch.setenv("GPUPLAN_ECB_URL", path.as_uri())
    code, _, err = gpuplan("catalog", "refresh", "--fx")
    assert code == 0 and "1 EUR = 8.7500 CNY" in err
    from gpuplan.settings import load_settings
    from pricing.money import Currency

    assert load_settings().fx_table().rate(Currency.USD, Currency.CNY) == Decimal(7)


@pytest.mark.parametrize("broken", ["<html><body>503</body></html>", FEED.replace("time=", "day="),
                                    FEED.replace("rate='1.2500'", "rate='-1'"), FEED[:200]])
def test_a_bad_answer_changes_nothing(gpuplan: Run, feed: Path, broken: str) -> None:
    assert gpuplan("catalog", "refresh", "--fx")[0] == 0
    before = _plan_fx(gpuplan)[0]
    feed.write_text(broken, encoding="utf-8")
    code, _, err = gpuplan("catalog", "refresh", "--fx")
    assert code != 0 and "left as they were" in " ".join(err.split()) and "Traceback" not in err
    assert _plan_fx(gpuplan)[0] == before


def test_an_unreachable_feed_says_what_to_check(gpuplan: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUPLAN_ECB_URL", "http://127.0.0.1:9/eurofxref-daily.xml")  # the discard port
    code, _, err = gpuplan("catalog", "refresh", "--fx")
    assert code != 0 and "GPUPLAN_ECB_URL" in " ".join(err.split())


def test_refresh_still_needs_a_provider_without_fx(gpuplan: Run) -> None:
    code, _, err = gpuplan("catalog", "refresh")
    assert code == 2 and "--provider" in err and "--fx" in err
