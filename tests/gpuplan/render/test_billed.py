"""The billed-against-estimated page and table: what a team lead reads, escaped, with the marks that matter."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from gpuplan.render.billed import html_page, mark, payload, table_rows, totals
from launch.billed import compare, read_bills
from tests.launch.test_billed import AT, DEC, FX, Reader, bill, ledger_with_launch


def rows(tmp_path: Path) -> tuple[list, list]:
    with ledger_with_launch(tmp_path, project="<script>x</script>") as ledger:
        clouds = read_bills(ledger, lambda p: Reader(bill(date(2026, 12, 1), "30.60"),
                                                     bill(date(2026, 12, 3), "73.44")), DEC, AT)
        return list(clouds.values()), compare(ledger, clouds, DEC, AT, FX)


def test_a_machine_billed_after_its_end_reads_as_an_alarm_everywhere(tmp_path: Path) -> None:
    clouds, got = rows(tmp_path)
    (row,) = got
    assert mark(row) == "ALARM"
    (t,) = table_rows(got)
    assert (t["estimated"], t["billed"], t["mark"]) == ("30.60 USD", "104.04 USD", "ALARM")
    assert "2026-12-03" in t["why"]
    assert payload("2026-12", AT, clouds, got)["launches"][0]["alarm"] == row.alarm


def test_the_page_escapes_what_the_ledger_holds(tmp_path: Path) -> None:
    clouds, got = rows(tmp_path)
    page = html_page("2026-12", AT, clouds, got)
    assert "<script>" not in page and "&lt;script&gt;" in page and "ALARM" in page


def test_totals_per_project_add_up_the_launches_and_count_their_marks(tmp_path: Path) -> None:
    _, got = rows(tmp_path)
    (t,) = totals(got, "project")
    assert (t["project"], t["launches"], t["estimated"], t["billed"], t["difference"]) == (
        "<script>x</script>", 1, "30.60", "104.04", "73.44")
    assert (t["flagged"], t["alarms"]) == (1, 1)
