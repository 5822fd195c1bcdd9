"""A mainland China (CNY) list price never applies to a Tencent zone outside the mainland."""

from __future__ import annotations

import csv
import io
from pathlib import Path

SHIPPED = Path(__file__).resolve().parents[3] / "pricing" / "data" / "instances" / "tencent.csv"
# Tencent's mainland regions (the overseas ones, ap-hongkong, ap-singapore, eu-frankfurt, na-siliconvalley, ...,
# are sold on the international site in USD at other prices)
MAINLAND = ("ap-guangzhou", "ap-shanghai", "ap-nanjing", "ap-beijing", "ap-chengdu", "ap-chongqing", "ap-shenzhen")


def test_mainland_priced_rows_list_mainland_zones_only() -> None:
    rows = list(csv.DictReader(io.StringIO(SHIPPED.read_text(encoding="utf-8"))))
    mainland = [r for r in rows if r["region"] == "cn-mainland"]
    assert mainland and all(r["currency"] == "CNY" for r in mainland)
    for r in mainland:
        zones = [z for z in r["zones"].split(";") if z]
        assert all(z.startswith(MAINLAND) for z in zones), (r["instance_type"], zones)


def test_gn10xp_is_not_offered_in_frankfurt_at_the_mainland_price() -> None:
    rows = list(csv.DictReader(io.StringIO(SHIPPED.read_text(encoding="utf-8"))))
    gn = [r for r in rows if r["instance_type"] == "GN10Xp.20XLARGE320"]
    assert gn and not any("frankfurt" in r["zones"] or "hongkong" in r["zones"] for r in gn)
