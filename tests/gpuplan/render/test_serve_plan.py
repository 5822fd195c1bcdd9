"""What `plan --serve` shows a buyer: each fleet's real GPUs, no research notes, no build with an unpriced part."""

from __future__ import annotations

import csv
import json
import re

import pytest

from pricing.notes import public_note

RESEARCH = re.compile(r"VERIFIED|RECALLED|weak source|Blog,")


def test_the_fleet_column_counts_the_gpus_of_one_instance(gpuplan) -> None:  # type: ignore[no-untyped-def]
    code, out, err = gpuplan("plan", "--serve", "llama-3-8b", "--rate", "10", "--provider", "aws,tencent",
                             "-o", "csv", "--limit", "0")
    assert code == 0, err
    code, js, _ = gpuplan("plan", "--serve", "llama-3-8b", "--rate", "10", "--provider", "aws,tencent", "--json")
    options = json.loads(js)["options"]
    rows = list(csv.DictReader(out.splitlines()))
    assert len(rows) == len(options)
    single = [(r, o) for r, o in zip(rows, options) if o["gpus_per_instance"] == 1 and o["instances"] > 1]
    assert single, "the plan has a fleet of several one-GPU instances"
    for row, o in zip(rows, options):
        assert row["offer"] == o["offer"]
        assert row["fleet"] == f"{o['instances']} x ({o['gpus_per_instance']} x {o['gpu']})"


@pytest.mark.parametrize("args", [
    ("plan", "--serve", "llama-3-70b", "--rate", "20", "--json"),
    ("plan", "--serve", "llama-3-8b", "--rate", "2", "--json", "--limit", "0"),  # every offer's notes
    ("plan", "--serve", "llama-3-70b", "--rate", "20", "--explain", "--limit", "0"),
    ("tco", "--serve", "llama-3-8b", "--rate", "5", "--json"),
    ("plan", "--gpu-hours", "1000", "--json"),
    ("gpus", "--json"),
])
def test_no_research_notes_reach_the_user(gpuplan, args: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    code, out, err = gpuplan(*args)
    assert code == 0, err
    assert not RESEARCH.search(out + err)


def test_a_notes_public_part_is_what_comes_before_its_research_trail() -> None:
    note = ("low end of quoted range 22000-25000. VERIFIED text: 'used H100 SXM market softened from peak $40k+ "
            "to $22-25k' (Q1 2026). Blog, weak source.")
    assert public_note(note) == "low end of quoted range 22000-25000"
    assert public_note("VERIFIED: 24 GB, 300 GB/s") == ""
    assert public_note("China-market H100 variant") == "China-market H100 variant"


def test_sxm_cards_are_never_ranked_as_a_buy_for_serving_and_the_reason_is_given(gpuplan) -> None:  # type: ignore[no-untyped-def]
    code, out, err = gpuplan("plan", "--serve", "llama-3-70b", "--rate", "20", "--json")
    assert code == 0, err
    plan = json.loads(out)
    bought = [o for o in plan["options"] if o["billing"] == "buy"]
    assert bought and not [o for o in bought if "SXM" in o["gpu"]]
    reasons = [e["reason"] for e in plan["excluded"] if "SXM" in e["offer"] and e["offer"].endswith(" buy")]
    assert reasons and all("baseboard" in r for r in reasons)


def test_a_host_price_given_to_tco_serve_prices_the_sxm_server(gpuplan) -> None:  # type: ignore[no-untyped-def]
    code, out, err = gpuplan("tco", "--serve", "llama-3-70b", "--rate", "20", "--buy", "8xH100-SXM5-80GB",
                             "--host-price", "120000", "--json")
    assert code == 0, err
    assert any(o["gpu"] == "H100-SXM5-80GB" and o["billing"] == "buy" for o in json.loads(out)["options"])
    code, _, err = gpuplan("tco", "--serve", "llama-3-70b", "--rate", "20", "--buy", "8xH100-SXM5-80GB")
    assert code == 2 and "SXM module" in err and "--host-price" in err


def test_a_sources_verification_mark_stays_in_the_data_file() -> None:
    from pricing.notes import public_source

    assert public_source("NVIDIA GTX 1080 Ti spec page (recalled) ; https://x.example/a") == \
        "NVIDIA GTX 1080 Ti spec page ; https://x.example/a"
    assert public_source("datasheet (VERIFIED)") == "datasheet"
