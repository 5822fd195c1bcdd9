"""Catalog data, money and billing rules: everything gpuplan knows about prices.

Nothing here talks to a network or imports a cloud SDK; the shipped snapshot in
``pricing/data`` is the single source of prices at run time.
"""

__all__ = ["billing", "catalog", "datafiles", "errors", "fx_use", "line_items", "money", "network"]
