"""Shipped data files (CSV, TOML), each row with its source and as-of date; no code."""

__all__: list[str] = []
