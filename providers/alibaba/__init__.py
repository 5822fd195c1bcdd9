"""Alibaba Cloud: list prices and the credential chain (no ECS compute client yet; neither engine launches it)."""

__all__ = ["credentials", "price_list"]
