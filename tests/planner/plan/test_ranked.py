"""A plan's option records: named arrays, a record's provider found from the spans providers were added in."""

from __future__ import annotations

from pricing.billing import BillingMode
from planner.plan.ranked import MODE_AT, MODES, OptionRecords


def test_a_record_says_its_provider_mode_and_offer_by_name() -> None:
    records = OptionRecords()
    added = []
    for provider, offers in enumerate([3, 0, 2, 1]):  # a provider may add no option at all
        records.start_provider()
        for offer in range(offers):
            mode = MODES[(provider + offer) % len(MODES)]
            records.cost.append(float(offer))
            records.wall.append(1.0)
            records.mode.append(MODE_AT[mode])
            records.offer.append(offer)
            added.append((provider, mode, offer))
    assert len(records) == len(added) == 6
    assert [(records.provider(r), MODES[records.mode[r]], records.offer[r]) for r in range(len(records))] == added


def test_every_billing_mode_fits_its_array() -> None:
    records = OptionRecords()
    for mode in BillingMode:
        records.mode.append(MODE_AT[mode])
    assert [MODES[i] for i in records.mode] == list(BillingMode)
