"""Which providers exist, and their optional capabilities, imported only when used.

The set of providers is open: every provider with rows in the catalog (one shipped CSV
under ``pricing/data/instances/``, a refreshed cache or a user file) is served by the
generic list-price adapter, and buying cards by the local one. Capabilities are looked
up by name here; their modules import the cloud SDKs, so nothing imports them on the
planning path.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
from typing import TYPE_CHECKING, Any

from pricing.catalog import LOCAL, Catalog
from pricing.errors import NotSupportedError, UnknownNameError
from providers.base import Provider
from providers.listprice import ListPriceProvider, SpotPricing
from providers.local import LocalProvider

if TYPE_CHECKING:  # their launch models cost every plan ~3 ms to build; only launching needs them
    from providers.capabilities import ComputeClient, PriceFetcher

# "module:attribute" of each capability; the module lives in providers/<cloud>/.
PRICE_FETCHERS = {
    "tencent": "providers.tencent.prices:TencentPriceFetcher",
    "aws": "providers.aws.prices:AwsPriceFetcher",
}
COMPUTE_CLIENTS = {
    "tencent": "providers.tencent.compute:TencentCompute",
    "aws": "providers.aws.compute:AwsCompute",
}
# Exact price inquiry for one configuration (Tencent's InquiryPriceRunInstances); AWS has
# no such call: its Price List is read by the price fetcher instead.
QUOTERS = {
    "tencent": "providers.tencent.quote:inquire_price",
}
EXTRAS = {"tencent": "gpuplan[tencent]", "aws": "gpuplan[aws]"}
# The SDK each cloud's capabilities need. The capability modules import it only inside the
# calls that use it, so its absence must be checked here, before any call is made.
SDKS = {"tencent": "tencentcloud.common", "aws": "botocore"}


def provider_names(catalog: Catalog) -> tuple[str, ...]:
    return catalog.providers


def parse_provider(name: str, catalog: Catalog) -> str:
    wanted = name.strip().lower()
    names = provider_names(catalog)
    if wanted not in names:
        raise UnknownNameError("provider", name, difflib.get_close_matches(wanted, names, n=3, cutoff=0.3),
                               "gpuplan offers")
    return wanted


def get_provider(name: str, catalog: Catalog, *, spot_pricing: SpotPricing = SpotPricing.TYPICAL) -> Provider:
    wanted = parse_provider(name, catalog)
    if wanted == LOCAL:
        return LocalProvider(catalog)
    return ListPriceProvider(wanted, catalog, spot_pricing=spot_pricing)


def all_providers(catalog: Catalog, *, spot_pricing: SpotPricing = SpotPricing.TYPICAL) -> list[Provider]:
    return [get_provider(n, catalog, spot_pricing=spot_pricing) for n in provider_names(catalog)]


def _load(table: dict[str, str], provider: str, what: str) -> Any:
    target = table.get(provider)
    if target is None:
        have = ", ".join(sorted(table)) or "none"
        raise NotSupportedError(f"{provider} has no {what} in gpuplan", f"providers with {what}: {have}")
    module, attr = target.split(":")
    sdk = SDKS.get(provider)
    try:
        if sdk is not None and importlib.util.find_spec(sdk) is None:
            raise ImportError(name=sdk)
        return getattr(importlib.import_module(module), attr)
    except ImportError as exc:
        raise NotSupportedError(
            f"{what} for {provider} needs its SDK, which is not installed ({exc.name})",
            f"pip install '{EXTRAS.get(provider, 'gpuplan')}'",
        ) from None


def price_fetcher(provider: str, **options: Any) -> PriceFetcher:
    """The provider's live price fetcher (``catalog refresh``)."""
    cls = _load(PRICE_FETCHERS, provider, "live prices")
    fetcher: PriceFetcher = cls(**options)
    return fetcher


def price_inquiry(provider: str) -> Any:
    """The provider's exact-quote function: (client, region, zone, instance_type, billing, months, image)."""
    return _load(QUOTERS, provider, "exact price inquiry")


def compute_client(provider: str, region: str, **options: Any) -> ComputeClient:
    """The provider's compute client for ``region`` (``launch``, ``ls``, ``down``)."""
    cls = _load(COMPUTE_CLIENTS, provider, "launching")
    client: ComputeClient = cls(region=region, **options)
    return client
