"""Places to get GPUs: one generic adapter for list-price clouds, buying cards, and per-cloud capabilities.

Nothing here imports a cloud SDK: ``providers/<cloud>/`` packages hold a cloud's price
fetcher and compute client, and :mod:`providers.registry` imports them only when asked.
"""

__all__ = ["aws", "base", "bulk", "capabilities", "lazy", "listprice", "local", "refresh", "registry", "tencent"]
