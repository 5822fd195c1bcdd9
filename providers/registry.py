"""Which providers exist, and their optional capabilities, imported only when used.

The set of providers is open: every provider with rows in the catalog (one shipped CSV
under ``pricing/data/instances/``, a refreshed cache or a user file) is served by the
generic list-price adapter, and buying cards by the local one. A cloud that can do more
(read live prices, quote exactly, launch) has one :class:`Cloud` record in :data:`CLOUDS`
naming its capability modules; those modules import the cloud's SDK, so they are imported
only when a capability is asked for, never on the planning path. Adding a cloud is one
record here and its ``providers/<cloud>/`` package.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pricing.catalog import LOCAL, Catalog
from pricing.errors import GpuplanError, NotSupportedError, UnknownNameError
from pricing.money import Currency
from providers.base import Provider
from providers.listprice import ListPriceProvider, SpotPricing
from providers.local import LocalProvider

if TYPE_CHECKING:  # their launch models cost every plan ~3 ms to build; only launching needs them
    from providers.bills import BillReader
    from providers.capabilities import ComputeClient, PriceFetcher


@dataclass(frozen=True)
class Cloud:
    """One cloud gpuplan can do more with than list prices.

    Capabilities are ``"module:attribute"`` strings, not objects: naming them costs no
    import, and the module (which imports the SDK) loads on first use.
    """

    name: str
    currency: Currency  # what the cloud bills in by default (its price fetcher and quotes use it)
    extra: str = ""  # the pip extra that installs the SDK, e.g. "gpuplan[aws]" (none: no capability needs one)
    sdk: str = ""  # a module of that SDK: checked before any capability module is imported
    price_fetcher: str | None = None  # a PriceFetcher class (`catalog refresh`)
    price_inquiry: str | None = None  # an exact-quote function for one configuration (`quote`)
    compute_client: str | None = None  # a ComputeClient class (`launch`, `ls`, `down`)
    bill_reader: str | None = None  # a BillReader class: the cloud's own bill per launch (`spend --billed`)
    sdk_errors: str | None = None  # turns an SDK exception no adapter mapped into a gpuplan error, or None
    engines: frozenset[str] = frozenset()  # launch engines that run it from `plan --export` ("skypilot", "dstack")
    endpoint_envs: tuple[str, ...] = ()  # variables that send its API calls elsewhere (a fake, a proxy), first wins
    # A function that finds the cloud's credentials without its SDK, or raises CredentialsError naming them: a launch
    # asks it first, so missing credentials are one line before anything is quoted or recorded
    credentials: str | None = None


CLOUDS: dict[str, Cloud] = {c.name: c for c in (
    Cloud("tencent", Currency.CNY, "gpuplan[tencent]", "tencentcloud.common",
          price_fetcher="providers.tencent.prices:TencentPriceFetcher",
          price_inquiry="providers.tencent.quote:inquire_price",
          compute_client="providers.tencent.compute:TencentCompute", endpoint_envs=("GPUPLAN_TENCENT_ENDPOINT",),
          bill_reader="providers.tencent.bills:TencentBillReader"),
    # No price inquiry: AWS has no call that prices one configuration; its Price List is read by the fetcher.
    Cloud("aws", Currency.USD, "gpuplan[aws]", "botocore",
          price_fetcher="providers.aws.prices:AwsPriceFetcher",
          compute_client="providers.aws.compute:AwsCompute", sdk_errors="providers.aws.session:sdk_error",
          bill_reader="providers.aws.bills:AwsBillReader",
          engines=frozenset({"skypilot", "dstack"}),
          endpoint_envs=("AWS_ENDPOINT_URL_PRICING", "AWS_ENDPOINT_URL_EC2", "AWS_ENDPOINT_URL")),
    # Lambda's API v1 through the standard library (no SDK, no extra); SkyPilot and dstack launch it too.
    Cloud("lambda", Currency.USD, price_fetcher="providers.lambda_cloud.prices:LambdaPriceFetcher",
          compute_client="providers.lambda_cloud.compute:LambdaCompute",
          engines=frozenset({"skypilot", "dstack"}), endpoint_envs=("GPUPLAN_LAMBDA_ENDPOINT",),
          credentials="providers.lambda_cloud.api:api_key"),
    # List prices shipped (pricing/data/instances/alibaba.csv); ECS launches through the official SDK
    # (alibabacloud-ecs20140526, the extra gpuplan[alibaba]); neither engine launches Alibaba.
    Cloud("alibaba", Currency.CNY, "gpuplan[alibaba]", "alibabacloud_ecs20140526",
          price_fetcher="providers.alibaba.prices:AlibabaPriceFetcher",
          price_inquiry="providers.alibaba.quote:inquire_price",
          compute_client="providers.alibaba.compute:AlibabaCompute", endpoint_envs=("GPUPLAN_ALIBABA_ENDPOINT",),
          credentials="providers.alibaba.credentials:find"),
    # List prices shipped (pricing/data/instances/gcp.csv, azure.csv) and live from `catalog refresh --source
    # gpuhunt`; both engines launch them.
    Cloud("gcp", Currency.USD, engines=frozenset({"skypilot", "dstack"})),
    Cloud("azure", Currency.USD, engines=frozenset({"skypilot", "dstack"})),
)}  # neither SkyPilot nor dstack knows Tencent Cloud


# Launch engines gpuplan runs as its launcher (`launch --via`): a launch through one is recorded with the engine as
# its provider and CLOUD:REGION as its region, and `ls`/`down` reach it through this compute client.
ENGINES: dict[str, str] = {"skypilot": "providers.engines.skypilot:SkyPilotCompute",
                           "dstack": "providers.engines.dstack:DstackCompute"}


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


def _load(provider: str, capability: str, what: str) -> Any:
    """The object a cloud's ``capability`` field names, or a NotSupportedError saying what to install."""
    cloud = CLOUDS.get(provider)
    target = getattr(cloud, capability) if cloud is not None else None
    if cloud is None or target is None:
        have = ", ".join(sorted(n for n, c in CLOUDS.items() if getattr(c, capability) is not None)) or "none"
        hint = f"providers with {what}: {have}"
        if cloud is not None and cloud.engines and capability == "compute_client":
            engines = " or ".join(f"--export {e}" for e in sorted(cloud.engines))
            via = " or ".join(f"--via {e}" for e in sorted(cloud.engines))
            hint = (f"hand it to an engine that launches {provider}: gpuplan launch ... {via} (gpuplan keeps the "
                    f"ledger), or gpuplan plan ... {engines} FILE; {hint}")
        if cloud is not None and capability == "price_fetcher":  # gpuhunt's catalogs price most other clouds
            hint = f"{hint}; `gpuplan catalog refresh --provider {provider} --source gpuhunt` reads gpuhunt's prices"
        raise NotSupportedError(f"{provider} has no {what} in gpuplan", hint)
    module, attr = target.split(":")
    try:
        # The capability modules import the SDK only inside the calls that use it: check it is
        # there now, so a missing SDK is one line before any call rather than a failure mid-way.
        if cloud.sdk and importlib.util.find_spec(cloud.sdk) is None:  # "": the standard library's HTTP
            raise ImportError(name=cloud.sdk)
        return getattr(importlib.import_module(module), attr)
    except ImportError as exc:
        raise NotSupportedError(
            f"{what} for {provider} needs its SDK, which is not installed ({exc.name})",
            f"pip install '{cloud.extra}'",
        ) from None


def price_fetcher(provider: str, **options: Any) -> PriceFetcher:
    """The provider's live price fetcher (``catalog refresh``)."""
    cls = _load(provider, "price_fetcher", "live prices")
    fetcher: PriceFetcher = cls(**options)
    return fetcher


def price_inquiry(provider: str) -> Any:
    """The provider's exact-quote function: (client, region, zone, instance_type, billing, months, image)."""
    return _load(provider, "price_inquiry", "exact price inquiry")


def compute_class(provider: str) -> type[ComputeClient]:
    """The provider's compute client class, for what it can do before any client exists (e.g. ``self_end``)."""
    if provider in ENGINES:
        module, attr = ENGINES[provider].split(":")
        engine: type[ComputeClient] = getattr(importlib.import_module(module), attr)
        return engine
    cls: type[ComputeClient] = _load(provider, "compute_client", "launching")
    return cls


def compute_client(provider: str, region: str, **options: Any) -> ComputeClient:
    """The provider's compute client for ``region`` (``launch``, ``ls``, ``down``)."""
    cls = compute_class(provider)
    client: ComputeClient = cls(region=region, **options)
    return client


def bill_reader(provider: str, **options: Any) -> BillReader | None:
    """The provider's bill reader (``spend --billed``), or None for a cloud gpuplan reads no bill of."""
    cloud = CLOUDS.get(provider)
    if cloud is None or cloud.bill_reader is None:
        return None
    reader: BillReader = _load(provider, "bill_reader", "billing API")(**options)
    return reader


def check_credentials(provider: str) -> None:
    """Raise the cloud's CredentialsError (exit 3, naming its variables) when its credentials are not found; a cloud
    with no such check (its SDK's chain is read at the first call) passes."""
    cloud = CLOUDS.get(provider)
    if cloud is None or cloud.credentials is None:
        return
    module, attr = cloud.credentials.split(":")
    getattr(importlib.import_module(module), attr)()


def engine_runs(engine: str, provider: str) -> bool:
    """Whether the launch engine ``engine`` (SkyPilot, dstack) can run an offer of ``provider``."""
    cloud = CLOUDS.get(provider)
    return cloud is not None and engine in cloud.engines


def unmapped_sdk_error(exc: BaseException) -> GpuplanError | None:
    """The gpuplan error for a cloud SDK's exception that escaped its adapter (the CLI's last resort), or None.

    Only clouds whose SDK is already loaded are asked: an exception from an SDK that was never
    imported cannot be one, and asking must not import it.
    """
    for cloud in CLOUDS.values():
        if cloud.sdk_errors is None or cloud.sdk.split(".")[0] not in sys.modules:
            continue
        module, attr = cloud.sdk_errors.split(":")
        if (mapped := getattr(importlib.import_module(module), attr)(exc)) is not None:
            return mapped  # type: ignore[no-any-return]
    return None
