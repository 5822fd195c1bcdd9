"""Refresh the GCP second sources from GCP's Cloud Billing catalog export, and print every disagreement.

``python benchmarks/second_source.py`` downloads Cyclenerd's ``pricing.yml`` (GCP's Cloud Billing
Catalog API SKU prices summed per machine type and region, regenerated daily), compares the
hourly price of every shipped GCP machine-type row with it, and prints the rows more than 5% apart
and those it has no figure for. ``--write`` replaces the GCP rows of
``pricing/data/second_sources.csv`` that carry no note with the downloaded figures (rows with a
note, which say why the two differ, are kept). ``--file PATH`` reads a saved copy instead of the
network. It uses the network only when run; the tests run its parsing on a small saved text.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
import urllib.request
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import yaml

from pricing.catalog import shipped_instances
from pricing.second_sources import SecondSource, disagreements, second_sources

URL = "https://raw.githubusercontent.com/Cyclenerd/google-cloud-pricing-cost-calculator/master/pricing.yml"
SIDECAR = Path(__file__).resolve().parents[1] / "pricing" / "data" / "second_sources.csv"
FIELDS = ("cloud", "instance_type", "region", "column", "value", "currency", "source", "as_of", "note")


def gcp_hourly(text: str) -> tuple[dict[tuple[str, str], Decimal], str]:
    """(machine type, region) -> on-demand USD/h from a ``pricing.yml`` text, and the file's generation time."""
    doc: dict[str, Any] = yaml.safe_load(text)
    out: dict[tuple[str, str], Decimal] = {}
    for machine, spec in (doc.get("compute", {}).get("instance", {}) or {}).items():
        for region, cost in (spec.get("cost") or {}).items():
            if isinstance(cost, dict) and cost.get("hour") is not None:
                out[(machine, region)] = Decimal(str(cost["hour"]))
    return out, str(doc.get("about", {}).get("generated", ""))


def fresh_seconds(prices: dict[tuple[str, str], Decimal], generated: str, read: date) -> list[SecondSource]:
    """A second source for each shipped GCP row whose machine type the export prices (n1 + GPU pairings are
    gpuplan's own sums and have none; a size not sold on demand, shipped with no hourly price, is not compared)."""
    source = f"GCP Cloud Billing Catalog API SKU prices summed per machine type ({URL}, generated {generated})"
    out = []
    for row in shipped_instances():
        price = prices.get((row.instance_type, row.region))
        if row.provider == "gcp" and price is not None and row.hourly is not None:
            out.append(SecondSource(cloud="gcp", instance_type=row.instance_type, region=row.region, column="hourly",
                                    value=price, currency="USD", source=source, as_of=read, note=""))
    return out


def write(fresh: list[SecondSource], path: Path = SIDECAR) -> None:
    """``path`` with its GCP rows that carry no note replaced by ``fresh`` (comment lines and other rows kept)."""
    text = path.read_text(encoding="utf-8")
    comments = [line for line in text.splitlines() if line.startswith("#")]
    rows = list(csv.DictReader(line for line in text.splitlines() if not line.startswith("#")))
    noted = {(r["instance_type"], r["region"]) for r in rows if r["cloud"] == "gcp" and r["note"]}
    kept = [r for r in rows if r["cloud"] != "gcp" or r["note"]]
    kept += [{f: str(getattr(s, f)) for f in FIELDS} for s in fresh if (s.instance_type, s.region) not in noted]
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=FIELDS, lineterminator="\n")
    w.writeheader()
    w.writerows(kept)
    path.write_text("\n".join(comments) + "\n" + buf.getvalue(), encoding="utf-8")


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--file", type=Path, help="a saved pricing.yml instead of downloading it")
    p.add_argument("--write", action="store_true", help="replace the note-less GCP rows of second_sources.csv")
    a = p.parse_args(argv)
    if a.file:
        text = a.file.read_text(encoding="utf-8")
    else:
        with urllib.request.urlopen(URL, timeout=120) as r:
            text = r.read().decode("utf-8")
    prices, generated = gcp_hourly(text)
    fresh = fresh_seconds(prices, generated, date.today())
    shipped = shipped_instances()
    found = disagreements(shipped, fresh) + disagreements(shipped, [s for s in second_sources() if s.cloud != "gcp"])
    for d in found:
        print(f"differs: {d}")
    covered = {(s.instance_type, s.region) for s in fresh}
    missing = sorted({(r.instance_type, r.region) for r in shipped if r.provider == "gcp"} - covered)
    print(f"{len(fresh)} GCP rows compared, {len(found)} differ by more than 5%; "
          f"{len(missing)} GCP rows have no figure in the export: {', '.join(f'{t} {r}' for t, r in missing)}")
    if a.write:
        write(fresh)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
