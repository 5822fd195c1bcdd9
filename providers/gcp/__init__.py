"""Google Cloud: list prices only (no price fetcher or compute client in gpuplan; SkyPilot and dstack launch it)."""

__all__ = ["skypilot_catalog"]
