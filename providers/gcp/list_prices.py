"""Google Cloud's own list prices, where SkyPilot's summed price is not GCP's, and the sizes sold only reserved.

SkyPilot prices a GCP machine as the machine plus its GPU part; in some regions its GPU part is not
GCP's: it has the H100 at 4.20076 USD/h in us-central1, us-west1 and asia-southeast1 and the A100 40 GB
low in europe-west4 and asia-southeast1, so the rows built from it were half or two thirds of list.
GCP's own Cloud Billing catalog (the SKU prices, as Cyclenerd's google-cloud-pricing-cost-calculator
exports them per machine type and region) is the cloud's word, so a row whose SkyPilot price is more
than 5% away from it takes GCP's hourly price; rows within 5% keep SkyPilot's (read later) and have
GCP's figure recorded as their second source (``pricing/data/second_sources.csv``).

``a3-highgpu-1g``, ``-2g`` and ``-4g`` are not sold on demand: GCP offers them through the Dynamic
Workload Scheduler (Flex-start or calendar mode) or as Spot VMs only, so their rows carry no hourly price
(their spot price stays).
"""

from __future__ import annotations

from decimal import Decimal

LIST_SOURCE = ("GCP Cloud Billing Catalog API SKU prices summed per machine type, as exported by "
               "github.com/Cyclenerd/google-cloud-pricing-cost-calculator pricing.yml "
               "@0166a59ebba7c36f2cc8c931d9f258dcebc44776 "
               "(generated 2025-03-06; compute.instance.<type>.cost.<region>.hour, on-demand USD/h)")
LIST_AS_OF = "2025-03-06"
# Sizes GCP sells only through the Dynamic Workload Scheduler or as Spot VMs (no on-demand price).
RESERVED_ONLY = frozenset({"a3-highgpu-1g", "a3-highgpu-2g", "a3-highgpu-4g"})
RESERVED_ONLY_NOTE = ("not sold on demand: GCP offers a3-highgpu-1g/2g/4g only through the Dynamic Workload Scheduler "
                      "(Flex-start, calendar mode) or as Spot VMs (Compute Engine's accelerator-optimized "
                      "machine family "
                      "page, A3 High; RECALLED, the sentence was not re-read in this session), so no hourly price is "
                      "shipped")
# (machine type, region) -> on-demand USD/h in GCP's Cloud Billing catalog, as read from LIST_SOURCE.
LIST_HOURLY: dict[tuple[str, str], Decimal] = {
    (t, r): Decimal(v) for (t, r), v in {
        ("a2-highgpu-1g", "asia-southeast1"): "4.013757926", ("a2-highgpu-1g", "europe-west4"): "3.747972",
        ("a2-highgpu-1g", "us-central1"): "3.673385", ("a2-highgpu-1g", "us-east1"): "3.673385",
        ("a2-highgpu-1g", "us-west1"): "3.673385",
        ("a2-highgpu-2g", "asia-southeast1"): "8.027515852", ("a2-highgpu-2g", "europe-west4"): "7.495944",
        ("a2-highgpu-2g", "us-central1"): "7.34677", ("a2-highgpu-2g", "us-east1"): "7.34677",
        ("a2-highgpu-2g", "us-west1"): "7.34677",
        ("a2-highgpu-4g", "asia-southeast1"): "16.055031704", ("a2-highgpu-4g", "europe-west4"): "14.991888",
        ("a2-highgpu-4g", "us-central1"): "14.69354", ("a2-highgpu-4g", "us-east1"): "14.69354",
        ("a2-highgpu-4g", "us-west1"): "14.69354",
        ("a2-highgpu-8g", "asia-southeast1"): "32.110063408", ("a2-highgpu-8g", "europe-west4"): "29.983776",
        ("a2-highgpu-8g", "us-central1"): "29.38708", ("a2-highgpu-8g", "us-east1"): "29.38708",
        ("a2-highgpu-8g", "us-west1"): "29.38708",
        ("a2-megagpu-16g", "asia-southeast1"): "60.476222816", ("a2-megagpu-16g", "europe-west4"): "56.62656",
        ("a2-megagpu-16g", "us-central1"): "55.739504",
        ("a3-highgpu-8g", "asia-southeast1"): "114.278292967233", ("a3-highgpu-8g", "europe-west4"): "112.540479175233",
        ("a3-highgpu-8g", "us-central1"): "88.4899999025753", ("a3-highgpu-8g", "us-east4"): "88.5557561512329",
        ("a3-highgpu-8g", "us-west1"): "88.4899999025753",
        ("a3-megagpu-8g", "asia-southeast1"): "119.974644967233", ("a3-megagpu-8g", "europe-west4"): "118.236831175233",
        ("a3-megagpu-8g", "us-east4"): "92.9375881512329",
    }.items()
}
TOLERANCE = Decimal("0.05")  # the second-source check's bound: past it, the cloud's own figure wins


def far(a: Decimal, b: Decimal, tolerance: Decimal = TOLERANCE) -> bool:
    """Whether ``a`` is more than ``tolerance`` (a share of ``b``) away from ``b``."""
    return abs(a - b) > tolerance * b


def apply(row: dict[str, str]) -> dict[str, str]:
    """``row`` (a gcp.csv row, SkyPilot-priced) with GCP's own hourly where SkyPilot's is off, none where not sold."""
    name, region = row["instance_type"], row["region"]
    out = dict(row)
    if name in RESERVED_ONLY:
        if out.get("hourly"):
            out["hourly"] = ""
            out["notes"] = f"{out['notes']}; {RESERVED_ONLY_NOTE}"
        return out
    listed = LIST_HOURLY.get((name, region))
    if listed is None or not out.get("hourly") or not far(Decimal(out["hourly"]), listed):
        return out
    skypilot = out["hourly"]
    out["hourly"] = str(listed.quantize(Decimal("0.00001")))
    out["source"] = f"hourly: {LIST_SOURCE}; spot: {out['source']}"
    out["as_of"], out["as_of_kind"] = LIST_AS_OF, "price_date"
    out["notes"] = (f"{out['notes']}; hourly is GCP's own list price: SkyPilot's sum ({skypilot}) is more than 5% "
                    f"from GCP's Cloud Billing catalog in this region; spot is SkyPilot's (read {row['as_of']})")
    return out
