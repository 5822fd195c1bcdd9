"""One adapter per place to get GPUs (Tencent Cloud, AWS, buying cards locally).

Each adapter answers the same small interface (:class:`providers.base.Provider`).
Adapters serve offers from the shipped catalog; cloud SDKs are imported only inside
the methods that call a cloud, so planning never loads them.
"""

from __future__ import annotations

import difflib

from pricing.catalog import ProviderName
from pricing.errors import UnknownNameError
from providers.aws import AwsProvider
from providers.base import Offer, Provider, Quote
from providers.local import LocalProvider
from providers.tencent import TencentProvider

__all__ = ["Offer", "Provider", "Quote", "all_providers", "get_provider", "parse_provider"]


def all_providers() -> list[Provider]:
    return [TencentProvider(), AwsProvider(), LocalProvider()]


def parse_provider(name: str) -> ProviderName:
    try:
        return ProviderName(name.strip().lower())
    except ValueError:
        names = [p.value for p in ProviderName]
        raise UnknownNameError(
            "provider", name, difflib.get_close_matches(name.lower(), names, n=3, cutoff=0.3), "gpuplan offers"
        ) from None


def get_provider(name: str | ProviderName) -> Provider:
    wanted = parse_provider(str(name))
    return next(p for p in all_providers() if p.name == wanted)
