"""Alibaba Cloud: list prices only (no price fetcher or compute client in gpuplan; neither SkyPilot nor dstack launches it)."""

__all__ = ["price_list"]
