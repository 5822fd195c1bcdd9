"""Places to get GPUs: one generic adapter for list-price clouds, buying cards, and per-cloud capabilities.

Nothing here imports a cloud SDK: ``providers/<cloud>/`` packages hold a cloud's price
fetcher and compute client, and :mod:`providers.registry` (one record per cloud) imports
them only when asked. :mod:`providers.lookup` finds the offer for an instance type in a
place; :mod:`providers.session` is what every cloud's way into its API shares.
"""

__all__ = ["aws", "base", "bulk", "capabilities", "created", "lazy", "listprice", "local", "lookup", "refresh",
           "registry", "session", "tencent"]
