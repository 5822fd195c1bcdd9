"""The second-source refresh reads GCP's catalog export and keeps the rows whose note says why they differ."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from pathlib import Path

from benchmarks import second_source

# The shape of Cyclenerd's pricing.yml (@0166a59e, generated 2025-03-06), two of its a3-highgpu-8g figures.
PRICING_YML = """---
about:
  generated: Thu Mar  6 03:53:56 2025
compute:
  instance:
    a3-highgpu-8g:
      cost:
        us-central1:
          hour: 88.4899999025753
          hour_spot: 35.3957496986301
        us-east4:
          hour: 88.5557561512329
      cpu: 208
"""


def test_the_export_is_read_per_machine_type_and_region() -> None:
    prices, generated = second_source.gcp_hourly(PRICING_YML)
    assert prices[("a3-highgpu-8g", "us-central1")] == Decimal("88.4899999025753")
    assert generated.endswith("2025")


def test_fresh_figures_cover_the_shipped_rows_they_price(tmp_path: Path) -> None:
    prices, generated = second_source.gcp_hourly(PRICING_YML)
    fresh = second_source.fresh_seconds(prices, generated, date(2026, 12, 5))
    assert {(s.instance_type, s.region) for s in fresh} == {("a3-highgpu-8g", "us-central1"),
                                                            ("a3-highgpu-8g", "us-east4")}
    side = tmp_path / "s.csv"
    side.write_text("# c\n" + ",".join(second_source.FIELDS) + "\n"
                    "gcp,a3-highgpu-8g,us-central1,hourly,43.06615,USD,skypilot,2026-12-04,replaced source\n"
                    "gcp,a3-highgpu-8g,us-east4,hourly,80,USD,old,2025-01-01,\n"
                    "aws,p3.2xlarge,us-east-1,hourly,3.06,USD,ref,2026-12-05,\n", encoding="utf-8")
    second_source.write(fresh, side)
    lines = side.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "# c" and any(line.startswith("aws,p3.2xlarge") for line in lines)
    assert any("43.06615" in line and "replaced source" in line for line in lines)  # a noted row stays
    assert any(line.startswith("gcp,a3-highgpu-8g,us-east4,hourly,88.5557561512329") for line in lines)
    assert not any(",80,USD,old" in line for line in lines)
