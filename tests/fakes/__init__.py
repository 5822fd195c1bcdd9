"""Local stand-ins for cloud APIs, for tests and offline demos (nothing here reaches a network)."""
