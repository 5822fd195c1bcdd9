"""AWS for gpuplan: live EC2 GPU prices and the EC2 instance lifecycle.

Importing this package loads no AWS SDK: the names below are resolved on first use, so
the planner can know the adapter exists without paying for boto3. Public API:

- :class:`providers.aws.prices.AwsPriceFetcher` (``PriceFetcher``): ``fetch(region, catalog)``
- :class:`providers.aws.compute.AwsCompute` (``ComputeClient``): ``run``, ``describe``,
  ``terminate``, ``list_by_tag``, ``wait_running``, ``wait_terminated``
- :func:`providers.aws.session.map_client_error`, :func:`providers.aws.session.make_client`
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "AwsPriceFetcher": "providers.aws.prices",
    "AwsCompute": "providers.aws.compute",
    "TAG_CLIENT_TOKEN": "providers.aws.compute",
    "map_client_error": "providers.aws.session",
    "make_client": "providers.aws.session",
    "make_session": "providers.aws.session",
    "DLAMI_SSM_PARAMETER": "providers.aws.images",
}
__all__ = ["DLAMI_SSM_PARAMETER", "TAG_CLIENT_TOKEN", "AwsCompute", "AwsPriceFetcher", "make_client",
           "make_session", "map_client_error"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(module), name)
