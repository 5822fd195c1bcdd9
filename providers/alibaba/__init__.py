"""Alibaba Cloud: list prices and the credential chain (no ECS compute client yet; neither SkyPilot nor dstack launches it)."""

__all__ = ["credentials", "price_list"]
