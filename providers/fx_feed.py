"""``gpuplan catalog refresh --fx``: ECB's euro foreign exchange reference rates into the cache.

ECB publishes, each working day around 16:00 CET, one rate per currency against the euro
(``eurofxref-daily.xml``: ``<Cube time='YYYY-MM-DD'><Cube currency='USD' rate='1.1607'/>...``). It is
free and needs no key. The rates of the currencies gpuplan knows are written in ``pricing/data/fx.csv``'s
columns, dated with the feed's own day; plans then prefer them to the shipped ones (the user's own
``--fx`` still wins). Parsed with the standard library; the feed is small, so an answer over
:data:`MAX_BYTES` is refused rather than read.
"""

from __future__ import annotations

import csv
import io
import urllib.request
import xml.etree.ElementTree as ET
from datetime import date
from decimal import Decimal, InvalidOperation
from pathlib import Path

from pricing.errors import ProviderError
from pricing.files import write_private
from pricing.money import FX_FIELDS, Currency, FxRate

ECB_DAILY_URL = "https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml"
MAX_BYTES = 1 << 20  # the real feed is ~1.5 kB
TIMEOUT_S = 20
_AGAIN = "the cached rates were left as they were"


def parse_ecb(data: bytes) -> tuple[date, dict[str, Decimal]]:
    """(the rates' day, currency -> units per euro) of an ``eurofxref-daily.xml`` document."""
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise ProviderError(f"ECB's reference rates are not readable XML: {exc}", _AGAIN) from None
    days = [e for e in root.iter() if e.tag.rsplit("}", 1)[-1] == "Cube" and "time" in e.attrib]
    if len(days) != 1:
        raise ProviderError(f"expected one day of ECB reference rates, found {len(days)}", _AGAIN)
    try:
        day = date.fromisoformat(days[0].attrib["time"])
    except ValueError:
        raise ProviderError(f"ECB's reference rates carry a bad date {days[0].attrib['time']!r}", _AGAIN) from None
    rates: dict[str, Decimal] = {}
    for cube in days[0]:
        code, text = cube.attrib.get("currency", ""), cube.attrib.get("rate", "")
        try:
            value = Decimal(text)
        except InvalidOperation:
            raise ProviderError(f"ECB's rate for {code or '?'} is not a number: {text!r}", _AGAIN) from None
        if not value.is_finite() or value <= 0:
            raise ProviderError(f"ECB's rate for {code or '?'} is not a positive number: {text!r}", _AGAIN)
        rates[code.strip().upper()] = value
    return day, rates


def fetch_ecb(url: str = ECB_DAILY_URL) -> bytes:
    """The feed's bytes (``url`` may be a mirror, a local fake or a ``file:`` URL)."""
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as answer:
            data: bytes = answer.read(MAX_BYTES + 1)
    except (OSError, ValueError) as exc:  # urllib's URLError is an OSError; a malformed URL a ValueError
        raise ProviderError(f"could not read ECB's reference rates from {url}: {exc}",
                            f"check the network (or GPUPLAN_ECB_URL); {_AGAIN}") from None
    if len(data) > MAX_BYTES:
        raise ProviderError(f"the answer from {url} is over {MAX_BYTES} bytes: not ECB's daily rates", _AGAIN)
    return data


def refresh_fx(path: Path, url: str = ECB_DAILY_URL, *, today: date | None = None) -> tuple[FxRate, ...]:
    """Read ECB's rates from ``url`` and write those of gpuplan's currencies to ``path`` (nothing on failure)."""
    day, published = parse_ecb(fetch_ecb(url))
    source = f"ECB euro foreign exchange reference rates ({url}), read by `gpuplan catalog refresh --fx`"
    rates = tuple(FxRate(base=Currency.EUR, quote=c, rate=published[c.value], source=source, as_of=day)
                  for c in Currency if c is not Currency.EUR and c.value in published)
    if not rates:
        known = ", ".join(c.value for c in Currency if c is not Currency.EUR)
        raise ProviderError(f"ECB's reference rates from {url} have none of {known}", _AGAIN)
    read = (today or date.today()).isoformat()
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(FX_FIELDS)
    for r in rates:
        w.writerow([r.base.value, r.quote.value, str(r.rate), r.source, r.as_of.isoformat() if r.as_of else "",
                    f"1 EUR = rate quote, ECB's reference rate of as_of; read on {read}"])
    write_private(path, buf.getvalue())
    return rates
