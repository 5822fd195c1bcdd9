"""Alibaba Cloud: list prices, the credential chain and ECS launches through the official SDK
(no engine launches it)."""

__all__ = ["compute", "credentials", "ecs_api", "price_list", "prices", "quote"]
