"""The catalog: GPU specs, cloud instance types with prices, cards to buy, as one value.

Rooms: :mod:`~pricing.catalog.rows` (the values: enums, GPU specs, instance rows, card and
electricity prices), :mod:`~pricing.catalog.parse` (the CSV shape of instance rows, read and
written), :mod:`~pricing.catalog.layers` (how the shipped, cached and user layers stack, and
discounts), :mod:`~pricing.catalog.shipped` (the snapshot in ``pricing/data``) and
:mod:`~pricing.catalog.value` (the :class:`Catalog` a planner is handed).
"""

from pricing.catalog.layers import LayerInfo, cache_files, check_discount, discount_note, merge_instances
from pricing.catalog.parse import (INSTANCE_COLUMNS, instances_csv, paused_gc, parse_instances, read_instance_file,
                                   write_instances)
from pricing.catalog.rows import (FIELDS, HIGH_FIELDS, LOCAL, PRICE_FIELDS, PSEUDO_REGIONS, RATE_FIELDS,
                                  UNKNOWN_REGION, AsOfKind, CardPrice, ElectricityPrice, GpuSpec, InstanceType,
                                  Interconnect, Layer, Stock)
from pricing.catalog.shipped import (shipped_cards, shipped_electricity, shipped_gpus, shipped_instance_files,
                                     shipped_instances)
from pricing.catalog.value import Catalog, normalize

__all__ = ["FIELDS", "HIGH_FIELDS", "INSTANCE_COLUMNS", "LOCAL", "PRICE_FIELDS", "PSEUDO_REGIONS", "RATE_FIELDS",
           "UNKNOWN_REGION",
           "AsOfKind", "CardPrice", "Catalog", "ElectricityPrice", "GpuSpec", "InstanceType", "Interconnect", "Layer",
           "LayerInfo", "Stock", "cache_files", "check_discount", "discount_note", "instances_csv", "merge_instances",
           "normalize", "parse_instances", "paused_gc", "read_instance_file", "shipped_cards", "shipped_electricity",
           "shipped_gpus", "shipped_instance_files", "shipped_instances", "write_instances"]
